import type { Knex } from 'knex';

/**
 * Campaign options the sending engine enforces: which due contacts go first (`send_priority`), a plain-text first
 * email, cc and bcc addresses (`copy_to`, json `{ cc: [], bcc: [] }`), ending a contact's sequence once it opened
 * or clicked, and sending only to addresses verified `valid`. Existing campaigns keep sending as they did.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('campaigns', (t) => {
    t.text('send_priority').notNullable().defaultTo('dueFirst');
    t.boolean('first_email_text_only').notNullable().defaultTo(false);
    t.jsonb('copy_to').notNullable().defaultTo(knex.raw(`'{"cc":[],"bcc":[]}'::jsonb`));
    t.boolean('stop_on_open').notNullable().defaultTo(false);
    t.boolean('stop_on_click').notNullable().defaultTo(false);
    t.boolean('verified_only').notNullable().defaultTo(false);
  });
  await knex.raw(
    `ALTER TABLE campaigns ADD CONSTRAINT campaigns_send_priority CHECK (send_priority IN ('dueFirst', 'newLeads', 'followUps'))`,
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('campaigns', (t) => {
    t.dropChecks(['campaigns_send_priority']);
    t.dropColumn('send_priority');
    t.dropColumn('first_email_text_only');
    t.dropColumn('copy_to');
    t.dropColumn('stop_on_open');
    t.dropColumn('stop_on_click');
    t.dropColumn('verified_only');
  });
}
