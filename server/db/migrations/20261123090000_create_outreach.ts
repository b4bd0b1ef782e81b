import type { Knex } from 'knex';

/**
 * Campaigns, their steps, variants and linked accounts, email accounts, contacts and the email
 * events that analytics are computed from. Every table carries workspace_id so every query can be
 * scoped to the caller's workspace.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('email_accounts', (t) => {
    t.uuid('id').primary();
    t.uuid('workspace_id').notNullable().references('workspaces.id').onDelete('CASCADE');
    t.text('email').notNullable();
    t.text('provider').notNullable();
    t.text('status').notNullable();
    t.integer('daily_limit').notNullable();
    t.text('smtp_host').nullable();
    t.integer('smtp_port').nullable();
    t.text('smtp_user').nullable();
    t.text('smtp_password_enc').nullable();
    t.text('imap_host').nullable();
    t.integer('imap_port').nullable();
    t.text('imap_user').nullable();
    t.text('imap_password_enc').nullable();
    t.boolean('warmup_enabled').notNullable().defaultTo(false);
    t.text('warmup_status').notNullable().defaultTo('paused');
    t.integer('warmup_daily_limit').notNullable().defaultTo(10);
    t.integer('warmup_increase_per_day').notNullable().defaultTo(1);
    t.integer('warmup_reply_rate_percent').notNullable().defaultTo(30);
    t.timestamp('created_at', { useTz: true }).notNullable();
    t.timestamp('updated_at', { useTz: true }).notNullable();
    t.index(['workspace_id', 'created_at']);
  });
  await knex.raw(
    'CREATE UNIQUE INDEX email_accounts_workspace_email_unique ON email_accounts (workspace_id, lower(email))',
  );

  await knex.schema.createTable('campaigns', (t) => {
    t.uuid('id').primary();
    t.uuid('workspace_id').notNullable().references('workspaces.id').onDelete('CASCADE');
    t.text('name').notNullable();
    t.text('status').notNullable().defaultTo('draft');
    t.jsonb('schedule').nullable();
    t.integer('daily_limit').nullable();
    t.boolean('stop_on_reply').notNullable().defaultTo(true);
    t.boolean('track_opens').notNullable().defaultTo(true);
    t.boolean('track_clicks').notNullable().defaultTo(true);
    t.boolean('text_only').notNullable().defaultTo(false);
    t.timestamp('launched_at', { useTz: true }).nullable();
    t.timestamp('created_at', { useTz: true }).notNullable();
    t.timestamp('updated_at', { useTz: true }).notNullable();
    t.index(['workspace_id', 'created_at']);
    t.index(['workspace_id', 'status']);
  });

  await knex.schema.createTable('campaign_steps', (t) => {
    t.uuid('id').primary();
    t.uuid('workspace_id').notNullable().references('workspaces.id').onDelete('CASCADE');
    t.uuid('campaign_id').notNullable().references('campaigns.id').onDelete('CASCADE');
    t.integer('step_order').notNullable();
    t.integer('delay_days').notNullable().defaultTo(0);
    t.timestamp('created_at', { useTz: true }).notNullable();
    t.index(['campaign_id', 'step_order']);
  });

  await knex.schema.createTable('step_variants', (t) => {
    t.uuid('id').primary();
    t.uuid('workspace_id').notNullable().references('workspaces.id').onDelete('CASCADE');
    t.uuid('campaign_id').notNullable().references('campaigns.id').onDelete('CASCADE');
    t.uuid('step_id').notNullable().references('campaign_steps.id').onDelete('CASCADE');
    t.text('label').notNullable();
    t.text('subject').notNullable().defaultTo('');
    t.text('body').notNullable();
    t.integer('weight').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable();
    t.unique(['step_id', 'label']);
  });

  await knex.schema.createTable('campaign_accounts', (t) => {
    t.uuid('campaign_id').notNullable().references('campaigns.id').onDelete('CASCADE');
    t.uuid('account_id').notNullable().references('email_accounts.id').onDelete('CASCADE');
    t.uuid('workspace_id').notNullable().references('workspaces.id').onDelete('CASCADE');
    t.timestamp('created_at', { useTz: true }).notNullable();
    t.primary(['campaign_id', 'account_id']);
    t.index(['account_id']);
  });

  await knex.schema.createTable('contacts', (t) => {
    t.uuid('id').primary();
    t.uuid('workspace_id').notNullable().references('workspaces.id').onDelete('CASCADE');
    t.uuid('campaign_id').notNullable().references('campaigns.id').onDelete('CASCADE');
    t.text('email').notNullable();
    t.text('first_name').nullable();
    t.text('last_name').nullable();
    t.text('company_name').nullable();
    t.text('job_title').nullable();
    t.text('phone').nullable();
    t.text('website').nullable();
    t.text('linkedin_url').nullable();
    t.jsonb('custom_variables').notNullable().defaultTo('{}');
    t.text('status').notNullable().defaultTo('active');
    t.text('lead_status').nullable();
    /** The lead-database person it came from (send-to-campaign), when it did. */
    t.uuid('person_id').nullable();
    t.timestamp('created_at', { useTz: true }).notNullable();
    t.timestamp('updated_at', { useTz: true }).notNullable();
    t.index(['workspace_id', 'campaign_id', 'created_at']);
  });
  await knex.raw('CREATE UNIQUE INDEX contacts_campaign_email_unique ON contacts (campaign_id, lower(email))');

  await knex.schema.createTable('email_events', (t) => {
    t.uuid('id').primary();
    t.uuid('workspace_id').notNullable().references('workspaces.id').onDelete('CASCADE');
    t.uuid('campaign_id').nullable().references('campaigns.id').onDelete('SET NULL');
    t.uuid('step_id').nullable().references('campaign_steps.id').onDelete('SET NULL');
    t.uuid('variant_id').nullable().references('step_variants.id').onDelete('SET NULL');
    t.uuid('account_id').nullable().references('email_accounts.id').onDelete('SET NULL');
    t.uuid('contact_id').nullable().references('contacts.id').onDelete('SET NULL');
    /** sent | opened | clicked | replied | bounced | unsubscribed */
    t.text('type').notNullable();
    /** Warm-up traffic between accounts, kept apart from campaign sending. */
    t.boolean('is_warmup').notNullable().defaultTo(false);
    t.timestamp('occurred_at', { useTz: true }).notNullable();
    t.index(['workspace_id', 'campaign_id', 'occurred_at']);
    t.index(['workspace_id', 'account_id', 'occurred_at']);
  });
}

export async function down(knex: Knex): Promise<void> {
  for (const table of [
    'email_events',
    'contacts',
    'campaign_accounts',
    'step_variants',
    'campaign_steps',
    'campaigns',
    'email_accounts',
  ]) {
    await knex.schema.dropTableIfExists(table);
  }
}
