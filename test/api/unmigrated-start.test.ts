/**
 * The production path with MIGRATE_ON_START=off on a database nobody has migrated yet (PostgreSQL): the API answers,
 * /readyz with 503, and each process (the API with its demo data on, a worker apart) says so in one line and logs
 * no error while it waits; once the database is migrated (`npm run migrate`) both go on without a restart: the API
 * is ready and makes its demo workspace, the worker runs its jobs.
 */
import type { Database } from '../../server/db';
import { migrate } from '../../server/db';
import { scratchDatabase } from '../helpers/server';
import { processOutput, startServerChild, startWorkerProcess, stopServerProcesses } from '../helpers/server-process';

jest.setTimeout(180_000);

const lines = (output: string) => output.split('\n').filter(Boolean);
const waitingLines = (output: string) => lines(output).filter((line) => line.includes('database not migrated'));
const errorLines = (output: string) => lines(output).filter((line) => /"level":(50|60)/.test(line));

(process.env.TEST_DATABASE_URL ? describe : describe.skip)('a start on an unmigrated database', () => {
  let database: Database & { url?: string };
  beforeAll(async () => {
    database = await scratchDatabase();
  });
  afterAll(async () => {
    stopServerProcesses();
    await database?.close();
  });

  it('answers /readyz 503 with one line per process until migrated, then goes on by itself', async () => {
    const api = await startServerChild(database.url!, { MIGRATE_ON_START: 'off', SEED_DEMO: '1' });
    const worker = startWorkerProcess(database.url!, { MIGRATE_ON_START: 'off' });
    const ready = await fetch(`${api.url}/readyz`);
    expect(ready.status).toBe(503);
    expect(((await ready.json()) as { status: string }).status).toBe('migrationsPending');
    expect((await fetch(`${api.url}/healthz`)).status).toBe(200);
    // Two of the processes' looks at the database (every 2 s) pass: still the one line.
    await new Promise((resolve) => setTimeout(resolve, 4500));
    expect(waitingLines(processOutput(api.child))).toHaveLength(1);
    expect(waitingLines(processOutput(api.child))[0]).toMatch(/"level":40,.*MIGRATE_ON_START is off.*npm run migrate/);

    await migrate(database.db);
    for (let tries = 0; (await fetch(`${api.url}/readyz`)).status !== 200; tries++) {
      expect(tries).toBeLessThan(100);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    const workerOutput = processOutput(await worker);
    expect(waitingLines(workerOutput)).toHaveLength(1);
    expect(workerOutput).toContain('"msg":"database migrated: going on"');
    for (let tries = 0; !processOutput(api.child).includes('First start'); tries++) {
      expect(tries).toBeLessThan(100);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    const apiOutput = processOutput(api.child);
    expect(waitingLines(apiOutput)).toHaveLength(1);
    // Neither raw SQL nor an error line, and the health polls are not logged at info.
    for (const output of [apiOutput, workerOutput]) {
      expect(errorLines(output)).toEqual([]);
      expect(output).not.toContain('does not exist');
    }
    expect(apiOutput).not.toMatch(/"url":"\/(healthz|readyz)"/);
  });
});
