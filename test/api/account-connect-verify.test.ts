/**
 * Connecting an account logs in to its SMTP server (and IMAP server when given) before anything is stored,
 * and says which login failed and why; reconnecting logs in again now, with new passwords when given. Real
 * servers on loopback: smtp-server and a private dovecot.
 */
import type { AccountRow } from '../../server/modules/account/store';
import type { CheckpointRow } from '../../server/modules/inbox/store';
import { found } from '../helpers/rows';
import { startImapServer, type ImapTestServer } from '../helpers/imap-server';
import { startSmtpSink, type SmtpSink } from '../helpers/smtp-sink';
import { startTestServer, type TestServer, type TestWorkspace } from '../helpers/server';

describe('account connect verifies the logins', () => {
  let t: TestServer;
  let strict: TestServer;
  let sink: SmtpSink;
  let imap: ImapTestServer;
  let ws: TestWorkspace;

  beforeAll(async () => {
    sink = await startSmtpSink();
    sink.passwords.add('smtp-right');
    imap = await startImapServer({ users: [{ user: 'ana@acme-mail.io', password: 'imap-right' }] });
    t = await startTestServer({
      config: {
        secretKey: '77'.repeat(32),
        allowPrivateMailHosts: true,
        verifyMailLogins: true,
        smtpTimeoutMs: 2000,
        imapTimeoutMs: 2000,
      },
    });
    strict = await startTestServer({
      config: { secretKey: '77'.repeat(32), allowPrivateMailHosts: false, verifyMailLogins: true },
    });
    ws = await t.createWorkspace();
  });
  afterAll(async () => {
    await t.close();
    await strict.close();
    await sink.close();
    await imap.close();
  });

  const connect = (w: TestWorkspace, smtp: object, imapLogin?: object) =>
    w.client.POST('/v2/account/connect', {
      body: { email: 'ana@acme-mail.io', provider: 'smtp', smtp, ...(imapLogin ? { imap: imapLogin } : {}) } as never,
    });
  const accounts = async () =>
    Number(
      (await t.db('email_accounts').where({ workspace_id: ws.workspaceId }).count<{ n: string }[]>('* as n'))[0].n,
    );

  it('refuses a wrong SMTP password, an IMAP one, and a closed port, naming which, and stores nothing', async () => {
    const badSmtp = await connect(ws, { host: '127.0.0.1', port: sink.port, password: 'wrong' });
    expect(badSmtp.response.status).toBe(400);
    expect(badSmtp.error).toMatchObject({ code: 'mail_login_failed', details: [{ code: 'auth_failed' }] });
    expect(badSmtp.error!.error).toMatch(/^The SMTP login failed: authentication refused/);

    const badImap = await connect(
      ws,
      { host: '127.0.0.1', port: sink.port, password: 'smtp-right' },
      { host: '127.0.0.1', port: imap.port, password: 'wrong' },
    );
    expect(badImap.response.status).toBe(400);
    expect(badImap.error!.details.map((d: { code: string }) => d.code)).toEqual(['auth_failed']);
    expect(badImap.error!.error).toMatch(/^The IMAP login failed/);

    const closed = await connect(ws, { host: '127.0.0.1', port: 1, password: 'smtp-right' });
    expect(closed.response.status).toBe(400);
    expect(closed.error!.details[0].code).toBe('unreachable');
    expect(await accounts()).toBe(0);
  });

  it('stores the account when both logins work', async () => {
    const ok = await connect(
      ws,
      { host: '127.0.0.1', port: sink.port, password: 'smtp-right' },
      { host: '127.0.0.1', port: imap.port, password: 'imap-right' },
    );
    expect(ok.response.status).toBe(201);
    expect(await accounts()).toBe(1);
  });

  /** Dovecot looks at a changed passwd-file at most once a second: until it takes the new password, logins fail. */
  async function untilImapTakes(user: string): Promise<void> {
    for (let tries = 1; ; tries++) {
      try {
        await (await imap.client(user)).logout();
        return;
      } catch (err) {
        if (tries === 20) throw err;
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
    }
  }

  describe('reconnect', () => {
    const ANA = 'ana@acme-mail.io';
    let accountId: string;
    const row = () => found(t.db<AccountRow>('email_accounts').where({ id: accountId }).first(), 'account');
    const reconnect = (w: TestWorkspace, body: object) =>
      w.client.POST('/v2/account/reconnect', { body: { accountId, ...body } as never });
    const retries = async () =>
      Number(
        (await t.db('mail_connection_retries').where({ account_id: accountId }).count<{ n: string }[]>('* as n'))[0].n,
      );

    const checkpoint = () =>
      found(t.db<CheckpointRow>('mailbox_checkpoints').where({ account_id: accountId }).first(), 'checkpoint');

    beforeAll(async () => {
      accountId = (
        await found(
          t.db<AccountRow>('email_accounts').where({ workspace_id: ws.workspaceId, email: ANA }).first(),
          'account',
        )
      ).id;
    });

    it('after a password change: a wrong password changes nothing, the new ones make the account active again', async () => {
      // The mailbox's passwords change; a refused login put the account in connectionError (as the mail workers do).
      sink.passwords.clear();
      sink.passwords.add('smtp-new');
      imap.addUser(ANA, 'imap-new');
      await untilImapTakes(ANA);
      await t
        .db('email_accounts')
        .where({ id: accountId })
        .update({ status: 'connectionError', status_reason: 'auth_failed: refused' });

      // A wrong SMTP password: the answer names that login, and nothing is stored (not even the right IMAP one).
      const wrong = await reconnect(ws, { password: 'still-wrong', imapPassword: 'imap-new' });
      expect(wrong.response.status).toBe(400);
      expect(wrong.error).toMatchObject({
        code: 'mail_login_failed',
        details: [{ field: 'body.smtp', code: 'auth_failed' }],
      });
      expect(await row()).toMatchObject({ status: 'connectionError' });
      const stored = await reconnect(ws, {});
      expect(stored.error!.details.map((d: { field: string }) => d.field)).toEqual(['body.smtp', 'body.imap']);

      // Another workspace's account is a 404, and changes nothing.
      const other = await t.createWorkspace();
      expect((await reconnect(other, { password: 'smtp-new', imapPassword: 'imap-new' })).response.status).toBe(404);

      const fixed = await reconnect(ws, { password: 'smtp-new', imapPassword: 'imap-new' });
      expect(fixed.response.status).toBe(200);
      expect(fixed.data!.data.account).toMatchObject({ id: accountId, status: 'active' });
      expect(JSON.stringify(fixed.data)).not.toContain('imap-new');
      expect(await row()).toMatchObject({ status: 'active', status_reason: null });
      const events = await ws.client.GET('/v2/event/list', {
        params: { query: { types: 'account.statusChanged' } as never },
      });
      expect(events.data!.data.items.map((e) => e.data)).toEqual([
        expect.objectContaining({ previous: 'connectionError', status: 'active' }),
      ]);
      // The stored passwords are the new ones: the reader logs in.
      await t.services.inbox.runOnce();
      expect(await row()).toMatchObject({ status: 'active' });
      expect(await checkpoint()).toMatchObject({ last_error: null, failures: 0 });
    });

    it('after an outage: the stored logins are tried now, and the wait before the next try ends', async () => {
      await imap.stop();
      try {
        await t.services.inbox.runOnce();
        expect(await retries()).toBe(1);
        expect((await checkpoint()).last_error).toMatch(/IMAP connection/);
        // Still down: the check fails, and the wait stands.
        const down = await reconnect(ws, {});
        expect(down.response.status).toBe(400);
        expect(down.error!.details).toEqual([expect.objectContaining({ field: 'body.imap', code: 'unreachable' })]);
        expect(await retries()).toBe(1);
      } finally {
        await imap.start();
      }
      const back = await reconnect(ws, {});
      expect(back.response.status).toBe(200);
      expect(await retries()).toBe(0);
      // The reader reads the mailbox at once, without waiting out the back-off.
      await t.services.inbox.runOnce();
      expect(await checkpoint()).toMatchObject({ last_error: null, failures: 0 });
    });
  });

  it('refuses a private host unless ALLOW_PRIVATE_MAIL_HOSTS is set', async () => {
    const w = await strict.createWorkspace();
    const refused = await connect(w, { host: '127.0.0.1', port: sink.port, password: 'smtp-right' });
    expect(refused.response.status).toBe(400);
    expect(refused.error!.details[0].code).toBe('private_destination');
  });
});
