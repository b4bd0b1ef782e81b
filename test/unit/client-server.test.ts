/**
 * The client against the real test server: a default-plan workspace fills its minute window, the
 * client waits Retry-After (the injected sleep moves the server's clock instead of waiting) and the
 * retry is admitted; without retries the 429 comes back typed with the seed's message.
 */
import { ApiRequestError, createClient, unwrap } from '../../client';
import { startTestServer, type TestServer } from '../helpers/server';

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(() => t.close());

async function fillMinuteWindow(apiKey: string): Promise<void> {
  for (let i = 0; i < 20; i++) expect((await t.fetch('/v1/ratelimit/limits', { apiKey })).status).toBe(200);
}

it('waits out a 429 with Retry-After and then succeeds', async () => {
  const ws = await t.createWorkspace({ defaultPlan: true });
  await fillMinuteWindow(ws.apiKey);
  const retries: { status: number; delayMs: number; requestId: string | null }[] = [];
  const client = createClient({
    apiKey: ws.apiKey,
    baseUrl: t.url,
    retry: {
      maxElapsedMs: 120_000,
      now: () => t.clock.now().getTime(),
      sleep: (ms) => {
        t.clock.advance(ms);
        return Promise.resolve();
      },
      onRetry: ({ status, delayMs, requestId }) => retries.push({ status, delayMs, requestId }),
    },
  });
  const body = unwrap(await client.GET('/v1/ratelimit/limits'));
  expect(body.data.limits).toEqual({ perMin: 20, perHour: 50, perDay: 100, perSecond: null });
  expect(retries).toHaveLength(1);
  expect(retries[0].status).toBe(429);
  expect(retries[0].delayMs).toBeGreaterThanOrEqual(1000);
  expect(retries[0].requestId).toMatch(/^[0-9a-f-]{36}$/);
});

it('returns the 429 typed, with the request id, when retries are off or the budget is too short', async () => {
  const ws = await t.createWorkspace({ defaultPlan: true });
  await fillMinuteWindow(ws.apiKey);
  const once = createClient({ apiKey: ws.apiKey, baseUrl: t.url, retry: false });
  const { error, response } = await once.GET('/v1/ratelimit/limits');
  expect(response.status).toBe(429);
  expect(error).toEqual({ error: 'Minute rate limit exceeded. Please try again in a minute.' });

  const impatient = createClient({
    apiKey: ws.apiKey,
    baseUrl: t.url,
    retry: { maxElapsedMs: 500, now: () => t.clock.now().getTime() },
  });
  const thrown = await impatient
    .GET('/v2/ratelimit/limits')
    .then(unwrap)
    .catch((e: unknown) => e);
  expect(thrown).toBeInstanceOf(ApiRequestError);
  const e = thrown as ApiRequestError;
  expect(e.status).toBe(429);
  expect(e.code).toBe('rate_limited');
  expect(e.message).toBe('Minute rate limit exceeded. Please try again in a minute.');
  expect(e.requestId).toMatch(/^[0-9a-f-]{36}$/);
});

it('does not retry a 401', async () => {
  let calls = 0;
  const client = createClient({
    apiKey: 'lr_unknown',
    baseUrl: t.url,
    fetch: (req) => {
      calls += 1;
      return fetch(req);
    },
  });
  const { error, response } = await client.GET('/v2/authenticate');
  expect(response.status).toBe(401);
  expect(error).toMatchObject({ error: 'Invalid API key.', code: 'unauthorized', statusCode: 401, details: [] });
  expect(calls).toBe(1);
});

describe('idempotency keys', () => {
  const campaignCount = async (workspaceId: string) =>
    Number((await t.db('campaigns').where({ workspace_id: workspaceId }).count({ n: '*' }).first())!.n);

  /** A client whose first attempt reaches the server but whose answer is lost as `lose` says. */
  function losingFirstAnswer(apiKey: string, lose: () => Response) {
    const keys: (string | null)[] = [];
    const client = createClient({
      apiKey,
      baseUrl: t.url,
      retry: { sleep: () => Promise.resolve() },
      fetch: async (req) => {
        keys.push(req.headers.get('idempotency-key'));
        const response = await fetch(req);
        if (keys.length > 1) return response;
        await response.body?.cancel();
        return lose();
      },
    });
    return { client, keys };
  }

  it('retries a POST whose answer was a 503 with the same key, and the server creates once', async () => {
    const ws = await t.createWorkspace();
    const { client, keys } = losingFirstAnswer(ws.apiKey, () =>
      Response.json({ error: 'Service unavailable: storage cannot be reached. Please retry later.' }, { status: 503 }),
    );
    const { data, response } = await client.POST('/v2/campaign/create', { body: { name: 'Once' } });
    expect(response.status).toBe(201);
    expect(response.headers.get('idempotent-replayed')).toBe('true');
    expect(data!.data.campaign.name).toBe('Once');
    expect(keys).toHaveLength(2);
    expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/);
    expect(keys[1]).toBe(keys[0]);
    expect(await campaignCount(ws.workspaceId)).toBe(1);
  });

  it('retries a POST after a network error with the same key, and the server creates once', async () => {
    const ws = await t.createWorkspace();
    const { client, keys } = losingFirstAnswer(ws.apiKey, () => {
      throw new TypeError('fetch failed');
    });
    const { response } = await client.POST('/v2/campaign/create', { body: { name: 'Once' } });
    expect(response.status).toBe(201);
    expect(keys[1]).toBe(keys[0]);
    expect(await campaignCount(ws.workspaceId)).toBe(1);
  });

  it('sends a fresh key on each call, none on operations without one, and does not resend those after a network error', async () => {
    const ws = await t.createWorkspace();
    const keys: (string | null)[] = [];
    let fail = false;
    const client = createClient({
      apiKey: ws.apiKey,
      baseUrl: t.url,
      retry: { sleep: () => Promise.resolve() },
      fetch: async (req) => {
        keys.push(req.headers.get('idempotency-key'));
        if (fail) throw new TypeError('fetch failed');
        return fetch(req);
      },
    });
    const first = unwrap(await client.POST('/v2/campaign/create', { body: { name: 'Same body' } }));
    unwrap(await client.POST('/v2/campaign/create', { body: { name: 'Same body' } }));
    expect(keys[0]).not.toBe(keys[1]);
    expect(await campaignCount(ws.workspaceId)).toBe(2);
    fail = true;
    await expect(
      client.POST('/v1/campaign/set/name', { body: { campaignId: first.data.campaign.id, name: 'Renamed' } }),
    ).rejects.toThrow('fetch failed');
    expect(keys.slice(2)).toEqual([null]);
  });
});
