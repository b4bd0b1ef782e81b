/**
 * Idempotency keys (Stripe's semantics) through HTTP: a replay answers the stored status and body
 * with `Idempotent-Replayed: true` and does nothing again; another body is a 422; a retry while
 * the first runs is a 409; one effect under concurrency, also from two server processes; 24 hours
 * by the clock; keys per workspace; a 5xx frees the key; a dead process's claim ends with its lease;
 * a streamed CSV upload is fingerprinted by its contents, sent with a length or chunked.
 */
import { expect } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { found } from '../helpers/rows';
import { startTestServer, type TestServer } from '../helpers/server';
import { startServerProcess, stopServerProcesses } from '../helpers/server-process';
import { insertFixtures } from './people-search-fixtures';

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
  await insertFixtures(t.db);
});
afterAll(async () => {
  stopServerProcesses();
  await t.close();
});
afterEach(() => jest.restoreAllMocks());

/** The parts of an answer these tests read (a success's data, a v2 error's details). */
interface Answer {
  data: { credits: { used: number; remaining: number }; campaign: { id: string } };
  details: { location: string }[];
}

async function post(apiKey: string, path: string, body: Record<string, unknown>, key?: string, baseUrl = t.url) {
  const res = await fetch(baseUrl + path, {
    method: 'POST',
    headers: { 'X-API-Key': apiKey, 'content-type': 'application/json', ...(key ? { 'Idempotency-Key': key } : {}) },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Answer, replayed: res.headers.get('idempotent-replayed') };
}

const campaignCount = async (workspaceId: string) =>
  Number((await t.db('campaigns').where({ workspace_id: workspaceId }).count({ n: '*' }).first())!.n);
const ledgerCount = async (workspaceId: string) =>
  Number((await t.db('credit_ledger').where({ workspace_id: workspaceId }).count({ n: '*' }).first())!.n);

/** Makes the next campaign create wait until `release()` is called, then fail or go on. */
function holdCampaignCreate() {
  let release!: (fail: boolean) => void;
  const gate = new Promise<boolean>((resolve) => (release = resolve));
  const original = t.services.campaigns.create.bind(t.services.campaigns);
  jest.spyOn(t.services.campaigns, 'create').mockImplementationOnce(async (...args) => {
    if (await gate) throw new Error('boom');
    return original(...args);
  });
  return release;
}

/** Resolves once the claim of `key` is in the database (the held request is running). */
async function claimed(key: string): Promise<void> {
  while (!(await t.db('idempotency_keys').where({ key }).first())) await new Promise((r) => setImmediate(r));
}

describe('replays', () => {
  it('answers the stored status and body again and creates nothing', async () => {
    const ws = await t.createWorkspace();
    const key = randomUUID();
    const first = await post(ws.apiKey, '/v2/campaign/create', { name: 'Q4 founders' }, key);
    expect(first.status).toBe(201);
    expect(first.replayed).toBeNull();
    const again = await post(ws.apiKey, '/v2/campaign/create', { name: 'Q4 founders' }, key);
    expect(again).toEqual({ status: 201, body: first.body, replayed: 'true' });
    expect(await campaignCount(ws.workspaceId)).toBe(1);
    // Encrypted at rest: a stored answer may hold a secret shown once.
    expect(
      (
        await found(
          t.db('idempotency_keys').where({ key }).first<{ response_body: string | null } | undefined>('response_body'),
          'idempotency key',
        )
      ).response_body,
    ).not.toContain('Q4 founders');
    // Without a key every request runs.
    expect((await post(ws.apiKey, '/v2/campaign/create', { name: 'Q4 founders' })).status).toBe(201);
    expect(await campaignCount(ws.workspaceId)).toBe(2);
  });

  it('charges credits once: the replay reports the first charge and the ledger has one entry', async () => {
    const ws = await t.createWorkspace({ credits: 10 });
    const key = randomUUID();
    const body = { locations: ['texas'], dataOptions: ['full'] };
    const first = await post(ws.apiKey, '/v1/company/find', body, key);
    expect(first.status).toBe(200);
    expect(first.body.data.credits).toEqual({ used: 2, remaining: 8 });
    const ledger = await ledgerCount(ws.workspaceId);
    // Keys in another order are the same body.
    const again = await post(ws.apiKey, '/v1/company/find', { dataOptions: ['full'], locations: ['texas'] }, key);
    expect(again).toEqual({ status: 200, body: first.body, replayed: 'true' });
    expect(await ledgerCount(ws.workspaceId)).toBe(ledger);
  });

  it('stores an error answered by the operation (404) and replays it', async () => {
    const ws = await t.createWorkspace();
    const key = randomUUID();
    const body = { name: 'x', accountIds: [randomUUID()] };
    const first = await post(ws.apiKey, '/v2/campaign/create', body, key);
    expect(first.status).toBe(404);
    expect(await post(ws.apiKey, '/v2/campaign/create', body, key)).toEqual({
      status: 404,
      body: first.body,
      replayed: 'true',
    });
  });

  it('stores nothing for a request refused before it runs (400), so the key stays free', async () => {
    const ws = await t.createWorkspace();
    const key = randomUUID();
    expect((await post(ws.apiKey, '/v2/campaign/create', { name: 'x', unknown: 1 }, key)).status).toBe(400);
    expect((await post(ws.apiKey, '/v2/campaign/create', { name: 'x' }, key)).status).toBe(201);
  });

  it('refuses a key that is too long or not printable (400)', async () => {
    const ws = await t.createWorkspace();
    const res = await post(ws.apiKey, '/v2/campaign/create', { name: 'x' }, 'k'.repeat(256));
    expect(res.status).toBe(400);
    expect(res.body.details[0]).toMatchObject({ location: 'header' });
    for (const key of ['', 'cl\u00e9']) {
      const res = await fetch(`${t.url}/v2/campaign/create`, {
        method: 'POST',
        headers: { 'X-API-Key': ws.apiKey, 'content-type': 'application/json', 'Idempotency-Key': key },
        body: '{"name":"x"}',
      });
      expect(res.status).toBe(400);
    }
    expect(await campaignCount(ws.workspaceId)).toBe(0);
  });
});

describe('conflicts', () => {
  it('answers 422 for the same key with another body (v2 body with details), and 422 on another path', async () => {
    const ws = await t.createWorkspace();
    const key = randomUUID();
    expect((await post(ws.apiKey, '/v2/campaign/create', { name: 'A' }, key)).status).toBe(201);
    const other = await post(ws.apiKey, '/v2/campaign/create', { name: 'B' }, key);
    expect(other.status).toBe(422);
    expect(other.body).toEqual({
      error: 'This Idempotency-Key was already used for another request. Use a fresh key for a new request.',
      code: 'idempotency_key_reused',
      statusCode: 422,
      requestId: expect.any(String),
      details: [
        {
          field: 'header.Idempotency-Key',
          location: 'header',
          message: 'was used for another method, path or body',
          code: 'idempotency_key_reused',
        },
      ],
    });
    expect((await post(ws.apiKey, '/v2/list/create/people', { name: 'A' }, key)).status).toBe(422);
    expect(await campaignCount(ws.workspaceId)).toBe(1);
  });

  it('answers 422 in the v1 format on a v1 path', async () => {
    const ws = await t.createWorkspace({ credits: 10 });
    const key = randomUUID();
    expect(
      (await post(ws.apiKey, '/v1/company/find', { domains: ['tinybakery.co'], dataOptions: ['basic'] }, key)).status,
    ).toBe(200);
    const other = await post(ws.apiKey, '/v1/company/find', { domains: ['tinybakery.co'], dataOptions: ['full'] }, key);
    expect(other).toEqual({
      status: 422,
      body: { error: 'This Idempotency-Key was already used for another request. Use a fresh key for a new request.' },
      replayed: null,
    });
  });

  it('answers 409 while the first request runs, then replays its answer', async () => {
    const ws = await t.createWorkspace();
    const key = randomUUID();
    const release = holdCampaignCreate();
    const first = post(ws.apiKey, '/v2/campaign/create', { name: 'Held' }, key);
    await claimed(key);
    const during = await post(ws.apiKey, '/v2/campaign/create', { name: 'Held' }, key);
    expect(during.status).toBe(409);
    expect(during.body).toMatchObject({
      code: 'idempotency_in_progress',
      statusCode: 409,
      error: 'A request with this Idempotency-Key is still in progress. Retry later with the same key.',
    });
    release(false);
    const done = await first;
    expect(done.status).toBe(201);
    expect(await post(ws.apiKey, '/v2/campaign/create', { name: 'Held' }, key)).toEqual({
      status: 201,
      body: done.body,
      replayed: 'true',
    });
    expect(await campaignCount(ws.workspaceId)).toBe(1);
  });

  it('produces one effect from concurrent requests with one key', async () => {
    const ws = await t.createWorkspace();
    const key = randomUUID();
    const answers = await Promise.all(
      Array.from({ length: 8 }, () => post(ws.apiKey, '/v2/campaign/create', { name: 'Race' }, key)),
    );
    expect(answers.filter((a) => a.status === 201 && a.replayed === null)).toHaveLength(1);
    expect(answers.every((a) => a.status === 409 || a.status === 201)).toBe(true);
    expect(await campaignCount(ws.workspaceId)).toBe(1);
  });
});

describe('the key’s life', () => {
  it('frees the key after a 5xx, so a retry runs', async () => {
    const ws = await t.createWorkspace();
    const key = randomUUID();
    holdCampaignCreate()(true);
    const failed = await post(ws.apiKey, '/v2/campaign/create', { name: 'Flaky' }, key);
    expect(failed.status).toBe(500);
    const retry = await post(ws.apiKey, '/v2/campaign/create', { name: 'Flaky' }, key);
    expect(retry).toMatchObject({ status: 201, replayed: null });
    expect(await campaignCount(ws.workspaceId)).toBe(1);
  });

  it('lets a retry take over a claim whose lease ran out (its process died), in the v1 format before that', async () => {
    const ws = await t.createWorkspace({ credits: 10 });
    const key = randomUUID();
    const body = { domains: ['tinybakery.co'], dataOptions: ['basic'] };
    const first = await post(ws.apiKey, '/v1/company/find', body, key);
    // A process that died while running: its claim is still there, running.
    await t
      .db('idempotency_keys')
      .where({ key })
      .update({
        state: 'running',
        locked_until: new Date(t.clock.now().getTime() + t.deps.config.idempotencyLeaseSeconds * 1000),
      });
    expect(await post(ws.apiKey, '/v1/company/find', body, key)).toEqual({
      status: 409,
      body: { error: 'A request with this Idempotency-Key is still in progress. Retry later with the same key.' },
      replayed: null,
    });
    t.clock.advance(t.deps.config.idempotencyLeaseSeconds * 1000);
    expect(await post(ws.apiKey, '/v1/company/find', body, key)).toEqual({
      status: 200,
      body: first.body,
      replayed: null,
    });
  });

  it('keeps an answer 24 hours, then the key is new again, and the worker deletes expired keys', async () => {
    const ws = await t.createWorkspace();
    const key = randomUUID();
    expect((await post(ws.apiKey, '/v2/campaign/create', { name: 'Day one' }, key)).status).toBe(201);
    t.clock.advance(24 * 3600_000 - 1000);
    expect((await post(ws.apiKey, '/v2/campaign/create', { name: 'Day two' }, key)).status).toBe(422);
    t.clock.advance(1000);
    expect(await post(ws.apiKey, '/v2/campaign/create', { name: 'Day two' }, key)).toMatchObject({
      status: 201,
      replayed: null,
    });
    expect(await campaignCount(ws.workspaceId)).toBe(2);
    t.clock.advance(24 * 3600_000);
    expect(await t.services.idempotency.runOnce()).toBeGreaterThanOrEqual(1);
    expect(await t.db('idempotency_keys').where({ key }).first()).toBeUndefined();
  });

  it('keeps keys per workspace: another workspace’s same key runs and gives no signal', async () => {
    const a = await t.createWorkspace();
    const b = await t.createWorkspace();
    const key = randomUUID();
    const first = await post(a.apiKey, '/v2/campaign/create', { name: 'Shared key' }, key);
    const other = await post(b.apiKey, '/v2/campaign/create', { name: 'Shared key' }, key);
    expect(other).toMatchObject({ status: 201, replayed: null });
    expect(other.body.data.campaign.id).not.toBe(first.body.data.campaign.id);
    expect((await post(b.apiKey, '/v2/campaign/create', { name: 'Other body' }, randomUUID())).status).toBe(201);
    expect(await campaignCount(b.workspaceId)).toBe(2);
  });

  it('counts a replay toward the quota', async () => {
    const ws = await t.createWorkspace({ defaultPlan: true });
    const key = randomUUID();
    const first = await fetch(`${t.url}/v2/campaign/create`, {
      method: 'POST',
      headers: { 'X-API-Key': ws.apiKey, 'content-type': 'application/json', 'Idempotency-Key': key },
      body: '{"name":"q"}',
    });
    const again = await fetch(`${t.url}/v2/campaign/create`, {
      method: 'POST',
      headers: { 'X-API-Key': ws.apiKey, 'content-type': 'application/json', 'Idempotency-Key': key },
      body: '{"name":"q"}',
    });
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(first.headers.get('ratelimit')).toMatch(/r=19;/);
    expect(again.headers.get('ratelimit')).toMatch(/r=18;/);
  });
});

describe('streamed uploads (CSV)', () => {
  /** A CSV upload with a Content-Length, or chunked (a stream of unknown length). */
  async function upload(apiKey: string, path: string, csv: string, key: string, chunked: boolean) {
    const bytes = new TextEncoder().encode(csv);
    const body = chunked
      ? new ReadableStream<Uint8Array>({
          start(controller) {
            // Two chunks, split inside a line.
            controller.enqueue(bytes.slice(0, 9));
            controller.enqueue(bytes.slice(9));
            controller.close();
          },
        })
      : csv;
    const res = await fetch(t.url + path, {
      method: 'POST',
      headers: { 'X-API-Key': apiKey, 'content-type': 'text/csv', 'Idempotency-Key': key },
      body,
      ...(chunked ? { duplex: 'half' } : {}),
    });
    if (chunked) expect(res.status).not.toBe(411);
    const json = (await res.json()) as { data?: { job: { id: string } }; code?: string };
    return {
      status: res.status,
      jobId: json.data?.job.id,
      code: json.code,
      replayed: res.headers.get('idempotent-replayed'),
    };
  }

  const jobRows = async (workspaceId: string) =>
    t.db('jobs').where({ workspace_id: workspaceId }).select<{ id: string; total: number }[]>('id', 'total');

  // Two files of one length: a fingerprint of type and length alone cannot tell them apart.
  const first = 'email\nann@acme.com\nbob@acme.com\n';
  const other = 'email\nann@acme.com\ncat@acme.com\n';

  it.each([
    ['/v2/job/verify', false],
    ['/v2/job/verify', true],
    ['/v2/job/contact-import', false],
    ['/v2/job/contact-import', true],
  ])('%s (chunked: %s): the same file replays, another file under the key is a 422', async (operation, chunked) => {
    const ws = await t.createWorkspace();
    let path = operation;
    if (operation.endsWith('contact-import')) {
      const created = await post(ws.apiKey, '/v2/campaign/create', { name: 'Uploads' });
      path += `?campaignId=${created.body.data.campaign.id}`;
    }
    const key = randomUUID();
    const sent = await upload(ws.apiKey, path, first, key, chunked);
    expect(sent).toMatchObject({ status: 202, replayed: null });
    expect(await upload(ws.apiKey, path, first, key, chunked)).toEqual({ ...sent, replayed: 'true' });
    // The same bytes the other way (chunked or with a length) are the same request.
    expect(await upload(ws.apiKey, path, first, key, !chunked)).toEqual({ ...sent, replayed: 'true' });
    expect(await upload(ws.apiKey, path, other, key, chunked)).toMatchObject({
      status: 422,
      code: 'idempotency_key_reused',
    });
    expect(await jobRows(ws.workspaceId)).toEqual([{ id: sent.jobId, total: 2 }]);
    // Under a fresh key the other file runs.
    expect(await upload(ws.apiKey, path, other, randomUUID(), chunked)).toMatchObject({ status: 202, replayed: null });
    expect(await jobRows(ws.workspaceId)).toHaveLength(2);
  });
});

describe('across server processes', () => {
  it('produces one effect when two processes get the same key at once', async () => {
    if (!t.databaseUrl) {
      // The embedded database belongs to one process; PostgreSQL runs cover this.
      console.warn('skipped: needs TEST_DATABASE_URL (two processes cannot share the embedded database)');
      return;
    }
    const ws = await t.createWorkspace();
    const urls = await Promise.all([startServerProcess(t.databaseUrl), startServerProcess(t.databaseUrl)]);
    const key = randomUUID();
    const answers = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        post(ws.apiKey, '/v2/campaign/create', { name: 'Two processes' }, key, urls[i % 2]),
      ),
    );
    expect(answers.filter((a) => a.status === 201 && a.replayed === null)).toHaveLength(1);
    expect(answers.every((a) => a.status === 409 || a.status === 201)).toBe(true);
    expect(await campaignCount(ws.workspaceId)).toBe(1);
  }, 120_000);
});
