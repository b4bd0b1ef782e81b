import type { Knex } from 'knex';

/**
 * `mail_connection_retries`: an account whose SMTP or IMAP server could not be reached (refused, timed out, a
 * 4xx greeting, a host this process may not reach) keeps its status and is tried again later; this row holds
 * what failed, how many times in a row, and when the next try is. It goes when a try works.
 *
 * Accounts that such failures had put in connectionError or sendingError (their reasons say so) are active
 * again: none of them needed a person (a refused login keeps its status).
 */
const TRANSIENT_REASONS = [
  'IMAP connection to %',
  'IMAP host % cannot be resolved%',
  'IMAP host refused%',
  'IMAP read failed%',
  'IMAP mailbox % cannot be opened%',
  'private_destination:%',
  'repeated_failures:%',
];

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('mail_connection_retries', (t) => {
    t.uuid('account_id').notNullable().references('email_accounts.id').onDelete('CASCADE');
    t.text('protocol').notNullable();
    t.integer('failures').notNullable();
    t.text('reason').notNullable();
    t.timestamp('since', { useTz: true }).notNullable();
    t.timestamp('next_try_at', { useTz: true }).notNullable();
    t.primary(['account_id', 'protocol']);
  });
  await knex.raw(
    "ALTER TABLE mail_connection_retries ADD CONSTRAINT mail_connection_retries_protocol CHECK (protocol IN ('smtp', 'imap'))",
  );
  await knex('email_accounts')
    .whereIn('status', ['connectionError', 'sendingError'])
    .andWhere((w) => {
      for (const pattern of TRANSIENT_REASONS) w.orWhere('status_reason', 'like', pattern);
    })
    .update({ status: 'active', status_reason: null });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('mail_connection_retries');
}
