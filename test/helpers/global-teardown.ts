import { rmSync } from 'node:fs';
import knex from 'knex';
import type { RawResult } from '../../server/db';
import { run } from './global-setup';

/** Drops every database this run created (the template and each file's clone), or the embedded snapshot. */
export default async function globalTeardown(): Promise<void> {
  run.pgbouncer?.destroy();
  if (run.snapshotDir) rmSync(run.snapshotDir, { recursive: true, force: true });
  const url = process.env.TEST_DATABASE_ADMIN_URL ?? process.env.TEST_DATABASE_URL;
  const runId = process.env.TEST_RUN_ID;
  if (!url || !runId) return;
  const admin = knex({ client: 'pg', connection: url });
  try {
    const { rows } = await admin.raw<RawResult<{ datname: string }>>(
      `SELECT datname FROM pg_database WHERE datname LIKE ?`,
      [`${runId}%`],
    );
    for (const { datname } of rows) await admin.raw(`DROP DATABASE IF EXISTS "${datname}" WITH (FORCE)`);
  } finally {
    await admin.destroy();
  }
}
