import type { Knex } from 'knex';

/**
 * The audit log: one row per state-changing request (server/modules/audit). Append-only: a trigger refuses
 * any UPDATE, so no code path can edit an entry; rows leave only by the retention's DELETE of whole months.
 * Read newest first by workspace and id (ids are time-ordered UUIDs).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('audit_entries', (t) => {
    t.uuid('id').primary();
    t.uuid('workspace_id').notNullable().references('workspaces.id').onDelete('CASCADE');
    t.timestamp('at', { useTz: true }).notNullable();
    t.text('actor').notNullable();
    t.uuid('key_id').nullable();
    t.text('key_name').nullable();
    t.text('operation').notNullable();
    t.specificType('target_ids', 'text[]').notNullable();
    t.specificType('fields', 'text[]').notNullable();
    t.text('address').nullable();
    t.integer('status').notNullable();
    t.text('request_id').nullable();
    t.index(['workspace_id', 'id']);
    t.index(['at']);
  });
  await knex.raw(`
    CREATE FUNCTION audit_entries_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      RAISE EXCEPTION 'audit entries are append-only';
    END
    $$`);
  await knex.raw(`
    CREATE TRIGGER audit_entries_append_only BEFORE UPDATE ON audit_entries
    FOR EACH ROW EXECUTE FUNCTION audit_entries_append_only()`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('audit_entries');
  await knex.raw('DROP FUNCTION audit_entries_append_only()');
}
