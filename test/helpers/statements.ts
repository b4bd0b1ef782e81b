import type { Knex } from 'knex';

/** The SQL statements `db` sends while `fn` runs (the test server shares its knex with the test). */
export async function statementsDuring<T>(
  db: Knex,
  fn: () => Promise<T>,
): Promise<{ result: T; statements: string[] }> {
  const statements: string[] = [];
  const record = (query: { sql: string }) => statements.push(query.sql);
  db.on('query', record);
  try {
    return { result: await fn(), statements };
  } finally {
    db.off('query', record);
  }
}
