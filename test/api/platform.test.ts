import { readJson, type ErrorBody } from '../helpers/bodies';
import { startTestServer, type TestServer } from '../helpers/server';

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(() => t.close());

describe('GET /v1/authenticate', () => {
  it('answers the workspace of a valid key, with a request id', async () => {
    const ws = await t.createWorkspace({ name: 'Acme' });
    const { data, response } = await ws.client.GET('/v1/authenticate');
    expect(response.status).toBe(200);
    expect(data).toEqual({
      status: 'success',
      success: true,
      message: 'API key is valid',
      data: { workspace: { id: ws.workspaceId, name: 'Acme' }, key: { scopes: ['all'] } },
    });
    expect(response.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('tells missing, unknown and revoked keys apart with 401', async () => {
    const ws = await t.createWorkspace();
    expect(await (await t.fetch('/v1/authenticate')).json()).toEqual({
      error: 'Missing API key. Send it in the X-API-Key header.',
    });
    expect(await (await t.fetch('/v1/authenticate', { apiKey: 'lr_nope' })).json()).toEqual({
      error: 'Invalid API key.',
    });
    await t.services.workspaces.revokeKey(ws.keyId);
    const revoked = await t.fetch('/v1/authenticate', { apiKey: ws.apiKey });
    expect(revoked.status).toBe(401);
    expect(await revoked.json()).toEqual({ error: 'This API key has been revoked.' });
  });

  it('sends no ETag, which the spec does not document, and answers a validator in full', async () => {
    const ws = await t.createWorkspace();
    const first = await t.fetch('/v1/authenticate', { apiKey: ws.apiKey });
    expect(first.headers.get('etag')).toBeNull();
    const again = await t.fetch('/v1/authenticate', {
      apiKey: ws.apiKey,
      headers: { 'If-None-Match': 'W/"2b-anything"' },
    });
    expect(again.status).toBe(200);
    expect(await again.json()).toEqual(await first.json());
  });

  it('answers the v2 alias with the v2 error body', async () => {
    const res = await t.fetch('/v2/authenticate', { apiKey: 'lr_nope' });
    expect(res.status).toBe(401);
    const body = await readJson<ErrorBody>(res);
    expect(body).toEqual({
      error: 'Invalid API key.',
      code: 'unauthorized',
      statusCode: 401,
      requestId: res.headers.get('x-request-id'),
      details: [],
    });
  });
});

describe('GET /v1/ratelimit/limits', () => {
  it('returns the default plan limits', async () => {
    const ws = await t.createWorkspace({ defaultPlan: true });
    const { data } = await ws.client.GET('/v1/ratelimit/limits');
    expect(data?.data.limits).toEqual({ perMin: 20, perHour: 50, perDay: 100, perSecond: null });
  });

  it('rejects the 21st request of a minute with the seed message and Retry-After', async () => {
    const ws = await t.createWorkspace({ defaultPlan: true });
    const statuses: number[] = [];
    let last: Response | undefined;
    for (let i = 0; i < 21; i++) {
      last = await t.fetch('/v1/ratelimit/limits', { apiKey: ws.apiKey });
      statuses.push(last.status);
    }
    expect(statuses.filter((s) => s === 200)).toHaveLength(20);
    expect(statuses[20]).toBe(429);
    expect(await last!.json()).toEqual({ error: 'Minute rate limit exceeded. Please try again in a minute.' });
    expect(Number(last!.headers.get('retry-after'))).toBeGreaterThan(0);
  });
});
