/**
 * email_rollup_days: a row per campaign and local day with the six counted types as columns, campaign
 * traffic only (no warm-up), so that one campaign's summary over 90 days reads 90 rows instead of
 * email_rollups' 540 (a row per type and day, each on a heap page of its own once the days' rows of every
 * campaign interleave). Owned by the events module and kept by `record` beside email_rollups;
 * every count is the sum of email_rollups' rows of scope `campaign`, the same campaign, day and type and
 * is_warmup false. A campaign only: a workspace's row per day would be one row every event of the workspace
 * waits on, and the workspace summary reads email_rollups within its goal.
 */
import type { Knex } from 'knex';

/** The types a summary counts, each a `<type>` (events) and `<type>_uniq` (first events) column. */
const DAY_TYPES = ['sent', 'opened', 'clicked', 'replied', 'bounced', 'unsubscribed'] as const;

/** Fills email_rollup_days of one workspace (or of all) from email_rollups, replacing what it held. */
async function rebuildRollupDays(db: Knex | Knex.Transaction, workspaceId?: string): Promise<void> {
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

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE email_rollup_days (
      workspace_id uuid NOT NULL,
      campaign_id uuid NOT NULL,
      day date NOT NULL,
      ${DAY_TYPES.map((type) => `${type} integer NOT NULL DEFAULT 0, ${type}_uniq integer NOT NULL DEFAULT 0`).join(',\n      ')},
      PRIMARY KEY (workspace_id, campaign_id, day)
    )`);
  await rebuildRollupDays(knex);
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('email_rollup_days');
}
