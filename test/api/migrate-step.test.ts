/**
 * Migrations as a step: several processes starting at once on an empty database migrate it once and all come up;
 * with MIGRATE_ON_START off a process leaves it to `npm run migrate` (its /readyz names what is pending until then).
 * Several processes need PostgreSQL (the embedded database has one process).
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { scratchDatabase } from '../helpers/server';
import { startServerChild, startWorkerProcess, stopServerProcesses } from '../helpers/server-process';
import type { Database } from '../../server/db';

const onPostgres = process.env.TEST_DATABASE_URL ? describe : describe.skip;

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

  it('with MIGRATE_ON_START off, a process waits for npm run migrate, which applies them once', async () => {
    const database = await scratchDatabase();
    databases.push(database);
    const url = database.url!;
    const { url: base } = await startServerChild(url, { MIGRATE_ON_START: 'off', WORKER_ENABLED: '0' });
    const before = await fetch(`${base}/readyz`);
    expect(before.status).toBe(503);
    expect(((await before.json()) as { status: string }).status).toBe('migrationsPending');

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
    expect((await fetch(`${base}/readyz`)).status).toBe(200);
  });
});
