/**
 * Spam protection of the warm-up pool through HTTP on the loopback provider: an account whose warm-up mail
 * the provider files in Junk (its spam rule, by sender) is paused with `spam_placement` once most of at least
 * 10 placements over the last 7 days were spam, not before; placements older than 7 days do not count, and
 * spam that is not the majority does not pause. The pause reaches a webhook. Time is the test clock; the jobs
 * are run by hand.
 */
import { expect } from '@jest/globals';
import { readHook } from '../helpers/bodies';
import { describeWithDovecot } from '../helpers/imap-server';
import { startMailProvider, type MailProvider } from '../helpers/mail-provider';
import { startTestServer, type TestServer, type TestWorkspace } from '../helpers/server';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver';

jest.setTimeout(180_000);

const SAM = 'sam@spammy.test';
const CLEO = 'cleo@clean.test';
const SEEDS = ['p1@gmail.test', 'p2@yahoo.test', 'p3@aol.test'];
const DAY = 86_400_000;

describeWithDovecot('warm-up spam protection', () => {
  let t: TestServer;
  let provider: MailProvider;
  let hooks: WebhookReceiver;
  let ws: TestWorkspace;
  let sam: string;
  let cleo: string;

  const warmupOf = async (id: string) =>
    (await ws.client.GET('/v1/account/list', { params: { query: { limit: 100 } } })).data!.data.items.find(
      (a) => a.id === id,
    )!.warmup;
  const health = async (id: string) =>
    (await ws.client.GET('/v1/analytics/account/warmup/summary', { params: { query: { accountId: id } } })).data!.data
      .health;
  /** Each account sends one warm-up email now; a minute later the readers look where it landed. */
  const round = async () => {
    await t.db('warmup_members').whereIn('member_id', [sam, cleo]).update({ next_send_at: t.clock.now() });
    await t.services.warmup.sender.runOnce();
    t.clock.advance(61_000);
    await t.services.warmup.reader.runOnce();
  };

  beforeAll(async () => {
    provider = await startMailProvider({ mailboxes: [SAM, CLEO, ...SEEDS] });
    hooks = await startWebhookReceiver();
    t = await startTestServer({
      config: { secretKey: '23'.repeat(32), allowPrivateMailHosts: true, allowPrivateWebhooks: true },
    });
    t.clock.set('2026-11-23T08:00:00.000Z');
    ws = await t.createWorkspace();
    const warmup = { dailyLimit: 40, increasePerDay: 40, replyRatePercent: 0 };
    const connect = async (email: string) =>
      (await ws.client.POST('/v2/account/connect', { body: { ...provider.connectBody(email), warmup } })).data!.data
        .account.id;
    sam = await connect(SAM);
    cleo = await connect(CLEO);
    for (const email of SEEDS) {
      await t.services.warmup.addMailbox({
        email,
        password: provider.password(email),
        smtpHost: '127.0.0.1',
        smtpPort: provider.smtpPort,
        imapHost: '127.0.0.1',
        imapPort: provider.imapPort,
      });
    }
    expect(
      (await ws.client.POST('/v2/webhook/create', { body: { url: hooks.url, eventTypes: ['account.warmupPaused'] } }))
        .response.status,
    ).toBe(201);
    // The pool takes the members in.
    await t.services.warmup.sender.runOnce();
    provider.spamFrom(SAM);
  }, 120_000);
  afterAll(async () => {
    t?.services.mail.close();
    await t?.close();
    await provider?.close();
    await hooks?.close();
  });

  it('keeps an account in the pool while fewer than 10 placements were seen, even all spam', async () => {
    for (let i = 0; i < 9; i += 1) await round();
    expect(await health(sam)).toEqual({ days: 7, landedInbox: 0, landedSpam: 9, score: 0, label: 'poor' });
    expect(await warmupOf(sam)).toMatchObject({ enabled: true, status: 'active', reason: null });
    // What the provider did is what the pool recorded: every one of Sam's emails went to Junk.
    expect(provider.deliveries.filter((d) => d.from === SAM).map((d) => d.folder)).toEqual(Array(9).fill('Junk'));
  });

  it('pauses it with spam_placement at the 10th spam placement, with an event at the webhook', async () => {
    await round();
    expect(await warmupOf(sam)).toMatchObject({
      enabled: false,
      status: 'paused',
      inPool: false,
      reason: {
        code: 'spam_placement',
        message: "10 of the last 7 days' 10 warm-up emails landed in spam (health 0%).",
      },
    });
    // Cleo's mail lands in the inbox: she stays.
    expect(await health(cleo)).toMatchObject({ landedInbox: 10, landedSpam: 0, label: 'excellent' });
    expect(await warmupOf(cleo)).toMatchObject({ enabled: true, status: 'active', reason: null });
    // A paused account sends no more warm-up mail.
    const before = provider.deliveries.filter((d) => d.from === SAM).length;
    await round();
    expect(provider.deliveries.filter((d) => d.from === SAM)).toHaveLength(before);

    while ((await t.services.webhooks.runOnce()) > 0);
    const events = hooks.received.map((h) => readHook<'account.warmupPaused'>(h));
    expect(events).toEqual([
      expect.objectContaining({
        type: 'account.warmupPaused',
        data: expect.objectContaining({ accountId: sam, reason: expect.objectContaining({ code: 'spam_placement' }) }),
      }),
    ]);
  });

  it('counts the last 7 days only, and pauses only when spam is the majority', async () => {
    t.clock.advance(8 * DAY);
    const enabled = await ws.client.POST('/v1/account/warmup/enable', { body: { accountId: sam } });
    expect(enabled.data!.data.account.warmup).toMatchObject({ enabled: true, status: 'active', reason: null });
    // 5 in spam, then 5 in the inbox: 10 placements, half spam: no pause (the 10 of 8 days ago are out of the window).
    for (let i = 0; i < 5; i += 1) await round();
    provider.clearSpamRules();
    for (let i = 0; i < 5; i += 1) await round();
    expect(await health(sam)).toMatchObject({ landedInbox: 5, landedSpam: 5, score: 50 });
    expect(await warmupOf(sam)).toMatchObject({ enabled: true, status: 'active' });
    // One more in spam tips it: 6 of 11.
    provider.spamFrom(SAM);
    await round();
    expect(await warmupOf(sam)).toMatchObject({
      enabled: false,
      status: 'paused',
      reason: {
        code: 'spam_placement',
        message: "6 of the last 7 days' 11 warm-up emails landed in spam (health 45.45%).",
      },
    });
  });
});
