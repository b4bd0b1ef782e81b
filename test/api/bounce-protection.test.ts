/**
 * Bounce protection that can be tuned, through HTTP and the SMTP sink on loopback: the workspace's account
 * rule (`POST /v2/sending/settings`), an account's own rule (`POST /v2/account/update`), and the campaign rule
 * that pauses a campaign with its reason and event. Hard bounces are the sink's 550 at RCPT.
 */
import { expect } from '@jest/globals';
import { startSmtpSink, type SmtpSink } from '../helpers/smtp-sink';
import { startTestServer, type TestServer, type TestWorkspace } from '../helpers/server';

const weekdaysUtc = { timezone: 'UTC', days: [1, 2, 3, 4, 5], from: '09:00', to: '17:00' };
const DEFAULTS = {
  recipientDomainDailyLimit: null,
  bounceRatePercent: 5,
  bounceWindow: 40,
  campaignBounceRatePercent: null,
  campaignBounceWindow: 100,
};

describe('bounce protection', () => {
  let t: TestServer;
  let sink: SmtpSink;
  let n = 0;

  beforeAll(async () => {
    sink = await startSmtpSink();
    t = await startTestServer({
      config: { secretKey: '44'.repeat(32), allowPrivateMailHosts: true, smtpTimeoutMs: 1000 },
    });
    t.clock.set('2026-11-23T10:00:00.000Z'); // a Monday, inside 09:00-17:00 UTC
  });
  afterAll(async () => {
    t.services.mail.close();
    await t.close();
    await sink.close();
  });

  async function connect(ws: TestWorkspace) {
    n += 1;
    const res = await ws.client.POST('/v2/account/connect', {
      body: {
        email: `s${n}@acme-mail.io`,
        provider: 'smtp',
        smtp: { host: '127.0.0.1', port: sink.port, password: 'pw' },
      },
    });
    expect(res.response.status).toBe(201);
    return res.data!.data.account.id;
  }

  /** A launched campaign of one step from `accountId`, no contacts yet. */
  async function campaign(ws: TestWorkspace, accountId: string) {
    const created = await ws.client.POST('/v2/campaign/create', {
      body: {
        name: `Bounces ${n}`,
        accountIds: [accountId],
        schedule: weekdaysUtc,
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

  /** Adds contacts and runs the engine once: every one of them is sent or bounced. */
  async function send(ws: TestWorkspace, campaignId: string, emails: string[]) {
    await ws.client.POST('/v1/contact/add', {
      body: { campaignId, contacts: emails.map((email) => ({ email })) } as never,
    });
    await t.services.sending.runOnce();
  }

  /** 3 delivered, then 2 hard bounces: 40% of the last 5 sends. */
  async function threeSentTwoBounced(ws: TestWorkspace, campaignId: string) {
    await send(ws, campaignId, [`ok1-${n}@x.test`, `ok2-${n}@x.test`, `ok3-${n}@x.test`]);
    for (const bad of [`gone1-${n}@x.test`, `gone2-${n}@x.test`])
      sink.faults.set(bad, { at: 'rcpt', code: 550, message: '5.1.1 No such user' });
    await send(ws, campaignId, [`gone1-${n}@x.test`, `gone2-${n}@x.test`]);
  }

  const accountStatus = async (ws: TestWorkspace, accountId: string) =>
    (await ws.client.GET('/v1/account/status', { params: { query: { accountId } } })).data!.data;

  const events = async (ws: TestWorkspace, type: 'account.statusChanged' | 'campaign.paused') =>
    (await ws.client.GET('/v2/event/list', { params: { query: { types: [type] } } })).data!.data.items.map(
      (e) => e.data,
    );

  it('answers the defaults, changes what the body names, refuses bad numbers, and keeps workspaces apart', async () => {
    const ws = await t.createWorkspace();
    const other = await t.createWorkspace();
    expect((await ws.client.GET('/v2/sending/settings')).data!.data.settings).toEqual(DEFAULTS);

    for (const body of [{ bounceWindow: 2 }, { bounceRatePercent: 0 }, { campaignBounceRatePercent: 101 }]) {
      const bad = await ws.client.POST('/v2/sending/settings', { body });
      expect(bad.response.status).toBe(400);
      expect(bad.error!.details[0].field).toBe(`body.${Object.keys(body)[0]}`);
    }

    const changed = await ws.client.POST('/v2/sending/settings', {
      body: { bounceRatePercent: 2.5, campaignBounceRatePercent: 10, campaignBounceWindow: 200 },
    });
    expect(changed.data!.data.settings).toEqual({
      ...DEFAULTS,
      bounceRatePercent: 2.5,
      campaignBounceRatePercent: 10,
      campaignBounceWindow: 200,
    });
    const off = await ws.client.POST('/v2/sending/settings', { body: { campaignBounceRatePercent: null } });
    expect(off.data!.data.settings).toMatchObject({ bounceRatePercent: 2.5, campaignBounceRatePercent: null });
    expect((await other.client.GET('/v2/sending/settings')).data!.data.settings).toEqual(DEFAULTS);
  });

  it("pauses an account by the workspace's tuned rate and window, with its reason and event", async () => {
    const ws = await t.createWorkspace();
    await ws.client.POST('/v2/sending/settings', { body: { bounceRatePercent: 20, bounceWindow: 5 } });
    const accountId = await connect(ws);
    const campaignId = await campaign(ws, accountId);
    await threeSentTwoBounced(ws, campaignId);
    // The default rule (5% of the last 40) would wait for 40 sends; the tuned one trips at 5.
    const status = await accountStatus(ws, accountId);
    expect(status).toMatchObject({ status: 'paused', canSend: false });
    expect(status.statusReason).toBe('bounce_rate: 2 hard bounces in the last 5 sends (more than 20%)');
    expect(await events(ws, 'account.statusChanged')).toEqual([
      {
        accountId,
        email: `s${n}@acme-mail.io`,
        previous: 'active',
        status: 'paused',
        reason: 'bounce_rate: 2 hard bounces in the last 5 sends (more than 20%)',
      },
    ]);
    // The campaign rule is off by default: the campaign was not paused (every contact finished).
    const campaignStatus = await ws.client.GET('/v1/campaign/get/status', { params: { query: { campaignId } } });
    expect(campaignStatus.data!.data).toMatchObject({ status: 'completed', pauseReason: null });
  });

  it("an account's own rule wins over the workspace's, and is shown on the account", async () => {
    const ws = await t.createWorkspace();
    await ws.client.POST('/v2/sending/settings', { body: { bounceRatePercent: 20, bounceWindow: 5 } });
    const accountId = await connect(ws);
    const updated = await ws.client.POST('/v2/account/update', {
      body: { accountId, bounceProtection: { ratePercent: 50, window: 5 } },
    });
    expect(updated.data!.data.account.bounceProtection).toEqual({ ratePercent: 50, window: 5 });
    await threeSentTwoBounced(ws, await campaign(ws, accountId));
    expect((await accountStatus(ws, accountId)).status).toBe('active');

    const bad = await ws.client.POST('/v2/account/update', {
      body: { accountId, bounceProtection: { ratePercent: 50, window: 1 } },
    });
    expect(bad.response.status).toBe(400);
    expect(bad.error!.details[0].field).toBe('body.bounceProtection.window');
    const other = await t.createWorkspace();
    const foreign = await other.client.POST('/v2/account/update', {
      body: { accountId, bounceProtection: { ratePercent: 1, window: 5 } },
    });
    expect(foreign.response.status).toBe(404);
    const list = await ws.client.GET('/v1/account/list');
    expect(list.data!.data.items[0].bounceProtection).toEqual({ ratePercent: 50, window: 5 });
  });

  it('pauses a campaign past its threshold with the reason bounce_rate and campaign.paused; launch clears it', async () => {
    const ws = await t.createWorkspace();
    await ws.client.POST('/v2/sending/settings', {
      body: { bounceRatePercent: 100, campaignBounceRatePercent: 30, campaignBounceWindow: 5 },
    });
    const accountId = await connect(ws);
    const campaignId = await campaign(ws, accountId);
    await threeSentTwoBounced(ws, campaignId);
    const message = '2 hard bounces in the last 5 sends (more than 30%).';
    const status = await ws.client.GET('/v1/campaign/get/status', { params: { query: { campaignId } } });
    expect(status.data!.data).toMatchObject({ status: 'paused', pauseReason: { code: 'bounce_rate', message } });
    expect(await events(ws, 'campaign.paused')).toEqual([
      { campaignId, name: `Bounces ${n}`, reason: 'bounce_rate', message },
    ]);
    // The account's rule (100%) never trips: only the campaign stopped.
    expect((await accountStatus(ws, accountId)).status).toBe('active');

    await ws.client.POST('/v1/contact/add', {
      body: { campaignId, contacts: [{ email: `later-${n}@x.test` }] } as never,
    });
    const relaunched = await ws.client.POST('/v2/campaign/launch', { body: { campaignId } });
    expect(relaunched.data!.data.campaign).toMatchObject({ status: 'active', pauseReason: null });
    const paused = await ws.client.POST('/v2/campaign/pause', { body: { campaignId } });
    expect(paused.data!.data.campaign.pauseReason).toEqual({
      code: 'user',
      message: 'Paused with POST /v2/campaign/pause.',
    });
  });
});
