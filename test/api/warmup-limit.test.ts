/**
 * Warm-up answers count and wait like every send: an account whose day is full (campaign and warm-up mail
 * together at its daily limit) does not send a due answer to a partner; the answer goes out on its next day.
 * Two accounts of one workspace on the loopback mail provider; time is the test clock, the jobs run by hand.
 */
import { expect } from '@jest/globals';
import { startTestServer, type TestServer, type TestWorkspace } from '../helpers/server';
import { describeWithDovecot } from '../helpers/imap-server';
import { startMailProvider, type MailProvider } from '../helpers/mail-provider';
import type { WarmupMessageRow } from '../../server/modules/warmup/store';

jest.setTimeout(180_000);

const ANN = 'ann@gmail.test';
const BOB = 'bob@outlook.test';
const CONTACTS = ['c1@x.test', 'c2@x.test', 'c3@x.test', 'c4@x.test'];
const allWeek = { timezone: 'UTC', days: [0, 1, 2, 3, 4, 5, 6], from: '00:00', to: '23:59' };

describeWithDovecot('warm-up answers and the daily limit', () => {
  let t: TestServer;
  let provider: MailProvider;
  let ws: TestWorkspace;
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    // c1-c4: campaign contacts' mailboxes (the provider refuses unknown recipients).
    provider = await startMailProvider({ mailboxes: [ANN, BOB, ...CONTACTS] });
    t = await startTestServer({ config: { secretKey: '69'.repeat(32), allowPrivateMailHosts: true } });
    t.clock.set('2026-11-23T10:00:00.000Z');
    ws = await t.createWorkspace();
    for (const email of [ANN, BOB]) {
      const { data, response } = await ws.client.POST('/v2/account/connect', { body: provider.connectBody(email) });
      expect(response.status).toBe(201);
      ids[email] = data!.data.account.id;
      const enabled = await ws.client.POST('/v1/account/warmup/enable', {
        body: { accountId: ids[email], warmup: { dailyLimit: 10, increasePerDay: 2, replyRatePercent: 100 } },
      });
      expect(enabled.response.status).toBe(200);
    }
  });
  afterAll(async () => {
    t?.services.mail.close();
    await t?.close();
    await provider?.close();
  });

  const replyOf = async (sender: string) =>
    (await t.db<WarmupMessageRow>('warmup_messages').where({ kind: 'reply', sender_id: ids[sender] }).first())!;

  it('holds a due answer of an account whose day is full until its next day', async () => {
    // Each writes its first warm-up email to the other; each mailbox is read and the answers scheduled.
    const right = await t.services.warmup.sender.runOnce();
    t.clock.advance(31_000);
    expect(right + (await t.services.warmup.sender.runOnce())).toBe(2);
    expect(await t.services.warmup.reader.runOnce()).toBe(2);
    expect((await replyOf(ANN)).status).toBe('scheduled');

    // Ann's day fills with a campaign: 1 warm-up email + 3 campaign emails = her limit of 4.
    await t.db('email_accounts').where({ id: ids[ANN] }).update({ daily_limit: 4 });
    const created = await ws.client.POST('/v2/campaign/create', {
      body: {
        name: 'Fill the day',
        accountIds: [ids[ANN]],
        schedule: allWeek,
        options: { emailGapMinutes: 0, randomWaitMaxMinutes: 0 },
      } as never,
    });
    const campaignId = created.data!.data.campaign.id;
    await ws.client.POST('/v2/campaign/sequence-create', {
      body: { campaignId, steps: [{ delayDays: 0, variants: [{ subject: 'Hello', body: 'Hi' }] }] } as never,
    });
    await ws.client.POST('/v1/contact/add', {
      body: { campaignId, contacts: CONTACTS.map((email) => ({ email })) } as never,
    });
    expect((await ws.client.POST('/v2/campaign/launch', { body: { campaignId } })).response.status).toBe(200);
    // Three go out; the fourth is held back by the limit.
    expect(await t.services.sending.runOnce()).toBe(3);
    const status = await ws.client.GET('/v1/account/status', { params: { query: { accountId: ids[ANN] } } });
    expect(status.data!.data).toMatchObject({ canSend: false, reason: 'dailyLimitReached', remainingToday: 0 });

    // The answers fall due: Bob's goes out, Ann's waits for her next day.
    t.clock.advance(46 * 60_000);
    await t.services.warmup.sender.runOnce();
    expect((await replyOf(BOB)).status).toBe('sent');
    const held = await replyOf(ANN);
    expect(held.status).toBe('scheduled');
    expect(new Date(held.send_at).getTime()).toBeGreaterThanOrEqual(Date.parse('2026-11-24T00:00:00.000Z'));
    const today = (
      await ws.client.GET('/v1/account/list', { params: { query: { limit: 100 } } })
    ).data!.data.items.find((a) => a.id === ids[ANN])!;
    expect(today.sentToday + today.warmupSentToday).toBe(4);
    // A campaign contact is still held back too.
    expect(await t.services.sending.runOnce()).toBe(0);

    // Her next day: the answer goes out.
    t.clock.set('2026-11-24T12:00:00.000Z');
    await t.services.warmup.sender.runOnce();
    expect((await replyOf(ANN)).status).toBe('sent');
  });
});
