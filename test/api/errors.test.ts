/**
 * Every kind of error answers in its version's documented format, with a request id, and never
 * leaks internals: malformed JSON, body too large, unknown route, wrong method, brute-forced keys,
 * an unexpected failure, and a database that cannot be reached.
 */
import { expect } from '@jest/globals';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import knex from 'knex';
import pino from 'pino';
import { createApp } from '../../server/app';
import { loadConfig } from '../../server/platform/config';
import { TestClock } from '../helpers/clock';
import { readJson, type ErrorBody, type V1ErrorBody } from '../helpers/bodies';
import { startTestServer, type TestServer, type TestWorkspace } from '../helpers/server';

const logLines: Record<string, unknown>[] = [];
const logSink = new Writable({
  write(chunk: Buffer, _enc, done) {
    for (const line of chunk.toString().split('\n').filter(Boolean))
      logLines.push(JSON.parse(line) as Record<string, unknown>);
    done();
  },
});

let t: TestServer;
let ws: TestWorkspace;
beforeAll(async () => {
  t = await startTestServer({
    config: { authFailuresPerMinute: 3, bodyLimitBytes: 2048 },
    logger: pino({ level: 'info' }, logSink),
  });
  ws = await t.createWorkspace();
});
afterAll(() => t.close());

async function expectV2(res: Response, status: number, code: string, error: unknown) {
  expect(res.status).toBe(status);
  const body = await readJson<ErrorBody>(res);
  expect(body).toMatchObject({ error, code, statusCode: status, requestId: res.headers.get('x-request-id') });
  expect(Array.isArray(body.details)).toBe(true);
  return body;
}

describe('request bodies', () => {
  const post = (path: string, body: string, headers: Record<string, string> = { 'Content-Type': 'application/json' }) =>
    t.fetch(path, { method: 'POST', body, headers, apiKey: ws.apiKey });

  it('answers malformed JSON with 400 in both formats', async () => {
    const v1 = await post('/v1/contact/add', '{"campaignId": ');
    expect(v1.status).toBe(400);
    expect(await v1.json()).toEqual({ error: 'Malformed JSON in request body.' });
    await expectV2(
      await post('/v2/contact/add', '{"campaignId": '),
      400,
      'malformed_json',
      'Malformed JSON in request body.',
    );
  });

  it('answers a body over the limit with 413', async () => {
    const big = JSON.stringify({ name: 'x'.repeat(4096) });
    const v1 = await post('/v1/contact/add', big);
    expect(v1.status).toBe(413);
    expect(await v1.json()).toEqual({ error: 'Request body is too large.' });
    // The request counted toward the workspace's quota, and its answer says so as every answer does.
    expect(v1.headers.get('ratelimit-policy')).toContain('"minute";q=');
    expect(v1.headers.get('ratelimit')).toMatch(/;r=\d+;t=\d+$/);
    await expectV2(await post('/v2/contact/add', big), 413, 'payload_too_large', 'Request body is too large.');
  });

  it('answers a body that is not JSON with 415', async () => {
    const v1 = await post('/v1/contact/add', 'name=x', { 'Content-Type': 'text/plain' });
    expect(v1.status).toBe(415);
    expect(await v1.json()).toEqual({ error: 'Unsupported media type: send application/json.' });
  });

  it('reports schema violations field by field in v2', async () => {
    const res = await post('/v2/contact/add', JSON.stringify({ unexpected: true }));
    const body = await expectV2(res, 400, 'validation_error', expect.any(String));
    expect(body.details.length).toBeGreaterThan(0);
    for (const d of body.details) {
      expect(d).toEqual({
        field: expect.stringMatching(/^body/),
        location: 'body',
        message: expect.any(String),
        code: expect.any(String),
      });
    }
  });

  it('rejects unknown query parameters', async () => {
    const res = await t.fetch('/v1/authenticate?debug=1', { apiKey: ws.apiKey });
    expect(res.status).toBe(400);
    expect((await readJson<V1ErrorBody>(res)).error).toMatch(/debug/);
  });
});

describe('routes', () => {
  it('answers an unknown route with 404 in both formats', async () => {
    const v1 = await t.fetch('/v1/nothing/here', { apiKey: ws.apiKey });
    expect(v1.status).toBe(404);
    expect(await v1.json()).toEqual({ error: 'Route not found.' });
    await expectV2(await t.fetch('/v2/nothing/here', { apiKey: ws.apiKey }), 404, 'not_found', 'Route not found.');
    expect((await t.fetch('/elsewhere')).status).toBe(404);
  });

  it('answers a known route with the wrong method with 405', async () => {
    await expectV2(
      await t.fetch('/v2/authenticate', { method: 'POST', apiKey: ws.apiKey }),
      405,
      'method_not_allowed',
      'Method not allowed on this route.',
    );
  });

  it('serves v2-only operations under /v2 only', async () => {
    const res = await t.fetch('/v1/campaign/create', {
      method: 'POST',
      apiKey: ws.apiKey,
      body: '{}',
      headers: { 'Content-Type': 'application/json' },
    });
    expect(res.status).toBe(404);
  });

  it('finds a route by its module segment in any case, as Express matches paths', async () => {
    for (const path of ['/v1/campaign/list', '/v2/Campaign/list', '/V1/CAMPAIGN/list', '/v2/list/all']) {
      expect([path, (await t.fetch(path, { apiKey: ws.apiKey })).status]).toEqual([path, 200]);
    }
    // A segment with routes, and a path none of them has: the API's 404, not a stall.
    await expectV2(await t.fetch('/v2/campaign/nothing', { apiKey: ws.apiKey }), 404, 'not_found', 'Route not found.');
  });
});

describe('authentication', () => {
  it('throttles repeated failed attempts from one address', async () => {
    const attempt = () => t.fetch('/v1/authenticate', { apiKey: 'lr_guess' });
    // Each 401 carries the address's failure budget in the rate-limit headers: 3 a minute, one fewer each time.
    for (let i = 0; i < 3; i++) {
      const refused = await attempt();
      expect(refused.status).toBe(401);
      expect(refused.headers.get('ratelimit-policy')).toBe('"auth-failures";q=3;w=60');
      expect(refused.headers.get('ratelimit')).toBe(`"auth-failures";r=${2 - i};t=60`);
    }
    const blocked = await attempt();
    expect(blocked.status).toBe(429);
    expect(await blocked.json()).toEqual({
      error: 'Too many failed authentication attempts. Please try again in a minute.',
    });
    expect(Number(blocked.headers.get('retry-after'))).toBeGreaterThan(0);
    t.clock.advance(61_000);
    expect((await attempt()).status).toBe(401);
  });

  it('never throttles a valid key, however many guesses came from its address', async () => {
    for (let i = 0; i < 6; i++) await t.fetch('/v1/authenticate', { apiKey: 'lr_guess' });
    expect((await t.fetch('/v1/authenticate', { apiKey: 'lr_guess' })).status).toBe(429);
    expect((await t.fetch('/v1/authenticate', { apiKey: ws.apiKey })).status).toBe(200);
    t.clock.advance(61_000);
  });

  it('counts failures in the database, so a second server process on it sees them', async () => {
    const second = createApp(t.deps, t.services).listen(0, '127.0.0.1');
    await new Promise((resolve) => second.once('listening', resolve));
    try {
      const port = (second.address() as AddressInfo).port;
      for (let i = 0; i < 3; i++) expect((await t.fetch('/v1/authenticate', { apiKey: 'lr_guess' })).status).toBe(401);
      const there = await fetch(`http://127.0.0.1:${port}/v1/authenticate`, { headers: { 'X-API-Key': 'lr_guess' } });
      expect(there.status).toBe(429);
    } finally {
      await new Promise((resolve) => second.close(resolve));
      t.clock.advance(61_000);
    }
  });

  it('ignores X-Forwarded-For unless TRUST_PROXY names the proxy', async () => {
    const guess = (server: { fetch: typeof t.fetch }, i: number) =>
      server.fetch('/v1/authenticate', { apiKey: 'lr_guess', headers: { 'X-Forwarded-For': `203.0.113.${i}` } });
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) statuses.push((await guess(t, i)).status);
    expect(statuses).toEqual([401, 401, 401, 429]);
    t.clock.advance(61_000);
    const trusting = await startTestServer({ config: { authFailuresPerMinute: 3, trustProxy: 'loopback' } });
    try {
      const rotated: number[] = [];
      for (let i = 0; i < 4; i++) rotated.push((await guess(trusting, i)).status);
      expect(rotated).toEqual([401, 401, 401, 401]);
    } finally {
      await trusting.close();
    }
  });
});

describe('unexpected failures', () => {
  it('answers 500 without internals, with the request id the log carries', async () => {
    const spy = jest.spyOn(t.services.quota, 'admit').mockRejectedValueOnce(new Error('secret internal detail'));
    try {
      const res = await t.fetch('/v2/authenticate', { apiKey: ws.apiKey });
      const body = await expectV2(res, 500, 'internal_error', 'Internal server error.');
      expect(JSON.stringify(body)).not.toMatch(/secret internal detail|at /);
      const logged = logLines.find((l) => l.requestId === body.requestId && l.msg === 'request failed');
      expect(logged).toBeDefined();
    } finally {
      spy.mockRestore();
    }
  });

  it('names an answer that breaks the spec (response validation), and serves it when validation is off', async () => {
    const created = await ws.client.POST('/v2/campaign/create', { body: { name: 'Within bounds' } });
    const campaignId = created.data!.data.campaign.id;
    // Written around the API: longer than the 200 characters the spec promises a campaign's name.
    await t
      .db('campaigns')
      .where({ id: campaignId })
      .update({ name: 'x'.repeat(201) });
    const read = () => t.fetch(`/v2/campaign/get?campaignId=${campaignId}`, { apiKey: ws.apiKey });
    const body = await expectV2(
      await read(),
      500,
      'internal_error',
      expect.stringMatching(/^Response does not match the spec: \/data\/campaign\/name must NOT have more than 200/),
    );
    expect(logLines.find((l) => l.requestId === body.requestId && l.msg === 'request failed')).toBeDefined();
    // Errors are answers too: a 404 is checked against the documented error body, and passes.
    const missing = await t.fetch('/v2/campaign/get?campaignId=0192f0c4-0000-7000-8000-00000000abcd', {
      apiKey: ws.apiKey,
    });
    await expectV2(missing, 404, 'not_found', expect.any(String));

    const unchecked = await startTestServer({ config: { validateResponses: false } });
    try {
      const other = await unchecked.createWorkspace();
      const own = await other.client.POST('/v2/campaign/create', { body: { name: 'Within bounds' } });
      await unchecked
        .db('campaigns')
        .where({ id: own.data!.data.campaign.id })
        .update({ name: 'x'.repeat(201) });
      const served = await other.client.GET('/v2/campaign/get', {
        params: { query: { campaignId: own.data!.data.campaign.id } },
      });
      expect(served.data?.data.campaign.name).toHaveLength(201);
    } finally {
      await unchecked.close();
    }
  });

  it('writes one JSON log line per request, without the API key', async () => {
    await t.fetch('/v1/authenticate', { apiKey: ws.apiKey });
    const requestLines = logLines.filter((l) => (l.req as { url?: string })?.url === '/v1/authenticate');
    expect(requestLines.length).toBeGreaterThan(0);
    expect(requestLines.at(-1)).toMatchObject({ workspaceId: ws.workspaceId, res: { statusCode: 200 } });
    expect(JSON.stringify(logLines)).not.toContain(ws.apiKey);
  });
});

describe('storage down', () => {
  it('answers 503 with Retry-After in both formats and readyz reports it, while healthz stays up', async () => {
    const db = knex({
      client: 'pg',
      connection: 'postgres://postgres@127.0.0.1:1/unreachable',
      pool: { min: 0, max: 1, acquireTimeoutMillis: 2000 },
    });
    const deps = {
      config: loadConfig({ seedDemo: false }),
      db,
      clock: new TestClock(),
      logger: pino({ level: 'silent' }),
    };
    const server = createApp(deps).listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    const base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
    try {
      const message = 'Service unavailable: storage cannot be reached. Please retry later.';
      const v1 = await fetch(`${base}/v1/authenticate`, { headers: { 'X-API-Key': 'lr_any' } });
      expect(v1.status).toBe(503);
      expect(v1.headers.get('retry-after')).toBe('5');
      expect(await v1.json()).toEqual({ error: message });
      const v2 = await fetch(`${base}/v2/authenticate`, { headers: { 'X-API-Key': 'lr_any' } });
      expect(v2.headers.get('retry-after')).toBe('5');
      await expectV2(v2, 503, 'service_unavailable', message);
      expect((await fetch(`${base}/readyz`)).status).toBe(503);
      expect((await fetch(`${base}/healthz`)).status).toBe(200);
    } finally {
      await new Promise((r) => server.close(r));
      await db.destroy();
    }
  });
});
