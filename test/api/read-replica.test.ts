/**
 * A read replica (DATABASE_READ_URL): a private PostgreSQL and its streaming replica (pg_basebackup -R) on loopback.
 * List pages are read on the replica, a list by its id on the primary (the caller's own write); when the replica goes
 * away the primary answers, counted in db_replica_reads_total, and the replica is tried again after 5 s.
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
    replica = await startOwnReplica(primary);
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

  /** Waits until the replica has replayed everything the primary has written so far. */
  const caughtUp = async () => {
    const { rows } = await t.db.raw<RawResult<{ lsn: string }>>('SELECT pg_current_wal_lsn()::text AS lsn');
    for (;;) {
      const replayed = await onReplica.raw<RawResult<{ done: boolean }>>(
        'SELECT pg_last_wal_replay_lsn() >= ?::pg_lsn AS done',
        [rows[0].lsn],
      );
      if (replayed.rows[0].done) return;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
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

  it('reads list pages on the replica and a list by its id on the primary', async () => {
    await createList('First');
    await caughtUp();
    expect(await listTotal()).toBe(1);
    const replicaReads = await answeredBy('replica');
    expect(replicaReads).toBeGreaterThan(0);

    // With the replica's replay paused, a list written now is not on it yet: the page (replica) lags, while the
    // list by its id (primary) is there at once.
    await onReplica.raw('SELECT pg_wal_replay_pause()');
    const second = await createList('Second');
    expect(await listTotal()).toBe(1);
    const got = await ws.client.GET('/v2/list/get', { params: { query: { listId: second } } });
    expect(got.response.status).toBe(200);
    await onReplica.raw('SELECT pg_wal_replay_resume()');
    await caughtUp();
    expect(await listTotal()).toBe(2);
    expect(await answeredBy('replica')).toBe(replicaReads + 2);
  });

  it('answers from the primary while the replica is away, and tries the replica again after 5 s', async () => {
    replica.stop();
    await createList('Third');
    const before = await answeredBy('primary');
    expect(await listTotal()).toBe(3);
    expect(await listTotal()).toBe(3);
    expect(await answeredBy('primary')).toBe(before + 2);

    replica.start();
    await caughtUp();
    const replicaReads = await answeredBy('replica');
    expect(await listTotal()).toBe(3);
    expect(await answeredBy('replica')).toBe(replicaReads);
    t.clock.advance(6000);
    expect(await listTotal()).toBe(3);
    expect(await answeredBy('replica')).toBe(replicaReads + 1);
  });
});
