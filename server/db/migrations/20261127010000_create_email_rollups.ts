/**
 * Rollups of email_events, so analytics cost what they return rather than what a workspace has stored
 * (issue 26). Owned by the events module, maintained by its `record` in the event's own transaction.
 *
 * - email_rollups: events and first events per scope (the workspace, a campaign, step, variant or
 *   account), warm-up flag, type and UTC quarter-hour. Quarter-hours, not local days: every zone in use
 *   today is offset from UTC by a multiple of 15 minutes (Kolkata +5:30, Kathmandu +5:45, Chatham +12:45),
 *   so each quarter-hour lies within one local day of any zone, and a day's answer in any zone is an exact
 *   sum of its 96 quarter-hours. A workspace that changes its time zone needs no rebuild, and a day in a
 *   zone with a DST change is its 92 or 100 quarter-hours.
 * - email_rollup_totals: the same per scope without time, for all-time answers (`campaign/count`).
 * - email_event_firsts: each contact's first unflagged event per scope and type. A unique count over a
 *   range is the number of contacts whose first event falls in it (the spec's rule), so uniques add up
 *   across quarter-hours exactly. An event that arrives earlier than the stored first moves the first.
 */
import type { Knex } from 'knex';

/** The scopes a unique count is kept for (accounts only need totals). */
const UNIQUE_SCOPES = "('workspace', e.workspace_id), ('campaign', e.campaign_id), ('step', e.step_id), ('variant', e.variant_id)";
const ALL_SCOPES = `${UNIQUE_SCOPES}, ('account', e.account_id)`;

/**
 * Rebuilds the rollups of one workspace (or of all) from email_events, exactly as `record` would have
 * kept them: the migration's backfill, and the bench's after it loads events in bulk. Locks email_events
 * against writes for its transaction, so no event is recorded halfway through.
 */
export async function rebuildRollups(db: Knex | Knex.Transaction, workspaceId?: string): Promise<void> {
  await db.transaction(async (trx) => {
    await trx.raw('LOCK TABLE email_events IN SHARE MODE');
    const only = workspaceId ? 'WHERE workspace_id = ?' : '';
    const onlyEvents = workspaceId ? 'AND e.workspace_id = ?' : '';
    const bind = workspaceId ? [workspaceId] : [];
    for (const table of ['email_rollups', 'email_rollup_totals', 'email_event_firsts']) await trx.raw(`DELETE FROM ${table} ${only}`, bind);
    await trx.raw(
      `INSERT INTO email_event_firsts (workspace_id, scope, scope_id, is_warmup, type, contact_id, first_at)
       SELECT e.workspace_id, s.scope, s.scope_id, e.is_warmup, e.type, e.contact_id, min(e.occurred_at)
         FROM email_events e CROSS JOIN LATERAL (VALUES ${UNIQUE_SCOPES}) s(scope, scope_id)
        WHERE s.scope_id IS NOT NULL AND e.contact_id IS NOT NULL AND NOT e.flagged ${onlyEvents}
        GROUP BY 1, 2, 3, 4, 5, 6`,
      bind,
    );
    await trx.raw(
      `INSERT INTO email_rollups (workspace_id, scope, scope_id, is_warmup, bucket, type, total, uniq)
       SELECT workspace_id, scope, scope_id, is_warmup, bucket, type, sum(total), sum(uniq) FROM (
         SELECT e.workspace_id, s.scope, s.scope_id, e.is_warmup, date_bin('15 minutes', e.occurred_at, TIMESTAMPTZ 'epoch') AS bucket, e.type, count(*) AS total, 0 AS uniq
           FROM email_events e CROSS JOIN LATERAL (VALUES ${ALL_SCOPES}) s(scope, scope_id)
          WHERE s.scope_id IS NOT NULL ${onlyEvents}
          GROUP BY 1, 2, 3, 4, 5, 6
         UNION ALL
         SELECT workspace_id, scope, scope_id, is_warmup, date_bin('15 minutes', first_at, TIMESTAMPTZ 'epoch'), type, 0, count(*)
           FROM email_event_firsts ${only}
          GROUP BY 1, 2, 3, 4, 5, 6
       ) x GROUP BY 1, 2, 3, 4, 5, 6`,
      [...bind, ...bind],
    );
    await trx.raw(
      `INSERT INTO email_rollup_totals (workspace_id, scope, scope_id, is_warmup, type, total, uniq)
       SELECT workspace_id, scope, scope_id, is_warmup, type, sum(total), sum(uniq)
         FROM email_rollups WHERE scope IN ('workspace', 'campaign') ${workspaceId ? 'AND workspace_id = ?' : ''}
        GROUP BY 1, 2, 3, 4, 5`,
      bind,
    );
  });
}

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE email_rollups (
      workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
      scope text NOT NULL,
      scope_id uuid NOT NULL,
      is_warmup boolean NOT NULL,
      bucket timestamptz NOT NULL,
      type text NOT NULL,
      total integer NOT NULL,
      uniq integer NOT NULL,
      PRIMARY KEY (workspace_id, scope, scope_id, is_warmup, bucket, type)
    )`);
  await knex.raw(`
    CREATE TABLE email_rollup_totals (
      workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
      scope text NOT NULL,
      scope_id uuid NOT NULL,
      is_warmup boolean NOT NULL,
      type text NOT NULL,
      total integer NOT NULL,
      uniq integer NOT NULL,
      PRIMARY KEY (workspace_id, scope, scope_id, is_warmup, type)
    )`);
  await knex.raw(`
    CREATE TABLE email_event_firsts (
      workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
      scope text NOT NULL,
      scope_id uuid NOT NULL,
      is_warmup boolean NOT NULL,
      type text NOT NULL,
      contact_id uuid NOT NULL,
      first_at timestamptz NOT NULL,
      PRIMARY KEY (workspace_id, scope, scope_id, is_warmup, type, contact_id)
    )`);
  await rebuildRollups(knex);
}

export async function down(knex: Knex): Promise<void> {
  for (const table of ['email_event_firsts', 'email_rollup_totals', 'email_rollups']) await knex.schema.dropTableIfExists(table);
}
