/**
 * Background jobs (server/modules/job): a job, its input rows as they were uploaded, the batches the
 * worker claims (FOR UPDATE SKIP LOCKED), and one result per row written in the batch's transaction.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('jobs', (t) => {
    t.uuid('id').primary();
    t.uuid('workspace_id').notNullable().references('workspaces.id').onDelete('CASCADE');
    t.text('type').notNullable();
    /** `receiving` while an upload streams in (never shown), then queued, running, completed, failed, cancelled. */
    t.text('status').notNullable();
    t.integer('total').notNullable().defaultTo(0);
    t.integer('processed').notNullable().defaultTo(0);
    t.jsonb('counts').notNullable().defaultTo('{}');
    t.uuid('campaign_id').nullable();
    t.jsonb('options').nullable();
    t.jsonb('data_options').nullable();
    t.integer('credits_charged').notNullable().defaultTo(0);
    t.text('error').nullable();
    t.timestamp('created_at', { useTz: true }).notNullable();
    t.timestamp('started_at', { useTz: true }).nullable();
    t.timestamp('finished_at', { useTz: true }).nullable();
    t.index(['workspace_id', 'created_at']);
  });
  // The worker's look-up of jobs with work left.
  await knex.raw("CREATE INDEX jobs_active ON jobs (created_at) WHERE status IN ('queued', 'running')");

  await knex.schema.createTable('job_rows', (t) => {
    t.uuid('job_id').notNullable().references('jobs.id').onDelete('CASCADE');
    /** 1-based position in the input. */
    t.integer('row_no').notNullable();
    /** The row's address, trimmed and lower-cased (null when it has none): repeats of a file are found by it. */
    t.text('email').nullable();
    t.jsonb('data').notNullable();
    t.primary(['job_id', 'row_no']);
    t.index(['job_id', 'email']);
  });

  await knex.schema.createTable('job_batches', (t) => {
    t.uuid('job_id').notNullable().references('jobs.id').onDelete('CASCADE');
    t.integer('batch_no').notNullable();
    t.integer('first_row').notNullable();
    t.integer('row_count').notNullable();
    /** Set in the transaction that applied the batch; which worker process did it (host:pid). */
    t.text('done_by').nullable();
    t.primary(['job_id', 'batch_no']);
  });

  await knex.schema.createTable('job_results', (t) => {
    t.uuid('job_id').notNullable().references('jobs.id').onDelete('CASCADE');
    t.integer('row_no').notNullable();
    t.text('outcome').notNullable();
    t.text('reason').nullable();
    t.jsonb('detail').nullable();
    t.primary(['job_id', 'row_no']);
  });

  // Imports that skip addresses held anywhere in the workspace look them up by this.
  await knex.raw('CREATE INDEX contacts_workspace_email ON contacts (workspace_id, lower(email))');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX IF EXISTS contacts_workspace_email');
  for (const table of ['job_results', 'job_batches', 'job_rows', 'jobs']) await knex.schema.dropTableIfExists(table);
}
