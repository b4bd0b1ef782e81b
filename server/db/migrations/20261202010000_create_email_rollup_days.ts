/**
 * email_rollup_days: a row per workspace or campaign and local day with the six counted types as columns,
 * campaign traffic only (no warm-up), so that a summary over 90 days reads 90 rows instead of email_rollups'
 * 540 (a row per type and day, each on its own heap page once a day's rows of every campaign interleave;
 * issue 26). Owned by the events module, kept by `record` beside email_rollups, and derived from them:
 * every count here is the sum of email_rollups' rows of the same scope, day and type with is_warmup false.
 */
import type { Knex } from 'knex';
import { rebuildRollups as rebuildEventRollups } from './20261127010000_create_email_rollups';

/** The types a summary counts, each a `<type>` (events) and `<type>_uniq` (first events) column. */
export const DAY_TYPES = ['sent', 'opened', 'clicked', 'replied', 'bounced', 'unsubscribed'] as const;

/** Fills email_rollup_days of one workspace (or of all) from email_rollups, replacing what it held. */
export async function rebuildRollupDays(db: Knex | Knex.Transaction, workspaceId?: string): Promise<void> {
  const bind = workspaceId ? [workspaceId] : [];
  const columns = DAY_TYPES.flatMap((type) => [type, `${type}_uniq`]);
  const sums = DAY_TYPES.flatMap((type) => [`coalesce(sum(total) FILTER (WHERE type = '${type}'), 0)`, `coalesce(sum(uniq) FILTER (WHERE type = '${type}'), 0)`]);
  await db.raw(`DELETE FROM email_rollup_days ${workspaceId ? 'WHERE workspace_id = ?' : ''}`, bind);
  await db.raw(
    `INSERT INTO email_rollup_days (workspace_id, scope, scope_id, day, ${columns.join(', ')})
     SELECT workspace_id, scope, scope_id, day, ${sums.join(', ')}
       FROM email_rollups
      WHERE scope IN ('workspace', 'campaign') AND NOT is_warmup AND type IN (${DAY_TYPES.map((t) => `'${t}'`).join(', ')}) ${workspaceId ? 'AND workspace_id = ?' : ''}
      GROUP BY 1, 2, 3, 4`,
    bind,
  );
}

/**
 * Rebuilds every rollup of one workspace (or of all) from email_events, in one transaction: email_rollups and
 * the tables beside them (migration 20261127010000, whose lock keeps `record` out meanwhile), then these days.
 */
export async function rebuildRollups(db: Knex | Knex.Transaction, workspaceId?: string, options: { unlessZone?: string } = {}): Promise<void> {
  await db.transaction(async (trx) => {
    await rebuildEventRollups(trx, workspaceId, options);
    await rebuildRollupDays(trx, workspaceId);
  });
}

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE email_rollup_days (
      workspace_id uuid NOT NULL,
      scope text NOT NULL,
      scope_id uuid NOT NULL,
      day date NOT NULL,
      ${DAY_TYPES.map((type) => `${type} integer NOT NULL DEFAULT 0, ${type}_uniq integer NOT NULL DEFAULT 0`).join(',\n      ')},
      PRIMARY KEY (workspace_id, scope, scope_id, day)
    )`);
  await rebuildRollupDays(knex);
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('email_rollup_days');
}
