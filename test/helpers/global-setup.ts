/**
 * With TEST_DATABASE_URL (a PostgreSQL server URL), builds one migrated template database for this
 * run; each test file then clones it (see server.ts). Without it, each test database is an in-memory PGlite
 * loaded from one migrated snapshot that this run writes to a temporary file (TEST_PGLITE_SNAPSHOT).
 *
 * With TEST_PGBOUNCER=1 too, the tests' connections go through a PgBouncer of the run's own in transaction
 * mode (test/helpers/pgbouncer.ts): TEST_DATABASE_URL then names the pooler, and TEST_DATABASE_ADMIN_URL the
 * server itself, for creating, copying and dropping databases (a template must have no connection open, and the
 * pooler keeps some).
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import knex from 'knex';
import { dumpEmbedded, migrate, openDatabase } from '../../server/db';
import { startPgbouncer, type Pgbouncer } from './pgbouncer';

/** The run's pooler and snapshot folder, removed by the teardown (same process). */
export const run: { pgbouncer?: Pgbouncer; snapshotDir?: string } = {};

export default async function globalSetup(): Promise<void> {
  const url = process.env.TEST_DATABASE_URL;
  if (!url) return writeEmbeddedSnapshot();
  const runId = `lr_test_${process.pid}_${Date.now().toString(36)}`;
  const admin = knex({ client: 'pg', connection: url });
  try {
    await admin.raw(`CREATE DATABASE ${runId}_tpl`);
  } finally {
    await admin.destroy();
  }
  const target = new URL(url);
  target.pathname = `/${runId}_tpl`;
  const { db, close } = await openDatabase({ databaseUrl: target.toString(), dataDir: '' });
  try {
    await migrate(db);
  } finally {
    await close();
  }
  process.env.TEST_RUN_ID = runId;
  if (process.env.TEST_PGBOUNCER === '1') {
    run.pgbouncer = await startPgbouncer(url);
    process.env.TEST_DATABASE_ADMIN_URL = url;
    process.env.TEST_DATABASE_URL = run.pgbouncer.url;
  }
}

async function writeEmbeddedSnapshot(): Promise<void> {
  const { db, close } = await openDatabase({ databaseUrl: undefined, dataDir: '' }, { inMemory: true });
  try {
    await migrate(db);
    run.snapshotDir = mkdtempSync(join(tmpdir(), 'lr-test-'));
    const file = join(run.snapshotDir, 'migrated.tar');
    writeFileSync(file, Buffer.from(await (await dumpEmbedded(db)).arrayBuffer()));
    process.env.TEST_PGLITE_SNAPSHOT = file;
  } finally {
    await close();
  }
}
