import type { Knex } from 'knex';

/**
 * `quota_hit(key_hash, now_ms, hits)`: the whole per-request check in one round trip (server/http/quota.ts),
 * for one request or a batch of requests with the same key. It resolves the key, locks its workspace row,
 * drops buckets older than the day, counts the hits and
 * returns the workspace, its plan's limits and the buckets' hits, then the statement commits and the
 * lock goes. A plpgsql function rather than one SQL statement because each statement inside it takes a
 * fresh snapshot after the lock is granted, so it sees the hits the previous holder committed; one
 * statement would read with the snapshot it took before waiting for the lock and miss them.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE FUNCTION quota_hit(p_key_hash text, p_now_ms bigint, p_hits integer)
    RETURNS TABLE (
      key_id uuid, revoked boolean, workspace_id uuid, workspace_name text, whitelabel_enabled boolean, timezone text,
      per_second integer, per_min integer, per_hour integer, per_day integer,
      -- The buckets of the last minute and day as ages (0 = the current one), oldest first, and their hits.
      second_ages integer[], second_hits integer[], minute_ages integer[], minute_hits integer[])
    LANGUAGE plpgsql AS $$
    DECLARE
      cur_s bigint := p_now_ms / 1000;
      cur_m bigint := p_now_ms / 60000;
      ws uuid;
    BEGIN
      SELECT k.id, k.revoked_at IS NOT NULL, k.workspace_id INTO key_id, revoked, ws FROM api_keys k WHERE k.key_hash = p_key_hash;
      IF NOT FOUND THEN RETURN; END IF;
      -- A revoked key is refused and not counted.
      IF revoked THEN RETURN NEXT; RETURN; END IF;
      workspace_id := ws;
      -- The commit need not wait for the disk: the workspace lock is held until it, and a crash can lose
      -- only the last moment's hits. Another process sees them at once either way.
      PERFORM set_config('synchronous_commit', 'off', true);
      SELECT w.name, w.whitelabel_enabled, w.timezone, p.per_second, p.per_min, p.per_hour, p.per_day
        INTO workspace_name, whitelabel_enabled, timezone, per_second, per_min, per_hour, per_day
        FROM workspaces w JOIN plans p ON p.id = w.plan_id WHERE w.id = ws FOR UPDATE OF w;
      DELETE FROM quota_buckets q
        WHERE q.workspace_id = ws AND ((q.granularity = 's' AND q.bucket <= cur_s - 60) OR (q.granularity = 'm' AND q.bucket <= cur_m - 1440));
      -- By constraint name: a column list would clash with the output columns of the same names.
      INSERT INTO quota_buckets AS q VALUES (ws, 's', cur_s, p_hits), (ws, 'm', cur_m, p_hits)
        ON CONFLICT ON CONSTRAINT quota_buckets_pkey DO UPDATE SET hits = q.hits + p_hits;
      SELECT array_agg(cur_s - q.bucket ORDER BY q.bucket) FILTER (WHERE q.granularity = 's'),
             array_agg(q.hits ORDER BY q.bucket) FILTER (WHERE q.granularity = 's'),
             array_agg(cur_m - q.bucket ORDER BY q.bucket) FILTER (WHERE q.granularity = 'm'),
             array_agg(q.hits ORDER BY q.bucket) FILTER (WHERE q.granularity = 'm')
        INTO second_ages, second_hits, minute_ages, minute_hits
        FROM quota_buckets q WHERE q.workspace_id = ws;
      RETURN NEXT;
    END
    $$`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP FUNCTION IF EXISTS quota_hit(text, bigint, integer)');
}
