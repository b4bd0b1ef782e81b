import type { Knex } from 'knex';

/**
 * Events now come from real mail: each can name the message it is about (sent, opened, replied to)
 * and an open can be flagged as machine-made (a privacy proxy or a scanner prefetching the pixel).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('email_events', (t) => {
    t.uuid('message_id').nullable();
    t.boolean('flagged').notNullable().defaultTo(false);
    t.index(['message_id']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('email_events', (t) => {
    t.dropColumn('message_id');
    t.dropColumn('flagged');
  });
}
