import type { Knex } from 'knex';

/**
 * A step's automatic A/Z winner rule (`campaign_steps.auto_winner`, json `{ metric, minSentPerVariant,
 * decideAfterHours }`, null for none) and the sending engine's record of each such test (`step_tests`): when the
 * step first went out, and the winner it picked with the figures it was chosen on.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('campaign_steps', (t) => {
    t.jsonb('auto_winner');
  });
  await knex.schema.createTable('step_tests', (t) => {
    t.uuid('step_id').primary().references('id').inTable('campaign_steps').onDelete('CASCADE');
    t.uuid('workspace_id').notNullable();
    t.uuid('campaign_id').notNullable().references('id').inTable('campaigns').onDelete('CASCADE');
    t.timestamp('started_at', { useTz: true }).notNullable();
    t.uuid('winner_variant_id').references('id').inTable('step_variants').onDelete('SET NULL');
    t.timestamp('decided_at', { useTz: true });
    t.jsonb('figures');
    t.index(['campaign_id']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('step_tests');
  await knex.schema.alterTable('campaign_steps', (t) => {
    t.dropColumn('auto_winner');
  });
}
