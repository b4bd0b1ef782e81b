import type { Knex } from 'knex';

/**
 * Subsequences: a campaign's other sequences, each entered by a trigger. Their steps and variants are
 * campaign_steps and step_variants rows with `subsequence_id` set (null: the main sequence), so messages,
 * events and analytics name their steps as they name the main sequence's. A contact's place is its progress
 * row's `subsequence_id` and `step_number`; `main_step_number` keeps where it left the main sequence (for a
 * delete that moves it back). `subsequence_entries` holds each (contact, subsequence) entered: once each.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('subsequences', (t) => {
    t.uuid('id').primary();
    t.uuid('workspace_id').notNullable().references('workspaces.id').onDelete('CASCADE');
    t.uuid('campaign_id').notNullable().references('campaigns.id').onDelete('CASCADE');
    t.text('name').notNullable();
    /** active | paused */
    t.text('status').notNullable().defaultTo('active');
    /** replyIntent | leadStatus | opened | clicked | noReply | replyContains */
    t.text('trigger_type').notNullable();
    /** The intent, lead status or phrase the trigger names (null for the others). */
    t.text('trigger_value').nullable();
    /** The step an opened or clicked trigger watches; null once that step is deleted (the trigger no longer fires). */
    t.uuid('trigger_step_id').nullable().references('campaign_steps.id').onDelete('SET NULL');
    t.timestamp('created_at', { useTz: true }).notNullable();
    t.timestamp('updated_at', { useTz: true }).notNullable();
    t.index(['campaign_id', 'trigger_type']);
    t.index(['workspace_id', 'created_at']);
  });
  await knex.raw("ALTER TABLE subsequences ADD CONSTRAINT subsequences_status CHECK (status IN ('active', 'paused'))");
  await knex.schema.alterTable('campaign_steps', (t) => {
    t.uuid('subsequence_id').nullable().references('subsequences.id').onDelete('CASCADE');
  });
  // Orders are unique per sequence: the main one (null) and each subsequence.
  await knex.raw('ALTER TABLE campaign_steps DROP CONSTRAINT campaign_steps_order_unique');
  await knex.raw(
    'ALTER TABLE campaign_steps ADD CONSTRAINT campaign_steps_order_unique UNIQUE NULLS NOT DISTINCT (campaign_id, subsequence_id, step_order) DEFERRABLE INITIALLY DEFERRED',
  );
  await knex.raw(
    'CREATE INDEX campaign_steps_subsequence ON campaign_steps (subsequence_id) WHERE subsequence_id IS NOT NULL',
  );
  await knex.schema.alterTable('sending_progress', (t) => {
    t.uuid('subsequence_id').nullable().references('subsequences.id').onDelete('SET NULL');
    t.integer('main_step_number').nullable();
  });
  await knex.raw(
    'CREATE INDEX sending_progress_subsequence ON sending_progress (subsequence_id) WHERE subsequence_id IS NOT NULL',
  );
  await knex.schema.createTable('subsequence_entries', (t) => {
    t.uuid('subsequence_id').notNullable().references('subsequences.id').onDelete('CASCADE');
    t.uuid('contact_id').notNullable().references('contacts.id').onDelete('CASCADE');
    t.uuid('workspace_id').notNullable().references('workspaces.id').onDelete('CASCADE');
    t.timestamp('entered_at', { useTz: true }).notNullable();
    t.primary(['subsequence_id', 'contact_id']);
    t.index(['contact_id']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('subsequence_entries');
  await knex.schema.alterTable('sending_progress', (t) => {
    t.dropColumn('subsequence_id');
    t.dropColumn('main_step_number');
  });
  await knex.raw('DELETE FROM campaign_steps WHERE subsequence_id IS NOT NULL');
  await knex.raw('ALTER TABLE campaign_steps DROP CONSTRAINT campaign_steps_order_unique');
  await knex.raw(
    'ALTER TABLE campaign_steps ADD CONSTRAINT campaign_steps_order_unique UNIQUE (campaign_id, step_order) DEFERRABLE INITIALLY DEFERRED',
  );
  await knex.schema.alterTable('campaign_steps', (t) => {
    t.dropColumn('subsequence_id');
  });
  await knex.schema.dropTable('subsequences');
}
