/**
 * Workspaces share the job worker: a small job of one workspace starts at the worker's next pass whatever
 * another workspace queued before it (the workspace served least recently goes first), and a cancel stops a
 * batch in the middle of its rows. The worker is driven by calling its runOnce.
 */
import { expect } from '@jest/globals';
import { readJson, type Success } from '../helpers/bodies';
import { startDnsServer, type TestDnsServer } from '../helpers/dns-server';
import { startTestServer, type TestServer, type TestWorkspace } from '../helpers/server';

jest.setTimeout(180_000);

type Accepted = Success<'/v2/job/verify', 'post'>;

let dns: TestDnsServer;
beforeAll(async () => {
  dns = await startDnsServer({ 'acme.com': { MX: [{ exchange: 'mx.acme.com', priority: 10 }] } });
});
afterAll(async () => {
  await dns.close();
});

async function verify(t: TestServer, ws: TestWorkspace, emails: string[]): Promise<string> {
  const res = await t.fetch('/v2/job/verify', {
    method: 'POST',
    apiKey: ws.apiKey,
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ emails }),
  });
  expect(res.status).toBe(202);
  return (await readJson<Accepted>(res)).data.job.id;
}
const jobOf = async (ws: TestWorkspace, jobId: string) =>
  (await ws.client.GET('/v2/job/get', { params: { query: { jobId } } })).data!.data.job;
const addresses = (prefix: string, n: number, domain = 'acme.com') =>
  Array.from({ length: n }, (_, i) => `${prefix}${i}@${domain}`);

describe('jobs of several workspaces', () => {
  let t: TestServer;
  let big: TestWorkspace;
  let small: TestWorkspace;
  beforeAll(async () => {
    // Batches of 5 rows, one at a time: each pass of the worker applies one batch.
    t = await startTestServer({
      config: { jobBatchSize: 5, jobConcurrency: 1, dnsServers: [dns.address], dnsTimeoutMs: 300 },
    });
    big = await t.createWorkspace();
    small = await t.createWorkspace();
  });
  afterAll(async () => {
    await t.close();
  });

  it('a small job of another workspace runs at the next pass, whatever is queued before it', async () => {
    // One workspace queues a 100-row verification and eleven more jobs behind it.
    const first = await verify(t, big, addresses('big', 100));
    const more = [];
    for (let i = 0; i < 11; i++) more.push(await verify(t, big, addresses(`more${i}-`, 5)));
    expect(await t.services.jobs.runOnce()).toBe(5);
    expect(await t.services.jobs.runOnce()).toBe(5);

    const late = await verify(t, small, ['one@acme.com']);
    expect(await t.services.jobs.runOnce()).toBe(1);
    expect(await jobOf(small, late)).toMatchObject({ status: 'completed', progress: { total: 1, processed: 1 } });
    // The other workspace goes on where it was: its oldest job first.
    expect(await jobOf(big, first)).toMatchObject({ status: 'running', progress: { processed: 10 } });
    expect(await t.services.jobs.runOnce()).toBe(5);
    expect(await jobOf(big, first)).toMatchObject({ progress: { processed: 15 } });
    expect(await jobOf(big, more[0])).toMatchObject({ status: 'queued' });

    // Two workspaces with work left take turns, a batch each.
    const second = await verify(t, small, addresses('second', 10));
    const processed = async () => [
      (await jobOf(big, first)).progress.processed,
      (await jobOf(small, second)).progress.processed,
    ];
    expect(await t.services.jobs.runOnce()).toBe(5);
    expect(await processed()).toEqual([15, 5]);
    expect(await t.services.jobs.runOnce()).toBe(5);
    expect(await processed()).toEqual([20, 5]);
    expect(await t.services.jobs.runOnce()).toBe(5);
    expect(await processed()).toEqual([20, 10]);
    expect(await jobOf(small, second)).toMatchObject({ status: 'completed' });
  });
});

// On the embedded database a cancel waits for the batch's transaction (one connection): the batch ends first.
const onPostgres = process.env.TEST_DATABASE_URL ? describe : describe.skip;

onPostgres('a cancel landing while a batch is applied', () => {
  let t: TestServer;
  let ws: TestWorkspace;
  let silent: TestDnsServer;
  beforeAll(async () => {
    // A DNS server that never answers: each new domain costs a 500 ms time-out, so a batch of 300 takes long.
    silent = await startDnsServer({}, { mode: 'silent' });
    t = await startTestServer({
      config: { jobBatchSize: 1000, jobConcurrency: 1, dnsServers: [silent.address], dnsTimeoutMs: 500 },
    });
    ws = await t.createWorkspace();
  });
  afterAll(async () => {
    await t.close();
    await silent.close();
  });

  it('stops the batch within its next rows, and rolls them back', async () => {
    const jobId = await verify(
      t,
      ws,
      Array.from({ length: 300 }, (_, i) => `someone@d${i}.example`),
    );
    const run = t.services.jobs.runOnce();
    for (let i = 0; i < 600 && silent.queries.length === 0; i++) await new Promise((r) => setTimeout(r, 50));
    const cancelled = await ws.client.POST('/v2/job/cancel', { body: { jobId } });
    expect(cancelled.data!.data.job).toMatchObject({ status: 'cancelled' });
    expect(await run).toBe(0);
    const domains = new Set(silent.queries.map((q) => q.name.toLowerCase()));
    // The rows after the cancel were never looked at (the whole batch would ask for 300 domains).
    expect(domains.size).toBeLessThanOrEqual(100);
    expect(await jobOf(ws, jobId)).toMatchObject({ status: 'cancelled', progress: { processed: 0 } });
    expect(await t.db('job_results').where({ job_id: jobId })).toEqual([]);
    expect(await t.db('job_batches').where({ job_id: jobId }).first()).toMatchObject({ applied: 0, done_by: null });
  });
});
