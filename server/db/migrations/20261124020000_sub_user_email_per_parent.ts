import type { Knex } from 'knex';

/**
 * A sub-user's email is unique among its parent's sub-users, not across the service: a global unique
 * index told any whitelabel workspace that an address was taken somewhere else.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX IF EXISTS users_email_unique');
  await knex.raw('CREATE INDEX users_email ON users (lower(email))');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX IF EXISTS users_email');
  await knex.raw('CREATE UNIQUE INDEX users_email_unique ON users (lower(email))');
}
