/**
 * The rollups analytics read instead of email_events, so that a summary costs what it returns rather than
 * what a workspace has stored. `record` (store.ts) keeps them in the event's own transaction; a rebuild
 * makes them again from the raw events.
 *
 * - email_rollups: events and first events per scope (the workspace, a campaign, step, variant or account),
 *   warm-up flag, type and calendar day in the zone of email_rollup_zones (local days: 7 rows a day per
 *   scope; a workspace whose time zone changed is rebuilt in the new zone by its first analytics read).
 * - email_rollup_totals: the same per scope without time, for all-time answers.
 * - email_event_firsts: each contact's first unflagged event per scope and type, so that unique counts add
 *   up across days exactly.
 * - email_rollup_days: a row per campaign and local day with the counted types as columns (no warm-up), so
 *   that a campaign's summary over 90 days reads 90 rows.
 */
import type { Executor } from '../../db';

/** The first key of the advisory lock per workspace that `record` holds shared and a rebuild exclusive. */
export const ROLLUP_LOCK = 26;

/** The scopes a unique count is kept for (accounts only need totals). */
const UNIQUE_SCOPES =
  "('workspace', e.workspace_id), ('campaign', e.campaign_id), ('step', e.step_id), ('variant', e.variant_id)";
const ALL_SCOPES = `${UNIQUE_SCOPES}, ('account', e.account_id)`;

/**
 * Rebuilds email_rollups, email_rollup_totals, email_event_firsts and email_rollup_zones of one workspace (or of
 * all) from email_events, exactly as `record` keeps them, with days cut in each workspace's time zone
 * (workspaces.timezone); nothing to do when already cut in `unlessZone`.
 */
async function rebuildEventRollups(
  db: Executor,
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

/** The types a summary counts, each a `<type>` (events) and `<type>_uniq` (first events) column. */
export const DAY_TYPES = ['sent', 'opened', 'clicked', 'replied', 'bounced', 'unsubscribed'] as const;

/** Fills email_rollup_days of one workspace (or of all) from email_rollups, replacing what it held. */
async function rebuildRollupDays(db: Executor, workspaceId?: string): Promise<void> {
  const bind = workspaceId ? [workspaceId] : [];
  const columns = DAY_TYPES.flatMap((type) => [type, `${type}_uniq`]);
  const sums = DAY_TYPES.flatMap((type) => [
    `coalesce(sum(total) FILTER (WHERE type = '${type}'), 0)`,
    `coalesce(sum(uniq) FILTER (WHERE type = '${type}'), 0)`,
  ]);
  await db.raw(`DELETE FROM email_rollup_days ${workspaceId ? 'WHERE workspace_id = ?' : ''}`, bind);
  await db.raw(
    `INSERT INTO email_rollup_days (workspace_id, campaign_id, day, ${columns.join(', ')})
     SELECT workspace_id, scope_id, day, ${sums.join(', ')}
       FROM email_rollups
      WHERE scope = 'campaign' AND NOT is_warmup AND type IN (${DAY_TYPES.map((t) => `'${t}'`).join(', ')}) ${workspaceId ? 'AND workspace_id = ?' : ''}
      GROUP BY 1, 2, 3`,
    bind,
  );
}

/**
 * Rebuilds every rollup of one workspace (or of all) from email_events in one transaction, exactly as `record`
 * keeps them: after a time zone change (`unlessZone`: nothing to do when already cut in that zone) and after a
 * bulk load of events (the benchmarks). ROLLUP_LOCK keeps `record` out meanwhile.
 */
export async function rebuildRollups(
  db: Executor,
  workspaceId?: string,
  options: { unlessZone?: string } = {},
): Promise<void> {
  await db.transaction(async (trx) => {
    await rebuildEventRollups(trx, workspaceId, options);
    await rebuildRollupDays(trx, workspaceId);
  });
}
