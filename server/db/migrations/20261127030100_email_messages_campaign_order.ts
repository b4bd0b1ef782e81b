import type { Knex } from 'knex';

/**
 * The unibox filtered by campaign (`GET /v2/email/list?campaignId=`), newest first by (created_at, id): read
 * from this index it costs the page, not the workspace's mail newer than the campaign's (which the workspace
 * order index walks and filters, e.g. a campaign that ended months ago).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(
    'CREATE INDEX email_messages_campaign_order ON email_messages (campaign_id, created_at DESC, id DESC) WHERE campaign_id IS NOT NULL',
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX IF EXISTS email_messages_campaign_order');
}
