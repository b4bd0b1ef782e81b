import type { Knex } from 'knex';

/**
 * What caused each credit movement: who (`key`, `admin`, `parent`, `worker`), the operation and the request id
 * (GET /v2/credits/ledger). Rows written before this have none. The ledger is read newest first by
 * (created_at, id) within a workspace, so the index gains the id.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('credit_ledger', (t) => {
    t.text('actor').nullable();
    t.text('operation').nullable();
    t.text('request_id').nullable();
    t.dropIndex(['workspace_id', 'created_at']);
    t.index(['workspace_id', 'created_at', 'id']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('credit_ledger', (t) => {
    t.dropIndex(['workspace_id', 'created_at', 'id']);
    t.index(['workspace_id', 'created_at']);
    t.dropColumns('actor', 'operation', 'request_id');
  });
}
