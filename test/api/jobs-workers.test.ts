/**
 * Worker processes (`npm run worker`'s entry) on one PostgreSQL database share a job's batches
 * (FOR UPDATE SKIP LOCKED): two workers split one import and apply every batch once; a worker killed
 * (SIGKILL) in the middle of a batch leaves it to another, which applies it once; a cancel that lands while
 * a batch is being applied rolls that batch back. (The embedded database has one process, so this runs on
 * PostgreSQL only.)
 */
import type { RawResult } from '../../server/db';
import { readJson, type Success } from '../helpers/bodies';
import type { ChildProcess } from 'node:child_process';
import { hostname } from 'node:os';
import knex from 'knex';
import { startTestServer, type TestServer, type TestWorkspace } from '../helpers/server';
import { startWorkerProcess, stopServerProcesses } from '../helpers/server-process';
import { addCampaign } from './contact.helpers';
import { describeIf } from '../helpers/binaries';

const onPostgres = describeIf(
  process.env.TEST_DATABASE_URL,
  'PostgreSQL: several processes share one database',
  'TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres',
);

jest.setTimeout(180_000);

onPostgres('jobs with several worker processes on one PostgreSQL', () => {
  let t: TestServer;
  let ws: TestWorkspace;
  /** A connection of the test's own, to hold locks the workers meet. */
  let blocker: knex.Knex;
  beforeAll(async () => {
    t = await startTestServer({ config: { jobBatchSize: 2 } });
    ws = await t.createWorkspace();
    blocker = knex({ client: 'pg', connection: t.databaseUrl!, pool: { min: 0, max: 2 } });
  });
  afterAll(async () => {
    stopServerProcesses();
    await blocker.destroy();
    await t.close();
  });

  /** A worker process; `concurrency` batches at once (1 where a test needs to know which batch waits). */
  const worker = (concurrency = 2) =>
    startWorkerProcess(t.databaseUrl!, {
      SENDING_TICK_SECONDS: '1',
      SEED_DEMO: '0',
      JOB_CONCURRENCY: String(concurrency),
    });
  const upload = async (campaignId: string, emails: string[]) => {
    const res = await t.fetch(`/v2/job/contact-import?campaignId=${campaignId}`, {
      method: 'POST',
      apiKey: ws.apiKey,
      headers: { 'Content-Type': 'text/csv' },
      body: ['email', ...emails].join('\n'),
    });
    expect(res.status).toBe(202);
    return (await readJson<Success<'/v2/job/contact-import', 'post'>>(res)).data.job.id;
  };
  const getJob = async (jobId: string) =>
    (await ws.client.GET('/v2/job/get', { params: { query: { jobId } } })).data!.data.job;
  async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, what: string): Promise<T> {
    for (let i = 0; i < 600; i++) {
      const value = await read();
      if (done(value)) return value;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`timed out waiting for ${what}`);
  }
  /** Waits until a worker's backend waits for a lock on its insert into contacts. */
  const blockedInsert = () =>
    until(
      async () =>
        (
          await blocker.raw<RawResult>(
            "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND query ILIKE 'insert into \"contacts\"%'",
          )
        ).rows.length,
      (n) => n > 0,
      'a worker blocked in its batch',
    );
  const kill = (child: ChildProcess) =>
    new Promise<void>((resolve) => {
      child.removeAllListeners('exit');
      child.once('exit', () => resolve());
      child.kill('SIGKILL');
    });
  const contactsOf = async (campaignId: string) =>
    (
      await t.db('contacts').where({ campaign_id: campaignId }).orderBy('email').select<{ email: string }[]>('email')
    ).map((r) => r.email);

  it('two workers (two batches at once each) share one job and apply every batch exactly once', async () => {
    const campaignId = await addCampaign(t, ws);
    const emails = Array.from({ length: 600 }, (_, i) => `c${String(i).padStart(4, '0')}@acme.com`);
    // Batches of 2 rows: 300 batches to share.
    const jobId = await upload(campaignId, emails);
    const [a, b] = await Promise.all([worker(), worker()]);
    const job = await until(
      () => getJob(jobId),
      (j) => j.status !== 'queued' && j.status !== 'running',
      'the job to end',
    );
    expect(job).toMatchObject({
      status: 'completed',
      progress: { total: 600, processed: 600 },
      counts: { created: 600, skipped: 0, invalid: 0 },
    });
    expect(await contactsOf(campaignId)).toEqual(emails);
    expect(Number((await t.db('job_results').where({ job_id: jobId }).count({ n: '*' }).first())!.n)).toBe(600);
    const by = await t
      .db('job_batches')
      .where({ job_id: jobId })
      .groupBy('done_by')
      .select<{ done_by: string; n: number }[]>('done_by', t.db.raw('count(*)::int as n'));
    expect(by.map((r) => r.done_by).sort()).toEqual([`${hostname()}:${a.pid}`, `${hostname()}:${b.pid}`].sort());
    await Promise.all([kill(a), kill(b)]);
  });

  it('a batch whose worker was killed mid-batch is taken over and applied once', async () => {
    const campaignId = await addCampaign(t, ws);
    const emails = ['k0@acme.com', 'k1@acme.com', 'k2@acme.com', 'k3@acme.com'];
    // The test holds k0 uncommitted in the campaign: the first worker's first batch waits on it mid-transaction.
    const trx = await blocker.transaction();
    const now = new Date();
    await trx('contacts').insert({
      id: '0193a1b2-7c4d-7e5f-8a9b-00000000dead',
      workspace_id: ws.workspaceId,
      campaign_id: campaignId,
      email: 'k0@acme.com',
      custom_variables: '{}',
      status: 'active',
      created_at: now,
      updated_at: now,
    });
    const jobId = await upload(campaignId, emails);
    try {
      const first = await worker(1);
      await blockedInsert();
      await kill(first);
    } finally {
      await trx.rollback();
    }

    const second = await worker(1);
    const job = await until(
      () => getJob(jobId),
      (j) => j.status === 'completed',
      'the job to complete',
    );
    expect(job).toMatchObject({ progress: { total: 4, processed: 4 }, counts: { created: 4, skipped: 0, invalid: 0 } });
    expect(await contactsOf(campaignId)).toEqual(emails);
    const batches = await t
      .db('job_batches')
      .where({ job_id: jobId })
      .orderBy('batch_no')
      .select<{ done_by: string }[]>('done_by');
    expect(batches.map((r) => r.done_by)).toEqual([`${hostname()}:${second.pid}`, `${hostname()}:${second.pid}`]);
    await kill(second);
  });

  it('a cancel that lands while a batch is applied rolls that batch back', async () => {
    const campaignId = await addCampaign(t, ws);
    const trx = await blocker.transaction();
    const now = new Date();
    await trx('contacts').insert({
      id: '0193a1b2-7c4d-7e5f-8a9b-00000000beef',
      workspace_id: ws.workspaceId,
      campaign_id: campaignId,
      email: 'x0@acme.com',
      custom_variables: '{}',
      status: 'active',
      created_at: now,
      updated_at: now,
    });
    const jobId = await upload(campaignId, ['x0@acme.com', 'x1@acme.com', 'x2@acme.com']);
    const w = await worker(1);
    try {
      await blockedInsert();
      // The worker holds its batch, not the job: the cancel answers at once.
      const cancelled = await ws.client.POST('/v2/job/cancel', { body: { jobId } });
      expect(cancelled.data!.data.job).toMatchObject({ status: 'cancelled', progress: { processed: 0 } });
    } finally {
      await trx.rollback();
    }
    await until(
      () =>
        blocker.raw<RawResult<{ n: number }>>(
          "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'",
        ),
      (r) => r.rows[0].n === 0,
      'the batch to end',
    );
    await new Promise((r) => setTimeout(r, 1500));
    expect(await contactsOf(campaignId)).toEqual([]);
    expect(await getJob(jobId)).toMatchObject({
      status: 'cancelled',
      progress: { processed: 0 },
      counts: { created: 0 },
    });
    expect(await t.db('job_batches').where({ job_id: jobId }).whereNotNull('done_by')).toEqual([]);
    await kill(w);
  });
});
