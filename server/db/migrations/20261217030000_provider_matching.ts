import type { Knex } from 'knex';

/**
 * Provider matching: the campaign options, and `recipient_providers`, who runs each mail domain (google,
 * microsoft, other) as its MX records said when last looked up.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('campaigns', (t) => {
    t.boolean('match_provider').notNullable().defaultTo(false);
    t.boolean('match_provider_strict').notNullable().defaultTo(false);
  });
  await knex.schema.createTable('recipient_providers', (t) => {
    t.text('domain').primary();
    t.text('provider').notNullable();
    t.timestamp('checked_at', { useTz: true }).notNullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('recipient_providers');
  await knex.schema.alterTable('campaigns', (t) => {
    t.dropColumn('match_provider');
    t.dropColumn('match_provider_strict');
  });
}
