import type { Knex } from 'knex';

/**
 * Bounce protection that can be tuned: the workspace's account rule and campaign rule (`sending_settings`;
 * null means the default), an account's own rule (`email_accounts`; null means the workspace's), and why a
 * campaign is paused (`campaigns.pause_reason_code` / `pause_reason_message`; null while not paused).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('sending_settings', (t) => {
    t.double('bounce_rate_percent');
    t.integer('bounce_window');
    t.double('campaign_bounce_rate_percent');
    t.integer('campaign_bounce_window');
  });
  await knex.schema.alterTable('email_accounts', (t) => {
    t.double('bounce_rate_percent');
    t.integer('bounce_window');
  });
  await knex.schema.alterTable('campaigns', (t) => {
    t.text('pause_reason_code');
    t.text('pause_reason_message');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('campaigns', (t) => {
    t.dropColumn('pause_reason_code');
    t.dropColumn('pause_reason_message');
  });
  await knex.schema.alterTable('email_accounts', (t) => {
    t.dropColumn('bounce_rate_percent');
    t.dropColumn('bounce_window');
  });
  await knex.schema.alterTable('sending_settings', (t) => {
    t.dropColumn('bounce_rate_percent');
    t.dropColumn('bounce_window');
    t.dropColumn('campaign_bounce_rate_percent');
    t.dropColumn('campaign_bounce_window');
  });
}
