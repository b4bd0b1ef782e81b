/**
 * Connecting an account logs in to its SMTP server (and IMAP server when given) before anything is stored,
 * and says which login failed and why. Real servers on loopback: smtp-server and a private dovecot.
 */
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

  it('refuses a private host unless ALLOW_PRIVATE_MAIL_HOSTS is set', async () => {
    const w = await strict.createWorkspace();
    const refused = await connect(w, { host: '127.0.0.1', port: sink.port, password: 'smtp-right' });
    expect(refused.response.status).toBe(400);
    expect(refused.error!.details[0].code).toBe('private_destination');
  });
});
