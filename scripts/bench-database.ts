/** A throw-away PostgreSQL database for a benchmark: created fresh from BENCH_DATABASE_URL or DATABASE_URL. */
import knex from 'knex';
import { openDatabase, type Database } from '../server/db';

export async function freshBenchDatabase(
  name: string,
  script: string,
): Promise<{ url: string; drop(): Promise<void>; release(): Promise<void> }> {
  const url = process.env.BENCH_DATABASE_URL ?? process.env.DATABASE_URL;
  if (!url) throw new Error(`${script} needs PostgreSQL: set BENCH_DATABASE_URL or DATABASE_URL`);
  const admin = knex({ client: 'pg', connection: url });
  await admin.raw(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await admin.raw(`CREATE DATABASE ${name}`);
  const target = new URL(url);
  target.pathname = `/${name}`;
  return {
    url: target.toString(),
    async drop() {
      await admin.raw(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.destroy();
    },
    release: () => admin.destroy(),
  };
}

/**
 * The benchmark's database: a fresh PostgreSQL database `name` when BENCH_DATABASE_URL or DATABASE_URL is set,
 * else the embedded PGlite in memory.
 */
export async function openBenchDatabase(name: string): Promise<{ database: Database; label: string }> {
  if (!(process.env.BENCH_DATABASE_URL ?? process.env.DATABASE_URL)) {
    return {
      database: await openDatabase({ databaseUrl: undefined, dataDir: '' }, { inMemory: true }),
      label: 'PGlite (embedded, in memory)',
    };
  }
  const fresh = await freshBenchDatabase(name, 'this benchmark');
  const database = await openDatabase({ databaseUrl: fresh.url, dataDir: '' });
  // The fresh database stays for inspection after the run; only the admin connection is closed with the database.
  return {
    database: {
      ...database,
      close: async () => {
        await database.close();
        await fresh.release();
      },
    },
    label: 'PostgreSQL',
  };
}

/** A plan whose quotas no benchmark reaches, so the figures measure the request and never a 429; its id. */
export async function insertHighLimitPlan(db: Database['db'], newId: () => string): Promise<string> {
  const id = newId();
  await db('plans').insert({
    id,
    name: 'Benchmark (high limits)',
    per_min: 1_000_000_000,
    per_hour: 1_000_000_000,
    per_day: 1_000_000_000,
    credits: 0,
    created_at: new Date(),
  });
  return id;
}
