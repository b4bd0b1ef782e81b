import type { Knex } from 'knex';

/**
 * `quota_hit` takes a transaction-scoped advisory lock per workspace instead of the workspace row lock,
 * and prunes old buckets only when it opens a new one.
 *
 * The row lock made a workspace's requests wait for any transaction that locks or updates its row (adding
 * contacts holds it for the whole insert), and one process now sends every key it is checking in one call
 * (server/http/quota.ts), so that wait would hold up other workspaces too. Only quota_hit takes this lock,
 * for microseconds. Keys are locked in the order of the lock's number, so that two calls never wait for
 * each other in a cycle (two workspaces may share a number: they are then counted one after the other,
 * which is still exact).
 *
 * Buckets older than the day can only appear when a new bucket opens, so the DELETE runs when the INSERT
 * created a row (at most once a second per busy workspace) instead of on every call.
 *
 * Each step is one statement for all the call's workspaces, not one per workspace: a call carries every
 * key the process is checking, and the statements, not the rows, were its cost. The keys are read before
 * any lock, so a revocation committed before the requests is seen; the workspace, its plan and its buckets
 * are read after the locks and the counting, each statement with a fresh snapshot, so the hits that the
 * previous holder of a lock committed are seen.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE OR REPLACE FUNCTION quota_hit(p_key_hashes text[], p_hits integer[], p_now_ms bigint)
    RETURNS TABLE (
      key_hash text, key_id uuid, revoked boolean, workspace_id uuid, workspace_name text, whitelabel_enabled boolean, timezone text,
      per_second integer, per_min integer, per_hour integer, per_day integer,
      -- The buckets of the last minute and day as ages (0 = the current one), oldest first, and their hits.
      second_ages integer[], second_hits integer[], minute_ages integer[], minute_hits integer[])
    LANGUAGE plpgsql AS $$
    DECLARE
      cur_s bigint := p_now_ms / 1000;
      cur_m bigint := p_now_ms / 60000;
      k_hashes text[]; k_ids uuid[]; k_revoked boolean[]; k_workspaces uuid[];
      -- The workspaces to count, with their hits (a workspace may have several keys in the call).
      ws_ids uuid[]; ws_hits integer[];
      lock_id bigint;
      opened uuid[];
    BEGIN
      -- The commit need not wait for the disk: the locks are held until it, and a crash can lose only the
      -- last moment's hits. Another process sees them at once either way.
      PERFORM set_config('synchronous_commit', 'off', true);
      -- Unknown keys give no row; a revoked key is refused and not counted.
      SELECT array_agg(k.key_hash), array_agg(k.id), array_agg(k.revoked_at IS NOT NULL), array_agg(k.workspace_id)
        INTO k_hashes, k_ids, k_revoked, k_workspaces
        FROM api_keys k WHERE k.key_hash = ANY (p_key_hashes);
      SELECT array_agg(c.ws), array_agg(c.n) INTO ws_ids, ws_hits FROM (
        SELECT k.ws, sum(h.hits)::integer AS n
        FROM unnest(k_hashes, k_workspaces, k_revoked) AS k(key_hash, ws, revoked)
        JOIN unnest(p_key_hashes, p_hits) AS h(key_hash, hits) ON h.key_hash = k.key_hash
        WHERE NOT k.revoked GROUP BY k.ws) c;
      IF ws_ids IS NOT NULL THEN
        FOREACH lock_id IN ARRAY (SELECT array_agg(DISTINCT hashtextextended(w::text, 0) ORDER BY hashtextextended(w::text, 0)) FROM unnest(ws_ids) AS w)
        LOOP
          PERFORM pg_advisory_xact_lock(lock_id);
        END LOOP;
        -- By constraint name: a column list would clash with the output columns of the same names.
        -- xmax = 0 marks a row the statement inserted rather than updated.
        WITH counted AS (
          INSERT INTO quota_buckets AS q
            SELECT c.ws, g.granularity, CASE g.granularity WHEN 's' THEN cur_s ELSE cur_m END, c.n
            FROM unnest(ws_ids, ws_hits) AS c(ws, n) CROSS JOIN (VALUES ('s'), ('m')) AS g(granularity)
            ON CONFLICT ON CONSTRAINT quota_buckets_pkey DO UPDATE SET hits = q.hits + excluded.hits
            RETURNING q.workspace_id AS ws, q.xmax = 0 AS inserted)
        SELECT array_agg(DISTINCT counted.ws) FILTER (WHERE inserted) INTO opened FROM counted;
        IF opened IS NOT NULL THEN
          DELETE FROM quota_buckets q
            WHERE q.workspace_id = ANY (opened) AND ((q.granularity = 's' AND q.bucket <= cur_s - 60) OR (q.granularity = 'm' AND q.bucket <= cur_m - 1440));
        END IF;
      END IF;
      RETURN QUERY
        SELECT k.key_hash, k.id, k.revoked, k.ws, w.name, w.whitelabel_enabled, w.timezone,
               p.per_second, p.per_min, p.per_hour, p.per_day, b.second_ages, b.second_hits, b.minute_ages, b.minute_hits
        FROM unnest(k_hashes, k_ids, k_revoked, k_workspaces) AS k(key_hash, id, revoked, ws)
        LEFT JOIN workspaces w ON w.id = k.ws AND NOT k.revoked
        LEFT JOIN plans p ON p.id = w.plan_id
        LEFT JOIN LATERAL (
          SELECT array_agg((cur_s - q.bucket)::integer ORDER BY q.bucket) FILTER (WHERE q.granularity = 's') AS second_ages,
                 array_agg(q.hits ORDER BY q.bucket) FILTER (WHERE q.granularity = 's') AS second_hits,
                 array_agg((cur_m - q.bucket)::integer ORDER BY q.bucket) FILTER (WHERE q.granularity = 'm') AS minute_ages,
                 array_agg(q.hits ORDER BY q.bucket) FILTER (WHERE q.granularity = 'm') AS minute_hits
          FROM quota_buckets q WHERE q.workspace_id = k.ws) b ON NOT k.revoked;
    END
    $$`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP FUNCTION quota_hit(text[], integer[], bigint)');
  await createRowLocked(knex);
}

/** The row-locked quota_hit of migration 20261124060000, which `down` restores. */
async function createRowLocked(knex: Knex): Promise<void> {
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
