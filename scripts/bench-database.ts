/** A throw-away PostgreSQL database for a benchmark: created fresh from BENCH_DATABASE_URL or DATABASE_URL. */
import knex from 'knex';

export async function freshBenchDatabase(name: string, script: string): Promise<{ url: string; drop(): Promise<void> }> {
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
  };
}
