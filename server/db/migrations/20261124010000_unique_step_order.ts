import type { Knex } from 'knex';

/**
 * One step per position in a campaign, enforced by the database as well as by the service's lock.
 * Deferred to the commit, so renumbering the steps after a delete may pass through duplicates.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(
    'ALTER TABLE campaign_steps ADD CONSTRAINT campaign_steps_order_unique UNIQUE (campaign_id, step_order) DEFERRABLE INITIALLY DEFERRED',
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE campaign_steps DROP CONSTRAINT campaign_steps_order_unique');
}
