/**
 * The warm-up pool end to end on the loopback mail provider (SMTP front into a private dovecot, a spam rule
 * filing one sender's mail in Junk): four accounts in two workspaces and a pool-only mailbox write to each
 * other within a minute of enabling, spam is rescued, replies thread, the summary shows the figures, the
 * unibox and campaign analytics stay untouched, refusals and bounces are handled with reasons, and the events
 * reach a webhook. Time is the test clock; the jobs are run by hand.
 */
import { expect } from '@jest/globals';
import { startTestServer, type TestServer, type TestWorkspace } from '../helpers/server';
import { describeWithDovecot } from '../helpers/imap-server';
import { startMailProvider, type MailProvider } from '../helpers/mail-provider';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver';
import { createServices } from '../../server/services';
import { hasMarker } from '../../server/modules/warmup/content';
import type { MemberRow, WarmupMessageRow } from '../../server/modules/warmup/store';
import { readHook } from '../helpers/bodies';
import { found } from '../helpers/rows';

jest.setTimeout(120_000);

const ANN = 'ann@gmail.test';
const BOB = 'bob@outlook.test';
const CY = 'cy@yahoo.test';
const DEE = 'dee@proton.test';
const EVE = 'eve@fastmail.test';

describeWithDovecot('warm-up pool on the loopback provider', () => {
  let t: TestServer;
  let provider: MailProvider;
  let hooks: WebhookReceiver;
  let ws1: TestWorkspace;
  let ws2: TestWorkspace;
  const ids: Record<string, string> = {};

  const messages = () => t.db('warmup_messages').orderBy('created_at').select<WarmupMessageRow[]>();
  const account = async (ws: TestWorkspace, email: string) =>
    (await ws.client.GET('/v1/account/list', { params: { query: { limit: 100 } } })).data!.data.items.find(
      (a) => a.id === ids[email],
    )!;
  const summary = async (ws: TestWorkspace, email: string) =>
    (await ws.client.GET('/v1/analytics/account/warmup/summary', { params: { query: { accountId: ids[email] } } }))
      .data!.data;

  beforeAll(async () => {
    provider = await startMailProvider({ mailboxes: [ANN, BOB, CY, DEE, EVE] });
    hooks = await startWebhookReceiver();
    t = await startTestServer({
      config: { secretKey: '67'.repeat(32), allowPrivateMailHosts: true, allowPrivateWebhooks: true },
    });
    t.clock.set('2026-11-23T10:00:00.000Z');
    ws1 = await t.createWorkspace();
    ws2 = await t.createWorkspace();
    for (const [ws, email] of [
      [ws1, ANN],
      [ws1, BOB],
      [ws2, CY],
      [ws2, DEE],
    ] as const) {
      const { data, response } = await ws.client.POST('/v2/account/connect', { body: provider.connectBody(email) });
      expect(response.status).toBe(201);
      ids[email] = data!.data.account.id;
    }
    const created = await ws1.client.POST('/v2/webhook/create', {
      body: { url: hooks.url, eventTypes: ['account.warmupEnabled', 'account.warmupPaused', 'account.statusChanged'] },
    });
    expect(created.response.status).toBe(201);
    // A pool-only mailbox (the admin CLI's `warmup mailbox add`): a partner that never sends campaigns.
    await t.services.warmup.addMailbox({
      email: EVE,
      password: provider.password(EVE),
      smtpHost: '127.0.0.1',
      smtpPort: provider.smtpPort,
      imapHost: '127.0.0.1',
      imapPort: provider.imapPort,
    });
    provider.spamFrom(ANN);
  });
  afterAll(async () => {
    t?.services.mail.close();
    await t?.close();
    await provider?.close();
    await hooks?.close();
  });

  it('sends each enabled account its first warm-up email within a minute, to other pool members', async () => {
    for (const [ws, email] of [
      [ws1, ANN],
      [ws1, BOB],
      [ws2, CY],
      [ws2, DEE],
    ] as const) {
      const res = await ws.client.POST('/v1/account/warmup/enable', {
        body: { accountId: ids[email], warmup: { dailyLimit: 10, increasePerDay: 2, replyRatePercent: 100 } },
      });
      expect(res.data!.data.account.warmup).toMatchObject({
        enabled: true,
        status: 'active',
        inPool: true,
        reason: null,
      });
    }
    expect(await t.services.warmup.listPool()).toHaveLength(5);
    // The worker's next run (every few seconds) takes the new members in; each sends within the next half minute.
    const right = await t.services.warmup.sender.runOnce();
    t.clock.advance(31_000);
    expect(right + (await t.services.warmup.sender.runOnce())).toBe(4);
    const sent = await messages();
    expect(sent.map((m) => m.status)).toEqual(['sent', 'sent', 'sent', 'sent']);
    for (const m of sent) {
      expect(m.recipient_email).not.toBe(m.sender_email);
      expect([ANN, BOB, CY, DEE, EVE]).toContain(m.recipient_email);
      // The marker only the pool's key recognises is in the body.
      expect(hasMarker(t.services.warmup['key'](), m.message_id, m.text)).toBe(true);
    }
    // Ann's mail is filed in Junk by the provider's spam rule; the others' in INBOX.
    for (const d of provider.deliveries) expect(d.folder).toBe(d.from === ANN ? 'Junk' : 'INBOX');
    expect((await account(ws1, ANN)).warmupSentToday).toBe(1);
    // Nothing else is due in the same minute: the next send waits its gap.
    expect(await t.services.warmup.sender.runOnce()).toBe(0);
  });

  it('passes over a 20 MB and a malformed message, rescues spam, marks read, answers in thread and archives', async () => {
    const big = Buffer.concat([
      Buffer.from('From: x@y.test\r\nSubject: huge\r\nMessage-ID: <huge@y.test>\r\n\r\n'),
      Buffer.alloc(20 * 1024 * 1024, 'a'),
    ]);
    for (const email of [ANN, BOB, CY, DEE, EVE])
      provider.imap.deliverDirect(email, [big, Buffer.from('\u0000\u0001 not a message at all')]);
    // The campaign inbox reader looks at the same INBOXes and stores none of it.
    await t.services.inbox.runOnce();
    // Only mailboxes expecting warm-up mail are opened: the recipients of the four emails.
    const recipients = new Set((await messages()).map((m) => m.recipient_id));
    expect(await t.services.warmup.reader.runOnce()).toBe(recipients.size);
    const seen = (await messages()).filter((m) => m.kind === 'first');
    for (const m of seen) {
      expect(m.landed).toBe(m.sender_email === ANN ? 'spam' : 'inbox');
      expect(m.rescued_at !== null).toBe(m.sender_email === ANN);
      const where = await provider.locate(m.recipient_email, `<${m.message_id}>`);
      expect(where).toEqual([
        { mailbox: 'Warmup', uid: expect.any(Number), flags: expect.arrayContaining(['\\Seen']) },
      ]);
    }
    const replies = await t.db('warmup_messages').where({ kind: 'reply' }).select<WarmupMessageRow[]>();
    // Reply rate 100%, but pool-only mailboxes answer too; each first email gets one answer.
    expect(replies).toHaveLength(4);
    expect(replies.every((r) => r.status === 'scheduled' && r.send_at > t.clock.now())).toBe(true);

    // Human delay: nothing before 5 minutes, all within 45.
    t.clock.advance(46 * 60_000);
    await t.services.warmup.sender.runOnce();
    const answered = await t.db('warmup_messages').where({ kind: 'reply' }).select<WarmupMessageRow[]>();
    expect(answered.map((r) => r.status)).toEqual(['sent', 'sent', 'sent', 'sent']);
    for (const r of answered) {
      const parent = seen.find((m) => m.id === r.parent_id)!;
      expect(r.subject).toBe(`Re: ${parent.subject}`);
      const delivery = provider.deliveries.find((d) => d.messageId === `<${r.message_id}>`)!;
      expect(delivery.subject).toBe(`Re: ${parent.subject}`);
    }
    expect((await messages()).filter((m) => m.kind === 'first' && m.replied_at !== null)).toHaveLength(4);
    await t.services.warmup.reader.runOnce();
    const replyPlaces = await t.db('warmup_messages').where({ kind: 'reply' }).whereNotNull('seen_at');
    expect(replyPlaces).toHaveLength(4);
  });

  it('shows the figures in the summary and keeps the unibox and campaign analytics untouched', async () => {
    const all = await messages();
    // What the pool's record holds for one account, counted here the plain way.
    const expected = (email: string) => {
      const mine = all.filter((m) => m.sender_email === email);
      return {
        sent: mine.length,
        received: all.filter((m) => m.recipient_email === email && m.seen_at).length,
        landedInbox: mine.filter((m) => m.landed === 'inbox').length,
        landedSpam: mine.filter((m) => m.landed === 'spam').length,
        rescued: mine.filter((m) => m.rescued_at).length,
        replied: mine.filter((m) => m.replied_at).length,
        bounced: 0,
      };
    };
    const ann = await summary(ws1, ANN);
    // Every one of Ann's emails (her first and her answers) landed in spam and was rescued; her first got an answer.
    expect(ann.totals).toEqual(expected(ANN));
    expect(ann.totals).toMatchObject({ landedInbox: 0, rescued: ann.totals.landedSpam, replied: 1 });
    expect(ann.totals.landedSpam).toBeGreaterThanOrEqual(1);
    expect(ann.health).toEqual({ days: 7, landedInbox: 0, landedSpam: ann.totals.landedSpam, score: 0, label: 'poor' });
    expect(ann.graph.at(-1)).toEqual({ date: '2026-11-23', ...ann.totals });
    expect(ann.graph).toHaveLength(30);
    const bob = await summary(ws1, BOB);
    expect(bob.totals).toEqual(expected(BOB));
    expect(bob.totals).toMatchObject({ landedSpam: 0, replied: 1 });
    expect(bob.health).toMatchObject({ score: 100, label: 'excellent' });
    expect(bob.sentToday).toBe(bob.totals.sent);
    expect(await summary(ws2, CY)).toMatchObject({ totals: expected(CY) });

    for (const ws of [ws1, ws2]) {
      expect((await ws.client.GET('/v2/email/list', { params: { query: {} } })).data!.data.items).toEqual([]);
      expect(
        (await ws.client.GET('/v1/analytics/campaign/count', { params: { query: {} } })).data!.data.emails.sent,
      ).toBe(0);
    }
    // Another workspace's account is a 404.
    const foreign = await ws2.client.GET('/v1/analytics/account/warmup/summary', {
      params: { query: { accountId: ids[ANN] } },
    });
    expect(foreign.response.status).toBe(404);
  });

  it('skips a partner that refuses (mailbox full) with the reason, and says why when no partner is left', async () => {
    for (const email of [ANN, BOB, DEE, EVE]) provider.refuse(email, 'full');
    await t.db('warmup_members').where({ member_id: ids[CY] }).update({ next_send_at: t.clock.now() });
    const before = provider.deliveries.length;
    await t.services.warmup.sender.runOnce();
    const last = await found(
      t
        .db('warmup_messages')
        .where({ sender_id: ids[CY], kind: 'first', status: 'failed' })
        .first<WarmupMessageRow | undefined>(),
      'failed warm-up message',
    );
    expect(last.status_reason).toMatch(/^partner_refused: 552/);
    expect(
      (
        await found(
          t.db('warmup_members').where({ member_id: last.recipient_id }).first<MemberRow | undefined>(),
          'pool member',
        )
      ).skip_until,
    ).not.toBeNull();
    // Each refusing partner costs one try, never a loop: after all four, the pool has nobody left for Cy.
    for (let i = 0; i < 4; i += 1) {
      await t.db('warmup_members').where({ member_id: ids[CY] }).update({ next_send_at: t.clock.now() });
      await t.services.warmup.sender.runOnce();
    }
    expect(provider.deliveries.length - before).toBe(4);
    const cy = await account(ws2, CY);
    expect(cy.status).toBe('active');
    expect(cy.warmup).toMatchObject({ status: 'active', inPool: true, reason: { code: 'pool_too_small' } });
    for (const email of [ANN, BOB, DEE, EVE]) provider.refuse(email, null);
    await t.db('warmup_members').update({ skip_until: null });
  });

  it('pauses an account whose warm-up email hard-bounces, with the reason and an event at the webhook', async () => {
    for (const email of [ANN, CY, DEE, EVE]) provider.refuse(email, 'unknown');
    await t.db('warmup_members').where({ member_id: ids[BOB] }).update({ next_send_at: t.clock.now() });
    await t.services.warmup.sender.runOnce();
    const bob = await account(ws1, BOB);
    expect(bob.warmup).toMatchObject({
      enabled: false,
      status: 'paused',
      inPool: false,
      reason: { code: 'hard_bounce', message: expect.stringMatching(/bounced: 550/) },
    });
    expect((await summary(ws1, BOB)).totals.bounced).toBe(1);
    for (const email of [ANN, CY, DEE, EVE]) provider.refuse(email, null);

    while ((await t.services.webhooks.runOnce()) > 0);
    const events = hooks.received.map((h) =>
      readHook<'account.warmupEnabled' | 'account.warmupPaused' | 'account.statusChanged'>(h),
    );
    expect(
      events
        .filter((e) => e.type === 'account.warmupEnabled')
        .map((e) => e.data.email)
        .sort(),
    ).toEqual([BOB, ANN].sort());
    expect(events.find((e) => e.type === 'account.warmupPaused')).toMatchObject({
      data: { email: BOB, reason: { code: 'hard_bounce' } },
    });
    // Workspace 2's events go to nobody here: the subscription is workspace 1's.
    expect(events.some((e) => [CY, DEE].includes(e.data.email))).toBe(false);
  });

  it('never sends one warm-up email twice from two workers', async () => {
    const second = createServices(t.deps);
    const due = [ANN, CY, DEE].map((e) => ids[e]);
    await t.db('warmup_members').whereIn('member_id', due).update({ next_send_at: t.clock.now() });
    const before = await t.db('warmup_messages').count<{ n: string }[]>({ n: '*' });
    const [a, b] = await Promise.all([t.services.warmup.sender.runOnce(), second.warmup.sender.runOnce()]);
    second.mail.close();
    expect(a + b).toBe(3);
    const after = await t.db('warmup_messages').count<{ n: string }[]>({ n: '*' });
    expect(Number(after[0].n) - Number(before[0].n)).toBe(3);
    const ids2 = provider.deliveries.filter((d) => d.folder).map((d) => `${d.to} ${d.messageId}`);
    expect(ids2.filter((id, i) => ids2.indexOf(id) !== i)).toEqual([]);
  });
});

describe('warm-up pool of one', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer({ config: { secretKey: '89'.repeat(32) } });
    t.clock.set('2026-11-23T10:00:00.000Z');
  });
  afterAll(async () => {
    t?.services.mail.close();
    await t?.close();
  });

  it('sends nothing and says why', async () => {
    const ws = await t.createWorkspace();
    const { data } = await ws.client.POST('/v2/account/connect', {
      body: {
        email: 'solo@acme.io',
        provider: 'smtp',
        smtp: { host: 'smtp.acme.io', port: 587, password: 'pw' },
        imap: { host: 'imap.acme.io', port: 993, password: 'pw' },
        warmup: {},
      },
    });
    const id = data!.data.account.id;
    await t.services.warmup.sender.runOnce();
    t.clock.advance(60_000);
    expect(await t.services.warmup.sender.runOnce()).toBe(0);
    const got = await ws.client.GET('/v1/account/list', { params: { query: {} } });
    expect(got.data!.data.items.find((a) => a.id === id)!.warmup).toMatchObject({
      status: 'active',
      reason: {
        code: 'pool_too_small',
        message: 'No other mailbox in the warm-up pool can take mail now: it sends nothing until one joins.',
      },
    });
    expect(await t.db('warmup_messages')).toEqual([]);
  });
});
