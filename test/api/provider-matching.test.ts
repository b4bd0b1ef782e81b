/**
 * Provider matching through HTTP: recipients' providers from their MX on the loopback DNS server (looked up
 * once per domain), first emails sent from an account of the same provider when the campaign asks, any
 * account otherwise or when none of that provider is linked, and the strict option holding a contact back
 * with its reason. The SMTP sink receives the mail; the clock never needs to move.
 */
import { startDnsServer, type TestDnsServer } from '../helpers/dns-server';
import { startSmtpSink, type SmtpSink } from '../helpers/smtp-sink';
import { startTestServer, type TestServer, type TestWorkspace } from '../helpers/server';

const everyDay = { timezone: 'UTC', days: [0, 1, 2, 3, 4, 5, 6], from: '00:00', to: '23:59' };

describe('provider matching', () => {
  let t: TestServer;
  let dns: TestDnsServer;
  let sink: SmtpSink;
  let ws: TestWorkspace;
  const accounts: Record<'google' | 'microsoft' | 'other', string> = { google: '', microsoft: '', other: '' };

  beforeAll(async () => {
    dns = await startDnsServer({
      'gco.test': { MX: [{ exchange: 'aspmx.l.google.com', priority: 1 }] },
      'g2.test': { MX: [{ exchange: 'alt1.aspmx.l.google.com', priority: 5 }] },
      'mco.test': { MX: [{ exchange: 'mco-test.mail.protection.outlook.com', priority: 0 }] },
      'oco.test': { MX: [{ exchange: 'mx.oco.test', priority: 10 }] },
      'acme-o.test': { MX: [{ exchange: 'mail.acme-o.test', priority: 10 }] },
    });
    sink = await startSmtpSink();
    t = await startTestServer({
      config: {
        secretKey: '33'.repeat(32),
        allowPrivateMailHosts: true,
        publicUrl: 'https://links.example.test',
        dnsServers: [dns.address],
        dnsTimeoutMs: 2000,
      },
    });
    t.clock.set('2026-11-23T10:00:00.000Z');
    ws = await t.createWorkspace();
    for (const [provider, email] of [
      ['google', 'g@acme-g.test'],
      ['microsoft', 'm@acme-m.test'],
      ['other', 'o@acme-o.test'],
    ] as const) {
      const res = await ws.client.POST('/v2/account/connect', {
        body: {
          email,
          provider: provider === 'other' ? 'smtp' : provider,
          smtp: { host: '127.0.0.1', port: sink.port, password: 'pw' },
        },
      });
      expect(res.response.status).toBe(201);
      accounts[provider] = res.data!.data.account.id;
    }
  });
  afterAll(async () => {
    t.services.mail.close();
    await t.close();
    await sink.close();
    await dns.close();
  });

  async function launch(accountIds: string[], emails: string[], options: Record<string, boolean>) {
    const created = await ws.client.POST('/v2/campaign/create', {
      body: {
        name: `Match ${emails[0]} ${accountIds.length}`,
        accountIds,
        schedule: everyDay,
        options: { emailGapMinutes: 0, randomWaitMaxMinutes: 0, ...options },
      },
    });
    expect(created.response.status).toBe(201);
    const campaignId = created.data!.data.campaign.id;
    await ws.client.POST('/v2/campaign/sequence-create', {
      body: { campaignId, steps: [{ delayDays: 0, variants: [{ subject: 'Hi', body: 'Hello' }] }] },
    });
    const added = await ws.client.POST('/v1/contact/add', {
      body: { campaignId, contacts: emails.map((email) => ({ email })) },
    });
    await ws.client.POST('/v2/campaign/launch', { body: { campaignId } });
    return new Map<string, string>(added.data!.data.added.map((c) => [c.email, c.id]));
  }

  /** Which account address sent to each recipient. */
  const senders = () => new Map(sink.received.map((m) => [m.envelope.to[0], m.envelope.from]));

  it('sends each first email from an account of the recipient’s provider, and shows both providers', async () => {
    const ids = await launch(
      Object.values(accounts),
      ['a@gco.test', 'b@gco.test', 'c@g2.test', 'd@mco.test', 'e@mco.test', 'f@oco.test'],
      { matchProvider: true },
    );
    expect(await t.services.sending.runOnce()).toBe(6);
    expect(Object.fromEntries(senders())).toEqual({
      'a@gco.test': 'g@acme-g.test',
      'b@gco.test': 'g@acme-g.test',
      'c@g2.test': 'g@acme-g.test',
      'd@mco.test': 'm@acme-m.test',
      'e@mco.test': 'm@acme-m.test',
      'f@oco.test': 'o@acme-o.test',
    });
    // One MX look-up per domain.
    expect(dns.queries.filter((q) => q.type === 'MX' && q.name === 'gco.test')).toHaveLength(1);

    const contact = await ws.client.GET('/v1/contact/get', {
      params: { query: { contactId: ids.get('d@mco.test')! } },
    });
    expect(contact.data!.data.recipientProvider).toBe('microsoft');
    const listed = (await ws.client.GET('/v1/account/list', { params: { query: {} } })).data!.data.items;
    expect(Object.fromEntries(listed.map((a) => [a.email, a.mailboxProvider]))).toEqual({
      'g@acme-g.test': 'google',
      'm@acme-m.test': 'microsoft',
      'o@acme-o.test': 'other',
    });
  });

  it('falls back to any account without the strict option, and holds the contact back with it', async () => {
    sink.received.length = 0;
    await launch([accounts.google], ['x@mco.test'], { matchProvider: true });
    expect(await t.services.sending.runOnce()).toBe(1);
    expect(senders().get('x@mco.test')).toBe('g@acme-g.test');

    sink.received.length = 0;
    const ids = await launch([accounts.google], ['y@mco.test', 'z@gco.test'], {
      matchProvider: true,
      matchProviderStrict: true,
    });
    expect(await t.services.sending.runOnce()).toBe(1);
    expect([...senders().keys()]).toEqual(['z@gco.test']);
    const held = await ws.client.GET('/v1/contact/get', { params: { query: { contactId: ids.get('y@mco.test')! } } });
    expect(held.data!.data.progress).toMatchObject({ state: 'waiting', reason: 'no_account_of_provider' });
    expect(await t.services.sending.runOnce()).toBe(0);
  });
});
