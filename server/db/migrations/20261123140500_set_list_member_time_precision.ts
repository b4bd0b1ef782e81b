import type { Knex } from 'knex';

/**
 * Membership times to the millisecond. Whole lists are walked by keyset on (added_at, member id) with the
 * last row's added_at read back as a JavaScript Date (milliseconds): a stored microsecond would make the
 * next batch start before the last row instead of after it.
 */
export async function up(knex: Knex): Promise<void> {
  for (const table of ['list_people', 'list_companies']) {
    await knex.raw(`ALTER TABLE ${table} ALTER COLUMN added_at TYPE timestamptz(3)`);
  }
}

export async function down(knex: Knex): Promise<void> {
  for (const table of ['list_people', 'list_companies']) {
    await knex.raw(`ALTER TABLE ${table} ALTER COLUMN added_at TYPE timestamptz`);
  }
}
