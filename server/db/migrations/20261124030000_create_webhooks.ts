import type { Knex } from 'knex';

/** Webhook subscriptions, their outbox of deliveries (one per event and subscription) and the attempt log. */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('webhook_subscriptions', (t) => {
    t.uuid('id').primary();
    t.uuid('workspace_id').notNullable().references('workspaces.id').onDelete('CASCADE');
    t.text('url').notNullable();
    t.specificType('event_types', 'text[]').notNullable();
    t.uuid('campaign_id').nullable().references('campaigns.id').onDelete('CASCADE');
    t.text('description').nullable();
    t.text('secret_enc').notNullable();
    /** active | disabled */
    t.text('status').notNullable();
    t.text('disabled_reason').nullable();
    t.timestamp('created_at', { useTz: true }).notNullable();
    t.timestamp('updated_at', { useTz: true }).notNullable();
    t.index(['workspace_id', 'created_at']);
  });
  await knex.schema.createTable('webhook_deliveries', (t) => {
    t.uuid('id').primary();
    t.uuid('subscription_id').notNullable().references('webhook_subscriptions.id').onDelete('CASCADE');
    t.uuid('workspace_id').notNullable().references('workspaces.id').onDelete('CASCADE');
    /** The event's id: the webhook-id header, stable across attempts. */
    t.uuid('event_id').notNullable();
    t.text('event_type').notNullable();
    /** The exact JSON body every attempt sends. */
    t.text('payload').notNullable();
    /** pending | delivering | delivered | failed */
    t.text('status').notNullable();
    t.integer('attempts').notNullable().defaultTo(0);
    t.timestamp('next_attempt_at', { useTz: true }).notNullable();
    t.timestamp('claimed_at', { useTz: true }).nullable();
    t.timestamp('created_at', { useTz: true }).notNullable();
    t.unique(['subscription_id', 'event_id']);
  });
  await knex.raw(
    "CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE status = 'pending'",
  );
  await knex.schema.createTable('webhook_attempts', (t) => {
    t.uuid('id').primary();
    t.uuid('delivery_id').notNullable().references('webhook_deliveries.id').onDelete('CASCADE');
    t.uuid('subscription_id').notNullable().references('webhook_subscriptions.id').onDelete('CASCADE');
    t.integer('attempt').notNullable();
    t.timestamp('attempted_at', { useTz: true }).notNullable();
    t.integer('status_code').nullable();
    t.integer('duration_ms').notNullable();
    t.text('error').nullable();
    t.text('response_excerpt').nullable();
    t.index(['subscription_id', 'attempted_at']);
  });
}

export async function down(knex: Knex): Promise<void> {
  for (const table of ['webhook_attempts', 'webhook_deliveries', 'webhook_subscriptions'])
    await knex.schema.dropTableIfExists(table);
}
