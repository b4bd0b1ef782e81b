import type { Knex } from 'knex';

/**
 * Fair turns between workspaces' jobs: `jobs.claim_turn` takes the next number of `job_claim_turns` each time a
 * worker starts a batch of the job, so the workspace whose jobs were served least recently goes first.
 * `job_batches.applied`: rows of the batch already applied (a batch is applied in slices of a few seconds,
 * each its own transaction, so no workspace's long batch holds a worker for long).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('CREATE SEQUENCE job_claim_turns');
  await knex.schema.alterTable('jobs', (t) => {
    t.bigInteger('claim_turn').nullable();
  });
  await knex.schema.alterTable('job_batches', (t) => {
    t.integer('applied').notNullable().defaultTo(0);
  });
  await knex.raw(
    "CREATE INDEX jobs_active_by_workspace ON jobs (workspace_id, created_at) WHERE status IN ('queued', 'running')",
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX jobs_active_by_workspace');
  await knex.schema.alterTable('job_batches', (t) => {
    t.dropColumn('applied');
  });
  await knex.schema.alterTable('jobs', (t) => {
    t.dropColumn('claim_turn');
  });
  await knex.raw('DROP SEQUENCE job_claim_turns');
}
