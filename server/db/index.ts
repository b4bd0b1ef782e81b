/**
 * The database: PostgreSQL through `pg` when DATABASE_URL is set, otherwise the embedded PGlite
 * database in DATA_DIR. Both run the same migrations and queries.
 *
 * PGlite is single-connection (knex-pglite pins the pool to one), so code inside a transaction must
 * use the transaction object, never the outer knex: the outer one would wait for the connection the
 * transaction holds.
 */
import { chmodSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import knex, { Knex } from 'knex';
import ClientPgLite from 'knex-pglite';
import { PGlite } from '@electric-sql/pglite';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import lockfile from 'proper-lockfile';
import type { Config } from '../platform/config';
import { currentCause } from '../platform/cause';

export type Db = Knex;
/** What every store method takes first: the database, or the transaction it must run in. */
export type Executor = Knex | Knex.Transaction;

/** What `db.raw` resolves to on both drivers: pg's result, and knex-pglite's, which reports rowCount as pg does. */
export interface RawResult<Row = unknown> {
  rows: Row[];
  rowCount: number | null;
}

/**
 * A json/jsonb column's value: the pg driver parses it, PGlite may hand over the text. Unknown until the
 * caller narrows it.
 */
export const jsonColumn = (value: unknown): unknown =>
  typeof value === 'string' ? (JSON.parse(value) as unknown) : value;

export interface Database {
  db: Db;
  kind: 'postgres' | 'pglite';
  close: () => Promise<void>;
}

const MIGRATIONS_DIR = join(__dirname, 'migrations');

function isMigration(value: unknown): value is Knex.Migration {
  return typeof value === 'object' && value !== null && 'up' in value && typeof value.up === 'function';
}

/**
 * Migrations by name without extension: the same database is migrated from the sources (.ts, by
 * tests and the admin CLI) and from the build (.js, by npm start), and knex records the name.
 */
const migrationSource: Knex.MigrationSource<string> = {
  async getMigrations() {
    const names = (await readdir(MIGRATIONS_DIR))
      .filter((f) => /\.(ts|js)$/.test(f) && !f.endsWith('.d.ts'))
      .map((f) => f.replace(/\.(ts|js)$/, ''));
    return [...new Set(names)].sort();
  },
  getMigrationName: (name) => name,
  getMigration: (name) =>
    new Promise((resolve) => {
      // Loaded by name at run time: a .ts file from the sources, a .js one from the build.
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      const migration: unknown = require(join(MIGRATIONS_DIR, name));
      if (!isMigration(migration)) throw new Error(`migration ${name} exports no up function`);
      resolve(migration);
    }),
};

const migrationConfig: Knex.MigratorConfig = { migrationSource, tableName: 'knex_migrations' };

/**
 * Every transaction begun on `db` with a callback writes, before it commits, what the current work's cause
 * writes with its first change (`Cause.writeEntry`: a request's audit entry), once per piece of work: the entry
 * commits or rolls back with the change. Savepoints (`trx.transaction`) are inside a transaction already.
 */
function withCauseEntries(db: Knex): Knex {
  const begin = db.transaction.bind(db);
  type Work = (trx: Knex.Transaction) => Promise<unknown>;
  const transaction = (work?: Work | null, config?: Knex.TransactionConfig) => {
    if (typeof work !== 'function') return begin(work, config);
    const cause = currentCause();
    if (!cause?.writeEntry || cause.recorded) return begin(work, config);
    const writeEntry = cause.writeEntry;
    // Taken before the work runs, so that two transactions of one request at once do not both write it.
    cause.writeEntry = undefined;
    return begin(async (trx: Knex.Transaction) => {
      const result = await work(trx);
      // The work may have written it itself, with what it changed (AuditTrail.recordChange).
      if (!cause.recorded) await writeEntry(trx);
      cause.recorded = true;
      return result;
    }, config).catch((err: unknown) => {
      cause.recorded = false;
      cause.writeEntry = writeEntry;
      throw err;
    });
  };
  // knex defines its methods as read-only properties of the instance.
  Object.defineProperty(db, 'transaction', { value: transaction, configurable: true });
  return db;
}

/**
 * knex's configuration, which it keeps on its client (transactions' too), with whether `prepared` names statements
 * and whether the database is a read replica, which refuses every write.
 */
interface DbConfig extends Knex.Config {
  preparedStatements?: boolean;
  readOnly?: boolean;
}

/**
 * knex's warnings, but for a connection that failed, which it prints with a stack trace: the caller gets the
 * error itself (a start that fails says it in one line, a request answers 503).
 */
function quietConnectionErrors(message: string): void {
  if (!/^(Acquire connection error|Connection Error): /.test(message)) console.warn(message);
}

/**
 * Opens the configured database. `inMemory` gives a throw-away PGlite (tests), empty or, with `startingFrom`, a
 * copy of a dump from `dumpEmbedded` (the tests' migrated snapshot: loading one skips initdb and the migrations,
 * which took most of an embedded test server's start). Without `preparedStatements` (on by
 * default) hot reads run unnamed, as a pooler in transaction mode needs: its next transaction may run on another
 * server connection, where the statement was never prepared. `readOnly`: a read replica (DATABASE_READ_URL).
 */
export async function openDatabase(
  config: Pick<Config, 'databaseUrl' | 'dataDir'> & Partial<Pick<Config, 'preparedStatements'>>,
  options: { inMemory?: boolean; startingFrom?: Blob; readOnly?: boolean } = {},
): Promise<Database> {
  if (config.databaseUrl) {
    const dbConfig: DbConfig = {
      client: 'pg',
      connection: config.databaseUrl,
      pool: { min: 0, max: 10 },
      migrations: migrationConfig,
      preparedStatements: config.preparedStatements ?? true,
      readOnly: options.readOnly,
      log: { warn: quietConnectionErrors },
    };
    const db = withCauseEntries(knex(dbConfig));
    return { db, kind: 'postgres', close: () => db.destroy() };
  }
  if (options.inMemory) {
    const db = withCauseEntries(
      knex({
        client: ClientPgLite,
        dialect: 'postgres',
        connection: embedded(undefined, options.startingFrom) as Knex.StaticConnectionConfig,
        migrations: migrationConfig,
      }),
    );
    return { db, kind: 'pglite', close: () => db.destroy() };
  }
  mkdirSync(config.dataDir, { recursive: true, mode: 0o700 });
  // Only one process may open the embedded database: a second one would corrupt it.
  const release = await lockDataDir(config.dataDir);
  const db = withCauseEntries(
    knex({
      client: ClientPgLite,
      dialect: 'postgres',
      connection: embedded(join(config.dataDir, 'pgdata')) as Knex.StaticConnectionConfig,
      migrations: migrationConfig,
    }),
  );
  // PGlite creates its data directory (on the first connection) with world-writable config files: the database
  // is the owner's alone.
  try {
    await db.raw('select 1');
    ownerOnly(config.dataDir);
  } catch (err) {
    await db.destroy();
    await release();
    throw err;
  }
  return {
    db,
    kind: 'pglite',
    close: async () => {
      await db.destroy();
      await release();
    },
  };
}

/**
 * The embedded database, in `dataDir` or in memory, with the extensions the migrations create (pg_trgm: the
 * contact search's trigram index). knex-pglite takes the instance as is (knex keeps class instances uncloned).
 */
function embedded(dataDir?: string, loadDataDir?: Blob): { pglite: PGlite } {
  return { pglite: new PGlite({ dataDir, loadDataDir, extensions: { pg_trgm } }) };
}

/** The whole embedded database as one uncompressed tarball, for `openDatabase`'s `startingFrom`. */
export async function dumpEmbedded(db: Db): Promise<Blob> {
  const client = db.client as { config: { connection: { pglite: PGlite } } };
  return client.config.connection.pglite.dumpDataDir('none');
}

/** Folders 0700 and files 0600 under `dir`, the embedded database's files included. */
function ownerOnly(dir: string): void {
  chmodSync(dir, 0o700);
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) ownerOnly(path);
    else if (entry.isFile()) chmodSync(path, 0o600);
  }
}

/** Whether a process with this pid runs (signal 0 only checks). */
function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Locks DATA_DIR for this process (proper-lockfile) and records the owner's pid beside the lock, so a lock
 * left by a process that died (kill -9) is taken over at once instead of after the lock's stale time.
 */
async function lockDataDir(dataDir: string): Promise<() => Promise<void>> {
  const lockPath = join(dataDir, '.lock');
  const ownerFile = join(dataDir, '.lock.pid');
  const take = () => lockfile.lock(dataDir, { lockfilePath: lockPath, stale: 15000 });
  let release: () => Promise<void>;
  try {
    release = await take();
  } catch {
    const owner = Number(existsSync(ownerFile) ? readFileSync(ownerFile, 'utf8') : NaN);
    if (!Number.isInteger(owner) || owner === process.pid || isAlive(owner)) {
      throw new Error(
        `The embedded database in ${dataDir} is in use by another process (is the server running?). ` +
          'Stop it first, or set DATABASE_URL to use PostgreSQL, which many processes can share.',
      );
    }
    rmSync(lockPath, { recursive: true, force: true });
    release = await take();
  }
  writeFileSync(ownerFile, String(process.pid));
  return release;
}

/** The select-list column that counts every row the page query's filter matches, read by `pageTotal`. */
export const TOTAL_COLUMN = 'count(*) OVER () AS total';

/**
 * The total of a page read with `TOTAL_COLUMN` beside its rows, in the page's own statement. An empty page
 * carries no total: the first page's is 0, one past the end asks `count` (a second statement, only then).
 */
export async function pageTotal(
  rows: { total: string | number }[],
  skip: number,
  count: () => Promise<number>,
): Promise<number> {
  if (rows.length) return Number(rows[0].total);
  return skip > 0 ? count() : 0;
}

/**
 * The columns of a row type, for statements that name them (`prepared`): the object lists every field of `Row`
 * and nothing else, so a field added to the type without its column here is a type error.
 */
export const columnsOf = <Row>(fields: Record<keyof Row & string, true>): (keyof Row & string)[] =>
  Object.keys(fields) as (keyof Row & string)[];

/**
 * A hot read's select list, quoted once (of `table`, an alias, when given; each column named `prefix` + its name
 * when a prefix is given), for `db.raw`: knex would quote each name again on every compile, most of the compile
 * of a wide row.
 */
export const selectList = (columns: readonly string[], table?: string, prefix?: string): string =>
  columns.map((c) => `${table ? `"${table}".` : ''}"${c}"${prefix ? ` AS "${prefix}${c}"` : ''}`).join(', ');

/** The name of each statement text `prepared` has seen in this process; bounded by the texts the code can make. */
const statementNames = new Map<string, string>();

/**
 * Runs a hot read and returns its rows; on PostgreSQL as a named prepared statement: each pooled connection
 * parses and plans its text once and later calls send only the parameters, which halves PostgreSQL's CPU for
 * a short read (bench:http). The query is compiled once, here, and run as that text: knex would compile a
 * builder again to run it, and a page of leads is a 40-column statement. Names are given per text, so a name
 * never stands for two texts. Only for statements whose text takes a bounded number of shapes (not a
 * `whereIn` of a request's ids): every text stays prepared on every connection of the pool. They name their
 * columns: a prepared `select *` fails once a column is added to its table while the process runs (a rolling
 * upgrade). The embedded database, and PostgreSQL with DATABASE_PREPARED_STATEMENTS off, run the text unnamed.
 */
export async function prepared<Row>(db: Executor, query: Knex.QueryBuilder | Knex.Raw): Promise<Row[]> {
  const { sql, bindings } = query.toSQL();
  const statement = db.raw<RawResult<Row>>(sql, bindings);
  if (((db.client as Knex.Client).config as DbConfig).preparedStatements) {
    let name = statementNames.get(sql);
    if (name === undefined) {
      name = `prepared_${statementNames.size + 1}`;
      statementNames.set(sql, name);
    }
    statement.options({ name });
  }
  return (await statement).rows;
}

/**
 * `Promise.all` for independent queries on `db`: at once on the pooled knex (each takes a connection of its
 * own), one after another on a transaction, whose single connection must not be sent a statement while it
 * runs another (pg 8 queues it with a deprecation warning, pg 9 refuses it).
 */
export async function queryAll<Q extends (() => unknown)[]>(
  db: Executor,
  queries: [...Q],
): Promise<{ [K in keyof Q]: Awaited<ReturnType<Q[K]>> }> {
  type Results = { [K in keyof Q]: Awaited<ReturnType<Q[K]>> };
  if (!db.isTransaction) return (await Promise.all(queries.map((query) => query()))) as Results;
  const results: unknown[] = [];
  for (const query of queries) results.push(await query());
  return results as Results;
}

/** Whether `db` (or the transaction) is a read replica's, where a read must not write. */
export function isReadOnly(db: Executor): boolean {
  return ((db.client as Knex.Client).config as DbConfig).readOnly === true;
}

/** Whether `db` (or the transaction) runs on the embedded PGlite, whose planner has no table statistics. */
export function isEmbedded(db: Executor): boolean {
  return (db.client as Knex.Client).config.client === ClientPgLite;
}

/** The advisory lock (one key) held while one process migrates; any number may start at once. */
const MIGRATION_LOCK = 0x6d696772;

/**
 * Applies the pending migrations; answers how many this build has and the names applied now. On PostgreSQL,
 * processes starting at once take turns: each holds a transaction-scoped advisory lock (in a transaction of its own,
 * open while the migrations run on other connections) and those that wait find nothing left to apply. A transaction,
 * not a session lock: it holds behind a pooler in transaction mode too, and a process that dies releases it with its
 * connection. knex's own lock row would refuse the second process instead of making it wait, and two processes
 * creating its tables at once collide.
 */
export async function migrate(db: Db): Promise<{ total: number; applied: string[] }> {
  const latest = async () => ((await db.migrate.latest()) as [number, string[]])[1];
  // The embedded database has one process and one connection, which the lock's transaction would hold.
  const applied = isEmbedded(db)
    ? await latest()
    : await db.transaction(async (trx) => {
        await trx.raw('SELECT pg_advisory_xact_lock(?)', [MIGRATION_LOCK]);
        return latest();
      });
  return { total: (await migrationSource.getMigrations([])).length, applied };
}

/** Migrations of this build not yet applied to the database (a query of knex's table; the list is read from disk). */
export async function pendingMigrations(db: Db): Promise<string[]> {
  // The migration source above names migrations by string, so knex lists the pending ones as those names.
  const [, pending] = (await db.migrate.list()) as [unknown[], string[]];
  return pending;
}

/** A write refused by a unique index (PostgreSQL and PGlite both report SQLSTATE 23505). */
export const isUniqueViolation = (err: unknown): boolean => (err as { code?: string } | null)?.code === '23505';

/** A database that cannot be reached (refused, reset, shut down, no pool connection in time): a 503, or a replica to pass over. */
export function isStorageDown(err: unknown): boolean {
  const e = err as { code?: string; message?: string; name?: string };
  return (
    ['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'ENOTFOUND', '57P01', '57P03', '08006', '08001', '53300'].includes(
      e?.code ?? '',
    ) ||
    e?.name === 'KnexTimeoutError' ||
    /Connection terminated|Timeout acquiring a connection|PGlite is closed/i.test(e?.message ?? '')
  );
}
