import type { Knex } from 'knex';

/**
 * The intent of every reply (inbox module), apart from email_messages so a user's correction is one row's
 * update and analytics count intents per campaign, step and variant from this table alone; and the
 * campaign option that lets clear intents set the lead status.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('reply_intents', (t) => {
    t.uuid('message_id').primary().references('email_messages.id').onDelete('CASCADE');
    t.uuid('workspace_id').notNullable().references('workspaces.id').onDelete('CASCADE');
    t.uuid('campaign_id').nullable().references('campaigns.id').onDelete('SET NULL');
    t.uuid('step_id').nullable().references('campaign_steps.id').onDelete('SET NULL');
    t.uuid('variant_id').nullable().references('step_variants.id').onDelete('SET NULL');
    t.uuid('contact_id').nullable();
    /** interested | meetingRequest | notInterested | wrongPerson | unsubscribeRequest | question | other */
    t.text('intent').notNullable();
    /** rules | user: a user's correction is never overwritten. */
    t.text('source').notNullable();
    t.text('referral_name').nullable();
    t.text('referral_email').nullable();
    /** When the reply arrived: analytics count it on that day. */
    t.timestamp('replied_at', { useTz: true }).notNullable();
    t.timestamp('decided_at', { useTz: true }).notNullable();
    t.index(['workspace_id', 'campaign_id', 'replied_at']);
  });
  await knex.schema.alterTable('campaigns', (t) => {
    t.boolean('intent_sets_lead_status').notNullable().defaultTo(true);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('reply_intents');
  await knex.schema.alterTable('campaigns', (t) => t.dropColumn('intent_sets_lead_status'));
}
