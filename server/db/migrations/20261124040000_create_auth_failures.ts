import type { Knex } from 'knex';

/** Failed authentications per client address, shared by every server process (the limiter's memory). */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('auth_failures', (t) => {
    t.text('address').notNullable();
    t.timestamp('at', { useTz: true }).notNullable();
    t.index(['address', 'at']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('auth_failures');
}
