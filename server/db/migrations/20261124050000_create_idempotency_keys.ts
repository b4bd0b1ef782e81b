import type { Knex } from 'knex';

/**
 * Idempotency keys (server/http/idempotency.ts): one row per workspace and key. The primary key is
 * what lets a single INSERT ... ON CONFLICT DO NOTHING decide which request runs, across processes.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('idempotency_keys', (t) => {
    t.uuid('workspace_id').notNullable().references('workspaces.id').onDelete('CASCADE');
    t.text('key').notNullable();
    /** sha256 of method, URL and canonical body. */
    t.text('fingerprint').notNullable();
    t.text('state').notNullable();
    /** Which claim owns a running row: a request whose key was taken over after its lease may not store or release it. */
    t.uuid('claim_id').notNullable();
    /** While running: when another request may take the key over (its process is presumed dead). */
    t.timestamp('locked_until', { useTz: true }).nullable();
    t.integer('response_status').nullable();
    /** The JSON body exactly as sent, so a replay is byte for byte the same; encrypted when the server has a secret key. */
    t.text('response_body').nullable();
    t.timestamp('created_at', { useTz: true }).notNullable();
    t.timestamp('expires_at', { useTz: true }).notNullable().index();
    t.primary(['workspace_id', 'key']);
  });
  await knex.raw(
    `ALTER TABLE idempotency_keys ADD CONSTRAINT idempotency_keys_state_check CHECK (state IN ('running', 'done'))`,
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('idempotency_keys');
}
