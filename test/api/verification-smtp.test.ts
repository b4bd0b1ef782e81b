/**
 * The SMTP mailbox probe of POST /v1/people_verification/verify, against an SMTP server on
 * loopback (smtp-server). The MX records (loopback DNS) name 127.0.0.1, or 127.0.0.2 where nothing
 * listens; the probe port is the test server's.
 */
import { SMTPServer } from 'smtp-server';
import type { AddressInfo } from 'node:net';
import { startDnsServer, type TestDnsServer } from '../helpers/dns-server';
import { startTestServer, type TestServer, type TestWorkspace } from '../helpers/server';
import { createDnsLookup } from '../../server/platform/dns';
import { VerificationService } from '../../server/modules/verification/service';
import { VerificationStore } from '../../server/modules/verification/store';

const MAILBOXES = new Set(['jane.doe@acme-robotics.com', 'info@acme-robotics.com', 'jane.doe@relay.io']);

let smtp: SMTPServer;
const seen = { mailFrom: [] as string[], rcptTo: [] as string[], data: 0, helo: [] as string[] };
let dns: TestDnsServer;
let t: TestServer;
let ws: TestWorkspace;

beforeAll(async () => {
  smtp = new SMTPServer({
    authOptional: true,
    disabledCommands: ['AUTH'],
    logger: false,
    onConnect(session, callback) {
      callback();
    },
    onMailFrom(address, session, callback) {
      seen.mailFrom.push(address.address);
      seen.helo.push(session.hostNameAppearsAs);
      callback();
    },
    onRcptTo(address, _session, callback) {
      const rcpt = address.address.toLowerCase();
      seen.rcptTo.push(rcpt);
      const domain = rcpt.split('@')[1];
      if (domain === 'catch-all.io') return callback();
      if (domain === 'greylist.io')
        return callback(Object.assign(new Error('Greylisted, try again later'), { responseCode: 450 }));
      if (domain === 'slow-smtp.io') return; // never answers: the probe times out
      if (MAILBOXES.has(rcpt)) return callback();
      callback(Object.assign(new Error('No such user here'), { responseCode: 550 }));
    },
    onData(stream, _session, callback) {
      seen.data += 1;
      stream.resume();
      stream.on('end', () => callback());
    },
  });
  await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', () => resolve()));
  const port = (smtp.server.address() as AddressInfo).port;
  const loopbackMx = { MX: [{ exchange: '127.0.0.1', priority: 10 }] };
  dns = await startDnsServer({
    'acme-robotics.com': loopbackMx,
    'catch-all.io': loopbackMx,
    'greylist.io': loopbackMx,
    'slow-smtp.io': loopbackMx,
    'mailinator.com': loopbackMx,
    // Nothing listens on 127.0.0.2 at that port: the connection is refused.
    'down.io': { MX: [{ exchange: '127.0.0.2', priority: 10 }] },
    // An MX host that resolves nowhere: only the SMTP_PROBE_HOST override reaches a server.
    'relay.io': { MX: [{ exchange: 'mx.relay.invalid', priority: 10 }] },
  });
  t = await startTestServer({
    config: {
      dnsServers: [dns.address],
      dnsTimeoutMs: 300,
      smtpProbeEnabled: true,
      smtpProbePort: port,
      smtpProbeTimeoutMs: 700,
      smtpProbeHelo: 'probe.test',
      smtpProbeFrom: 'verify@probe.test',
    },
  });
  ws = await t.createWorkspace();
});
afterAll(async () => {
  await t.close();
  await dns.close();
  await new Promise<void>((resolve) => smtp.close(() => resolve()));
});

const base = {
  subStatus: null,
  isRoleAccount: false,
  isFreeProvider: false,
  isDisposable: false,
  mxFound: true,
  checkedAt: '2026-11-23T10:00:00.000Z',
};

describe('the SMTP mailbox probe', () => {
  it('tells accepted, refused, catch-all, greylisted, silent and unreachable mail servers apart', async () => {
    const emails = [
      'jane.doe@acme-robotics.com',
      'info@acme-robotics.com',
      'john.missing@acme-robotics.com',
      'anyone@catch-all.io',
      'jane@greylist.io',
      'jane@slow-smtp.io',
      'jane@down.io',
    ];
    const { data, response } = await ws.client.POST('/v1/people_verification/verify', { body: { emails } });
    expect(response.status).toBe(200);
    expect(data?.data.results).toEqual([
      { ...base, email: emails[0], status: 'valid', score: 100 },
      { ...base, email: emails[1], status: 'valid', score: 85, isRoleAccount: true },
      { ...base, email: emails[2], status: 'invalid', subStatus: 'mailboxNotFound', score: 0 },
      { ...base, email: emails[3], status: 'catchAll', subStatus: 'catchAllDomain', score: 50 },
      { ...base, email: emails[4], status: 'unknown', subStatus: 'smtpTemporaryFailure', score: 40 },
      { ...base, email: emails[5], status: 'unknown', subStatus: 'smtpTimeout', score: 40 },
      { ...base, email: emails[6], status: 'unknown', subStatus: 'smtpUnavailable', score: 40 },
    ]);
    expect(data?.data.summary).toEqual({ total: 7, valid: 2, invalid: 1, catchAll: 1, unknown: 3, disposable: 0 });

    // The probe speaks as configured and never sends a message.
    expect(seen.data).toBe(0);
    expect(new Set(seen.mailFrom)).toEqual(new Set(['verify@probe.test']));
    expect(new Set(seen.helo)).toEqual(new Set(['probe.test']));
    // An accepted mailbox is followed by a random one at the same domain (the catch-all test).
    const randoms = seen.rcptTo.filter((r) => r.startsWith('probe-'));
    expect(randoms.map((r) => r.split('@')[1]).sort()).toEqual([
      'acme-robotics.com',
      'acme-robotics.com',
      'catch-all.io',
    ]);

    // Definite answers are cached; unknown ones are not.
    const cached = await t.db('email_verifications').orderBy('email').pluck('email');
    expect(cached).toEqual([
      'anyone@catch-all.io',
      'info@acme-robotics.com',
      'jane.doe@acme-robotics.com',
      'john.missing@acme-robotics.com',
    ]);
  });

  it('does not probe a disposable domain', async () => {
    seen.rcptTo.length = 0;
    const { data } = await ws.client.POST('/v1/people_verification/verify', {
      body: { emails: ['temp@mailinator.com'] },
    });
    expect(data?.data.results[0]).toMatchObject({ status: 'disposable', subStatus: 'disposableDomain', mxFound: true });
    expect(seen.rcptTo).toEqual([]);
  });

  it('sends the probe to SMTP_PROBE_HOST instead of the MX when it is set', async () => {
    const config = t.deps.config;
    const probe = (smtpProbeHost: string | undefined) =>
      new VerificationService({
        db: t.db,
        store: new VerificationStore(),
        dns: createDnsLookup(config),
        clock: t.clock,
        config: {
          ...config,
          smtpProbeHost,
          verificationCacheTtlSeconds: 0,
        },
      });
    expect((await probe(undefined).verify(['jane.doe@relay.io'])).results[0]).toMatchObject({
      status: 'unknown',
      subStatus: 'smtpUnavailable',
    });
    expect((await probe('127.0.0.1').verify(['jane.doe@relay.io'])).results[0]).toMatchObject({
      status: 'valid',
      score: 100,
    });
    expect(seen.rcptTo).toContain('jane.doe@relay.io');
  });
});
