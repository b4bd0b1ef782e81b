/**
 * Rollups of email_events, so analytics cost what they return rather than what a workspace has stored.
 * Owned by the events module, maintained by its `record` in the event's own transaction.
 *
 * - email_rollups: events and first events per scope (the workspace, a campaign, step, variant or
 *   account), warm-up flag, type and calendar day in the zone of email_rollup_zones.
 * - email_rollup_zones: the zone each workspace's rollup days are cut in. Local days, not UTC quarter-hours
 *   (which stay exact in every zone, 30/45-minute offsets included, without a rebuild): quarter-hours made
 *   about 4.6 rows per event below saturation and 96 rows per day and type at it, so a 90-day summary summed
 *   60,000 rows; local days make 7 a day per scope. When a workspace's time zone differs from its rollup
 *   zone (it changed, or a new workspace's first events were cut in UTC), the first analytics read rebuilds
 *   that workspace's rollups in the new zone: rare, and exact for any offset, since days are cut by the
 *   zone's own rules.
 * - email_rollup_totals: the same per scope without time, for all-time answers (`campaign/count`).
 * - email_event_firsts: each contact's first unflagged event per scope and type. A unique count over a
 *   range is the number of contacts whose first event falls in it (the spec's rule), so uniques add up
 *   across days exactly. An event that arrives earlier than the stored first moves the first.
 *
 * The bulk tables carry workspace_id without a foreign key: workspaces are never deleted, and the check
 * made a rebuild a tenth slower.
 */
import type { Knex } from 'knex';

/** The first key of the advisory lock per workspace that `record` holds shared and a rebuild exclusive. */
const ROLLUP_LOCK = 26;

/** The scopes a unique count is kept for (accounts only need totals). */
const UNIQUE_SCOPES =
  "('workspace', e.workspace_id), ('campaign', e.campaign_id), ('step', e.step_id), ('variant', e.variant_id)";
const ALL_SCOPES = `${UNIQUE_SCOPES}, ('account', e.account_id)`;

/**
 * Rebuilds the rollups of one workspace (or of all) from email_events, exactly as `record` would have
 * kept them, with days cut in each workspace's time zone (workspaces.timezone): the migration's backfill,
 * the events module's after a zone change (`unlessZone`: nothing to do when already cut in that zone), and
 * the bench's after it loads events in bulk.
 */
export async function rebuildRollups(
  db: Knex | Knex.Transaction,
  workspaceId?: string,
  options: { unlessZone?: string } = {},
): Promise<void> {
  await db.transaction(async (trx) => {
    // No event recorded halfway through: `record` holds the workspace's lock shared while it writes an
    // event and its rollups; the whole table is locked for a rebuild of every workspace.
    if (workspaceId) await trx.raw('SELECT pg_advisory_xact_lock(?, hashtext(?))', [ROLLUP_LOCK, workspaceId]);
    else await trx.raw('LOCK TABLE email_events IN SHARE MODE');
    // A read that waited for another's rebuild may find its zone already right.
    if (workspaceId && options.unlessZone) {
      const zone = await trx('email_rollup_zones')
        .where({ workspace_id: workspaceId })
        .first<{ timezone: string } | undefined>('timezone');
      if (zone?.timezone === options.unlessZone) return;
    }
    const only = workspaceId ? 'WHERE workspace_id = ?' : '';
    const onlyEvents = workspaceId ? 'AND e.workspace_id = ?' : '';
    const bind = workspaceId ? [workspaceId] : [];
    for (const table of ['email_rollups', 'email_rollup_totals', 'email_event_firsts', 'email_rollup_zones'])
      await trx.raw(`DELETE FROM ${table} ${only}`, bind);
    await trx.raw(
      `INSERT INTO email_rollup_zones (workspace_id, timezone) SELECT id, timezone FROM workspaces ${workspaceId ? 'WHERE id = ?' : ''}`,
      bind,
    );
    await trx.raw(
      `INSERT INTO email_event_firsts (workspace_id, scope, scope_id, is_warmup, type, contact_id, first_at)
       SELECT e.workspace_id, s.scope, s.scope_id, e.is_warmup, e.type, e.contact_id, min(e.occurred_at)
         FROM email_events e CROSS JOIN LATERAL (VALUES ${UNIQUE_SCOPES}) s(scope, scope_id)
        WHERE s.scope_id IS NOT NULL AND e.contact_id IS NOT NULL AND NOT e.flagged ${onlyEvents}
        GROUP BY 1, 2, 3, 4, 5, 6`,
      bind,
    );
    await trx.raw(
      `INSERT INTO email_rollups (workspace_id, scope, scope_id, is_warmup, day, type, total, uniq)
       SELECT workspace_id, scope, scope_id, is_warmup, day, type, sum(total), sum(uniq) FROM (
         SELECT e.workspace_id, s.scope, s.scope_id, e.is_warmup, (e.occurred_at AT TIME ZONE z.timezone)::date AS day, e.type, count(*) AS total, 0 AS uniq
           FROM email_events e JOIN email_rollup_zones z USING (workspace_id) CROSS JOIN LATERAL (VALUES ${ALL_SCOPES}) s(scope, scope_id)
          WHERE s.scope_id IS NOT NULL ${onlyEvents}
          GROUP BY 1, 2, 3, 4, 5, 6
         UNION ALL
         SELECT f.workspace_id, scope, scope_id, is_warmup, (first_at AT TIME ZONE z.timezone)::date, type, 0, count(*)
           FROM email_event_firsts f JOIN email_rollup_zones z USING (workspace_id) ${workspaceId ? 'WHERE f.workspace_id = ?' : ''}
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
      workspace_id uuid NOT NULL,
      scope text NOT NULL,
      scope_id uuid NOT NULL,
      is_warmup boolean NOT NULL,
      day date NOT NULL,
      type text NOT NULL,
      total integer NOT NULL,
      uniq integer NOT NULL,
      PRIMARY KEY (workspace_id, scope, scope_id, is_warmup, day, type)
    )`);
  await knex.raw(`
    CREATE TABLE email_rollup_zones (
      workspace_id uuid PRIMARY KEY REFERENCES workspaces(id) ON DELETE CASCADE,
      timezone text NOT NULL
    )`);
  await knex.raw(`
    CREATE TABLE email_rollup_totals (
      workspace_id uuid NOT NULL,
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
      workspace_id uuid NOT NULL,
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
  for (const table of ['email_event_firsts', 'email_rollup_totals', 'email_rollup_zones', 'email_rollups'])
    await knex.schema.dropTableIfExists(table);
}
