/**
 * With TEST_DATABASE_URL (a PostgreSQL server URL), builds one migrated template database for this
 * run; each test file then clones it (see server.ts). Without it, each file uses in-memory PGlite.
 */
import knex from 'knex';
import { migrate, openDatabase } from '../../server/db';

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
}
