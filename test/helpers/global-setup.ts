/**
 * With TEST_DATABASE_URL (a PostgreSQL server URL), builds one migrated template database for this
 * run; each test file then clones it (see server.ts). Without it, each file uses in-memory PGlite.
 *
 * With TEST_PGBOUNCER=1 too, the tests' connections go through a PgBouncer of the run's own in transaction
 * mode (test/helpers/pgbouncer.ts): TEST_DATABASE_URL then names the pooler, and TEST_DATABASE_ADMIN_URL the
 * server itself, for creating, copying and dropping databases (a template must have no connection open, and the
 * pooler keeps some).
 */
import knex from 'knex';
import { migrate, openDatabase } from '../../server/db';
import { startPgbouncer, type Pgbouncer } from './pgbouncer';

/** The run's pooler, stopped by the teardown (same process). */
export const run: { pgbouncer?: Pgbouncer } = {};

export default async function globalSetup(): Promise<void> {
  const url = process.env.TEST_DATABASE_URL;
  if (!url) return;
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
