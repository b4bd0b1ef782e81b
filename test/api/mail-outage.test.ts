/**
 * A mail server that goes away for a while takes no account out: with the loopback dovecot stopped (IMAP) or
 * the SMTP sink stopped, accounts of two workspaces stay `active`, their status tells what failed and when the
 * next try is, and once the server is back (the clock past that try) the mailbox is read and a contact added
 * meanwhile is sent, by themselves. A worker that may not reach loopback addresses (ALLOW_PRIVATE_MAIL_HOSTS
 * off, unlike the API that accepted the accounts) says so at start and marks nothing.
 */
import { expect } from '@jest/globals';
import pino from 'pino';
import { Writable } from 'node:stream';
import { startSmtpSink, type SmtpSink } from '../helpers/smtp-sink';
import { startTestServer, type TestServer, type TestWorkspace } from '../helpers/server';
import { describeWithDovecot, startImapServer, type ImapTestServer } from '../helpers/imap-server';
import { createServices } from '../../server/services';
import { startJobs } from '../../server/boot';
import type { CheckpointRow } from '../../server/modules/inbox/store';
import { found } from '../helpers/rows';

jest.setTimeout(180_000);

const MIN = 60_000;
const allWeek = { timezone: 'UTC', days: [0, 1, 2, 3, 4, 5, 6], from: '00:00', to: '23:59' };

describeWithDovecot('mail servers that go away and come back', () => {
  let imap: ImapTestServer;
  let sink: SmtpSink;
  let t: TestServer;
  let one: TestWorkspace;
  let two: TestWorkspace;
  const accounts: Record<string, { ws: TestWorkspace; id: string }> = {};

  beforeAll(async () => {
    imap = await startImapServer({
      users: ['ann', 'ben', 'cat'].map((n) => ({ user: `${n}@acme-mail.io`, password: 'pw' })),
    });
    sink = await startSmtpSink();
    t = await startTestServer({ config: { allowPrivateMailHosts: true } });
    t.clock.set('2026-11-23T10:00:00.000Z');
    one = await t.createWorkspace();
    two = await t.createWorkspace();
    for (const [name, ws] of [
      ['ann', one],
      ['ben', one],
      ['cat', two],
    ] as const) {
      const connected = await ws.client.POST('/v2/account/connect', {
        body: {
          email: `${name}@acme-mail.io`,
          provider: 'smtp',
          dailyLimit: 100,
          smtp: { host: '127.0.0.1', port: sink.port, password: 'pw' },
          imap: { host: '127.0.0.1', port: imap.port, password: 'pw' },
        },
      });
      expect(connected.response.status).toBe(201);
      accounts[name] = { ws, id: connected.data!.data.account.id };
    }
  });
  afterAll(async () => {
    t.services.mail.close();
    await t.close();
    await sink.close();
    await imap.close();
  });

  const status = async (name: string) => {
    const { ws, id } = accounts[name];
    const res = await ws.client.GET('/v1/account/status', { params: { query: { accountId: id } } });
    expect(res.response.status).toBe(200);
    return res.data!.data;
  };

  /** A launched campaign of `name`'s account, sending at once (no gap). */
  async function campaignOf(name: string): Promise<string> {
    const { ws, id } = accounts[name];
    const created = await ws.client.POST('/v2/campaign/create', {
      body: {
        name: `${name}'s`,
        accountIds: [id],
        schedule: allWeek,
        options: { emailGapMinutes: 0, randomWaitMaxMinutes: 0 },
      } as never,
    });
    const campaignId = created.data!.data.campaign.id;
    await ws.client.POST('/v2/campaign/sequence-create', {
      body: { campaignId, steps: [{ delayDays: 0, variants: [{ subject: 'Hello', body: 'Hi' }] }] } as never,
    });
    expect((await ws.client.POST('/v2/campaign/launch', { body: { campaignId } })).response.status).toBe(200);
    return campaignId;
  }
  const addContact = async (name: string, campaignId: string, email: string) => {
    const res = await accounts[name].ws.client.POST('/v1/contact/add', {
      body: { campaignId, contacts: [{ email }] } as never,
    });
    expect(res.response.status).toBeLessThan(300);
  };
  const sentTo = (email: string) => sink.received.filter((m) => m.envelope.to.includes(email)).length;

  it('an IMAP outage leaves every account active, retried with backoff, and reading resumes by itself', async () => {
    expect(await t.services.inbox.runOnce()).toBe(0);
    const campaignId = await campaignOf('ann');
    await imap.stop();
    try {
      // Five reads fail (the old rule took accounts out after three), each once its wait has passed.
      for (let i = 0; i < 5; i++) {
        t.clock.advance(31 * MIN);
        await t.services.inbox.runOnce();
      }
      for (const name of ['ann', 'ben', 'cat']) {
        const s = await status(name);
        expect(s).toMatchObject({ status: 'active', statusReason: null });
        expect(s.retries).toEqual([
          expect.objectContaining({ protocol: 'imap', failures: 5, reason: expect.stringMatching(/ECONNREFUSED/) }),
        ]);
        expect(Date.parse(s.retries[0].nextTryAt)).toBe(t.clock.now().getTime() + 16 * MIN);
      }
      // Sending does not need IMAP: a contact added during the outage goes out.
      await addContact('ann', campaignId, 'during-imap@x.test');
      expect(await t.services.sending.runOnce()).toBe(1);
      expect(sentTo('during-imap@x.test')).toBe(1);
      // Before its next try a mailbox is not opened again (no more failures counted).
      t.clock.advance(MIN);
      await t.services.inbox.runOnce();
      expect((await status('cat')).retries[0].failures).toBe(5);
    } finally {
      await imap.start();
    }
    imap.deliverDirect('cat@acme-mail.io', ['Subject: hi\r\nMessage-ID: <a1@x.test>\r\n\r\nhello\r\n']);
    t.clock.advance(16 * MIN);
    await t.services.inbox.runOnce();
    for (const name of ['ann', 'ben', 'cat'])
      expect(await status(name)).toMatchObject({ status: 'active', retries: [] });
    const checkpoint = await found(
      t.db<CheckpointRow>('mailbox_checkpoints').where({ account_id: accounts.cat.id }).first(),
    );
    expect(checkpoint).toMatchObject({ failures: 0, last_error: null });
    expect(Number(checkpoint.last_uid)).toBe(1);
  });

  it('an SMTP outage leaves the account active, holds its mail, and sends it once the server is back', async () => {
    const campaignId = await campaignOf('cat');
    await sink.stop();
    try {
      await addContact('cat', campaignId, 'during-smtp@x.test');
      // Six sends fail, each once the wait has passed (the old rule took the account out after five).
      for (let i = 0; i < 6; i++) {
        expect(await t.services.sending.runOnce()).toBe(0);
        t.clock.advance(31 * MIN);
      }
      expect(await t.services.sending.runOnce()).toBe(0);
      const s = await status('cat');
      expect(s).toMatchObject({ status: 'active', canSend: false, reason: 'smtpRetrying', statusReason: null });
      expect(s.retries).toEqual([
        expect.objectContaining({ protocol: 'smtp', failures: 7, reason: expect.stringMatching(/ECONNREFUSED/) }),
      ]);
      expect(Date.parse(s.retries[0].nextTryAt)).toBe(t.clock.now().getTime() + 30 * MIN);
      // Nothing is tried before the next try.
      t.clock.advance(29 * MIN);
      expect(await t.services.sending.runOnce()).toBe(0);
      expect((await status('cat')).retries[0].failures).toBe(7);
      // The other workspace's accounts were never touched.
      expect(await status('ann')).toMatchObject({ status: 'active', canSend: true, retries: [] });
    } finally {
      await sink.start();
    }
    t.clock.advance(MIN);
    expect(await t.services.sending.runOnce()).toBe(1);
    expect(sentTo('during-smtp@x.test')).toBe(1);
    expect(await status('cat')).toMatchObject({ status: 'active', canSend: true, reason: null, retries: [] });
  });

  it('a 4xx greeting is retried the same way', async () => {
    const campaignId = await campaignOf('ann');
    // Pooled connections opened before stay usable: the ones opened from now on are greeted 421.
    t.services.mail.close();
    sink.busy = true;
    try {
      await addContact('ann', campaignId, 'busy@x.test');
      expect(await t.services.sending.runOnce()).toBe(0);
      const s = await status('ann');
      expect(s).toMatchObject({ status: 'active', reason: 'smtpRetrying' });
      expect(s.retries).toEqual([expect.objectContaining({ protocol: 'smtp', reason: expect.stringMatching(/421/) })]);
    } finally {
      sink.busy = false;
    }
    t.clock.advance(MIN);
    expect(await t.services.sending.runOnce()).toBe(1);
    expect(sentTo('busy@x.test')).toBe(1);
    expect(await status('ann')).toMatchObject({ reason: null, retries: [] });
  });

  it('a worker that may not reach loopback hosts says so at start and marks no account', async () => {
    const lines: string[] = [];
    const logger = pino(
      { level: 'info' },
      new Writable({
        write(chunk: Buffer, _enc, done) {
          lines.push(chunk.toString());
          done();
        },
      }),
    );
    const deps = { ...t.deps, logger, config: { ...t.deps.config, allowPrivateMailHosts: false } };
    const strict = createServices(deps);
    const worker = startJobs({ deps, services: strict });
    await worker.stop();
    strict.mail.close();
    expect(lines.join('')).toMatch(/ALLOW_PRIVATE_MAIL_HOSTS is off/);

    const campaignId = await campaignOf('ben');
    await addContact('ben', campaignId, 'strict@x.test');
    t.clock.advance(31 * MIN);
    await strict.inbox.runOnce();
    expect(await strict.sending.runOnce()).toBe(0);
    const s = await status('ben');
    expect(s).toMatchObject({ status: 'active', statusReason: null, reason: 'smtpRetrying' });
    expect(s.retries.map((r) => [r.protocol, r.reason])).toEqual([
      ['imap', expect.stringMatching(/^IMAP host refused: .*loopback, private or link-local/)],
      ['smtp', expect.stringMatching(/^private_destination: /)],
    ]);
    // A worker with the setting (the API's) sends it once the wait has passed.
    t.clock.advance(MIN);
    expect(await t.services.sending.runOnce()).toBe(1);
    expect(sentTo('strict@x.test')).toBe(1);
  });
});
