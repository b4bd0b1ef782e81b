/**
 * POST /v1/people_verification/verify with the SMTP probe off (the default): syntax, disposable,
 * role and free-mail flags, MX look-ups against a loopback DNS server, the cache, validation.
 * The SMTP probe is in verification-smtp.test.ts.
 */
import { readJson, type ErrorBody, type Success, type V1ErrorBody } from '../helpers/bodies';
import { startDnsServer, type TestDnsServer, type Zone } from '../helpers/dns-server';
import { startTestServer, type TestServer, type TestWorkspace } from '../helpers/server';

const MX = (exchange: string) => ({ MX: [{ exchange, priority: 10 }] });
const zone = (): Zone => ({
  'acme-robotics.com': {
    MX: [
      { exchange: 'mx2.acme-robotics.com', priority: 20 },
      { exchange: 'mx1.acme-robotics.com', priority: 10 },
    ],
  },
  'gmail.com': MX('gmail-smtp-in.l.google.com'),
  'mailinator.com': MX('mail.mailinator.com'),
  'no-mail.io': { A: ['192.0.2.10'] },
  'null-mx.io': MX(''),
  'cached.io': MX('mx.cached.io'),
});

const result = (email: string, fields: Record<string, unknown>) => ({
  email,
  status: 'valid',
  subStatus: null,
  score: 85,
  isRoleAccount: false,
  isFreeProvider: false,
  isDisposable: false,
  mxFound: true,
  checkedAt: '2026-11-23T10:00:00.000Z',
  ...fields,
});
const invalidSyntax = (email: string) =>
  result(email, { status: 'invalid', subStatus: 'invalidSyntax', score: 0, mxFound: false });

let dns: TestDnsServer;
let t: TestServer;
let ws: TestWorkspace;
beforeAll(async () => {
  dns = await startDnsServer(zone());
  t = await startTestServer({
    config: { dnsServers: [dns.address], dnsTimeoutMs: 300, verificationCacheTtlSeconds: 3600 },
  });
  ws = await t.createWorkspace({ credits: 7 });
});
afterAll(async () => {
  await t.close();
  await dns.close();
});
beforeEach(() => {
  dns.zone = zone();
  dns.mode = 'answer';
  dns.queries.length = 0;
});
afterEach(() => t.clock.set('2026-11-23T10:00:00.000Z'));

const verify = (emails: string[], workspace = ws) =>
  workspace.client.POST('/v1/people_verification/verify', { body: { emails } });

describe('POST /v1/people_verification/verify', () => {
  it('classifies every address, in order, with the flags, scores and a summary', async () => {
    const emails = [
      'jane.doe@acme-robotics.com',
      'info@acme-robotics.com',
      'Sales+EMEA@acme-robotics.com',
      'john.smith@gmail.com',
      'support@gmail.com',
      'temp123@mailinator.com',
      'x@inbox.mailinator.com',
      'jane@does-not-exist.io',
      'jane@no-mail.io',
      'jane@null-mx.io',
      'jane.doe@acme-robotics.com',
    ];
    const { data, response } = await verify(emails);
    expect(response.status).toBe(200);
    expect(data?.message).toBe('11 addresses verified');
    expect(data?.data.results).toEqual([
      result('jane.doe@acme-robotics.com', {}),
      result('info@acme-robotics.com', { isRoleAccount: true, score: 70 }),
      result('Sales+EMEA@acme-robotics.com', { isRoleAccount: true, score: 70 }),
      result('john.smith@gmail.com', { isFreeProvider: true, score: 80 }),
      result('support@gmail.com', { isFreeProvider: true, isRoleAccount: true, score: 65 }),
      result('temp123@mailinator.com', {
        status: 'disposable',
        subStatus: 'disposableDomain',
        score: 10,
        isDisposable: true,
        isFreeProvider: true,
      }),
      // A subdomain of a disposable domain is disposable too (and this one has no MX record).
      result('x@inbox.mailinator.com', {
        status: 'disposable',
        subStatus: 'disposableDomain',
        score: 10,
        isDisposable: true,
        mxFound: false,
      }),
      result('jane@does-not-exist.io', { status: 'invalid', subStatus: 'domainNotFound', score: 0, mxFound: false }),
      result('jane@no-mail.io', { status: 'invalid', subStatus: 'noMxRecord', score: 0, mxFound: false }),
      result('jane@null-mx.io', { status: 'invalid', subStatus: 'noMxRecord', score: 0, mxFound: false }),
      result('jane.doe@acme-robotics.com', {}),
    ]);
    expect(data?.data.summary).toEqual({ total: 11, valid: 6, invalid: 3, catchAll: 0, unknown: 0, disposable: 2 });
    // One MX look-up per domain, however many of its addresses were sent.
    const mxQueries = dns.queries.filter((q) => q.type === 'MX').map((q) => q.name.toLowerCase());
    expect(mxQueries.sort()).toEqual(
      [
        'acme-robotics.com',
        'does-not-exist.io',
        'gmail.com',
        'inbox.mailinator.com',
        'mailinator.com',
        'no-mail.io',
        'null-mx.io',
      ].sort(),
    );
  });

  it('reports badly formed addresses as invalidSyntax without a look-up', async () => {
    const bad = [
      'jane.doe@acme-robotics',
      'Jane Doe <jane.doe@acme-robotics.com>',
      'jane(work)@acme-robotics.com',
      '"jane doe"@acme-robotics.com',
      'jane..doe@acme-robotics.com',
      'jane@[192.0.2.1]',
      'jane@acme_robotics.com',
      'jane@-acme.com',
      'jane@acme.123',
      '@acme-robotics.com',
      'jane.doe',
      `${'a'.repeat(65)}@acme-robotics.com`,
    ];
    const { data } = await verify(bad);
    expect(data?.data.results).toEqual(bad.map(invalidSyntax));
    expect(data?.data.summary).toEqual({
      total: bad.length,
      valid: 0,
      invalid: bad.length,
      catchAll: 0,
      unknown: 0,
      disposable: 0,
    });
    expect(dns.queries).toEqual([]);
  });

  it('accepts an internationalized domain and surrounding spaces', async () => {
    dns.zone['xn--mnchen-3ya.de'] = MX('mx.xn--mnchen-3ya.de');
    const { data } = await verify(['anna@münchen.de', '  jane.doe@acme-robotics.com ']);
    expect(data?.data.results).toEqual([result('anna@münchen.de', {}), result('  jane.doe@acme-robotics.com ', {})]);
  });

  it('answers unknown on a DNS time-out or failure, and does not cache it', async () => {
    dns.mode = 'silent';
    const timedOut = await verify(['jane@slow-dns.io']);
    expect(timedOut.data?.data.results).toEqual([
      result('jane@slow-dns.io', { status: 'unknown', subStatus: 'dnsTimeout', score: 40, mxFound: false }),
    ]);
    dns.mode = 'servfail';
    const failed = await verify(['jane@slow-dns.io']);
    expect(failed.data?.data.results[0]).toMatchObject({ status: 'unknown', subStatus: 'dnsError', score: 40 });
    expect(failed.data?.data.summary.unknown).toBe(1);
    dns.mode = 'answer';
    dns.zone['slow-dns.io'] = MX('mx.slow-dns.io');
    const retried = await verify(['jane@slow-dns.io']);
    expect(retried.data?.data.results[0]).toMatchObject({ status: 'valid', mxFound: true });
    expect(await t.db('email_verifications').where({ email: 'jane@slow-dns.io' }).first('status')).toEqual({
      status: 'valid',
    });
  });

  it('serves a result from the cache, case-insensitively, until it expires', async () => {
    const first = await verify(['anna.k@cached.io']);
    expect(first.data?.data.results[0]).toMatchObject({ status: 'valid', checkedAt: '2026-11-23T10:00:00.000Z' });

    delete dns.zone['cached.io'];
    dns.queries.length = 0;
    t.clock.advance(3599 * 1000);
    const cached = await verify(['Anna.K@Cached.IO']);
    expect(cached.data?.data.results).toEqual([result('Anna.K@Cached.IO', {})]);
    expect(dns.queries).toEqual([]);

    t.clock.advance(1000);
    const rechecked = await verify(['anna.k@cached.io']);
    expect(rechecked.data?.data.results).toEqual([
      result('anna.k@cached.io', {
        status: 'invalid',
        subStatus: 'domainNotFound',
        score: 0,
        mxFound: false,
        checkedAt: '2026-11-23T11:00:00.000Z',
      }),
    ]);
    expect(dns.queries).toEqual([{ name: 'cached.io', type: 'MX' }]);
    const rows = await t.db('email_verifications').where({ email: 'anna.k@cached.io' });
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ status: 'invalid', sub_status: 'domainNotFound' });
  });

  it('keeps one cache row when two requests verify the same new address at once', async () => {
    const [a, b] = await Promise.all([verify(['twice@acme-robotics.com']), verify(['twice@acme-robotics.com'])]);
    expect(a.response.status).toBe(200);
    expect(b.response.status).toBe(200);
    expect(
      Number((await t.db('email_verifications').where({ email: 'twice@acme-robotics.com' }).count({ n: '*' }))[0].n),
    ).toBe(1);
  });

  it('costs no credits and changes nothing in the workspace', async () => {
    const before = await t.db('credit_ledger').where({ workspace_id: ws.workspaceId }).count({ n: '*' });
    await verify(['jane.doe@acme-robotics.com']);
    expect(await t.db('workspaces').where({ id: ws.workspaceId }).first('credit_balance')).toEqual({
      credit_balance: 7,
    });
    expect(await t.db('credit_ledger').where({ workspace_id: ws.workspaceId }).count({ n: '*' })).toEqual(before);
  });

  it('verifies 100 addresses in one request', async () => {
    const emails = Array.from({ length: 100 }, (_, i) => `person${i}@acme-robotics.com`);
    const { data } = await verify(emails);
    expect(data?.data.summary).toEqual({ total: 100, valid: 100, invalid: 0, catchAll: 0, unknown: 0, disposable: 0 });
    expect(data?.data.results.map((r) => r.email)).toEqual(emails);
  });
});

describe('validation of POST /v1/people_verification/verify', () => {
  const post = (path: string, body: unknown) =>
    t.fetch(path, {
      method: 'POST',
      apiKey: ws.apiKey,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });

  it.each([
    ['no emails', {}],
    ['an empty list', { emails: [] }],
    ['101 addresses', { emails: Array.from({ length: 101 }, (_, i) => `p${i}@acme-robotics.com`) }],
    ['a number', { emails: [42] }],
    ['an empty string', { emails: [''] }],
    ['a 321-character item', { emails: ['a'.repeat(309) + '@example.com'] }],
    ['an unknown field', { emails: ['jane@acme-robotics.com'], refresh: true }],
  ])('rejects %s with a v1 400', async (_name, body) => {
    const res = await post('/v1/people_verification/verify', body);
    expect(res.status).toBe(400);
    const json = await readJson<V1ErrorBody>(res);
    expect(Object.keys(json)).toEqual(['error']);
    expect(json.error).toMatch(/^request\/body/);
  });

  it('answers the v2 alias with field details', async () => {
    const res = await post('/v2/people_verification/verify', { emails: [] });
    expect(res.status).toBe(400);
    const json = await readJson<ErrorBody>(res);
    expect(json).toMatchObject({
      code: 'validation_error',
      statusCode: 400,
      requestId: res.headers.get('x-request-id'),
    });
    expect(json.details).toEqual([expect.objectContaining({ field: 'body.emails', location: 'body' })]);
  });

  it('serves the same verification under /v2', async () => {
    const res = await post('/v2/people_verification/verify', { emails: ['jane.doe@acme-robotics.com'] });
    expect(res.status).toBe(200);
    expect((await readJson<Success<'/v2/people_verification/verify', 'post'>>(res)).data.results).toEqual([
      result('jane.doe@acme-robotics.com', {}),
    ]);
  });
});
