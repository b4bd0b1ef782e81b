import type { Knex } from 'knex';

/**
 * Mailboxes connected by OAuth. `email_accounts.auth_type` says how an account logs in (`password` or
 * `oauth2`, with `oauth_provider`); `mailbox_oauth_grants` holds an OAuth account's grant: its provider, the refresh token and
 * the cached access token (both encrypted with SECRET_KEY) with the access token's expiry, and when and why
 * the grant died. `oauth_sessions` are the connect flows in progress: the state's hash (the state itself is
 * never stored), the PKCE verifier (encrypted), what the flow was started with, and its outcome.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('email_accounts', (t) => {
    t.text('auth_type').notNullable().defaultTo('password');
    t.text('oauth_provider').nullable();
  });
  await knex.schema.createTable('mailbox_oauth_grants', (t) => {
    t.uuid('account_id').primary().references('email_accounts.id').onDelete('CASCADE');
    t.text('provider').notNullable();
    t.text('refresh_token_enc').notNullable();
    t.text('access_token_enc').nullable();
    t.timestamp('access_expires_at', { useTz: true }).nullable();
    t.timestamp('revoked_at', { useTz: true }).nullable();
    t.text('revoked_reason').nullable();
    t.timestamp('created_at', { useTz: true }).notNullable();
    t.timestamp('updated_at', { useTz: true }).notNullable();
  });
  await knex.schema.createTable('oauth_sessions', (t) => {
    t.uuid('id').primary();
    t.uuid('workspace_id').notNullable().references('workspaces.id').onDelete('CASCADE');
    t.text('provider').notNullable();
    t.text('state_hash').notNullable().unique();
    t.text('code_verifier_enc').notNullable();
    t.text('login_hint').nullable();
    t.uuid('reconnect_account_id').nullable();
    t.text('return_url').nullable();
    t.integer('daily_limit').nullable();
    t.jsonb('warmup').nullable();
    t.text('status').notNullable();
    t.text('reason_code').nullable();
    t.text('reason_message').nullable();
    t.uuid('account_id').nullable();
    t.timestamp('expires_at', { useTz: true }).notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable();
    t.timestamp('completed_at', { useTz: true }).nullable();
    t.index(['workspace_id', 'created_at']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('oauth_sessions');
  await knex.schema.dropTable('mailbox_oauth_grants');
  await knex.schema.alterTable('email_accounts', (t) => {
    t.dropColumn('auth_type');
    t.dropColumn('oauth_provider');
  });
}
