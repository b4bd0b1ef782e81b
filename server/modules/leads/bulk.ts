/**
 * Bulk loading: PostgreSQL COPY (pg-copy-streams) on PostgreSQL, batched multi-row INSERTs on the
 * embedded database. Rows are plain table rows; arrays are text[].
 */
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { from as copyFrom } from 'pg-copy-streams';
import type { Knex } from 'knex';
import type { PoolClient } from 'pg';
import type { Executor } from '../../db';

/** knex types an executor's client `any`; it is knex's Client, whose connections are pg's on PostgreSQL. */
const clientOf = (db: Executor) => db.client as Knex.Client;

export const isPostgres = (db: Executor) => clientOf(db).config.client === 'pg';

type Value = string | number | Date | string[] | null;

/** A value in COPY text format: `\N` for null, backslash escapes, arrays as `{"a","b"}` literals. */
function copyValue(v: Value): string {
  if (v === null) return '\\N';
  if (v instanceof Date) return v.toISOString();
  if (typeof v === 'number') return String(v);
  const text = Array.isArray(v)
    ? `{${v.map((x) => `"${x.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`).join(',')}}`
    : v;
  return text.replace(/\\/g, '\\\\').replace(/\t/g, '\\t').replace(/\n/g, '\\n').replace(/\r/g, '\\r');
}

/**
 * Loads `batches` of rows into `table`. On PostgreSQL one COPY stream per call (outside any
 * transaction: `db` must be the knex instance); on PGlite batched INSERTs through `db` (which may be
 * a transaction). `onRows` is called after each batch.
 */
export async function loadRows<T extends object>(
  db: Executor,
  table: string,
  columns: readonly (keyof T & string)[],
  batches: Iterable<T[]> | AsyncIterable<T[]>,
  onRows: (n: number) => void = () => {},
): Promise<void> {
  if (!isPostgres(db)) {
    // 65,535 bind parameters per statement at most.
    const perInsert = Math.floor(60000 / columns.length);
    for await (const batch of batches) {
      for (let i = 0; i < batch.length; i += perInsert) await db(table).insert(batch.slice(i, i + perInsert));
      onRows(batch.length);
    }
    return;
  }
  const client = clientOf(db);
  const connection = (await client.acquireConnection()) as PoolClient;
  try {
    const copy = connection.query(copyFrom(`COPY ${table} (${columns.join(', ')}) FROM STDIN`));
    async function* text() {
      for await (const batch of batches) {
        yield batch.map((row) => columns.map((c) => copyValue((row[c] ?? null) as Value)).join('\t')).join('\n') + '\n';
        onRows(batch.length);
      }
    }
    await pipeline(Readable.from(text()), copy);
  } finally {
    await client.releaseConnection(connection);
  }
}

/**
 * Runs `fn` with the secondary indexes of `tables` dropped, then rebuilds them: building an index
 * once is much faster than updating it for every row of a large load.
 */
export async function withoutIndexes<T>(
  db: Executor,
  tables: string[],
  fn: () => Promise<T>,
  onRebuild: (index: string) => void = () => {},
): Promise<T> {
  const { rows } = await db.raw<{ rows: { indexname: string; indexdef: string }[] }>(
    `SELECT i.indexname, i.indexdef FROM pg_indexes i
      WHERE i.schemaname = current_schema() AND i.tablename = ANY(?)
        AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conname = i.indexname)`,
    [tables],
  );
  for (const r of rows) await db.raw(`DROP INDEX ${r.indexname}`);
  try {
    return await fn();
  } finally {
    for (const r of rows) {
      onRebuild(r.indexname);
      await db.raw(r.indexdef);
    }
    // VACUUM also sets the visibility map, without which the search indexes' index-only scans read
    // the table anyway (on PostgreSQL `db` is the knex instance here, so not inside a transaction).
    for (const t of tables) await db.raw(`${isPostgres(db) ? 'VACUUM (ANALYZE)' : 'ANALYZE'} ${t}`);
  }
}
