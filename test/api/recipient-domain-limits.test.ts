/**
 * Caps per recipient domain through HTTP, with sends to the SMTP sink over a moved clock: a campaign's cap
 * across its accounts, the workspace's cap across campaigns, and a contact held back waiting for the next
 * day with the reason `recipient_domain_limit` in the contact's progress and the campaign's sending status.
 */
import { startSmtpSink, type SmtpSink } from '../helpers/smtp-sink';
import { startTestServer, type TestServer, type TestWorkspace } from '../helpers/server';

const everyDay = { timezone: 'UTC', days: [0, 1, 2, 3, 4, 5, 6], from: '00:00', to: '23:59' };

describe('limits per recipient domain', () => {
  let t: TestServer;
  let sink: SmtpSink;
  let ws: TestWorkspace;

  beforeAll(async () => {
    sink = await startSmtpSink();
    t = await startTestServer({
      config: { secretKey: '33'.repeat(32), allowPrivateMailHosts: true, publicUrl: 'https://links.example.test' },
    });
    t.clock.set('2026-11-23T10:00:00.000Z');
    ws = await t.createWorkspace();
  });
  afterAll(async () => {
    t.services.mail.close();
    await t.close();
    await sink.close();
  });

  async function connect(email: string) {
    const res = await ws.client.POST('/v2/account/connect', {
      body: { email, provider: 'smtp', smtp: { host: '127.0.0.1', port: sink.port, password: 'pw' } },
    });
    expect(res.response.status).toBe(201);
    return res.data!.data.account.id;
  }

  async function launch(accountIds: string[], emails: string[], recipientDomainDailyLimit: number | null = null) {
    const created = await ws.client.POST('/v2/campaign/create', {
      body: {
        name: `Campaign ${emails[0]}`,
        accountIds,
        schedule: everyDay,
        options: { emailGapMinutes: 0, randomWaitMaxMinutes: 0, recipientDomainDailyLimit },
      },
    });
    expect(created.response.status).toBe(201);
    const campaignId = created.data!.data.campaign.id;
    await ws.client.POST('/v2/campaign/sequence-create', {
      body: { campaignId, steps: [{ delayDays: 0, variants: [{ subject: 'Hi', body: 'Hello' }] }] },
    } as never);
    const added = await ws.client.POST('/v1/contact/add', {
      body: { campaignId, contacts: emails.map((email) => ({ email })) },
    });
    await ws.client.POST('/v2/campaign/launch', { body: { campaignId } });
    const ids = new Map<string, string>(added.data!.data.added.map((c) => [c.email, c.id]));
    return { campaignId, ids };
  }

  const sentTo = (domain: string) =>
    sink.received.filter((m) => m.envelope.to.some((to) => to.endsWith(`@${domain}`))).length;
  const progress = async (contactId: string) =>
    (await ws.client.GET('/v1/contact/get', { params: { query: { contactId } } })).data!.data.progress;

  it('caps a campaign’s emails a day to one domain across its accounts, and sends the rest the next day', async () => {
    const accounts = [await connect('ana@acme.test'), await connect('ben@acme.test')];
    const { campaignId, ids } = await launch(
      accounts,
      ['a@globex.test', 'b@globex.test', 'c@globex.test', 'd@initech.test', 'e@initech.test'],
      2,
    );
    expect(await t.services.sending.runOnce()).toBe(4);
    expect(sentTo('globex.test')).toBe(2);
    expect(sentTo('initech.test')).toBe(2);
    // Both accounts sent: the cap counts the campaign, not one account.
    expect(new Set(sink.received.map((m) => m.envelope.from)).size).toBe(2);
    expect(await progress(ids.get('c@globex.test')!)).toMatchObject({
      state: 'waiting',
      reason: 'recipient_domain_limit',
      nextDueAt: '2026-11-24T00:00:00.000Z',
    });
    const status = await ws.client.GET('/v2/campaign/sending-status', { params: { query: { campaignId } } });
    expect(status.data!.data.reasons).toContain('recipient_domain_limit');

    t.clock.set('2026-11-23T18:00:00.000Z');
    expect(await t.services.sending.runOnce()).toBe(0);
    t.clock.set('2026-11-24T00:05:00.000Z');
    expect(await t.services.sending.runOnce()).toBe(1);
    expect(sentTo('globex.test')).toBe(3);
    expect(await progress(ids.get('c@globex.test')!)).toMatchObject({ state: 'done', reason: null });
  });

  it('caps a domain across the workspace’s campaigns with the workspace setting', async () => {
    expect((await ws.client.GET('/v2/sending/settings')).data!.data.settings).toMatchObject({
      recipientDomainDailyLimit: null,
    });
    const bad = await ws.client.POST('/v2/sending/settings', { body: { recipientDomainDailyLimit: 0 } });
    expect(bad.response.status).toBe(400);
    const set = await ws.client.POST('/v2/sending/settings', { body: { recipientDomainDailyLimit: 1 } });
    expect(set.data!.data.settings).toMatchObject({ recipientDomainDailyLimit: 1 });

    const account = await connect('cy@acme.test');
    const first = await launch([account], ['x@hooli.test']);
    const second = await launch([account], ['y@hooli.test', 'z@piedpiper.test']);
    expect(await t.services.sending.runOnce()).toBe(2);
    expect(sentTo('hooli.test')).toBe(1);
    expect(sentTo('piedpiper.test')).toBe(1);
    const waiting = [await progress(first.ids.get('x@hooli.test')!), await progress(second.ids.get('y@hooli.test')!)];
    expect(waiting.map((p) => p?.reason).sort()).toEqual([null, 'recipient_domain_limit']);

    // Another workspace's mail does not count.
    const other = await t.createWorkspace();
    expect((await other.client.GET('/v2/sending/settings')).data!.data.settings.recipientDomainDailyLimit).toBeNull();

    t.clock.set('2026-11-25T00:01:00.000Z');
    expect(await t.services.sending.runOnce()).toBe(1);
    expect(sentTo('hooli.test')).toBe(2);
  });
});
