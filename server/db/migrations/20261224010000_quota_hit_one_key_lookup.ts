import type { Knex } from 'knex';

/**
 * `quota_hit` reads each key's name and scopes in its first look-up of the key, not in a second join of
 * `api_keys` when it answers, and updates `last_used_at` only when some key's last use is over a minute
 * old: the embedded database runs the function in the server's own process, where each statement and
 * join of it is paid for on every call. Same arguments, same columns, same answers.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE OR REPLACE FUNCTION quota_hit(p_key_hashes text[], p_hits integer[], p_now_ms bigint)
    RETURNS TABLE (
      key_hash text, key_id uuid, revoked boolean, expired boolean, key_name text, scopes text[],
      workspace_id uuid, workspace_name text, whitelabel_enabled boolean, timezone text,
      per_second integer, per_min integer, per_hour integer, per_day integer,
      -- The buckets of the last minute and day as ages (0 = the current one), oldest first, and their hits.
      second_ages integer[], second_hits integer[], minute_ages integer[], minute_hits integer[])
    LANGUAGE plpgsql AS $$
    DECLARE
      cur_s bigint := p_now_ms / 1000;
      cur_m bigint := p_now_ms / 60000;
      now_ts timestamptz := to_timestamp(p_now_ms / 1000.0);
      k_hashes text[]; k_ids uuid[]; k_revoked boolean[]; k_expired boolean[]; k_workspaces uuid[];
      k_names text[]; k_scopes text[];
      -- Whether some live key's last use is over a minute old.
      stale boolean;
      -- The workspaces to count, with their hits (a workspace may have several keys in the call).
      ws_ids uuid[]; ws_hits integer[];
      lock_id bigint;
      opened uuid[];
    BEGIN
      -- The commit need not wait for the disk: the locks are held until it, and a crash can lose only the
      -- last moment's hits. Another process sees them at once either way.
      PERFORM set_config('synchronous_commit', 'off', true);
      -- Unknown keys give no row; a revoked or expired key is refused and not counted. A hash is either a
      -- key's current secret or its previous one (during a rotation's overlap).
      SELECT array_agg(h.hash), array_agg(k.id), array_agg(k.revoked_at IS NOT NULL),
             array_agg(CASE WHEN h.hash = k.key_hash THEN k.expires_at <= now_ts
                            ELSE k.previous_expires_at <= now_ts OR k.expires_at <= now_ts END IS TRUE),
             array_agg(k.workspace_id), array_agg(k.name),
             -- Scopes travel as one string each (none has a space): an array of arrays must be rectangular.
             array_agg(array_to_string(k.scopes, ' ')),
             bool_or(k.revoked_at IS NULL AND (k.last_used_at IS NULL OR k.last_used_at <= now_ts - interval '1 minute'))
        INTO k_hashes, k_ids, k_revoked, k_expired, k_workspaces, k_names, k_scopes, stale
        FROM api_keys k
        CROSS JOIN LATERAL (VALUES (k.key_hash), (k.previous_key_hash)) AS h(hash)
        WHERE (k.key_hash = ANY (p_key_hashes) OR k.previous_key_hash = ANY (p_key_hashes)) AND h.hash = ANY (p_key_hashes);
      SELECT array_agg(c.ws), array_agg(c.n) INTO ws_ids, ws_hits FROM (
        SELECT k.ws, sum(h.hits)::integer AS n
        FROM unnest(k_hashes, k_workspaces, k_revoked, k_expired) AS k(key_hash, ws, revoked, expired)
        JOIN unnest(p_key_hashes, p_hits) AS h(key_hash, hits) ON h.key_hash = k.key_hash
        WHERE NOT k.revoked AND NOT k.expired GROUP BY k.ws) c;
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
        -- Last use to the minute: a busy key's row is written once a minute, not on every request, and the
        -- statement runs only when some key's last use is older than that.
        IF stale THEN
          UPDATE api_keys a SET last_used_at = now_ts
            FROM unnest(k_ids, k_revoked, k_expired) AS k(id, revoked, expired)
            WHERE a.id = k.id AND NOT k.revoked AND NOT k.expired
              AND (a.last_used_at IS NULL OR a.last_used_at <= now_ts - interval '1 minute');
        END IF;
      END IF;
      RETURN QUERY
        SELECT k.key_hash, k.id, k.revoked, k.expired,
               CASE WHEN NOT k.revoked AND NOT k.expired THEN k.name END,
               CASE WHEN NOT k.revoked AND NOT k.expired THEN string_to_array(k.scopes, ' ') END, k.ws, w.name, w.whitelabel_enabled, w.timezone,
               p.per_second, p.per_min, p.per_hour, p.per_day, b.second_ages, b.second_hits, b.minute_ages, b.minute_hits
        FROM unnest(k_hashes, k_ids, k_revoked, k_expired, k_workspaces, k_names, k_scopes) AS k(key_hash, id, revoked, expired, ws, name, scopes)
        LEFT JOIN workspaces w ON w.id = k.ws AND NOT k.revoked AND NOT k.expired
        LEFT JOIN plans p ON p.id = w.plan_id
        LEFT JOIN LATERAL (
          SELECT array_agg((cur_s - q.bucket)::integer ORDER BY q.bucket) FILTER (WHERE q.granularity = 's') AS second_ages,
                 array_agg(q.hits ORDER BY q.bucket) FILTER (WHERE q.granularity = 's') AS second_hits,
                 array_agg((cur_m - q.bucket)::integer ORDER BY q.bucket) FILTER (WHERE q.granularity = 'm') AS minute_ages,
                 array_agg(q.hits ORDER BY q.bucket) FILTER (WHERE q.granularity = 'm') AS minute_hits
          FROM quota_buckets q WHERE q.workspace_id = k.ws) b ON NOT k.revoked AND NOT k.expired;
    END
    $$`);
}

/** quota_hit as the migration before this one left it (its own copy: a migration never changes after it ran). */
export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE OR REPLACE FUNCTION quota_hit(p_key_hashes text[], p_hits integer[], p_now_ms bigint)
    RETURNS TABLE (
      key_hash text, key_id uuid, revoked boolean, expired boolean, key_name text, scopes text[],
      workspace_id uuid, workspace_name text, whitelabel_enabled boolean, timezone text,
      per_second integer, per_min integer, per_hour integer, per_day integer,
      -- The buckets of the last minute and day as ages (0 = the current one), oldest first, and their hits.
      second_ages integer[], second_hits integer[], minute_ages integer[], minute_hits integer[])
    LANGUAGE plpgsql AS $$
    DECLARE
      cur_s bigint := p_now_ms / 1000;
      cur_m bigint := p_now_ms / 60000;
      now_ts timestamptz := to_timestamp(p_now_ms / 1000.0);
      k_hashes text[]; k_ids uuid[]; k_revoked boolean[]; k_expired boolean[]; k_workspaces uuid[];
      -- The workspaces to count, with their hits (a workspace may have several keys in the call).
      ws_ids uuid[]; ws_hits integer[];
      lock_id bigint;
      opened uuid[];
    BEGIN
      -- The commit need not wait for the disk: the locks are held until it, and a crash can lose only the
      -- last moment's hits. Another process sees them at once either way.
      PERFORM set_config('synchronous_commit', 'off', true);
      -- Unknown keys give no row; a revoked or expired key is refused and not counted. A hash is either a
      -- key's current secret or its previous one (during a rotation's overlap).
      SELECT array_agg(h.hash), array_agg(k.id), array_agg(k.revoked_at IS NOT NULL),
             array_agg(CASE WHEN h.hash = k.key_hash THEN k.expires_at <= now_ts
                            ELSE k.previous_expires_at <= now_ts OR k.expires_at <= now_ts END IS TRUE),
             array_agg(k.workspace_id)
        INTO k_hashes, k_ids, k_revoked, k_expired, k_workspaces
        FROM api_keys k
        CROSS JOIN LATERAL (VALUES (k.key_hash), (k.previous_key_hash)) AS h(hash)
        WHERE (k.key_hash = ANY (p_key_hashes) OR k.previous_key_hash = ANY (p_key_hashes)) AND h.hash = ANY (p_key_hashes);
      SELECT array_agg(c.ws), array_agg(c.n) INTO ws_ids, ws_hits FROM (
        SELECT k.ws, sum(h.hits)::integer AS n
        FROM unnest(k_hashes, k_workspaces, k_revoked, k_expired) AS k(key_hash, ws, revoked, expired)
        JOIN unnest(p_key_hashes, p_hits) AS h(key_hash, hits) ON h.key_hash = k.key_hash
        WHERE NOT k.revoked AND NOT k.expired GROUP BY k.ws) c;
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
        -- Last use to the minute: a busy key's row is written once a minute, not on every request.
        UPDATE api_keys a SET last_used_at = now_ts
          FROM unnest(k_ids, k_revoked, k_expired) AS k(id, revoked, expired)
          WHERE a.id = k.id AND NOT k.revoked AND NOT k.expired
            AND (a.last_used_at IS NULL OR a.last_used_at <= now_ts - interval '1 minute');
      END IF;
      RETURN QUERY
        SELECT k.key_hash, k.id, k.revoked, k.expired, a.name, a.scopes, k.ws, w.name, w.whitelabel_enabled, w.timezone,
               p.per_second, p.per_min, p.per_hour, p.per_day, b.second_ages, b.second_hits, b.minute_ages, b.minute_hits
        FROM unnest(k_hashes, k_ids, k_revoked, k_expired, k_workspaces) AS k(key_hash, id, revoked, expired, ws)
        LEFT JOIN api_keys a ON a.id = k.id AND NOT k.revoked AND NOT k.expired
        LEFT JOIN workspaces w ON w.id = k.ws AND NOT k.revoked AND NOT k.expired
        LEFT JOIN plans p ON p.id = w.plan_id
        LEFT JOIN LATERAL (
          SELECT array_agg((cur_s - q.bucket)::integer ORDER BY q.bucket) FILTER (WHERE q.granularity = 's') AS second_ages,
                 array_agg(q.hits ORDER BY q.bucket) FILTER (WHERE q.granularity = 's') AS second_hits,
                 array_agg((cur_m - q.bucket)::integer ORDER BY q.bucket) FILTER (WHERE q.granularity = 'm') AS minute_ages,
                 array_agg(q.hits ORDER BY q.bucket) FILTER (WHERE q.granularity = 'm') AS minute_hits
          FROM quota_buckets q WHERE q.workspace_id = k.ws) b ON NOT k.revoked AND NOT k.expired;
    END
    $$`);
}
