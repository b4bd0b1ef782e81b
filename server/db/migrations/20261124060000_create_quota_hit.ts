import type { Knex } from 'knex';

/**
 * `quota_hit(key_hashes, hits, now_ms)`: the whole per-request check in one round trip (server/http/quota.ts),
 * for a batch of requests of one or more keys. For each key it resolves the key, locks its workspace row
 * (in workspace id order, so that two batches never wait for each other in a cycle), drops buckets older
 * than the day, counts its hits and
 * returns the workspace, its plan's limits and the buckets' hits, then the statement commits and the
 * lock goes. A plpgsql function rather than one SQL statement because each statement inside it takes a
 * fresh snapshot after the lock is granted, so it sees the hits the previous holder committed; one
 * statement would read with the snapshot it took before waiting for the lock and miss them.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE FUNCTION quota_hit(p_key_hashes text[], p_hits integer[], p_now_ms bigint)
    RETURNS TABLE (
      key_hash text, key_id uuid, revoked boolean, workspace_id uuid, workspace_name text, whitelabel_enabled boolean, timezone text,
      per_second integer, per_min integer, per_hour integer, per_day integer,
      -- The buckets of the last minute and day as ages (0 = the current one), oldest first, and their hits.
      second_ages integer[], second_hits integer[], minute_ages integer[], minute_hits integer[])
    LANGUAGE plpgsql AS $$
    DECLARE
      cur_s bigint := p_now_ms / 1000;
      cur_m bigint := p_now_ms / 60000;
      ws uuid;
      n integer;
    BEGIN
      -- The commit need not wait for the disk: the workspace locks are held until it, and a crash can lose
      -- only the last moment's hits. Another process sees them at once either way.
      PERFORM set_config('synchronous_commit', 'off', true);
      -- Unknown keys give no row.
      FOR key_hash, key_id, revoked, ws, n IN
        SELECT k.key_hash, k.id, k.revoked_at IS NOT NULL, k.workspace_id, h.hits
        FROM unnest(p_key_hashes, p_hits) AS h(key_hash, hits) JOIN api_keys k ON k.key_hash = h.key_hash
        ORDER BY k.workspace_id
      LOOP
        -- A revoked key is refused and not counted.
        IF revoked THEN RETURN NEXT; CONTINUE; END IF;
        workspace_id := ws;
        SELECT w.name, w.whitelabel_enabled, w.timezone, p.per_second, p.per_min, p.per_hour, p.per_day
          INTO workspace_name, whitelabel_enabled, timezone, per_second, per_min, per_hour, per_day
          FROM workspaces w JOIN plans p ON p.id = w.plan_id WHERE w.id = ws FOR UPDATE OF w;
        DELETE FROM quota_buckets q
          WHERE q.workspace_id = ws AND ((q.granularity = 's' AND q.bucket <= cur_s - 60) OR (q.granularity = 'm' AND q.bucket <= cur_m - 1440));
        -- By constraint name: a column list would clash with the output columns of the same names.
        INSERT INTO quota_buckets AS q VALUES (ws, 's', cur_s, n), (ws, 'm', cur_m, n)
          ON CONFLICT ON CONSTRAINT quota_buckets_pkey DO UPDATE SET hits = q.hits + n;
        SELECT array_agg(cur_s - q.bucket ORDER BY q.bucket) FILTER (WHERE q.granularity = 's'),
               array_agg(q.hits ORDER BY q.bucket) FILTER (WHERE q.granularity = 's'),
               array_agg(cur_m - q.bucket ORDER BY q.bucket) FILTER (WHERE q.granularity = 'm'),
               array_agg(q.hits ORDER BY q.bucket) FILTER (WHERE q.granularity = 'm')
          INTO second_ages, second_hits, minute_ages, minute_hits
          FROM quota_buckets q WHERE q.workspace_id = ws;
        RETURN NEXT;
      END LOOP;
    END
    $$`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP FUNCTION IF EXISTS quota_hit(text[], integer[], bigint)');
}
