/**
 * Tracking domains over HTTPS behind Caddy: the Caddyfile of docs/tracking-domains.md, run as written (the service's
 * address and host put in, the test's ports and CA added to its global options), with certificates from a Pebble of
 * the test's own. A verified tracking domain gets a certificate on its first handshake and serves the links of a sent
 * mail through it; a name the `ask` answers 404 for gets none until it is verified; the service's own host is served
 * with the certificate Caddy obtained at start.
 */
import { readFileSync } from 'node:fs';
import { request } from 'node:https';
import { join } from 'node:path';
import type { PeerCertificate, TLSSocket } from 'node:tls';
import { describeIf } from '../helpers/binaries';
import { caddyTestMissing, startCaddy, startPebble, type Caddy, type Pebble } from '../helpers/caddy';
import { startDnsServer, type TestDnsServer } from '../helpers/dns-server';
import { startSmtpSink, type SmtpSink } from '../helpers/smtp-sink';
import { startTestServer, type TestServer, type TestWorkspace } from '../helpers/server';

/** The service's own host: PUBLIC_URL's, and the CNAME target. */
const OWN_HOST = 'track.leadreach.test';

const missing = caddyTestMissing();
const suite = describeIf(missing.length === 0, missing.join(', '), `apt-get install -y ${missing.join(' ')}`);

/** The Caddyfile of the docs, for a service at `address` whose own host is OWN_HOST. */
function documentedCaddyfile(address: string): string {
  const docs = readFileSync(join(__dirname, '../../docs/tracking-domains.md'), 'utf8');
  const block = /```caddyfile\n([\s\S]*?)```/.exec(docs)?.[1];
  if (!block?.includes('127.0.0.1:3000') || !block.includes('track.leadreach.io'))
    throw new Error('docs/tracking-domains.md has no Caddyfile for a service at 127.0.0.1:3000 on track.leadreach.io');
  return block.replaceAll('127.0.0.1:3000', address).replaceAll('track.leadreach.io', OWN_HOST);
}

suite('tracking domains over HTTPS behind Caddy', () => {
  let t: TestServer;
  let dns: TestDnsServer;
  let sink: SmtpSink;
  let pebble: Pebble;
  let caddy: Caddy;
  let ws: TestWorkspace;

  beforeAll(async () => {
    dns = await startDnsServer({ 'track.acme.test': { CNAME: OWN_HOST } });
    sink = await startSmtpSink();
    t = await startTestServer({
      config: {
        publicUrl: `https://${OWN_HOST}`,
        dnsServers: [dns.address],
        dnsTimeoutMs: 2000,
        secretKey: '45'.repeat(32),
        allowPrivateMailHosts: true,
      },
    });
    t.clock.set('2026-11-23T10:00:00.000Z');
    ws = await t.createWorkspace();
    pebble = await startPebble();
    caddy = await startCaddy(documentedCaddyfile(new URL(t.url).host), pebble);
  });
  afterAll(async () => {
    await caddy?.close();
    await pebble?.close();
    t?.services.mail.close();
    await t?.close();
    await sink?.close();
    await dns?.close();
  });

  /** A GET through Caddy for `host` (its SNI and Host), trusting only Pebble's root. */
  const viaCaddy = (host: string, path: string) =>
    new Promise<{ status: number; location?: string; type?: string; cert: PeerCertificate }>((resolve, reject) => {
      const req = request(
        { host: '127.0.0.1', port: caddy.httpsPort, servername: host, headers: { host }, path, ca: pebble.root },
        (res) => {
          const cert = (res.socket as TLSSocket).getPeerCertificate();
          res.resume();
          res.on('end', () =>
            resolve({
              status: res.statusCode!,
              location: res.headers.location,
              type: res.headers['content-type'],
              cert,
            }),
          );
        },
      );
      req.on('error', reject);
      req.end();
    });
  /** The certificate is Pebble's, for `name` alone. */
  const expectIssued = (cert: PeerCertificate, name: string) => {
    expect(cert.subjectaltname).toBe(`DNS:${name}`);
    expect(cert.issuer.CN).toMatch(/^Pebble Intermediate CA/);
  };

  const create = (domain: string) => ws.client.POST('/v2/tracking-domain/create', { body: { domain } });

  /** Sends one campaign mail from an account on `trackingDomainId`; its click link. */
  async function sentClickLink(trackingDomainId: string): Promise<string> {
    const account = await ws.client.POST('/v2/account/connect', {
      body: {
        email: 'ana@acme.test',
        provider: 'smtp',
        smtp: { host: '127.0.0.1', port: sink.port, password: 'pw' },
        trackingDomainId,
      },
    });
    const campaign = await ws.client.POST('/v2/campaign/create', {
      body: {
        name: 'Pricing',
        accountIds: [account.data!.data.account.id],
        schedule: { timezone: 'UTC', days: [0, 1, 2, 3, 4, 5, 6], from: '00:00', to: '23:59' },
        options: { emailGapMinutes: 0, randomWaitMaxMinutes: 0 },
      },
    });
    const campaignId = campaign.data!.data.campaign.id;
    await ws.client.POST('/v2/campaign/sequence-create', {
      body: {
        campaignId,
        steps: [
          {
            delayDays: 0,
            variants: [{ subject: 'Hi', body: '<p>See <a href="https://acme.test/pricing">pricing</a>.</p>' }],
          },
        ],
      },
    } as never);
    await ws.client.POST('/v1/contact/add', {
      body: { campaignId, contacts: [{ email: 'joe@globex.test' }] },
    } as never);
    await ws.client.POST('/v2/campaign/launch', { body: { campaignId } });
    expect(await t.services.sending.runOnce()).toBe(1);
    return /href="([^"]+\/c\/[^"]+)"/.exec(sink.received[0].parsed.html as string)![1];
  }

  let clickPath: string;

  it('issues a certificate for a verified tracking domain on its first handshake and serves its links', async () => {
    const domain = (await create('track.acme.test')).data!.data.trackingDomain;
    expect(domain.status).toBe('verified');
    const click = new URL(await sentClickLink(domain.id));
    expect(click.origin).toBe('https://track.acme.test');
    clickPath = click.pathname;
    // Past the prefetch window: a person's click.
    t.clock.advance(60_000);

    const res = await viaCaddy('track.acme.test', clickPath);
    expectIssued(res.cert, 'track.acme.test');
    expect(res).toMatchObject({ status: 302, location: 'https://acme.test/pricing' });
    const clicks = await ws.client.GET('/v2/event/list', { params: { query: { types: ['email.clicked'] } } });
    expect(clicks.data!.data.items.map((e) => (e.data as { flagged: boolean }).flagged)).toEqual([false]);
    // Host-scoped like any request: a token of no workspace's is not served on the domain.
    expect((await viaCaddy('track.acme.test', '/c/not-a-token')).status).toBe(404);
  });

  it('gets no certificate for a name the ask answers 404 for, until it is verified', async () => {
    const pending = (await create('other.acme.test')).data!.data.trackingDomain;
    expect(pending.status).toBe('pending');
    expect((await fetch(`${t.url}/tls/ask?domain=other.acme.test`)).status).toBe(404);
    // Caddy has no certificate to offer: the handshake ends in an alert.
    await expect(viaCaddy('other.acme.test', '/o/x.gif')).rejects.toThrow(/alert internal error/);
    await expect(viaCaddy('nowhere.test', '/o/x.gif')).rejects.toThrow(/alert internal error/);

    dns.zone['other.acme.test'] = { CNAME: OWN_HOST };
    const verified = await ws.client.POST('/v2/tracking-domain/verify', { body: { id: pending.id } });
    expect(verified.data!.data.trackingDomain.status).toBe('verified');
    const res = await viaCaddy('other.acme.test', '/o/x.gif');
    expectIssued(res.cert, 'other.acme.test');
    // Served by the service, which refuses a token of no workspace's on the domain.
    expect(res.status).toBe(404);
  });

  it('serves the service’s own host with the certificate Caddy obtained at start', async () => {
    // Caddy obtains it in the background after starting: until then the handshake fails.
    const until = Date.now() + 20_000;
    let res: Awaited<ReturnType<typeof viaCaddy>> | undefined;
    while (!res) {
      res = await viaCaddy(OWN_HOST, clickPath).catch((error: unknown) => {
        if (Date.now() > until) throw error;
        return undefined;
      });
      if (!res) await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expectIssued(res.cert, OWN_HOST);
    // The default host serves every workspace's links.
    expect(res).toMatchObject({ status: 302, location: 'https://acme.test/pricing' });
  });
});
