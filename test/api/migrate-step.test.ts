/**
 * Migrations as a step: several processes starting at once on an empty database migrate it once and all come up;
 * with MIGRATE_ON_START off a process leaves it to `npm run migrate` (its /readyz names what is pending until then):
 * each process (an API with its demo on, a worker) says so in one line, logs no error while it waits, and goes on by
 * itself once migrated (ready, demo made, jobs running).
 * Several processes need PostgreSQL (the embedded database has one process).
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { scratchDatabase } from '../helpers/server';
import { processOutput, startServerChild, startWorkerProcess, stopServerProcesses } from '../helpers/server-process';
import type { Database } from '../../server/db';

const onPostgres = process.env.TEST_DATABASE_URL ? describe : describe.skip;

const lines = (output: string) => output.split('\n').filter(Boolean);
const waitingLines = (output: string) => lines(output).filter((line) => line.includes('database not migrated'));

// Four processes starting side by side on a loaded machine.
jest.setTimeout(240_000);

onPostgres('migrations as a step (PostgreSQL: TEST_DATABASE_URL)', () => {
  const databases: (Database & { url?: string })[] = [];
  afterAll(async () => {
    stopServerProcesses();
    // Give the processes their SIGTERM before the databases are dropped under them.
    await new Promise((resolve) => setTimeout(resolve, 1000));
    for (const database of databases) await database.close();
  });

  it('three API processes and a worker starting at once on an empty database migrate it once and all come up', async () => {
    const database = await scratchDatabase();
    databases.push(database);
    const url = database.url!;
    const [a, b, c] = await Promise.all([
      startServerChild(url),
      startServerChild(url),
      startServerChild(url),
      startWorkerProcess(url, { WORKER_JOBS: 'maintenance' }),
    ]);
    for (const { url: base } of [a, b, c]) expect((await fetch(`${base}/readyz`)).status).toBe(200);
    const rows = await database.db('knex_migrations').select<{ name: string }[]>('name');
    const names = rows.map((r) => r.name);
    expect(names.length).toBeGreaterThan(10);
    expect(new Set(names).size).toBe(names.length);
    expect(await database.db('knex_migrations_lock').select('is_locked')).toEqual([{ is_locked: 0 }]);
  });

  it('with MIGRATE_ON_START off, each process says so in one line and waits for npm run migrate, which applies them once; then they go on by themselves', async () => {
    const database = await scratchDatabase();
    databases.push(database);
    const url = database.url!;
    // With the demo on, which must wait for the tables too, and a worker apart.
    const api = await startServerChild(url, { MIGRATE_ON_START: 'off', SEED_DEMO: '1' });
    const worker = startWorkerProcess(url, { MIGRATE_ON_START: 'off', WORKER_JOBS: 'maintenance' });
    const before = await fetch(`${api.url}/readyz`);
    expect(before.status).toBe(503);
    expect(((await before.json()) as { status: string }).status).toBe('migrationsPending');
    expect((await fetch(`${api.url}/healthz`)).status).toBe(200);
    // Two of the processes' looks at the database (every 2 s) pass: still the one line.
    await new Promise((resolve) => setTimeout(resolve, 4500));
    expect(waitingLines(processOutput(api.child))).toEqual([
      expect.stringMatching(/"level":40,.*MIGRATE_ON_START is off.*npm run migrate/),
    ]);

    const migrate = () =>
      promisify(execFile)(
        process.execPath,
        ['--import', 'tsx', join(__dirname, '../../server/cli/index.ts'), 'migrate'],
        {
          env: { ...process.env, DATABASE_URL: url, NODE_OPTIONS: '' },
        },
      );
    const first = await migrate();
    const [, total, applied] = /database ready: (\d+) migrations, (\d+) applied/.exec(first.stdout)!.map(Number);
    expect(applied).toBeGreaterThan(10);
    expect(applied).toBe(total);
    expect((await migrate()).stdout.trim()).toBe(`database ready: ${total} migrations, 0 applied`);
    expect((await fetch(`${api.url}/readyz`)).status).toBe(200);

    // No restart: the worker starts its jobs, the API makes its demo workspace.
    const workerOutput = processOutput(await worker);
    expect(workerOutput).toContain('"msg":"database migrated: going on"');
    for (let tries = 0; !processOutput(api.child).includes('First start'); tries++) {
      expect(tries).toBeLessThan(100);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    const apiOutput = processOutput(api.child);
    // One line each, neither raw SQL nor an error line, and the health polls not logged at info.
    for (const output of [apiOutput, workerOutput]) {
      expect(waitingLines(output)).toHaveLength(1);
      expect(lines(output).filter((line) => /"level":(50|60)/.test(line))).toEqual([]);
      expect(output).not.toContain('does not exist');
    }
    expect(apiOutput).not.toMatch(/"url":"\/(healthz|readyz)"/);
  });
});
