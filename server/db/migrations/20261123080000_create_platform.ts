import type { Knex } from 'knex';

/** The seed's defaults: 20/min, 50/hour, 100/day, and a starting grant so a new workspace can search. */
const DEFAULT_PLAN_ID = '00000000-0000-7000-8000-000000000001';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('plans', (t) => {
    t.uuid('id').primary();
    t.uuid('owner_workspace_id').nullable().index();
    t.text('name').notNullable();
    t.integer('per_second').nullable();
    t.integer('per_min').notNullable();
    t.integer('per_hour').notNullable();
    t.integer('per_day').notNullable();
    t.integer('credits').notNullable().defaultTo(0);
    t.integer('max_email_accounts').nullable();
    t.integer('max_contacts').nullable();
    t.timestamp('created_at', { useTz: true }).notNullable();
  });
  await knex('plans').insert({
    id: DEFAULT_PLAN_ID,
    name: 'Default',
    per_min: 20,
    per_hour: 50,
    per_day: 100,
    credits: 100,
    created_at: new Date('2026-01-01T00:00:00Z'),
  });
  await knex.schema.createTable('workspaces', (t) => {
    t.uuid('id').primary();
    t.text('name').notNullable();
    t.text('email').nullable();
    t.uuid('plan_id').notNullable().references('plans.id');
    t.uuid('parent_workspace_id').nullable().references('workspaces.id').index();
    t.boolean('whitelabel_enabled').notNullable().defaultTo(false);
    t.text('timezone').notNullable().defaultTo('UTC');
    t.integer('credit_balance').notNullable().defaultTo(0);
    t.timestamp('created_at', { useTz: true }).notNullable();
  });
  await knex.raw('ALTER TABLE workspaces ADD CONSTRAINT workspaces_credit_balance_check CHECK (credit_balance >= 0)');
  await knex.schema.createTable('users', (t) => {
    t.uuid('id').primary();
    t.uuid('workspace_id').notNullable().references('workspaces.id').onDelete('CASCADE').index();
    t.text('email').notNullable();
    t.text('name').nullable();
    t.text('password_hash').nullable();
    t.timestamp('created_at', { useTz: true }).notNullable();
  });
  await knex.raw('CREATE UNIQUE INDEX users_email_unique ON users (lower(email))');
  await knex.schema.createTable('api_keys', (t) => {
    t.uuid('id').primary();
    t.uuid('workspace_id').notNullable().references('workspaces.id').onDelete('CASCADE').index();
    t.text('name').nullable();
    t.text('key_prefix').notNullable();
    t.text('key_hash').notNullable().unique();
    t.timestamp('created_at', { useTz: true }).notNullable();
    t.timestamp('revoked_at', { useTz: true }).nullable();
  });
  await knex.schema.createTable('credit_ledger', (t) => {
    t.uuid('id').primary();
    t.uuid('workspace_id').notNullable().references('workspaces.id').onDelete('CASCADE');
    t.integer('amount').notNullable();
    t.integer('balance_after').notNullable();
    t.text('reason').notNullable();
    t.text('reference').nullable();
    t.timestamp('created_at', { useTz: true }).notNullable();
    t.index(['workspace_id', 'created_at']);
  });
  // Request counts per workspace in one-second and one-minute buckets (see server/http/quota.ts).
  await knex.schema.createTable('quota_buckets', (t) => {
    t.uuid('workspace_id').notNullable().references('workspaces.id').onDelete('CASCADE');
    t.string('granularity', 1).notNullable();
    t.bigInteger('bucket').notNullable();
    t.integer('hits').notNullable();
    t.primary(['workspace_id', 'granularity', 'bucket']);
  });
}

export async function down(knex: Knex): Promise<void> {
  for (const table of ['quota_buckets', 'credit_ledger', 'api_keys', 'users', 'workspaces', 'plans']) {
    await knex.schema.dropTableIfExists(table);
  }
}
