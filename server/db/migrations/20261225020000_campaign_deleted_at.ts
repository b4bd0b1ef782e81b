import type { Knex } from 'knex';

/**
 * Deleted campaigns: `deleted_at` is set once and never cleared. Every read of a campaign filters it and the
 * sending engine claims none, while the rows that point at it (contacts, messages, events) stay as they are.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('campaigns', (t) => {
    t.timestamp('deleted_at', { useTz: true }).nullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('campaigns', (t) => {
    t.dropColumn('deleted_at');
  });
}
