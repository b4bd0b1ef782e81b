import type { Knex } from 'knex';

/**
 * `email_messages.handed_at`: when the engine committed, just before the SMTP call, that this claimed
 * message goes to SMTP. A claim without it never reached SMTP, so a worker that lost it (database outage,
 * kill -9) can give the contact back to the queue; a claim with it may be on the wire and stays at most once.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('email_messages', (t) => {
    t.timestamp('handed_at', { useTz: true }).nullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('email_messages', (t) => t.dropColumn('handed_at'));
}
