import type { Knex } from 'knex';

/**
 * A contact's own IANA time zone (`contacts.timezone`, null when unknown) and the campaign option to send inside
 * the schedule's hours read in it (`campaigns.send_in_lead_timezone`, off for existing campaigns).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('contacts', (t) => {
    t.text('timezone');
  });
  await knex.schema.alterTable('campaigns', (t) => {
    t.boolean('send_in_lead_timezone').notNullable().defaultTo(false);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('contacts', (t) => {
    t.dropColumn('timezone');
  });
  await knex.schema.alterTable('campaigns', (t) => {
    t.dropColumn('send_in_lead_timezone');
  });
}
