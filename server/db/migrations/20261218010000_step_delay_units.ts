import type { Knex } from 'knex';

/**
 * A step's wait in minutes (`delay_minutes`, what the sending engine adds to the last send) and the unit the
 * user wrote it in (`delay_unit`, minutes | hours | days), replacing `delay_days`. Existing steps keep their
 * days.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('campaign_steps', (t) => {
    t.integer('delay_minutes').notNullable().defaultTo(0);
    t.text('delay_unit').notNullable().defaultTo('days');
  });
  await knex.raw(`UPDATE campaign_steps SET delay_minutes = delay_days * 1440`);
  await knex.raw(
    `ALTER TABLE campaign_steps ADD CONSTRAINT campaign_steps_delay_unit CHECK (delay_unit IN ('minutes', 'hours', 'days'))`,
  );
  await knex.schema.alterTable('campaign_steps', (t) => {
    t.dropColumn('delay_days');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('campaign_steps', (t) => {
    t.integer('delay_days').notNullable().defaultTo(0);
  });
  await knex.raw(`UPDATE campaign_steps SET delay_days = delay_minutes / 1440`);
  await knex.schema.alterTable('campaign_steps', (t) => {
    t.dropColumn('delay_minutes');
    t.dropColumn('delay_unit');
  });
}
