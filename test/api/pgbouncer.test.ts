/**
 * Behind PgBouncer in transaction mode (Debian's 1.18, which carries no named prepared statements): with
 * DATABASE_PREPARED_STATEMENTS off the hot reads run unnamed and every request answers; the migrations take turns
 * through it; a pooler restart of 3 seconds is a storage outage the process recovers from by itself. The whole
 * sending, quota, idempotency, jobs and webhook files run through the pooler in CI (TEST_PGBOUNCER=1, .ci/run).
 */
import { scratchDatabase, startTestServer, type TestServer } from '../helpers/server';
import { pgbouncerMissing, startPgbouncer, type Pgbouncer } from '../helpers/pgbouncer';
import type { Database } from '../../server/db';

const missing = process.env.TEST_DATABASE_URL ? pgbouncerMissing() : 'PostgreSQL (TEST_DATABASE_URL) is not set';
const behindPooler = missing ? describe.skip : describe;
if (missing) console.log(`pgbouncer.test.ts skipped: ${missing}`);

jest.setTimeout(120_000);

behindPooler(`behind a private PgBouncer in transaction mode${missing ? ` (skipped: ${missing})` : ''}`, () => {
  let pooler: Pgbouncer;
  let database: Database & { url?: string };
  let t: TestServer;

  beforeAll(async () => {
    // An empty database, migrated through the pooler by the test server (the migrations' lock is transaction-scoped).
    database = await scratchDatabase();
    const direct = new URL(database.url!);
    pooler = await startPgbouncer(direct.toString(), { poolSize: 4 });
    t = await startTestServer({ databaseUrl: pooler.url, config: { preparedStatements: false } });
  });
  afterAll(async () => {
    await t?.close();
    pooler?.destroy();
    await database?.close();
  });

  it('answers hot reads many times over on a few pooled server connections', async () => {
    const ws = await t.createWorkspace();
    for (let i = 0; i < 3; i += 1) {
      await ws.client.POST('/v2/campaign/create', { body: { name: `C${i}` } as never });
      await ws.client.POST('/v2/list/create/people', { body: { name: `L${i}` } as never });
    }
    // More requests at once than the pooler has server connections, each statement on whichever one is free.
    const answers = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        i % 2
          ? ws.client.GET('/v1/campaign/list', { params: { query: { limit: 5 } } })
          : ws.client.GET('/v2/list/all', { params: { query: { limit: 5 } } }),
      ),
    );
    expect(answers.map((a) => a.response.status)).toEqual(answers.map(() => 200));
    const pages = answers.map((a) => (a.data as { data: { pagination: { total: number } } }).data.pagination.total);
    expect(new Set(pages)).toEqual(new Set([3]));
  });

  it('recovers by itself after the pooler is down for 3 seconds', async () => {
    const ws = await t.createWorkspace();
    pooler.stop();
    const during = await ws.client.GET('/v1/campaign/list', { params: { query: { limit: 5 } } });
    expect(during.response.status).toBe(503);
    await new Promise((resolve) => setTimeout(resolve, 3000));
    await pooler.start();
    const after = await ws.client.GET('/v1/campaign/list', { params: { query: { limit: 5 } } });
    expect(after.response.status).toBe(200);
  });
});
