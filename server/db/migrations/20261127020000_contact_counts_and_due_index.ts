import type { Knex } from 'knex';

/**
 * Costs that stay flat as campaigns grow:
 *
 * - `contact_counts` (contact module): contacts per campaign and status, so the plan's contact cap, the
 *   campaign list's contact counts, the derived `completed` status and analytics read a few counter rows
 *   instead of counting contacts. Statement-level triggers on `contacts` keep them in the transaction of
 *   every insert, delete, move (campaign_id) and status change, whichever path makes it (contact add, job
 *   import, a list's send-to-campaign, moves, replies, bounces, unsubscribes, cascades): one grouped upsert
 *   per statement, its rows in (campaign_id, status) order so concurrent writers lock them in one order.
 *   A delete only decrements: a cascade from a deleted campaign may find its counter rows gone already.
 * - The sending worker no longer looks for contacts without a progress row on every run: rows are made when
 *   contacts join an active campaign or the campaign goes active. This migration makes the rows the old
 *   worker would have made on its next run (active contacts of active campaigns without one, due now).
 * - Due work is found per active campaign through (campaign_id, due_at) of waiting rows; held rows have an
 *   index of their own for the run's release of those whose contact changed.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('contact_counts', (t) => {
    t.uuid('campaign_id').notNullable().references('campaigns.id').onDelete('CASCADE');
    t.text('status').notNullable();
    t.uuid('workspace_id').notNullable().references('workspaces.id').onDelete('CASCADE');
    t.integer('n').notNullable();
    t.primary(['campaign_id', 'status']);
    t.index(['workspace_id']);
  });
  await knex.raw(`
    CREATE FUNCTION contact_counts_apply() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF TG_OP = 'DELETE' THEN
        UPDATE contact_counts k SET n = k.n - d.n
          FROM (SELECT campaign_id, status, count(*)::int AS n FROM old_rows GROUP BY 1, 2) d
         WHERE k.campaign_id = d.campaign_id AND k.status = d.status;
      ELSIF TG_OP = 'INSERT' THEN
        INSERT INTO contact_counts AS k (campaign_id, status, workspace_id, n)
        SELECT campaign_id, status, workspace_id, count(*)::int FROM new_rows GROUP BY 1, 2, 3 ORDER BY 1, 2
        ON CONFLICT (campaign_id, status) DO UPDATE SET n = k.n + excluded.n;
      ELSE
        INSERT INTO contact_counts AS k (campaign_id, status, workspace_id, n)
        SELECT campaign_id, status, workspace_id, sum(d)::int FROM (
          SELECT campaign_id, status, workspace_id, 1 AS d FROM new_rows
          UNION ALL
          SELECT campaign_id, status, workspace_id, -1 AS d FROM old_rows) x
        GROUP BY 1, 2, 3 HAVING sum(d) <> 0 ORDER BY 1, 2
        ON CONFLICT (campaign_id, status) DO UPDATE SET n = k.n + excluded.n;
      END IF;
      RETURN NULL;
    END $$`);
  await knex.raw(
    'CREATE TRIGGER contact_counts_insert AFTER INSERT ON contacts REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION contact_counts_apply()',
  );
  await knex.raw(
    'CREATE TRIGGER contact_counts_update AFTER UPDATE ON contacts REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION contact_counts_apply()',
  );
  await knex.raw(
    'CREATE TRIGGER contact_counts_delete AFTER DELETE ON contacts REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION contact_counts_apply()',
  );
  // The triggers' lock on contacts holds writers off until this commits, so the backfill is exact.
  await knex.raw(
    'INSERT INTO contact_counts (campaign_id, status, workspace_id, n) SELECT campaign_id, status, workspace_id, count(*)::int FROM contacts GROUP BY 1, 2, 3',
  );

  await knex.raw(`
    INSERT INTO sending_progress (contact_id, workspace_id, campaign_id, step_number, state, due_at, updated_at)
    SELECT c.id, c.workspace_id, c.campaign_id, 1, 'waiting', now(), now()
      FROM contacts c JOIN campaigns k ON k.id = c.campaign_id AND k.status = 'active'
     WHERE c.status = 'active' AND NOT EXISTS (SELECT 1 FROM sending_progress p WHERE p.contact_id = c.id)`);
  await knex.raw(
    "CREATE INDEX sending_progress_campaign_due ON sending_progress (campaign_id, due_at, contact_id) WHERE state = 'waiting'",
  );
  await knex.raw("CREATE INDEX sending_progress_held ON sending_progress (contact_id) WHERE state = 'held'");
  await knex.raw("CREATE INDEX campaigns_active ON campaigns (id) WHERE status = 'active'");
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX IF EXISTS campaigns_active');
  await knex.raw('DROP INDEX IF EXISTS sending_progress_held');
  await knex.raw('DROP INDEX IF EXISTS sending_progress_campaign_due');
  await knex.raw('DROP TRIGGER IF EXISTS contact_counts_insert ON contacts');
  await knex.raw('DROP TRIGGER IF EXISTS contact_counts_update ON contacts');
  await knex.raw('DROP TRIGGER IF EXISTS contact_counts_delete ON contacts');
  await knex.raw('DROP FUNCTION IF EXISTS contact_counts_apply()');
  await knex.schema.dropTableIfExists('contact_counts');
}
