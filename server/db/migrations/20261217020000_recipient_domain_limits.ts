import type { Knex } from 'knex';

/**
 * Caps per recipient domain: a campaign option (`recipient_domain_daily_limit`), and `sending_settings`, the
 * workspace's sending settings (one row per workspace that changed one; none means the defaults). The index
 * counts a day's campaign mail to one recipient domain of a workspace without reading the rest of its mail.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('campaigns', (t) => {
    t.integer('recipient_domain_daily_limit');
  });
  await knex.schema.createTable('sending_settings', (t) => {
    t.uuid('workspace_id').primary().references('workspaces.id').onDelete('CASCADE');
    t.integer('recipient_domain_daily_limit');
    t.timestamp('updated_at', { useTz: true }).notNullable();
  });
  await knex.raw(
    `CREATE INDEX email_messages_recipient_domain_day ON email_messages (workspace_id, lower(split_part(to_address, '@', 2)), created_at)
     WHERE direction = 'outbound' AND kind = 'campaign'`,
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX IF EXISTS email_messages_recipient_domain_day');
  await knex.schema.dropTable('sending_settings');
  await knex.schema.alterTable('campaigns', (t) => {
    t.dropColumn('recipient_domain_daily_limit');
  });
}
