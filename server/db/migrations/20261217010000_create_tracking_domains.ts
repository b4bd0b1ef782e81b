import type { Knex } from 'knex';

/**
 * `tracking_domains`: a workspace's own hosts for the links in its mail (open pixel, clicks, unsubscribe),
 * each verified by a CNAME record to the service's host. A domain is verified in at most one workspace at a
 * time (a partial unique index), so one workspace's host never serves another's links. Accounts and
 * campaigns may name one (`tracking_domain_id`); removing the domain clears the choice.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('tracking_domains', (t) => {
    t.uuid('id').primary();
    t.uuid('workspace_id').notNullable().references('workspaces.id').onDelete('CASCADE');
    t.text('domain').notNullable();
    t.text('status').notNullable();
    t.text('reason');
    t.text('reason_message');
    t.text('cname_found');
    t.timestamp('verified_at', { useTz: true });
    t.timestamp('checked_at', { useTz: true });
    t.timestamp('next_check_at', { useTz: true }).notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable();
    t.timestamp('updated_at', { useTz: true }).notNullable();
    t.unique(['workspace_id', 'domain']);
    t.index(['next_check_at']);
  });
  await knex.raw(
    "CREATE UNIQUE INDEX tracking_domains_verified_domain ON tracking_domains (domain) WHERE status = 'verified'",
  );
  for (const table of ['email_accounts', 'campaigns'])
    await knex.schema.alterTable(table, (t) => {
      t.uuid('tracking_domain_id').references('tracking_domains.id').onDelete('SET NULL');
    });
}

export async function down(knex: Knex): Promise<void> {
  for (const table of ['email_accounts', 'campaigns'])
    await knex.schema.alterTable(table, (t) => {
      t.dropColumn('tracking_domain_id');
    });
  await knex.schema.dropTable('tracking_domains');
}
