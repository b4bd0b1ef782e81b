import type { Knex } from 'knex';

/**
 * The sending engine: each contact's progress through its campaign's steps, each account's pace, the
 * campaign's pace options, and the outbound columns of email_messages (created with the inbox).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('campaigns', (t) => {
    t.integer('email_gap_minutes').notNullable().defaultTo(10);
    t.integer('random_wait_max_minutes').notNullable().defaultTo(5);
    t.integer('daily_new_contacts').nullable();
  });

  await knex.schema.createTable('sending_progress', (t) => {
    t.uuid('contact_id').primary().references('contacts.id').onDelete('CASCADE');
    t.uuid('workspace_id').notNullable().references('workspaces.id').onDelete('CASCADE');
    t.uuid('campaign_id').notNullable().references('campaigns.id').onDelete('CASCADE');
    /** The account the contact's thread stays in. */
    t.uuid('account_id').nullable().references('email_accounts.id').onDelete('SET NULL');
    /** The next step to send, 1-based position in the campaign's step order. */
    t.integer('step_number').notNullable().defaultTo(1);
    /** waiting | sending | held | done | unknown */
    t.text('state').notNullable();
    t.timestamp('due_at', { useTz: true }).notNullable();
    /** Why a held contact waits (a template variable without value), or why the last attempt failed. */
    t.text('reason').nullable();
    t.integer('attempts').notNullable().defaultTo(0);
    t.uuid('last_message_id').nullable();
    t.timestamp('last_sent_at', { useTz: true }).nullable();
    t.timestamp('updated_at', { useTz: true }).notNullable();
    t.index(['campaign_id', 'state']);
  });
  // The scheduler's only scan: waiting rows by due time.
  await knex.raw("CREATE INDEX sending_progress_due ON sending_progress (due_at) WHERE state = 'waiting'");

  await knex.schema.createTable('sending_accounts', (t) => {
    t.uuid('account_id').primary().references('email_accounts.id').onDelete('CASCADE');
    /** The account's next send may not start before this (gap plus random wait). */
    t.timestamp('next_send_at', { useTz: true }).notNullable();
    /** Transient failures in a row; at the threshold the account goes to sendingError. */
    t.integer('failures').notNullable().defaultTo(0);
  });

  await knex.schema.createTable('suppressions', (t) => {
    t.uuid('workspace_id').notNullable().references('workspaces.id').onDelete('CASCADE');
    /** A lower-cased address, or a domain (no @) that suppresses every address at it. */
    t.text('value').notNullable();
    /** unsubscribed | bounced | manual */
    t.text('reason').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable();
    t.primary(['workspace_id', 'value']);
  });

  await knex.schema.alterTable('email_messages', (t) => {
    t.integer('step_number').nullable();
  });
  await knex.raw(
    "CREATE INDEX email_messages_outbound_day ON email_messages (account_id, created_at) WHERE direction = 'outbound'",
  );
  await knex.raw(
    "CREATE INDEX email_messages_campaign_day ON email_messages (campaign_id, created_at) WHERE direction = 'outbound'",
  );
  await knex.raw("CREATE INDEX email_messages_sending ON email_messages (created_at) WHERE status = 'sending'");
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX IF EXISTS email_messages_outbound_day');
  await knex.raw('DROP INDEX IF EXISTS email_messages_campaign_day');
  await knex.raw('DROP INDEX IF EXISTS email_messages_sending');
  await knex.schema.alterTable('email_messages', (t) => t.dropColumn('step_number'));
  await knex.schema.dropTableIfExists('suppressions');
  await knex.schema.dropTableIfExists('sending_accounts');
  await knex.schema.dropTableIfExists('sending_progress');
  await knex.schema.alterTable('campaigns', (t) => {
    t.dropColumn('email_gap_minutes');
    t.dropColumn('random_wait_max_minutes');
    t.dropColumn('daily_new_contacts');
  });
}
