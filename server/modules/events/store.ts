/**
 * email_events: the mail events analytics count, written by `record`, kept for audits in partitions by
 * month (partitions.ts); analytics read the rollups `record` keeps beside them (rollups.ts), whose cost does
 * not grow with the events stored. Every query is scoped by workspace;
 * day bounds are the workspace's local midnights (`'<day>'::timestamp AT TIME ZONE tz`).
 */
import { jsonColumn, type Executor, type RawResult } from '../../db';

import { createMonthPartition, PARTITION_NAME, partitionName } from './partitions';
import { DAY_TYPES, ROLLUP_LOCK } from './rollups';

/** The advisory lock (one key) that one worker at a time holds while it changes email_events' partitions. */
const PARTITION_LOCK = 2026112803;

/** The types analytics count: the columns of email_rollup_days. */
export const EVENT_TYPES = DAY_TYPES;
export type CountedType = (typeof EVENT_TYPES)[number];
export type EventCounts = Record<CountedType, number>;

export const zeroCounts = (): EventCounts => ({
  sent: 0,
  opened: 0,
  clicked: 0,
  replied: 0,
  bounced: 0,
  unsubscribed: 0,
});

export type RollupScope = 'workspace' | 'campaign' | 'step' | 'variant' | 'account';

export interface RangeQuery {
  workspaceId: string;
  /** Each scope with the ids asked for. */
  scopes: [RollupScope, string[]][];
  /** Both when left out. */
  warmup?: boolean;
  types: readonly string[];
  /** Calendar days of the rollup zone, both included. */
  days: { startDate: string; endDate: string };
  byDay?: boolean;
}

export interface RangeRow {
  scope: RollupScope;
  scope_id: string;
  is_warmup: boolean;
  type: string;
  /** With `byDay`. */
  day?: string;
  total: number;
  /** Contacts whose first event of the type in the scope falls in the range. */
  uniq: number;
}

/** One day of a campaign (email_rollup_days): events per type, and `<type>_uniq` first events. */
export type DayRow = { day: string } & Record<CountedType | `${CountedType}_uniq`, number>;

export interface EmailEventRow {
  id: string;
  workspace_id: string;
  campaign_id: string | null;
  step_id: string | null;
  variant_id: string | null;
  account_id: string | null;
  contact_id: string | null;
  message_id: string | null;
  type: string;
  is_warmup: boolean;
  flagged: boolean;
  occurred_at: Date;
}

export interface FeedRow {
  id: string;
  workspace_id: string;
  type: string;
  campaign_id: string | null;
  occurred_at: Date;
  recorded_at: Date;
  payload: string;
}

export class EventStore {
  /** Stores the event holding its workspace's rollup lock shared until commit: no rebuild runs meanwhile. */
  async insertEmailEvent(db: Executor, row: EmailEventRow): Promise<void> {
    await db.raw('SELECT pg_advisory_xact_lock_shared(?, hashtext(?))', [ROLLUP_LOCK, row.workspace_id]);
    await db('email_events').insert(row);
  }

  /** The feed row; its position is set at commit (migration 20261126060100). */
  async insertFeedEvent(db: Executor, row: FeedRow): Promise<void> {
    await db('events').insert(row);
  }

  /**
   * Events after `after`, oldest first, and the workspace's last committed position, read in one
   * statement (one snapshot): every position up to that head has committed, so a page that reaches it
   * may move the cursor there.
   */
  async feedPage(
    db: Executor,
    q: { workspaceId: string; after: number; types?: string[]; campaignId?: string; limit: number },
  ): Promise<{ head: number; rows: { position: number; payload: unknown }[] }> {
    const filters: string[] = [];
    const bindings: (string | number)[] = [q.workspaceId, q.workspaceId, q.after];
    if (q.types?.length) {
      filters.push(`AND type IN (${q.types.map(() => '?').join(', ')})`);
      bindings.push(...q.types);
    }
    if (q.campaignId) {
      filters.push('AND campaign_id = ?');
      bindings.push(q.campaignId);
    }
    bindings.push(q.limit);
    const result = await db.raw<
      RawResult<{ head: string | number; position: string | number | null; payload: unknown }>
    >(
      `SELECT h.head, e.position, e.payload
         FROM (SELECT coalesce((SELECT last_position FROM event_streams WHERE workspace_id = ?), 0) AS head) h
         LEFT JOIN LATERAL (
           SELECT position, payload FROM events
            WHERE workspace_id = ? AND position > ? ${filters.join(' ')}
            ORDER BY position LIMIT ?
         ) e ON true`,
      bindings,
    );
    const rows = result.rows;
    return {
      head: Number(rows[0]?.head ?? 0),
      rows: rows
        .filter((r) => r.position !== null)
        .map((r) => ({ position: Number(r.position), payload: jsonColumn(r.payload) })),
    };
  }

  /** Deletes up to `limit` feed events recorded before `before`; returns how many. */
  async pruneFeed(db: Executor, before: Date, limit: number): Promise<number> {
    const result = await db.raw<RawResult>(
      'DELETE FROM events WHERE id IN (SELECT id FROM events WHERE recorded_at < ? LIMIT ?)',
      [before, limit],
    );
    return result.rowCount ?? 0;
  }

  /** The months email_events has a partition of (`2026-11`), and those of the events its default partition holds. */
  async eventPartitions(db: Executor): Promise<{ months: string[]; inDefault: string[] }> {
    const names = await db.raw<RawResult<{ name: string }>>(
      "SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = 'email_events'::regclass",
    );
    const inDefault = await db.raw<RawResult<{ month: string }>>(
      "SELECT DISTINCT to_char(occurred_at AT TIME ZONE 'UTC', 'YYYY-MM') AS month FROM email_events_default",
    );
    return {
      months: names.rows.flatMap((r) => {
        const m = PARTITION_NAME.exec(r.name);
        return m ? [`${m[1]}-${m[2]}`] : [];
      }),
      inDefault: inDefault.rows.map((r) => r.month),
    };
  }

  /**
   * Takes the partitions' lock for the transaction, without waiting: false when another worker holds it.
   * Waits for table locks at most 5 s, so that inserts do not queue for long behind a partition change that
   * waits for a long transaction; the change is tried again at the next run.
   */
  async lockPartitions(trx: Executor): Promise<boolean> {
    await trx.raw("SET LOCAL lock_timeout = '5s'");
    const result = await trx.raw<RawResult<{ locked: boolean }>>('SELECT pg_try_advisory_xact_lock(?) AS locked', [
      PARTITION_LOCK,
    ]);
    return result.rows[0].locked;
  }

  /** Creates the partition of a month, moving into it that month's events from the default partition. */
  async createEventPartition(trx: Executor, month: string): Promise<void> {
    await createMonthPartition(trx, month);
  }

  /** Drops a month's partition with its events. */
  async dropEventPartition(trx: Executor, month: string): Promise<void> {
    await trx.raw(`DROP TABLE ${partitionName(month)}`);
  }

  /** Deletes the default partition's events before `before`; returns how many. */
  async pruneDefaultPartition(trx: Executor, before: Date): Promise<number> {
    return (await trx.raw<RawResult>('DELETE FROM email_events_default WHERE occurred_at < ?', [before])).rowCount ?? 0;
  }

  /**
   * Adds one stored event to the rollups (rollups.ts says what they hold), in the
   * transaction that stores the event, in one statement: the contact's first events (per scope), the
   * quarter-hour rows with a unique for each first, and the all-time rows. Then an event earlier than a
   * stored first moves that unique to its own quarter-hour (a reply dated before a tracked open, say).
   */
  async addToRollups(db: Executor, e: EmailEventRow): Promise<void> {
    const scopes = (
      [
        ['workspace', e.workspace_id],
        ['campaign', e.campaign_id],
        ['step', e.step_id],
        ['variant', e.variant_id],
        ['account', e.account_id],
      ] as const
    ).filter((s): s is readonly [RollupScope, string] => s[1] !== null);
    const candidates = e.contact_id && !e.flagged ? scopes.filter(([scope]) => scope !== 'account') : [];
    // The campaign day row's column of this type (a name from DAY_TYPES), when the summary counts it.
    const dayColumn =
      e.campaign_id && !e.is_warmup && (DAY_TYPES as readonly string[]).includes(e.type) ? e.type : undefined;
    if (dayColumn) {
      // The campaign's day row before any other rollup row: every event of the campaign and day takes it
      // first, so two of them wait for each other there, not holding type rows the other one needs.
      await db.raw(
        `INSERT INTO email_rollup_days (workspace_id, campaign_id, day, ${dayColumn})
         SELECT ?, ?, (?::timestamptz AT TIME ZONE coalesce((SELECT timezone FROM email_rollup_zones WHERE workspace_id = ?), 'UTC'))::date, 1
         ON CONFLICT (workspace_id, campaign_id, day) DO UPDATE SET ${dayColumn} = email_rollup_days.${dayColumn} + 1`,
        [e.workspace_id, e.campaign_id, e.occurred_at, e.workspace_id],
      );
    }
    const values = (list: readonly (readonly [RollupScope, string])[]) =>
      list.map(() => '(?::text, ?::uuid)').join(', ');
    const firsts = candidates.length
      ? `INSERT INTO email_event_firsts (workspace_id, scope, scope_id, is_warmup, type, contact_id, first_at)
         SELECT ?, s.scope, s.scope_id, ?, ?, ?, ? FROM (VALUES ${values(candidates)}) s(scope, scope_id) ORDER BY 2, 3
         ON CONFLICT DO NOTHING RETURNING scope, scope_id`
      : 'SELECT NULL::text AS scope, NULL::uuid AS scope_id WHERE false';
    const result = await db.raw<RawResult<{ scope: RollupScope | null; timezone: string }>>(
      // Rows in key order, so that concurrent events lock them in the same order. A workspace's first
      // event cuts its days in UTC until an analytics read sets its zone (EventService.inZone).
      `WITH z AS (SELECT coalesce((SELECT timezone FROM email_rollup_zones WHERE workspace_id = ?), 'UTC') AS timezone),
       zi AS (INSERT INTO email_rollup_zones (workspace_id, timezone) VALUES (?, 'UTC') ON CONFLICT DO NOTHING),
       d AS (SELECT (?::timestamptz AT TIME ZONE z.timezone)::date AS day FROM z),
       f AS (${firsts}),
       s AS (SELECT v.scope, v.scope_id, (f.scope IS NOT NULL)::int AS uniq FROM (VALUES ${values(scopes)}) v(scope, scope_id) LEFT JOIN f USING (scope, scope_id)),
       r AS (
         INSERT INTO email_rollups (workspace_id, scope, scope_id, is_warmup, day, type, total, uniq)
         SELECT ?, scope, scope_id, ?, d.day, ?, 1, uniq FROM s, d ORDER BY 2, 3
         ON CONFLICT (workspace_id, scope, scope_id, is_warmup, day, type)
         DO UPDATE SET total = email_rollups.total + excluded.total, uniq = email_rollups.uniq + excluded.uniq
       ),
       t AS (
         INSERT INTO email_rollup_totals (workspace_id, scope, scope_id, is_warmup, type, total, uniq)
         SELECT ?, scope, scope_id, ?, ?, 1, uniq FROM s WHERE scope IN ('workspace', 'campaign') ORDER BY 2, 3
         ON CONFLICT (workspace_id, scope, scope_id, is_warmup, type)
         DO UPDATE SET total = email_rollup_totals.total + excluded.total, uniq = email_rollup_totals.uniq + excluded.uniq
       )${
         dayColumn
           ? `,
       du AS (
         UPDATE email_rollup_days SET ${dayColumn}_uniq = ${dayColumn}_uniq + 1 FROM d
          WHERE workspace_id = ? AND campaign_id = ? AND email_rollup_days.day = d.day AND EXISTS (SELECT 1 FROM f WHERE f.scope = 'campaign')
       )`
           : ''
       }
       SELECT f.scope, z.timezone FROM z LEFT JOIN f ON true`,
      [
        e.workspace_id,
        e.workspace_id,
        e.occurred_at,
        ...(candidates.length
          ? [e.workspace_id, e.is_warmup, e.type, e.contact_id, e.occurred_at, ...candidates.flat()]
          : []),
        ...scopes.flat(),
        e.workspace_id,
        e.is_warmup,
        e.type,
        e.workspace_id,
        e.is_warmup,
        e.type,
        ...(dayColumn ? [e.workspace_id, e.campaign_id] : []),
      ],
    );
    const rows = result.rows;
    const zone = rows[0].timezone;
    const firstEver = new Set(rows.map((r) => r.scope));
    const known = candidates.filter(([scope]) => !firstEver.has(scope));
    if (known.length === 0) return;
    // A new statement, so FOR UPDATE reads the latest committed first (one a concurrent event just stored
    // included), and holds it until this transaction ends.
    const key = { workspace_id: e.workspace_id, is_warmup: e.is_warmup, type: e.type, contact_id: e.contact_id };
    const later: { scope: RollupScope; scope_id: string; old_day: string; new_day: string }[] = await db(
      'email_event_firsts',
    )
      .where(key)
      .whereIn(
        ['scope', 'scope_id'],
        known.map(([scope, id]) => [scope, id]),
      )
      .andWhere('first_at', '>', e.occurred_at)
      .orderBy(['scope', 'scope_id'])
      .forUpdate()
      .select(
        'scope',
        'scope_id',
        db.raw("to_char(first_at AT TIME ZONE ?, 'YYYY-MM-DD') AS old_day", [zone]),
        db.raw("to_char(?::timestamptz AT TIME ZONE ?, 'YYYY-MM-DD') AS new_day", [e.occurred_at, zone]),
      );
    if (later.length === 0) return;
    await db('email_event_firsts')
      .where(key)
      .whereIn(
        ['scope', 'scope_id'],
        later.map((r) => [r.scope, r.scope_id]),
      )
      .update({ first_at: e.occurred_at });
    const moves = later.flatMap((r) =>
      r.old_day === r.new_day
        ? []
        : [
            { scope: r.scope, scope_id: r.scope_id, day: r.old_day, uniq: -1 },
            { scope: r.scope, scope_id: r.scope_id, day: r.new_day, uniq: 1 },
          ],
    );
    if (moves.length === 0) return;
    await db('email_rollups')
      .insert(
        moves.map((m) => ({ workspace_id: e.workspace_id, is_warmup: e.is_warmup, type: e.type, total: 0, ...m })),
      )
      .onConflict(['workspace_id', 'scope', 'scope_id', 'is_warmup', 'day', 'type'])
      .merge({ uniq: db.raw('email_rollups.uniq + excluded.uniq') });
    const dayMoves = dayColumn ? moves.filter((m) => m.scope === 'campaign') : [];
    if (dayColumn && dayMoves.length > 0) {
      const uniqColumn = `${dayColumn}_uniq`;
      await db('email_rollup_days')
        .insert(
          dayMoves.map((m) => ({
            workspace_id: e.workspace_id,
            campaign_id: m.scope_id,
            day: m.day,
            [uniqColumn]: m.uniq,
          })),
        )
        .onConflict(['workspace_id', 'campaign_id', 'day'])
        .merge({ [uniqColumn]: db.raw('?? + excluded.??', [`email_rollup_days.${uniqColumn}`, uniqColumn]) });
    }
  }

  /** Which of these contacts had a first event of these types in the campaign (machine events have none). */
  async contactFirsts(
    db: Executor,
    q: { workspaceId: string; campaignId: string; types: string[]; contactIds: string[] },
  ): Promise<{ contact_id: string; type: string }[]> {
    if (q.contactIds.length === 0) return [];
    return db('email_event_firsts')
      .where({ workspace_id: q.workspaceId, scope: 'campaign', scope_id: q.campaignId, is_warmup: false })
      .whereIn('type', q.types)
      .whereIn('contact_id', q.contactIds)
      .select('contact_id', 'type');
  }

  /** The zone a workspace's rollup days are cut in (none before its first event or rebuild). */
  async rollupZone(db: Executor, workspaceId: string): Promise<string | undefined> {
    return (
      await db('email_rollup_zones')
        .where({ workspace_id: workspaceId })
        .first<{ timezone: string } | undefined>('timezone')
    )?.timezone;
  }

  /** All-time events and unique contacts per type of one workspace or campaign. */
  async allTimeCounts(
    db: Executor,
    q: { workspaceId: string; scope: 'workspace' | 'campaign'; scopeId: string; warmup: boolean },
  ): Promise<{ type: string; total: number; uniq: number }[]> {
    return db('email_rollup_totals')
      .where({ workspace_id: q.workspaceId, scope: q.scope, scope_id: q.scopeId, is_warmup: q.warmup })
      .select('type', 'total', 'uniq');
  }

  /** All-time sends and replies of steps: their days' rollups summed (all-time rows are kept for campaigns only). */
  async stepTotals(
    db: Executor,
    workspaceId: string,
    stepIds: string[],
  ): Promise<{ scope_id: string; type: string; total: number }[]> {
    if (stepIds.length === 0) return [];
    return db('email_rollups')
      .where({ workspace_id: workspaceId, scope: 'step', is_warmup: false })
      .whereIn('scope_id', stepIds)
      .whereIn('type', ['sent', 'replied'])
      .groupBy('scope_id', 'type')
      .select('scope_id', 'type', db.raw('sum(total)::int AS total'));
  }

  /** Events and first events per scope, warm-up flag and type over the rollup days (and per day when `byDay`). */
  async rangeCounts(db: Executor, q: RangeQuery): Promise<RangeRow[]> {
    const scopes = q.scopes.filter(([, ids]) => ids.length > 0);
    if (scopes.length === 0) return [];
    const query = db('email_rollups')
      .where({ workspace_id: q.workspaceId })
      .andWhere((w) => {
        for (const [scope, ids] of scopes) {
          w.orWhere((o) => {
            o.where({ scope }).whereIn('scope_id', ids);
          });
        }
      })
      // Both flags named when both are asked: the index then serves the day range.
      .whereIn('is_warmup', q.warmup === undefined ? [false, true] : [q.warmup])
      .whereIn('type', q.types)
      .andWhere('day', '>=', q.days.startDate)
      .andWhere('day', '<=', q.days.endDate);
    const sums = [db.raw('sum(total)::int AS total'), db.raw('sum(uniq)::int AS uniq')];
    if (!q.byDay)
      return query
        .groupBy('scope', 'scope_id', 'is_warmup', 'type')
        .select('scope', 'scope_id', 'is_warmup', 'type', ...sums);
    return query
      .groupByRaw('1, 2, 3, 4, 5')
      .select('scope', 'scope_id', 'is_warmup', 'type', db.raw("to_char(day, 'YYYY-MM-DD') AS day"), ...sums);
  }

  /** A campaign's day rows over the rollup days, campaign traffic only. */
  async campaignDays(
    db: Executor,
    q: { workspaceId: string; campaignId: string; days: { startDate: string; endDate: string } },
  ): Promise<DayRow[]> {
    return db('email_rollup_days')
      .where({ workspace_id: q.workspaceId, campaign_id: q.campaignId })
      .andWhere('day', '>=', q.days.startDate)
      .andWhere('day', '<=', q.days.endDate)
      .select<DayRow[]>(
        db.raw("to_char(day, 'YYYY-MM-DD') AS day"),
        ...DAY_TYPES.flatMap((type) => [type, `${type}_uniq`]),
      );
  }

  /**
   * One account's events per type since an instant: the days after the one `since` falls on (in the
   * rollup zone) from the rollups, and the raw events of the rest of that day (by index, at most a day of
   * one account's mail).
   */
  async accountCountsSince(
    db: Executor,
    q: { workspaceId: string; accountId: string; warmup: boolean; since: Date; timezone: string },
  ): Promise<Map<string, number>> {
    const result = await db.raw<RawResult<{ type: string; n: number }>>(
      `WITH b AS (SELECT (?::timestamptz AT TIME ZONE ?)::date AS day)
       SELECT type, sum(n)::int AS n FROM (
         SELECT type, total AS n FROM email_rollups, b
          WHERE workspace_id = ? AND scope = 'account' AND scope_id = ? AND is_warmup = ? AND email_rollups.day > b.day
         UNION ALL
         SELECT type, 1 FROM email_events, b
          WHERE workspace_id = ? AND account_id = ? AND is_warmup = ? AND occurred_at >= ? AND occurred_at < ((b.day + 1)::timestamp AT TIME ZONE ?)
       ) parts GROUP BY type`,
      [
        q.since,
        q.timezone,
        q.workspaceId,
        q.accountId,
        q.warmup,
        q.workspaceId,
        q.accountId,
        q.warmup,
        q.since,
        q.timezone,
      ],
    );
    return new Map(result.rows.map((r) => [r.type, r.n]));
  }
}
