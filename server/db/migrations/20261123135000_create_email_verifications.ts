import type { Knex } from 'knex';

/**
 * The email verification cache: one row per address (lower-cased), shared by all workspaces since
 * a verdict depends only on the address. Rows past expires_at are checked again and overwritten.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('email_verifications', (t) => {
    t.text('email').primary();
    /** valid | invalid | catchAll | disposable (unknown results are never stored). */
    t.text('status').notNullable();
    t.text('sub_status').nullable();
    t.smallint('score').notNullable();
    t.boolean('is_role_account').notNullable();
    t.boolean('is_free_provider').notNullable();
    t.boolean('is_disposable').notNullable();
    t.boolean('mx_found').notNullable();
    t.timestamp('checked_at', { useTz: true }).notNullable();
    t.timestamp('expires_at', { useTz: true }).notNullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('email_verifications');
}
