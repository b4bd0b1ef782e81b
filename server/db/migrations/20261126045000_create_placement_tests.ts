/**
 * Inbox placement tests (server/modules/placement): a test, and one row per message (sending account x pool
 * mailbox) that the worker sends (claimed with FOR UPDATE SKIP LOCKED and a lease) and then looks for in the
 * recipient's INBOX and spam folder until found or the test's deadline.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('placement_tests', (t) => {
    t.uuid('id').primary();
    t.uuid('workspace_id').notNullable().references('workspaces.id').onDelete('CASCADE');
    /** running | completed */
    t.text('status').notNullable();
    t.text('subject').notNullable();
    t.text('text_body').notNullable();
    t.text('html_body').nullable();
    /** The sending accounts in the order asked. */
    t.jsonb('account_ids').notNullable();
    t.integer('recipient_count').notNullable();
    t.integer('timeout_minutes').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable();
    t.timestamp('deadline_at', { useTz: true }).notNullable();
    t.timestamp('completed_at', { useTz: true }).nullable();
    t.index(['workspace_id', 'created_at']);
  });
  await knex.raw("CREATE INDEX placement_tests_running ON placement_tests (deadline_at) WHERE status = 'running'");

  await knex.schema.createTable('placement_results', (t) => {
    t.uuid('id').primary();
    t.uuid('test_id').notNullable().references('placement_tests.id').onDelete('CASCADE');
    /** Order in the test's results: by sending account as asked, then recipient domain and address. */
    t.integer('position').notNullable();
    t.uuid('account_id').notNullable();
    t.text('from_address').notNullable();
    /** The pool member (an account of any workspace or a pool-only mailbox). */
    t.uuid('recipient_id').notNullable();
    t.text('recipient_email').notNullable();
    /** The address as the test's owner may see it (another workspace's account is masked). */
    t.text('recipient_shown').notNullable();
    t.text('recipient_domain').notNullable();
    /** queued -> sending (leased) -> sent (looked for) -> done */
    t.text('state').notNullable();
    /** queued: not before; sending: the lease's end; sent: the next look. */
    t.timestamp('due_at', { useTz: true }).notNullable();
    t.integer('attempts').notNullable().defaultTo(0);
    /** pending | inbox | spam | nowhere | notSent */
    t.text('placement').notNullable();
    t.text('folder').nullable();
    t.text('message_id').nullable();
    t.timestamp('sent_at', { useTz: true }).nullable();
    t.timestamp('seen_at', { useTz: true }).nullable();
    t.text('reason').nullable();
    t.unique(['test_id', 'position']);
  });
  await knex.raw(
    "CREATE INDEX placement_results_due ON placement_results (due_at) WHERE state IN ('queued', 'sending', 'sent')",
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('placement_results');
  await knex.schema.dropTable('placement_tests');
}
