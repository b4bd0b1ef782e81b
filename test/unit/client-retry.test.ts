/**
 * The client's retry policy against a tiny local HTTP server that answers what each test scripts
 * (503, 429 with Retry-After, hangs), with sleep/random/now injected so no test waits for real
 * longer than a few hundred ms.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  ApiRequestError,
  backoffDelay,
  createClient,
  ENVIRONMENTS,
  parseRetryAfter,
  unwrap,
  type RetryOptions,
} from '../../client';
import { resolveRetryOptions } from '../../client/retry';
import openapi from '../../generated/openapi.json';

interface Seen {
  method: string;
  url: string;
  apiKey: string | undefined;
  body: string;
}

type Reply = (res: ServerResponse, req: IncomingMessage) => void;

let server: Server;
let baseUrl: string;
let replies: Reply[] = [];
let seen: Seen[] = [];
const hanging = new Set<ServerResponse>();

const json =
  (status: number, body: unknown, headers: Record<string, string> = {}): Reply =>
  (res) => {
    res.writeHead(status, { 'content-type': 'application/json', 'x-request-id': `req-${seen.length}`, ...headers });
    res.end(JSON.stringify(body));
  };
const limits = {
  status: 'success',
  success: true,
  message: 'Rate limits retrieved',
  data: { limits: { perMin: 20, perHour: 50, perDay: 100, perSecond: null } },
};
const ok = json(200, limits);
const unavailable = json(503, { error: 'Service unavailable: storage cannot be reached. Please retry later.' });
const minuteFull = (retryAfter: string) =>
  json(429, { error: 'Minute rate limit exceeded. Please try again in a minute.' }, { 'retry-after': retryAfter });

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      seen.push({ method: req.method!, url: req.url!, apiKey: req.headers['x-api-key'] as string | undefined, body });
      const reply = replies.shift();
      if (reply) reply(res, req);
      else hanging.add(res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  for (const res of hanging) res.destroy();
  await new Promise((resolve) => server.close(resolve));
});
beforeEach(() => {
  replies = [];
  seen = [];
});

/** A client whose waits are recorded, not slept. */
function recordingClient(retry: RetryOptions = {}, extra: { timeoutMs?: number } = {}) {
  const waits: number[] = [];
  let clock = 1_000_000;
  const client = createClient({
    apiKey: 'lr_test_key',
    baseUrl,
    ...extra,
    retry: {
      random: () => 0.5,
      now: () => clock,
      sleep: (ms) => {
        waits.push(ms);
        clock += ms;
        return Promise.resolve();
      },
      ...retry,
    },
  });
  return { client, waits };
}

describe('retries', () => {
  it('retries 503 with exponential backoff and full jitter, then answers the success', async () => {
    replies = [unavailable, unavailable, ok];
    const { client, waits } = recordingClient();
    const { data, response } = await client.GET('/v1/ratelimit/limits');
    expect(response.status).toBe(200);
    expect(data).toEqual(limits);
    expect(seen).toHaveLength(3);
    // random 0.5 of caps 500 and 1000 ms.
    expect(waits).toEqual([250, 500]);
    expect(seen.every((s) => s.apiKey === 'lr_test_key')).toBe(true);
  });

  it('waits at least Retry-After (seconds or an HTTP date) on 429', async () => {
    replies = [minuteFull('3'), ok];
    const first = recordingClient();
    expect((await first.client.GET('/v1/ratelimit/limits')).response.status).toBe(200);
    expect(first.waits).toEqual([3000]);

    const opts = resolveRetryOptions({ now: () => Date.parse('2026-11-23T10:00:00Z') });
    expect(parseRetryAfter('Mon, 23 Nov 2026 10:00:07 GMT', opts.now())).toBe(7000);
    expect(parseRetryAfter('soon', 0)).toBeUndefined();
    expect(parseRetryAfter(null, 0)).toBeUndefined();
  });

  it('never resends immediately: the shortest wait is minDelayMs even when the jitter draws 0', async () => {
    replies = [unavailable, ok];
    const { client, waits } = recordingClient({ random: () => 0 });
    await client.GET('/v1/ratelimit/limits');
    expect(waits).toEqual([100]);
    expect(() => resolveRetryOptions({ minDelayMs: 0 })).toThrow(RangeError);
  });

  it('caps the backoff at maxDelayMs and grows it exponentially', () => {
    const o = resolveRetryOptions({ random: () => 0.999, baseDelayMs: 100, maxDelayMs: 1000 });
    expect([1, 2, 3, 4, 5].map((n) => backoffDelay(n, undefined, o))).toEqual([100, 199, 399, 799, 999]);
    expect(backoffDelay(1, 5000, o)).toBe(5000);
  });

  it('stops after maxAttempts and returns the last answer, typed', async () => {
    replies = [unavailable, unavailable, unavailable, ok];
    const { client, waits } = recordingClient({ maxAttempts: 3 });
    const { data, error, response } = await client.GET('/v1/ratelimit/limits');
    expect(response.status).toBe(503);
    expect(data).toBeUndefined();
    expect(error).toEqual({ error: 'Service unavailable: storage cannot be reached. Please retry later.' });
    expect(seen).toHaveLength(3);
    expect(waits).toHaveLength(2);
    replies = [];
  });

  it('gives up at once when the wait would pass the total time budget', async () => {
    replies = [minuteFull('60')];
    const { client, waits } = recordingClient({ maxElapsedMs: 30_000 });
    const { response } = await client.GET('/v1/ratelimit/limits');
    expect(response.status).toBe(429);
    expect(seen).toHaveLength(1);
    expect(waits).toEqual([]);
  });

  it.each([400, 401, 402, 404, 409, 500])('never retries a %i', async (status) => {
    replies = [json(status, { error: 'no' }), ok];
    const { client, waits } = recordingClient();
    const { response } = await client.GET('/v1/ratelimit/limits');
    expect(response.status).toBe(status);
    expect(seen).toHaveLength(1);
    expect(waits).toEqual([]);
  });

  it('resends the same body on a retried POST', async () => {
    replies = [unavailable, json(200, { status: 'success', success: true, message: 'ok', data: {} })];
    const { client } = recordingClient();
    await client.POST('/v1/company/find', { body: { dataOptions: ['basic'] } as never });
    expect(seen.map((s) => [s.method, s.url, s.body])).toEqual([
      ['POST', '/v1/company/find', '{"dataOptions":["basic"]}'],
      ['POST', '/v1/company/find', '{"dataOptions":["basic"]}'],
    ]);
  });

  it('retry: false sends once', async () => {
    replies = [unavailable, ok];
    const client = createClient({ apiKey: 'k', baseUrl, retry: false });
    expect((await client.GET('/v1/ratelimit/limits')).response.status).toBe(503);
    expect(seen).toHaveLength(1);
    replies = [];
  });

  it('really sleeps with the default sleep, and the wait can be aborted', async () => {
    replies = [unavailable, ok];
    const client = createClient({ apiKey: 'k', baseUrl, retry: { random: () => 0, minDelayMs: 50 } });
    const started = Date.now();
    expect((await client.GET('/v1/ratelimit/limits')).response.status).toBe(200);
    expect(Date.now() - started).toBeGreaterThanOrEqual(45);

    replies = [minuteFull('30'), ok];
    const controller = new AbortController();
    const slow = createClient({ apiKey: 'k', baseUrl, retry: { maxElapsedMs: 60_000 } });
    const pending = slow.GET('/v1/ratelimit/limits', { signal: controller.signal });
    // Aborted while the client sleeps out the 429's 30 s: once the server has answered it (on a loaded machine
    // a fixed delay could abort the request before it arrived, and it would arrive in the next test).
    while (seen.length < 3) await new Promise((resolve) => setTimeout(resolve, 10));
    setTimeout(() => controller.abort(), 50);
    await expect(pending).rejects.toMatchObject({ name: 'AbortError' });
    expect(seen).toHaveLength(3);
    replies = [];
  });

  it('bounds each attempt with timeoutMs and does not retry a timed-out request', async () => {
    const { client } = recordingClient({}, { timeoutMs: 150 });
    const started = Date.now();
    await expect(client.GET('/v1/ratelimit/limits')).rejects.toMatchObject({ name: 'TimeoutError' });
    expect(Date.now() - started).toBeLessThan(2000);
    expect(seen).toHaveLength(1);
  });
});

describe('createClient', () => {
  it('takes its environments from the spec servers', () => {
    expect(ENVIRONMENTS).toEqual(Object.fromEntries(openapi.servers.map((s) => [s.description, s.url])));
    expect(Object.keys(ENVIRONMENTS).sort()).toEqual(['local', 'production', 'staging']);
  });

  it('sends requests to the chosen environment', async () => {
    const urls: string[] = [];
    const client = createClient({
      apiKey: 'k',
      environment: 'staging',
      fetch: (req) => {
        urls.push(req.url);
        return Promise.resolve(
          new Response(JSON.stringify(limits), { status: 200, headers: { 'content-type': 'application/json' } }),
        );
      },
    });
    await client.GET('/v1/ratelimit/limits');
    expect(urls).toEqual([`${ENVIRONMENTS.staging}/v1/ratelimit/limits`]);
  });

  it('refuses a missing key or an unknown environment', () => {
    expect(() => createClient({ apiKey: '', baseUrl })).toThrow('apiKey is required');
    expect(() => createClient({ apiKey: 'k', environment: 'qa' as never })).toThrow('unknown environment "qa"');
  });
});

describe('typed errors', () => {
  it('unwrap returns the body or throws ApiRequestError with the request id (v1 and v2 bodies)', async () => {
    replies = [ok];
    const { client } = recordingClient();
    expect(unwrap(await client.GET('/v1/ratelimit/limits'))).toEqual(limits);

    replies = [json(401, { error: 'Invalid API key.' })];
    const v1 = await client
      .GET('/v1/ratelimit/limits')
      .then(unwrap)
      .catch((e: unknown) => e);
    expect(v1).toBeInstanceOf(ApiRequestError);
    expect((v1 as ApiRequestError).message).toBe('Invalid API key.');
    expect(v1).toMatchObject({ status: 401, requestId: 'req-2', code: undefined, details: [] });

    const v2body = {
      error: 'request/query/limit must be <= 100',
      code: 'validation_error',
      statusCode: 400,
      requestId: 'req-from-body',
      details: [{ field: 'query.limit', location: 'query', message: 'must be <= 100', code: 'maximum' }],
    };
    replies = [json(400, v2body)];
    const v2 = await client
      .GET('/v2/ratelimit/limits')
      .then(unwrap)
      .catch((e: unknown) => e);
    expect(v2).toMatchObject({
      status: 400,
      code: 'validation_error',
      requestId: 'req-from-body',
      details: v2body.details,
      body: v2body,
    });

    replies = [(res) => res.writeHead(502).end('<html>bad gateway</html>')];
    const proxy = await client
      .GET('/v1/ratelimit/limits')
      .then(unwrap)
      .catch((e: unknown) => e);
    expect(proxy).toMatchObject({ status: 502, body: { error: 'HTTP 502 Bad Gateway' } });
  });
});
