import type { Knex } from 'knex';

/**
 * The warm-up pool (server/modules/warmup/): pool-only mailboxes an operator adds, each member's sending
 * pace and reading checkpoint, and one row per warm-up email (its content, where the partner's reader found
 * it, whether it was rescued and answered). The account's warm-up settings stay on email_accounts (the
 * account module shows them); this adds the window, the reason a warm-up is not running and the ramp start.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('email_accounts', (t) => {
    t.text('warmup_window_from').notNullable().defaultTo('00:00');
    t.text('warmup_window_to').notNullable().defaultTo('24:00');
    t.boolean('warmup_weekdays_only').notNullable().defaultTo(false);
    /** Why the warm-up is paused, banned or sends nothing (WarmupReason.code), and the words. */
    t.text('warmup_reason_code').nullable();
    t.text('warmup_reason_message').nullable();
    /** Day 1 of the ramp: set each time warm-up is enabled from paused. */
    t.timestamp('warmup_started_at', { useTz: true }).nullable();
  });

  await knex.schema.createTable('warmup_mailboxes', (t) => {
    t.uuid('id').primary();
    t.text('email').notNullable().unique();
    t.text('smtp_host').notNullable();
    t.integer('smtp_port').notNullable();
    t.text('smtp_user').notNullable();
    t.text('smtp_password_enc').notNullable();
    t.text('imap_host').notNullable();
    t.integer('imap_port').notNullable();
    t.text('imap_user').notNullable();
    t.text('imap_password_enc').notNullable();
    /** active | loginFailed (out of the pool until a login works again) */
    t.text('status').notNullable().defaultTo('active');
    t.text('status_reason').nullable();
    t.timestamp('created_at', { useTz: true }).notNullable();
    t.timestamp('updated_at', { useTz: true }).notNullable();
  });

  /** One row per pool member (an account or a pool-only mailbox): its sending pace and its reader's place. */
  await knex.schema.createTable('warmup_members', (t) => {
    t.uuid('member_id').primary();
    t.timestamp('next_send_at', { useTz: true }).notNullable();
    t.timestamp('next_read_at', { useTz: true }).notNullable();
    t.timestamp('read_claimed_until', { useTz: true }).nullable();
    t.text('inbox_uid_validity').nullable();
    t.bigInteger('inbox_last_uid').notNullable().defaultTo(0);
    t.text('junk_uid_validity').nullable();
    t.bigInteger('junk_last_uid').notNullable().defaultTo(0);
    t.integer('read_failures').notNullable().defaultTo(0);
    t.text('last_error').nullable();
    /** A partner that refused mail (mailbox full, 4xx) is skipped until then, never retried in a loop. */
    t.timestamp('skip_until', { useTz: true }).nullable();
    /** The last subject it sent, so the next one differs. */
    t.text('last_subject').nullable();
  });
  await knex.raw('CREATE INDEX warmup_members_send ON warmup_members (next_send_at)');
  await knex.raw('CREATE INDEX warmup_members_read ON warmup_members (next_read_at)');

  await knex.schema.createTable('warmup_messages', (t) => {
    t.uuid('id').primary();
    /** The RFC 5322 Message-ID, without angle brackets. */
    t.text('message_id').notNullable().unique();
    /** first | reply */
    t.text('kind').notNullable();
    t.uuid('parent_id').nullable();
    t.uuid('sender_id').notNullable();
    t.uuid('recipient_id').notNullable();
    t.text('sender_email').notNullable();
    t.text('recipient_email').notNullable();
    t.text('subject').notNullable();
    t.text('text').notNullable();
    t.text('html').nullable();
    t.text('in_reply_to').nullable();
    t.text('references').nullable();
    /** scheduled | sending | sent | bounced | failed | unknown */
    t.text('status').notNullable();
    t.text('status_reason').nullable();
    t.timestamp('send_at', { useTz: true }).notNullable();
    t.timestamp('sent_at', { useTz: true }).nullable();
    /** Where the recipient's reader found it: inbox | spam. */
    t.text('landed').nullable();
    t.timestamp('seen_at', { useTz: true }).nullable();
    t.timestamp('rescued_at', { useTz: true }).nullable();
    t.timestamp('replied_at', { useTz: true }).nullable();
    t.timestamp('created_at', { useTz: true }).notNullable();
  });
  await knex.raw("CREATE INDEX warmup_messages_due ON warmup_messages (send_at) WHERE status = 'scheduled'");
  await knex.raw('CREATE INDEX warmup_messages_sender ON warmup_messages (sender_id, sent_at)');
  await knex.raw('CREATE INDEX warmup_messages_recipient ON warmup_messages (recipient_id, seen_at)');
  // One answer per warm-up email, whichever reader saw it first.
  await knex.raw("CREATE UNIQUE INDEX warmup_messages_one_reply ON warmup_messages (parent_id) WHERE kind = 'reply'");
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('warmup_messages');
  await knex.schema.dropTable('warmup_members');
  await knex.schema.dropTable('warmup_mailboxes');
  await knex.schema.alterTable('email_accounts', (t) => {
    for (const c of [
      'warmup_window_from',
      'warmup_window_to',
      'warmup_weekdays_only',
      'warmup_reason_code',
      'warmup_reason_message',
      'warmup_started_at',
    ])
      t.dropColumn(c);
  });
}
