import type { Knex } from 'knex';

/**
 * `quota_hit(key_hash, now_ms)`: the whole per-request check in one round trip (server/http/quota.ts).
 * It resolves the key, locks its workspace row, drops buckets older than the day, counts this hit and
 * returns the workspace, its plan's limits and each window's use, then the statement commits and the
 * lock goes. A plpgsql function rather than one SQL statement because each statement inside it takes a
 * fresh snapshot after the lock is granted, so it sees the hits the previous holder committed; one
 * statement would read with the snapshot it took before waiting for the lock and miss them.
 */
export async function up(knex: Knex): Promise<void> {
  // One window: the hits in its last `buckets` buckets, and when enough of the oldest have left it for
  // `least(used, limit) - 1` to remain (the RateLimit header's t, and Retry-After when it is full).
  await knex.raw(`
    CREATE FUNCTION quota_window(p_workspace uuid, p_granularity text, p_current bigint, p_buckets integer, p_bucket_ms integer, p_now_ms bigint, p_limit integer)
    RETURNS TABLE (used bigint, seconds_until_free integer)
    LANGUAGE sql STABLE AS $$
      WITH counted AS (
        SELECT q.bucket, sum(q.hits) OVER (ORDER BY q.bucket) AS through
        FROM quota_buckets q
        WHERE q.workspace_id = p_workspace AND q.granularity = p_granularity AND q.bucket > p_current - p_buckets
      ), total AS (SELECT coalesce(max(through), 0) AS used FROM counted)
      SELECT total.used,
        (SELECT greatest(1, ceil(((c.bucket + p_buckets) * p_bucket_ms - p_now_ms) / 1000.0))::integer
         FROM counted c WHERE total.used - c.through <= least(total.used, p_limit) - 1 ORDER BY c.bucket LIMIT 1)
      FROM total
    $$`);
  await knex.raw(`
    CREATE FUNCTION quota_hit(p_key_hash text, p_now_ms bigint)
    RETURNS TABLE (
      key_id uuid, revoked boolean, workspace_id uuid, workspace_name text, whitelabel_enabled boolean, timezone text,
      per_second integer, per_min integer, per_hour integer, per_day integer,
      second_used bigint, second_free_in integer, minute_used bigint, minute_free_in integer,
      hour_used bigint, hour_free_in integer, day_used bigint, day_free_in integer)
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
      SELECT w.name, w.whitelabel_enabled, w.timezone, p.per_second, p.per_min, p.per_hour, p.per_day
        INTO workspace_name, whitelabel_enabled, timezone, per_second, per_min, per_hour, per_day
        FROM workspaces w JOIN plans p ON p.id = w.plan_id WHERE w.id = ws FOR UPDATE OF w;
      DELETE FROM quota_buckets q
        WHERE q.workspace_id = ws AND ((q.granularity = 's' AND q.bucket <= cur_s - 60) OR (q.granularity = 'm' AND q.bucket <= cur_m - 1440));
      -- By constraint name: a column list would clash with the output columns of the same names.
      INSERT INTO quota_buckets AS q VALUES (ws, 's', cur_s, 1), (ws, 'm', cur_m, 1)
        ON CONFLICT ON CONSTRAINT quota_buckets_pkey DO UPDATE SET hits = q.hits + 1;
      IF per_second IS NOT NULL THEN
        SELECT * INTO second_used, second_free_in FROM quota_window(ws, 's', cur_s, 1, 1000, p_now_ms, per_second);
      END IF;
      SELECT * INTO minute_used, minute_free_in FROM quota_window(ws, 's', cur_s, 60, 1000, p_now_ms, per_min);
      SELECT * INTO hour_used, hour_free_in FROM quota_window(ws, 'm', cur_m, 60, 60000, p_now_ms, per_hour);
      SELECT * INTO day_used, day_free_in FROM quota_window(ws, 'm', cur_m, 1440, 60000, p_now_ms, per_day);
      RETURN NEXT;
    END
    $$`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP FUNCTION IF EXISTS quota_hit(text, bigint)');
  await knex.raw('DROP FUNCTION IF EXISTS quota_window(uuid, text, bigint, integer, integer, bigint, integer)');
}
