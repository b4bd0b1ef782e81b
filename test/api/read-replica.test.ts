/**
 * A read replica (DATABASE_READ_URL): a private PostgreSQL and its streaming replica (pg_basebackup -R) on loopback,
 * which applies each change 1 s after its commit, as a lagging replica does (and whose replay a test pauses
 * where the lag must outlast a step). Analytics of a new workspace are
 * answered (the rollups' time zone is written on the primary, never on the replica); after a change, or after the
 * primary named an object (a completed job), the workspace reads from the primary until the replica has replayed
 * that far, so no answer contradicts an earlier one; when the replica goes away the primary answers, counted in
 * db_replica_reads_total, and the replica is tried again after 5 s.
 */
import { ownPostgresMissing, startOwnPostgres, startOwnReplica, type OwnPostgres } from '../helpers/own-postgres';
import { startTestServer, type TestServer, type TestWorkspace } from '../helpers/server';
import knex from 'knex';
import type { RawResult } from '../../server/db';

const missing = process.env.TEST_DATABASE_URL ? ownPostgresMissing() : 'PostgreSQL (TEST_DATABASE_URL) is not set';
if (missing) console.log(`read-replica.test.ts skipped: ${missing}`);

jest.setTimeout(180_000);

(missing ? describe.skip : describe)(`a read replica${missing ? ` (skipped: ${missing})` : ''}`, () => {
  let primary: OwnPostgres;
  let replica: OwnPostgres;
  let t: TestServer;
  let ws: TestWorkspace;
  let onReplica: knex.Knex;

  beforeAll(async () => {
    primary = await startOwnPostgres();
    replica = await startOwnReplica(primary, { applyDelay: '1s' });
    onReplica = knex({ client: 'pg', connection: replica.url, pool: { min: 0, max: 1 } });
    t = await startTestServer({ databaseUrl: primary.url, readDatabaseUrl: replica.url, metrics: true });
    ws = await t.createWorkspace();
  });
  afterAll(async () => {
    await t?.close();
    await onReplica?.destroy();
    replica?.destroy();
    primary?.destroy();
  });

  /**
   * Waits until the replica has replayed everything the primary has written so far, and moves the clock past the
   * time the server takes the replica's position as known.
   */
  const caughtUp = async () => {
    const { rows } = await t.db.raw<RawResult<{ lsn: string }>>('SELECT pg_current_wal_lsn()::text AS lsn');
    for (;;) {
      const replayed = await onReplica.raw<RawResult<{ done: boolean }>>(
        'SELECT pg_last_wal_replay_lsn() >= ?::pg_lsn AS done',
        [rows[0].lsn],
      );
      if (replayed.rows[0].done) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    t.clock.advance(1000);
  };
  const listTotal = async () => {
    const page = await ws.client.GET('/v2/list/all', { params: { query: { limit: 5 } } });
    expect(page.response.status).toBe(200);
    return page.data!.data.pagination.total;
  };
  const answeredBy = async (by: string) =>
    (await t.metrics!.registry.getSingleMetric('db_replica_reads_total')!.get()).values.find(
      (v) => v.labels.answered_by === by,
    )?.value ?? 0;
  const createList = async (name: string) => {
    const created = await ws.client.POST('/v2/list/create/people', { body: { name } });
    expect(created.response.status).toBe(201);
    return created.data!.data.list.id;
  };

  it('answers the analytics of a new workspace, writing its rollup zone on the primary', async () => {
    const fresh = await t.createWorkspace();
    await caughtUp();
    const before = { primary: await answeredBy('primary'), replica: await answeredBy('replica') };
    await onReplica.raw('SELECT pg_wal_replay_pause()');
    for (const path of [
      '/v2/analytics/campaign/summary',
      '/v1/analytics/campaign/summary',
      '/v2/analytics/account/campaign/count',
    ] as const) {
      expect((await t.fetch(path, { apiKey: fresh.apiKey })).status).toBe(200);
    }
    // The summary's zone is written on the primary, which answers it and the next reads of the workspace.
    expect(await answeredBy('primary')).toBe(before.primary + 3);
    expect(await answeredBy('replica')).toBe(before.replica);

    // Once the replica has the zone, it answers.
    await onReplica.raw('SELECT pg_wal_replay_resume()');
    await caughtUp();
    expect((await t.fetch('/v2/analytics/campaign/summary', { apiKey: fresh.apiKey })).status).toBe(200);
    expect(await answeredBy('replica')).toBe(before.replica + 1);
  });

  it('reads a workspace from the primary after its change, until the replica has it', async () => {
    await caughtUp();
    expect(await listTotal()).toBe(0);
    const replicaReads = await answeredBy('replica');
    // With the replica's replay paused, the list written now is not on it: the page is the primary's, and shows it.
    await onReplica.raw('SELECT pg_wal_replay_pause()');
    await createList('First');
    expect(await listTotal()).toBe(1);
    expect(await answeredBy('replica')).toBe(replicaReads);
    await onReplica.raw('SELECT pg_wal_replay_resume()');
    await caughtUp();
    expect(await listTotal()).toBe(1);
    expect(await answeredBy('replica')).toBe(replicaReads + 1);
  });

  it('never contradicts a job the primary showed completed', async () => {
    const campaignId = (await ws.client.POST('/v2/campaign/create', { body: { name: 'Replica import' } })).data!.data
      .campaign.id;
    const accepted = await t.fetch(`/v2/job/contact-import?campaignId=${campaignId}`, {
      method: 'POST',
      apiKey: ws.apiKey,
      headers: { 'Content-Type': 'text/csv' },
      body: 'email\njane@example.com\n',
    });
    expect(accepted.status).toBe(202);
    const jobId = ((await accepted.json()) as { data: { job: { id: string } } }).data.job.id;
    await caughtUp();
    // The worker completes the job on the primary, which the replica, paused, does not have yet.
    await onReplica.raw('SELECT pg_wal_replay_pause()');
    while ((await t.services.jobs.runOnce()) > 0);
    const got = await ws.client.GET('/v2/job/get', { params: { query: { jobId } } });
    expect(got.data!.data.job.status).toBe('completed');
    const results = await t.fetch(`/v2/job/results?jobId=${jobId}`, { apiKey: ws.apiKey });
    expect(results.status).toBe(200);
    expect((await results.text()).trimEnd().split('\n')).toHaveLength(2);
    await onReplica.raw('SELECT pg_wal_replay_resume()');
  });

  it('answers from the primary while the replica is away, and tries the replica again after 5 s', async () => {
    await caughtUp();
    replica.stop();
    const before = await answeredBy('primary');
    expect(await listTotal()).toBe(1);
    expect(await listTotal()).toBe(1);
    expect(await answeredBy('primary')).toBe(before + 2);

    replica.start();
    await caughtUp();
    const replicaReads = await answeredBy('replica');
    expect(await listTotal()).toBe(1);
    expect(await answeredBy('replica')).toBe(replicaReads);
    // That read, answered by the primary, noted the primary's position for the workspace: once the replica has
    // replayed it and the 5 s are over, the replica answers again.
    await caughtUp();
    t.clock.advance(6000);
    expect(await listTotal()).toBe(1);
    expect(await answeredBy('replica')).toBe(replicaReads + 1);
  });
});
