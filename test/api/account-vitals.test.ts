import { readJson, type ErrorBody } from '../helpers/bodies';
import { startDnsServer, type TestDnsServer } from '../helpers/dns-server';
import { startTestServer, type TestServer, type TestWorkspace } from '../helpers/server';
import { newId } from '../../server/platform/ids';
import { recordMailEvents } from '../helpers/mail-events';

const DKIM_KEY = 'v=DKIM1; k=rsa; p=MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAq1';

let dns: TestDnsServer;
let t: TestServer;
beforeAll(async () => {
  dns = await startDnsServer({
    'acme.io': {
      MX: [
        { exchange: 'alt1.aspmx.l.google.com', priority: 5 },
        { exchange: 'aspmx.l.google.com', priority: 1 },
      ],
      TXT: ['google-site-verification=abc', 'v=spf1 include:_spf.google.com ~all'],
    },
    'google._domainkey.acme.io': { TXT: [[DKIM_KEY.slice(0, 30), DKIM_KEY.slice(30)]] },
    '_dmarc.acme.io': { TXT: ['v=DMARC1; p=reject; rua=mailto:dmarc@acme.io'] },
    'bare.io': { A: ['192.0.2.10'], TXT: ['google-site-verification=xyz'] },
    'twospf.io': { MX: [{ exchange: '', priority: 0 }], TXT: ['v=spf1 -all', 'v=spf1 include:mailgun.org ~all'] },
    's1._domainkey.twospf.io': { TXT: ['v=DKIM1; k=rsa; p='] },
    'mailjet._domainkey.twospf.io': { TXT: ['k=rsa; p=MIGfMA0GCSqGSIb3DQEBAQUAA4GNADCBiQKBgQC'] },
    '_dmarc.twospf.io': { TXT: ['v=DMARC1; p=none', 'v=DMARC1; p=reject'] },
    // Blocklists: a domain on the domain list, a host with two addresses, one listed on one list, and a list
    // that refuses the query the way Spamhaus refuses public resolvers.
    'listed.io': { MX: [{ exchange: 'mx.listed.io', priority: 10 }], TXT: ['v=spf1 mx -all'] },
    'k1._domainkey.listed.io': { TXT: [DKIM_KEY] },
    '_dmarc.listed.io': { TXT: ['v=DMARC1; p=quarantine'] },
    'listed.io.dbl.spamhaus.org': { A: ['127.0.1.2'] },
    'mail.listed.io': { A: ['198.51.100.7', '198.51.100.8'] },
    '7.100.51.198.bl.spamcop.net': { A: ['127.0.0.2'] },
    '8.100.51.198.zen.spamhaus.org': { A: ['127.255.255.254'] },
    '7.100.51.198.rbl.acme-lists.io': { A: ['203.0.113.99'] },
  });
  t = await startTestServer({
    config: {
      secretKey: '00'.repeat(32),
      dnsServers: [dns.address],
      // Room for a loaded machine: a look-up answered by the loopback server must never time out; only the
      // silent server's do.
      dnsTimeoutMs: 2000,
      dkimSelectors: ['google', 'selector1', 'k1'],
      dnsblIpZones: ['zen.spamhaus.org', 'bl.spamcop.net', 'rbl.acme-lists.io'],
      dnsblDomainZones: ['dbl.spamhaus.org'],
    },
  });
});
afterAll(async () => {
  await t.close();
  await dns.close();
});
beforeEach(() => {
  dns.mode = 'answer';
  dns.queries.length = 0;
  t.clock.set('2026-11-23T10:00:00.000Z');
});

async function connect(ws: TestWorkspace, email: string, smtpHost?: string): Promise<string> {
  const smtp = smtpHost ? { host: smtpHost, port: 587, password: 'pw' } : { password: 'pw' };
  const { data } = await ws.client.POST('/v2/account/connect', {
    body: { email, provider: smtpHost ? 'smtp' : 'google', smtp },
  });
  return data!.data.account.id;
}

async function event(ws: TestWorkspace, accountId: string, type: string, at: string, warmup = false) {
  await recordMailEvents(t, ws.workspaceId, [{ type, accountId, at, warmup }]);
}

const passed = (name: string, records: string[]) => ({ pass: true, name, records, reason: null, message: null });

describe('POST /v1/account/vitals', () => {
  it('passes every check of a well-configured domain, with the records found and 30 days of reputation', async () => {
    const ws = await t.createWorkspace();
    const id = await connect(ws, 'jane@acme.io');
    await event(ws, id, 'sent', '2026-11-20T10:00:00Z');
    await event(ws, id, 'sent', '2026-11-21T10:00:00Z');
    await event(ws, id, 'sent', '2026-11-22T10:00:00Z');
    await event(ws, id, 'sent', '2026-10-24T10:00:01Z'); // 29.99 days ago: counted
    await event(ws, id, 'bounced', '2026-11-22T10:05:00Z');
    await event(ws, id, 'replied', '2026-11-22T12:00:00Z');
    await event(ws, id, 'sent', '2026-10-24T09:59:59Z'); // just over 30 days ago
    await event(ws, id, 'sent', '2026-11-22T10:00:00Z', true); // warm-up

    const { data, response } = await ws.client.POST('/v1/account/vitals', { body: { accountIds: [id] } });
    expect(response.status).toBe(200);
    expect(data!.message).toBe('Email account vitals checked');
    expect(data!.data.items).toEqual([
      {
        accountId: id,
        email: 'jane@acme.io',
        domain: 'acme.io',
        mx: passed('acme.io', ['1 aspmx.l.google.com', '5 alt1.aspmx.l.google.com']),
        spf: passed('acme.io', ['v=spf1 include:_spf.google.com ~all']),
        dkim: {
          ...passed('google._domainkey.acme.io', [DKIM_KEY]),
          selector: 'google',
          checkedSelectors: ['google', 'selector1', 'k1'],
        },
        dmarc: passed('_dmarc.acme.io', ['v=DMARC1; p=reject; rua=mailto:dmarc@acme.io']),
        allPass: true,
        blocklists: {
          listedOn: [],
          sendingHost: {
            host: 'smtp.gmail.com',
            addresses: [],
            reason: 'notFound',
            message: 'The name does not exist (NXDOMAIN).',
          },
          checks: [
            {
              zone: 'dbl.spamhaus.org',
              kind: 'domain',
              target: 'acme.io',
              query: 'acme.io.dbl.spamhaus.org',
              listed: false,
              returnCodes: [],
              reason: null,
              message: null,
            },
          ],
        },
        reputation: {
          days: 30,
          sent: 4,
          bounced: 1,
          replied: 1,
          unsubscribed: 0,
          bounceRatePercent: 25,
          replyRatePercent: 25,
          unsubscribeRatePercent: 0,
        },
        warmupHealth: { days: 7, landedInbox: 0, landedSpam: 0, score: null, label: 'unknown' },
        score: 75,
        scoreReasons: [
          { code: 'highBounceRate', points: 25, message: 'Bounce rate of the last 30 days is 25%, over 5%.' },
        ],
      },
    ]);
  });

  it('explains each failure: no MX, no SPF among TXT records, no DKIM key, no DMARC', async () => {
    const ws = await t.createWorkspace();
    const id = await connect(ws, 'ops@bare.io');
    const { data } = await ws.client.POST('/v1/account/vitals', { body: { accountIds: [id] } });
    const [v] = data!.data.items;
    expect(v.mx).toEqual({
      pass: false,
      name: 'bare.io',
      records: [],
      reason: 'noData',
      message: 'The name exists but has no record of this type.',
    });
    expect(v.spf).toEqual({
      pass: false,
      name: 'bare.io',
      records: ['google-site-verification=xyz'],
      reason: 'noMatchingRecord',
      message: 'No SPF record (TXT starting with "v=spf1") among the TXT records.',
    });
    expect(v.dkim).toEqual({
      pass: false,
      name: 'google._domainkey.bare.io',
      records: [],
      reason: 'notFound',
      message: 'No DKIM key at any of the selectors tried (google, selector1, k1).',
      selector: null,
      checkedSelectors: ['google', 'selector1', 'k1'],
    });
    expect(v.dmarc).toEqual({
      pass: false,
      name: '_dmarc.bare.io',
      records: [],
      reason: 'notFound',
      message: 'The name does not exist (NXDOMAIN).',
    });
    expect(v.allPass).toBe(false);
    expect(v.reputation).toEqual({
      days: 30,
      sent: 0,
      bounced: 0,
      replied: 0,
      unsubscribed: 0,
      bounceRatePercent: 0,
      replyRatePercent: 0,
      unsubscribeRatePercent: 0,
    });
    expect(v.score).toBe(50);
    expect(v.scoreReasons.map((r) => [r.code, r.points])).toEqual([
      ['spfFailed', 15],
      ['dkimFailed', 15],
      ['mxFailed', 10],
      ['dmarcFailed', 10],
    ]);
    expect(v.scoreReasons[0].message).toBe(
      'SPF check failed: No SPF record (TXT starting with "v=spf1") among the TXT records.',
    );
  });

  it('asks each configured blocklist for the domain and every address of the SMTP host, in reverse-octet order', async () => {
    const ws = await t.createWorkspace();
    const id = await connect(ws, 'sales@listed.io', 'mail.listed.io');
    const { data } = await ws.client.POST('/v1/account/vitals', { body: { accountIds: [id] } });
    const [v] = data!.data.items;
    expect(v.allPass).toBe(true);
    expect(v.blocklists.sendingHost).toEqual({
      host: 'mail.listed.io',
      addresses: ['198.51.100.7', '198.51.100.8'],
      reason: null,
      message: null,
    });
    const check = (zone: string, kind: string, target: string, query: string, rest: object) => ({
      zone,
      kind,
      target,
      query,
      returnCodes: [],
      reason: null,
      message: null,
      ...rest,
    });
    expect(v.blocklists.checks).toEqual([
      check('dbl.spamhaus.org', 'domain', 'listed.io', 'listed.io.dbl.spamhaus.org', {
        listed: true,
        returnCodes: ['127.0.1.2'],
      }),
      check('zen.spamhaus.org', 'ip', '198.51.100.7', '7.100.51.198.zen.spamhaus.org', { listed: false }),
      check('bl.spamcop.net', 'ip', '198.51.100.7', '7.100.51.198.bl.spamcop.net', {
        listed: true,
        returnCodes: ['127.0.0.2'],
      }),
      check('rbl.acme-lists.io', 'ip', '198.51.100.7', '7.100.51.198.rbl.acme-lists.io', {
        listed: null,
        returnCodes: ['203.0.113.99'],
        reason: 'error',
        message: 'The answer (203.0.113.99) is not a blocklist code: the resolver may rewrite unknown names.',
      }),
      check('zen.spamhaus.org', 'ip', '198.51.100.8', '8.100.51.198.zen.spamhaus.org', {
        listed: null,
        returnCodes: ['127.255.255.254'],
        reason: 'listRefused',
        message:
          'The list refused the query (127.255.255.254): it does not answer this resolver, or its query limit was reached.',
      }),
      check('bl.spamcop.net', 'ip', '198.51.100.8', '8.100.51.198.bl.spamcop.net', { listed: false }),
      check('rbl.acme-lists.io', 'ip', '198.51.100.8', '8.100.51.198.rbl.acme-lists.io', { listed: false }),
    ]);
    expect(v.blocklists.listedOn).toEqual(['dbl.spamhaus.org', 'bl.spamcop.net']);
    expect(v.score).toBe(40);
    expect(v.scoreReasons).toEqual([
      { code: 'domainListed', points: 30, message: 'The domain listed.io is listed on dbl.spamhaus.org.' },
      {
        code: 'hostListed',
        points: 30,
        message: 'The sending host mail.listed.io (198.51.100.7) is listed on bl.spamcop.net.',
      },
    ]);
    // Each name is asked once.
    const asked = dns.queries.filter((q) => q.name.endsWith('.spamcop.net'));
    expect(asked.map((q) => q.name).sort()).toEqual(['7.100.51.198.bl.spamcop.net', '8.100.51.198.bl.spamcop.net']);
  });

  it('reports a blocklist that does not answer as unknown, never as listed', async () => {
    const ws = await t.createWorkspace();
    const id = await connect(ws, 'ops@listed.io', '192.0.2.44');
    dns.mode = 'silent';
    const { data } = await ws.client.POST('/v1/account/vitals', { body: { accountIds: [id] } });
    const [v] = data!.data.items;
    expect(v.blocklists.sendingHost).toEqual({
      host: '192.0.2.44',
      addresses: ['192.0.2.44'],
      reason: null,
      message: null,
    });
    expect(v.blocklists.checks.map((c) => [c.query, c.listed, c.reason])).toEqual([
      ['listed.io.dbl.spamhaus.org', null, 'timeout'],
      ['44.2.0.192.zen.spamhaus.org', null, 'timeout'],
      ['44.2.0.192.bl.spamcop.net', null, 'timeout'],
      ['44.2.0.192.rbl.acme-lists.io', null, 'timeout'],
    ]);
    expect(v.blocklists.listedOn).toEqual([]);
    expect(v.scoreReasons.map((r) => r.code)).toEqual(['spfFailed', 'dkimFailed', 'mxFailed', 'dmarcFailed']);
  });

  it('takes the warm-up health of the last 7 days into the score: fair 10 points, poor 20', async () => {
    const ws = await t.createWorkspace();
    const id = await connect(ws, 'warm@acme.io');
    // Where partners' readers found this account's warm-up mail (the warmup module's record).
    const seen = async (landed: 'inbox' | 'spam', n: number, at: string) => {
      for (let i = 0; i < n; i++) {
        const messageId = newId();
        await t.db('warmup_messages').insert({
          id: messageId,
          message_id: `${messageId}@acme.io`,
          kind: 'first',
          sender_id: id,
          recipient_id: newId(),
          sender_email: 'warm@acme.io',
          recipient_email: 'p@pool.io',
          subject: 's',
          text: 't',
          status: 'sent',
          send_at: new Date(at),
          sent_at: new Date(at),
          landed,
          seen_at: new Date(at),
          created_at: new Date(at),
        });
      }
    };
    const vitals = async () =>
      (await ws.client.POST('/v1/account/vitals', { body: { accountIds: [id] } })).data!.data.items[0];
    await seen('inbox', 8, '2026-11-20T10:00:00Z');
    await seen('spam', 2, '2026-11-20T10:00:00Z');
    await seen('spam', 30, '2026-11-15T10:00:00Z'); // 8 days ago: out of the window
    let v = await vitals();
    expect(v.warmupHealth).toEqual({ days: 7, landedInbox: 8, landedSpam: 2, score: 80, label: 'fair' });
    expect([v.score, v.scoreReasons]).toEqual([
      90,
      [
        {
          code: 'lowWarmupHealth',
          points: 10,
          message: 'Warm-up health is fair (80): 8 of 10 warm-up emails of the last 7 days landed in the inbox.',
        },
      ],
    ]);
    await seen('spam', 3, '2026-11-22T10:00:00Z');
    v = await vitals();
    expect(v.warmupHealth).toMatchObject({ score: 61.54, label: 'poor' });
    expect(v.scoreReasons.map((r) => [r.code, r.points])).toEqual([['lowWarmupHealth', 20]]);
  });

  it('scores 30-day bounce and unsubscribe rates at their thresholds', async () => {
    const ws = await t.createWorkspace();
    const id = await connect(ws, 'rates@acme.io');
    const at = '2026-11-20T10:00:00Z';
    const vitals = async () =>
      (await ws.client.POST('/v1/account/vitals', { body: { accountIds: [id] } })).data!.data.items[0];
    for (let i = 0; i < 100; i++) await event(ws, id, 'sent', at);
    for (let i = 0; i < 2; i++) await event(ws, id, 'bounced', at);
    await event(ws, id, 'unsubscribed', at);
    let v = await vitals();
    // 2% bounced and 1% unsubscribed: at the limits, not over.
    expect(v.reputation).toMatchObject({
      sent: 100,
      bounced: 2,
      unsubscribed: 1,
      bounceRatePercent: 2,
      unsubscribeRatePercent: 1,
    });
    expect([v.score, v.scoreReasons]).toEqual([100, []]);
    await event(ws, id, 'bounced', at);
    await event(ws, id, 'unsubscribed', at);
    v = await vitals();
    expect(v.scoreReasons).toEqual([
      { code: 'highBounceRate', points: 15, message: 'Bounce rate of the last 30 days is 3%, over 2%.' },
      { code: 'highUnsubscribeRate', points: 10, message: 'Unsubscribe rate of the last 30 days is 2%, over 1%.' },
    ]);
    expect(v.score).toBe(75);
    // 31 days on, none of it counts.
    t.clock.set('2026-12-21T10:00:01Z');
    v = await vitals();
    expect([v.reputation.sent, v.score]).toEqual([0, 100]);
  });

  it('starts the 30 days at the instant, inside a day of the rollups', async () => {
    const ws = await t.createWorkspace();
    const id = await connect(ws, 'edge@acme.io');
    t.clock.set('2026-11-23T10:07:30.000Z');
    await event(ws, id, 'sent', '2026-10-24T10:07:29.999Z'); // just over 30 days ago
    await event(ws, id, 'sent', '2026-10-24T10:07:30.000Z');
    await event(ws, id, 'sent', '2026-10-24T10:14:59.999Z');
    await event(ws, id, 'sent', '2026-10-24T23:59:59.999Z');
    await event(ws, id, 'sent', '2026-10-25T00:00:00.000Z'); // the next day: from the rollups
    const { data } = await ws.client.POST('/v1/account/vitals', { body: { accountIds: [id] } });
    expect(data!.data.items[0].reputation.sent).toBe(4);
  });

  it('fails a null MX and duplicate SPF/DMARC records, skips a revoked DKIM key and uses the selectors asked', async () => {
    const ws = await t.createWorkspace();
    const id = await connect(ws, 'team@twospf.io');
    const { data } = await ws.client.POST('/v1/account/vitals', {
      body: { accountIds: [id], dkimSelectors: ['s1', 'mailjet'] },
    });
    const [v] = data!.data.items;
    expect(v.mx).toMatchObject({
      pass: false,
      records: ['0 '],
      reason: 'noMatchingRecord',
      message: 'The domain publishes a null MX: it accepts no mail.',
    });
    expect(v.spf).toMatchObject({
      pass: false,
      reason: 'multipleRecords',
      records: ['v=spf1 -all', 'v=spf1 include:mailgun.org ~all'],
    });
    expect(v.dmarc).toMatchObject({ pass: false, reason: 'multipleRecords' });
    expect(v.dkim).toMatchObject({
      pass: true,
      selector: 'mailjet',
      name: 'mailjet._domainkey.twospf.io',
      checkedSelectors: ['s1', 'mailjet'],
    });
  });

  it('reports a DNS server that does not answer as timeouts, within the time limit', async () => {
    const ws = await t.createWorkspace();
    const id = await connect(ws, 'jane@acme.io');
    dns.mode = 'silent';
    const started = Date.now();
    const { data, response } = await ws.client.POST('/v1/account/vitals', { body: { accountIds: [id] } });
    expect(response.status).toBe(200);
    // Bounded by the DNS timeout (2 s, look-ups at once), with room for a loaded machine.
    expect(Date.now() - started).toBeLessThan(15_000);
    const [v] = data!.data.items;
    for (const check of [v.mx, v.spf, v.dkim, v.dmarc]) {
      expect(check).toMatchObject({
        pass: false,
        records: [],
        reason: 'timeout',
        message: 'The DNS server did not answer in time.',
      });
    }
    expect(v.allPass).toBe(false);
  });

  it('reports SERVFAIL as serverFailure', async () => {
    const ws = await t.createWorkspace();
    const id = await connect(ws, 'jane@acme.io');
    dns.mode = 'servfail';
    const { data } = await ws.client.POST('/v1/account/vitals', { body: { accountIds: [id] } });
    expect(data!.data.items[0].mx).toMatchObject({ pass: false, reason: 'serverFailure' });
  });

  it('answers in the order asked and looks a shared domain up once', async () => {
    const ws = await t.createWorkspace();
    const a = await connect(ws, 'a@acme.io');
    const b = await connect(ws, 'b@bare.io');
    const c = await connect(ws, 'c@acme.io');
    const { data } = await ws.client.POST('/v1/account/vitals', { body: { accountIds: [c, b, a] } });
    expect(data!.data.items.map((v) => [v.email, v.allPass])).toEqual([
      ['c@acme.io', true],
      ['b@bare.io', false],
      ['a@acme.io', true],
    ]);
    const acmeMx = dns.queries.filter((q) => q.name === 'acme.io' && q.type === 'MX');
    expect(acmeMx).toHaveLength(1);
  });

  it("answers 404 naming another workspace's or unknown accounts (v1 and v2)", async () => {
    const ws = await t.createWorkspace();
    const other = await t.createWorkspace();
    const mine = await connect(ws, 'mine@acme.io');
    const theirs = await connect(other, 'theirs@acme.io');
    const unknown = newId();
    const v1 = await t.fetch('/v1/account/vitals', {
      apiKey: ws.apiKey,
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ accountIds: [theirs] }),
    });
    expect(v1.status).toBe(404);
    expect(await v1.json()).toEqual({ error: 'Email account not found.' });
    const v2 = await t.fetch('/v2/account/vitals', {
      apiKey: ws.apiKey,
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ accountIds: [mine, theirs, unknown] }),
    });
    expect(v2.status).toBe(404);
    expect(await v2.json()).toMatchObject({
      error: '2 email accounts not found.',
      code: 'not_found',
      details: [
        {
          field: 'body.accountIds.1',
          location: 'body',
          message: `email account ${theirs} not found`,
          code: 'not_found',
        },
        {
          field: 'body.accountIds.2',
          location: 'body',
          message: `email account ${unknown} not found`,
          code: 'not_found',
        },
      ],
    });
    expect(dns.queries).toEqual([]);
  });

  it('rejects an empty, oversized or repeated list and a bad selector', async () => {
    const ws = await t.createWorkspace();
    const id = newId();
    const cases: [unknown, string][] = [
      [{ accountIds: [] }, 'body.accountIds'],
      [{ accountIds: Array.from({ length: 26 }, () => newId()) }, 'body.accountIds'],
      [{ accountIds: [id, id] }, 'body.accountIds'],
      [{ accountIds: ['not-a-uuid'] }, 'body.accountIds.0'],
      [{ accountIds: [id], dkimSelectors: ['bad selector'] }, 'body.dkimSelectors.0'],
      [{}, 'body.accountIds'],
    ];
    for (const [body, field] of cases) {
      const res = await t.fetch('/v2/account/vitals', {
        apiKey: ws.apiKey,
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      expect(res.status).toBe(400);
      expect((await readJson<ErrorBody>(res)).details.map((d) => d.field)).toContain(field);
    }
  });
});
