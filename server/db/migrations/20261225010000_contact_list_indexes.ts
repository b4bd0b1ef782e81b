import type { Knex } from 'knex';

/**
 * What `GET /v2/contact/list` and `POST /v2/contact/bulk` page and filter by, each behind an index: contacts in
 * their workspace or campaign by creation and by last change (keyset on the sort key and id; by address the
 * existing (workspace_id, lower(email)) and (campaign_id, lower(email)) indexes serve), by status and lead status
 * in creation order, a trigram index (pg_trgm) for the substring search over address, names and company, and
 * each contact's replies by time (its latest intent). The jobs table keeps a bulk job's action and filter.
 */
/** The text the search looks in (concat_ws is not immutable, so it cannot be indexed): the same expression as the contact store's. */
const CONTACT_SEARCH_TEXT =
  "lower(email || ' ' || coalesce(first_name, '') || ' ' || coalesce(last_name, '') || ' ' || coalesce(company_name, ''))";

export async function up(knex: Knex): Promise<void> {
  await knex.raw('CREATE EXTENSION IF NOT EXISTS pg_trgm');
  await knex.raw('CREATE INDEX contacts_workspace_created ON contacts (workspace_id, created_at, id)');
  await knex.raw('CREATE INDEX contacts_workspace_updated ON contacts (workspace_id, updated_at, id)');
  await knex.raw('CREATE INDEX contacts_campaign_created ON contacts (campaign_id, created_at, id)');
  await knex.raw('CREATE INDEX contacts_campaign_updated ON contacts (campaign_id, updated_at, id)');
  await knex.raw('CREATE INDEX contacts_workspace_status ON contacts (workspace_id, status, created_at, id)');
  await knex.raw(
    'CREATE INDEX contacts_workspace_lead_status ON contacts (workspace_id, lead_status, created_at, id) WHERE lead_status IS NOT NULL',
  );
  await knex.raw(`CREATE INDEX contacts_search ON contacts USING gin ((${CONTACT_SEARCH_TEXT}) gin_trgm_ops)`);
  await knex.raw(
    'CREATE INDEX reply_intents_contact ON reply_intents (contact_id, replied_at) WHERE contact_id IS NOT NULL',
  );
  await knex.schema.alterTable('jobs', (t) => {
    t.jsonb('contact_bulk').nullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('jobs', (t) => t.dropColumn('contact_bulk'));
  for (const index of [
    'contacts_workspace_created',
    'contacts_workspace_updated',
    'contacts_campaign_created',
    'contacts_campaign_updated',
    'contacts_workspace_status',
    'contacts_workspace_lead_status',
    'contacts_search',
    'reply_intents_contact',
  ])
    await knex.raw(`DROP INDEX IF EXISTS ${index}`);
}
