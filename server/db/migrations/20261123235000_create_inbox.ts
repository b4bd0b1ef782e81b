import type { Knex } from 'knex';

/**
 * The inbox: one checkpoint per account mailbox (UIDVALIDITY and the last UID read, and the claim that
 * keeps two workers off one mailbox), and the campaign options for replies.
 *
 * `email_messages` belongs to the sending module; the `IF NOT EXISTS` table below has the same shape as the
 * sending migration's, and whichever runs first creates it.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`CREATE TABLE IF NOT EXISTS email_messages (
    id uuid PRIMARY KEY,
    workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    account_id uuid NULL REFERENCES email_accounts(id) ON DELETE SET NULL,
    campaign_id uuid NULL REFERENCES campaigns(id) ON DELETE SET NULL,
    contact_id uuid NULL REFERENCES contacts(id) ON DELETE SET NULL,
    step_id uuid NULL REFERENCES campaign_steps(id) ON DELETE SET NULL,
    variant_id uuid NULL REFERENCES step_variants(id) ON DELETE SET NULL,
    direction text NOT NULL,
    kind text NOT NULL,
    message_id text NOT NULL,
    in_reply_to text NULL,
    "references" text[] NOT NULL DEFAULT '{}',
    thread_id uuid NOT NULL,
    from_address text NOT NULL,
    to_address text NOT NULL,
    subject text NOT NULL DEFAULT '',
    text_body text NOT NULL DEFAULT '',
    html_body text NULL,
    status text NOT NULL,
    smtp_response text NULL,
    sent_at timestamptz NULL,
    received_at timestamptz NULL,
    read_at timestamptz NULL,
    created_at timestamptz NOT NULL
  )`);
  await knex.raw(
    'CREATE INDEX IF NOT EXISTS email_messages_workspace_message_id ON email_messages (workspace_id, message_id)',
  );
  // The inbox lists newest first by (created_at, id) within a workspace, and reads a thread.
  await knex.raw(
    'CREATE INDEX IF NOT EXISTS email_messages_inbox_order ON email_messages (workspace_id, created_at DESC, id DESC)',
  );
  await knex.raw('CREATE INDEX IF NOT EXISTS email_messages_thread ON email_messages (thread_id, created_at)');
  // The fallback match: what an account sent to an address.
  await knex.raw(
    'CREATE INDEX IF NOT EXISTS email_messages_account_to ON email_messages (account_id, lower(to_address))',
  );
  // A message seen twice (UIDVALIDITY change, a copy in two folders) is stored once per account.
  await knex.raw(
    `CREATE UNIQUE INDEX IF NOT EXISTS email_messages_inbound_once ON email_messages (account_id, message_id) WHERE direction = 'inbound'`,
  );

  await knex.raw('ALTER TABLE email_accounts ADD COLUMN IF NOT EXISTS status_reason text NULL');

  await knex.schema.createTable('mailbox_checkpoints', (t) => {
    t.uuid('account_id').notNullable().references('email_accounts.id').onDelete('CASCADE');
    t.text('mailbox').notNullable();
    t.uuid('workspace_id').notNullable().references('workspaces.id').onDelete('CASCADE');
    /** UIDVALIDITY as text: it is an unsigned 32-bit number (bigint in JS). */
    t.text('uid_validity').nullable();
    t.bigInteger('last_uid').notNullable().defaultTo(0);
    /** A worker holds the mailbox until then (a crashed worker's claim expires). */
    t.timestamp('claimed_until', { useTz: true }).nullable();
    t.text('claimed_by').nullable();
    t.timestamp('last_read_at', { useTz: true }).nullable();
    t.integer('failures').notNullable().defaultTo(0);
    t.text('last_error').nullable();
    /** A message whose processing failed (not the connection): retried, then skipped after 3 runs. */
    t.bigInteger('stuck_uid').nullable();
    t.integer('stuck_count').notNullable().defaultTo(0);
    t.timestamp('updated_at', { useTz: true }).notNullable();
    t.primary(['account_id', 'mailbox']);
    t.index(['last_read_at']);
  });

  await knex.schema.alterTable('campaigns', (t) => {
    t.boolean('stop_for_company').notNullable().defaultTo(false);
    t.boolean('stop_on_auto_reply').notNullable().defaultTo(false);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('campaigns', (t) => {
    t.dropColumn('stop_for_company');
    t.dropColumn('stop_on_auto_reply');
  });
  await knex.schema.dropTableIfExists('mailbox_checkpoints');
}
