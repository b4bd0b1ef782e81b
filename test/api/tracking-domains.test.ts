/**
 * Custom tracking domains through HTTP: added, checked against the loopback DNS server (no record, wrong
 * target, an A record in the CNAME's place, the right CNAME), rechecked by the worker on a moved clock,
 * chosen by accounts and campaigns, used by the links of the mail the SMTP sink receives, and served by the
 * tracking paths only on a verified host and only for its own workspace's tokens; the reverse proxy's `ask`.
 */
import { request } from 'node:http';
import { startDnsServer, type TestDnsServer } from '../helpers/dns-server';
import { startSmtpSink, type SmtpSink } from '../helpers/smtp-sink';
import { startTestServer, type TestServer, type TestWorkspace } from '../helpers/server';

const TARGET = 'track.leadreach.test';
const HOUR = 3600_000;

describe('custom tracking domains', () => {
  let t: TestServer;
  let dns: TestDnsServer;
  let sink: SmtpSink;
  let ws: TestWorkspace;
  let other: TestWorkspace;

  beforeAll(async () => {
    dns = await startDnsServer({
      'track.acme.test': { CNAME: TARGET },
      'links.acme.test': { CNAME: 'elsewhere.example.net' },
      'flat.acme.test': { A: ['192.0.2.10'] },
    });
    sink = await startSmtpSink();
    t = await startTestServer({
      config: {
        dnsServers: [dns.address],
        dnsTimeoutMs: 2000,
        trackingCnameTarget: TARGET,
        secretKey: '44'.repeat(32),
        allowPrivateMailHosts: true,
      },
    });
    // The default host is this test server's.
    (t.services.tracking as unknown as { publicUrl: string }).publicUrl = t.url;
    t.clock.set('2026-11-23T10:00:00.000Z');
    ws = await t.createWorkspace();
    other = await t.createWorkspace();
  });
  afterAll(async () => {
    t.services.mail.close();
    await t.close();
    await sink.close();
    await dns.close();
  });

  /** A request to the test server with its own `Host` header (fetch cannot set one). */
  const viaHost = (url: string, host: string, method = 'GET') =>
    new Promise<{ status: number; location: string | undefined }>((resolve, reject) => {
      const { pathname, search } = new URL(url);
      const req = request(`${t.url}${pathname}${search}`, { method, headers: { host } }, (res) => {
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode!, location: res.headers.location }));
      });
      req.on('error', reject);
      req.end();
    });

  const accountView = async () =>
    (await ws.client.GET('/v1/account/list', { params: { query: {} } })).data!.data.items.find(
      (a) => a.id === accountId,
    )!;
  const create = (w: TestWorkspace, domain: string) =>
    w.client.POST('/v2/tracking-domain/create', { body: { domain } });
  const events = async (w: TestWorkspace) =>
    (
      await w.client.GET('/v2/event/list', {
        params: { query: { types: ['tracking.domainVerified', 'tracking.domainFailed'] } },
      })
    ).data!.data.items.map((e) => `${e.type} ${(e.data as { domain: string }).domain}`);

  let domainId: string;

  it('adds a domain, names the CNAME target and verifies the right record at once', async () => {
    const res = await create(ws, 'Track.Acme.test');
    expect(res.response.status).toBe(201);
    const domain = res.data!.data.trackingDomain;
    expect(domain).toMatchObject({ domain: 'track.acme.test', cnameTarget: TARGET, status: 'verified', reason: null });
    expect(domain.nextCheckAt).toBe('2026-11-23T16:00:00.000Z');
    domainId = domain.id;
    expect(await events(ws)).toEqual(['tracking.domainVerified track.acme.test']);
    expect((await create(ws, 'track.acme.test')).response.status).toBe(409);
  });

  it('tells no record, a wrong target and an A record apart', async () => {
    const missing = (await create(ws, 'go.acme.test')).data!.data.trackingDomain;
    expect(missing).toMatchObject({ status: 'pending', reason: { code: 'no_record' } });
    const wrong = (await create(ws, 'links.acme.test')).data!.data.trackingDomain;
    expect(wrong).toMatchObject({ status: 'failed', reason: { code: 'wrong_target' } });
    expect(wrong.reason!.message).toContain('elsewhere.example.net');
    const flat = (await create(ws, 'flat.acme.test')).data!.data.trackingDomain;
    expect(flat).toMatchObject({ status: 'failed', reason: { code: 'conflicting_a_record' } });

    // The record appears: checked on demand.
    dns.zone['go.acme.test'] = { CNAME: TARGET };
    const verified = await ws.client.POST('/v2/tracking-domain/verify', { body: { id: missing.id } });
    expect(verified.data!.data.trackingDomain).toMatchObject({ status: 'verified', reason: null });
    const list = await ws.client.GET('/v2/tracking-domain/list', { params: { query: {} } });
    expect(list.data!.data.pagination.total).toBe(4);
    expect((await ws.client.POST('/v2/tracking-domain/delete', { body: { id: missing.id } })).response.status).toBe(
      200,
    );
  });

  it('refuses bad names, another workspace’s verified domain, and another workspace’s ids', async () => {
    expect((await t.fetch('/v2/tracking-domain/create', post(ws, { domain: 'https://x.test/a' }))).status).toBe(400);
    const taken = await create(other, 'track.acme.test');
    expect(taken.response.status).toBe(409);
    const get = await other.client.GET('/v2/tracking-domain/get', { params: { query: { id: domainId } } });
    expect(get.response.status).toBe(404);
    const del = await other.client.POST('/v2/tracking-domain/delete', { body: { id: domainId } });
    expect(del.response.status).toBe(404);
  });

  it('answers the reverse proxy’s ask for the exact names of verified domains only', async () => {
    expect((await fetch(`${t.url}/tls/ask?domain=track.acme.test`)).status).toBe(200);
    // Byte for byte as stored: nothing trimmed or folded, and bytes no name holds are no 500.
    const askedAs = [
      'TRACK.acme.test.',
      ' track.acme.test',
      'track.acme.test ',
      'track.acme.test%09',
      '%00',
      'track.acme.test%00',
      '%FF%FE',
      '%C0%80',
    ];
    const answers = [];
    for (const name of askedAs)
      answers.push(`${name} ${(await fetch(`${t.url}/tls/ask?domain=${name.replaceAll(' ', '%20')}`)).status}`);
    expect(answers).toEqual(askedAs.map((name) => `${name} 404`));
    expect((await fetch(`${t.url}/tls/ask?domain=links.acme.test`)).status).toBe(404);
    expect((await fetch(`${t.url}/tls/ask?domain=nowhere.test`)).status).toBe(404);
    expect((await fetch(`${t.url}/tls/ask`)).status).toBe(404);
  });

  let accountId: string;
  let firstCampaignId: string;
  let links: { click: string; unsubscribe: string; pixel: string };
  let otherLinks: { click: string; pixel: string };

  /** Connects an account, launches a one-step campaign to `email` and sends it; the links of the mail received. */
  async function sendOne(
    w: TestWorkspace,
    from: string,
    email: string,
    options: { trackingDomainId?: string | null } = {},
  ) {
    const account = await w.client.POST('/v2/account/connect', {
      body: { email: from, provider: 'smtp', smtp: { host: '127.0.0.1', port: sink.port, password: 'pw' }, ...options },
    });
    expect(account.response.status).toBe(201);
    const campaign = await w.client.POST('/v2/campaign/create', {
      body: {
        name: `To ${email}`,
        accountIds: [account.data!.data.account.id],
        schedule: { timezone: 'UTC', days: [0, 1, 2, 3, 4, 5, 6], from: '00:00', to: '23:59' },
        options: { emailGapMinutes: 0, randomWaitMaxMinutes: 0 },
      },
    });
    const campaignId = campaign.data!.data.campaign.id;
    await w.client.POST('/v2/campaign/sequence-create', {
      body: {
        campaignId,
        steps: [
          {
            delayDays: 0,
            variants: [
              {
                subject: 'Hi',
                body: '<p>See <a href="https://acme.test/pricing">pricing</a>. <a href="{{unsubscribeUrl}}">Unsubscribe</a></p>',
              },
            ],
          },
        ],
      },
    } as never);
    await w.client.POST('/v1/contact/add', { body: { campaignId, contacts: [{ email }] } } as never);
    await w.client.POST('/v2/campaign/launch', { body: { campaignId } });
    const before = sink.received.length;
    expect(await t.services.sending.runOnce()).toBe(1);
    const html = sink.received[before].parsed.html as string;
    const hrefs = [...html.matchAll(/href="([^"]+)"/g)].map((m) => m[1]);
    return {
      accountId: account.data!.data.account.id,
      campaignId,
      html,
      links: {
        click: hrefs.find((h) => h.includes('/c/'))!,
        unsubscribe: hrefs.find((h) => h.includes('/u/'))!,
        pixel: /<img src="([^"]+)"/.exec(html)![1],
      },
    };
  }

  it('refuses an unverified domain for an account, and puts a verified one in every link of its mail', async () => {
    const flat = (await ws.client.GET('/v2/tracking-domain/list', { params: { query: {} } })).data!.data.items.find(
      (d) => d.domain === 'flat.acme.test',
    )!;
    const refused = await ws.client.POST('/v2/account/connect', {
      body: {
        email: 'nope@acme.test',
        provider: 'smtp',
        smtp: { host: '127.0.0.1', port: sink.port, password: 'pw' },
        trackingDomainId: flat.id,
      },
    } as never);
    expect(refused.response.status).toBe(409);

    const sent = await sendOne(ws, 'ana@acme.test', 'joe@globex.test', { trackingDomainId: domainId });
    accountId = sent.accountId;
    firstCampaignId = sent.campaignId;
    links = sent.links;
    for (const url of Object.values(links)) expect(url.startsWith('https://track.acme.test/')).toBe(true);
    expect(sent.html).not.toContain(t.url);
    expect((await accountView()).trackingDomain).toEqual({
      id: domainId,
      domain: 'track.acme.test',
      status: 'verified',
      inUse: true,
    });
    otherLinks = (await sendOne(other, 'bo@initech.test', 'joe@globex.test')).links;
    expect(otherLinks.click.startsWith(`${t.url}/c/`)).toBe(true);
  });

  it('serves the links on the verified host for its own workspace only, and refuses other hosts', async () => {
    const click = await viaHost(links.click, 'track.acme.test');
    expect(click).toEqual({ status: 302, location: 'https://acme.test/pricing' });
    expect((await viaHost(links.pixel, 'track.acme.test:443')).status).toBe(200);
    expect((await viaHost(links.unsubscribe, 'track.acme.test')).status).toBe(200);
    // Not verified, or nobody's: refused.
    expect((await viaHost(links.click, 'links.acme.test')).status).toBe(404);
    expect((await viaHost(links.pixel, 'evil.test')).status).toBe(404);
    // Another workspace's token on this workspace's domain: refused; on the default host: served.
    expect((await viaHost(otherLinks.click, 'track.acme.test')).status).toBe(404);
    // The pixel too: refused, and nothing counted.
    expect((await viaHost(otherLinks.pixel, 'track.acme.test')).status).toBe(404);
    expect((await fetch(otherLinks.click, { redirect: 'manual' })).status).toBe(302);
    // The default host serves every workspace's tokens.
    expect((await viaHost(links.click, new URL(t.url).host)).status).toBe(302);
    const opened = await t
      .db('email_events')
      .where({ workspace_id: other.workspaceId, type: 'opened' })
      .count<{ n: string }[]>('* as n');
    expect(Number(opened[0].n)).toBe(0);
  });

  it('rechecks on schedule: a domain that loses its record fails, and mail falls back to the default host', async () => {
    delete dns.zone['track.acme.test'];
    const status = async () =>
      (await ws.client.GET('/v2/tracking-domain/get', { params: { query: { id: domainId } } })).data!.data
        .trackingDomain.status;
    t.clock.advance(5 * HOUR);
    await t.services.trackingDomains.runOnce();
    expect(await status()).toBe('verified');
    t.clock.advance(1 * HOUR);
    await t.services.trackingDomains.runOnce();
    const domain = await ws.client.GET('/v2/tracking-domain/get', { params: { query: { id: domainId } } });
    expect(domain.data!.data.trackingDomain).toMatchObject({ status: 'failed', reason: { code: 'no_record' } });
    expect(await events(ws)).toContain('tracking.domainFailed track.acme.test');
    expect((await accountView()).trackingDomain).toMatchObject({ status: 'failed', inUse: false });
    expect((await viaHost(links.click, 'track.acme.test')).status).toBe(404);
    expect((await fetch(`${t.url}/tls/ask?domain=track.acme.test`)).status).toBe(404);

    // The account keeps its choice; its next mail uses the default host.
    await ws.client.POST('/v1/contact/add', {
      body: { campaignId: firstCampaignId, contacts: [{ email: 'sue@globex.test' }] },
    } as never);
    const before = sink.received.length;
    expect(await t.services.sending.runOnce()).toBe(1);
    const html = sink.received[before].parsed.html as string;
    expect(html).toContain(`${t.url}/c/`);
    expect(html).not.toContain('track.acme.test');

    // The record is back: the next check (10 minutes for a domain not verified) verifies it again.
    dns.zone['track.acme.test'] = { CNAME: TARGET };
    t.clock.advance(10 * 60_000);
    await t.services.trackingDomains.runOnce();
    expect(await status()).toBe('verified');
  });

  it('lets a campaign choose a verified domain, and an account update clear its own', async () => {
    const cleared = await ws.client.POST('/v2/account/update', { body: { accountId, trackingDomainId: null } });
    expect(cleared.data!.data.account.trackingDomain).toBeNull();
    const refused = await other.client.POST('/v2/account/update', { body: { accountId, trackingDomainId: domainId } });
    expect(refused.response.status).toBe(404);
    const campaign = await ws.client.POST('/v2/campaign/create', {
      body: { name: 'Own links', options: { trackingDomainId: domainId } },
    });
    expect(campaign.data!.data.campaign.options.trackingDomainId).toBe(domainId);
    const elsewhere = await other.client.POST('/v2/campaign/create', {
      body: { name: 'Not mine', options: { trackingDomainId: domainId } },
    });
    expect(elsewhere.response.status).toBe(404);
    const sent = await sendOne(ws, 'max@acme.test', 'kim@globex.test', {});
    expect(sent.links.click.startsWith(`${t.url}/c/`)).toBe(true);
    await ws.client.POST('/v2/campaign/set/schedules', {
      body: {
        campaignId: sent.campaignId,
        schedule: { timezone: 'UTC', days: [0, 1, 2, 3, 4, 5, 6], from: '00:00', to: '23:59' },
        options: { trackingDomainId: domainId },
      },
    } as never);
    await ws.client.POST('/v1/contact/add', {
      body: { campaignId: sent.campaignId, contacts: [{ email: 'lee@globex.test' }] },
    } as never);
    const before = sink.received.length;
    expect(await t.services.sending.runOnce()).toBe(1);
    expect(sink.received[before].parsed.html as string).toContain('https://track.acme.test/c/');

    expect((await ws.client.POST('/v2/tracking-domain/delete', { body: { id: domainId } })).response.status).toBe(200);
    const campaignAfter = await ws.client.GET('/v1/campaign/list', { params: { query: {} } as never });
    expect(
      campaignAfter.data!.data.items.every((c: { options: { trackingDomainId: string | null } }) => {
        return c.options.trackingDomainId === null;
      }),
    ).toBe(true);
  });
});

function post(w: TestWorkspace, body: unknown): RequestInit & { apiKey: string } {
  return {
    method: 'POST',
    apiKey: w.apiKey,
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  };
}
