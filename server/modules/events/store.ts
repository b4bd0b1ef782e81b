/**
 * email_events: the mail events analytics count, written by `record` and read by the counts below.
 * Every query is scoped by workspace; day bounds are the workspace's local midnights
 * (`'<day>'::timestamp AT TIME ZONE tz`), so the (workspace_id, campaign_id|account_id, occurred_at)
 * indexes serve them.
 */
import type { Knex } from 'knex';
import { jsonColumn, type Executor, type RawResult } from '../../db';
import { addDays } from './days';

const EVENT_TYPES = ['sent', 'opened', 'clicked', 'replied', 'bounced', 'unsubscribed'] as const;
type CountedType = (typeof EVENT_TYPES)[number];
export type EventCounts = Record<CountedType, number>;

export interface EmailEventScope {
  workspaceId: string;
  warmup: boolean;
  campaignId?: string;
  accountId?: string;
  /** Calendar days in `timezone`, both included. */
  days?: { startDate: string; endDate: string; timezone: string };
  /** Events at or after this instant. */
  since?: Date;
}

export const zeroCounts = (): EventCounts => ({ sent: 0, opened: 0, clicked: 0, replied: 0, bounced: 0, unsubscribed: 0 });

function scoped(db: Executor, scope: EmailEventScope): Knex.QueryBuilder {
  const q = db('email_events').where({ workspace_id: scope.workspaceId, is_warmup: scope.warmup }).whereIn('type', EVENT_TYPES);
  if (scope.campaignId) q.andWhere('campaign_id', scope.campaignId);
  if (scope.accountId) q.andWhere('account_id', scope.accountId);
  if (scope.since) q.andWhere('occurred_at', '>=', scope.since);
  if (scope.days) {
    const { startDate, endDate, timezone } = scope.days;
    q.andWhereRaw('occurred_at >= (?::timestamp AT TIME ZONE ?)', [startDate, timezone]);
    q.andWhereRaw('occurred_at < (?::timestamp AT TIME ZONE ?)', [addDays(endDate, 1), timezone]);
  }
  return q;
}


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
  async insertEmailEvent(db: Executor, row: EmailEventRow): Promise<void> {
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
  async feedPage(db: Executor, q: { workspaceId: string; after: number; types?: string[]; campaignId?: string; limit: number }): Promise<{ head: number; rows: { position: number; payload: unknown }[] }> {
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
    const result = await db.raw<RawResult<{ head: string | number; position: string | number | null; payload: unknown }>>(
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
      rows: rows.filter((r) => r.position !== null).map((r) => ({ position: Number(r.position), payload: jsonColumn(r.payload) })),
    };
  }

  /** Deletes up to `limit` feed events recorded before `before`; returns how many. */
  async pruneFeed(db: Executor, before: Date, limit: number): Promise<number> {
    const result = await db.raw<RawResult>('DELETE FROM events WHERE id IN (SELECT id FROM events WHERE recorded_at < ? LIMIT ?)', [before, limit]);
    return result.rowCount ?? 0;
  }

  /** Events per type, and distinct contacts per type. */
  async countsByType(db: Executor, scope: EmailEventScope): Promise<{ totals: EventCounts; unique: EventCounts }> {
    const rows: { type: CountedType; total: number; uniq: number }[] = await scoped(db, scope)
      .groupBy('type')
      .select('type', db.raw('count(*)::int AS total'), db.raw('count(DISTINCT contact_id) FILTER (WHERE NOT flagged)::int AS uniq'));
    const totals = zeroCounts();
    const unique = zeroCounts();
    for (const row of rows) {
      totals[row.type] = row.total;
      unique[row.type] = row.uniq;
    }
    return { totals, unique };
  }

  /** Events per local day and type, for the days of `scope.days` that have any. */
  async dailyCounts(db: Executor, scope: EmailEventScope & { days: NonNullable<EmailEventScope['days']> }): Promise<Map<string, EventCounts>> {
    const rows: { day: string; type: CountedType; n: number }[] = await scoped(db, scope)
      .groupByRaw('1, 2')
      .select(db.raw("to_char(occurred_at AT TIME ZONE ?, 'YYYY-MM-DD') AS day", [scope.days.timezone]), 'type', db.raw('count(*)::int AS n'));
    const byDay = new Map<string, EventCounts>();
    for (const row of rows) {
      const counts = byDay.get(row.day) ?? zeroCounts();
      counts[row.type] = row.n;
      byDay.set(row.day, counts);
    }
    return byDay;
  }

  /** `sent` events of `day` (local) per account: campaign sends and warm-up sends. */
  async sentOnDay(db: Executor, workspaceId: string, accountIds: string[], day: string, timezone: string): Promise<Map<string, { campaign: number; warmup: number }>> {
    const result = new Map<string, { campaign: number; warmup: number }>();
    if (accountIds.length === 0) return result;
    const rows: { account_id: string; campaign: number; warmup: number }[] = await db('email_events')
      .where({ workspace_id: workspaceId, type: 'sent' })
      .whereIn('account_id', accountIds)
      .andWhereRaw('occurred_at >= (?::timestamp AT TIME ZONE ?)', [day, timezone])
      .andWhereRaw('occurred_at < (?::timestamp AT TIME ZONE ?)', [addDays(day, 1), timezone])
      .groupBy('account_id')
      .select(
        'account_id',
        db.raw('(count(*) FILTER (WHERE NOT is_warmup))::int AS campaign'),
        db.raw('(count(*) FILTER (WHERE is_warmup))::int AS warmup'),
      );
    for (const row of rows) result.set(row.account_id, { campaign: row.campaign, warmup: row.warmup });
    return result;
  }

  /**
   * Sent, replied, auto-replied and bounced events of one campaign per (step, variant), with distinct
   * contacts, over the range: the rows of the step/variant breakdown.
   */
  async replyCountsByVariant(db: Executor, scope: EmailEventScope & { campaignId: string }): Promise<ReplyCountRow[]> {
    const q = db('email_events').where({ workspace_id: scope.workspaceId, is_warmup: false, campaign_id: scope.campaignId }).whereIn('type', ['sent', 'replied', 'autoReplied', 'bounced']);
    if (scope.days) {
      const { startDate, endDate, timezone } = scope.days;
      q.andWhereRaw('occurred_at >= (?::timestamp AT TIME ZONE ?)', [startDate, timezone]);
      q.andWhereRaw('occurred_at < (?::timestamp AT TIME ZONE ?)', [addDays(endDate, 1), timezone]);
    }
    return q
      .groupByRaw('GROUPING SETS ((step_id, variant_id), (step_id), ())')
      .select(
        'step_id',
        'variant_id',
        db.raw('GROUPING(step_id)::int AS g_step'),
        db.raw('GROUPING(variant_id)::int AS g_variant'),
        db.raw("(count(*) FILTER (WHERE type = 'sent'))::int AS sent"),
        db.raw("(count(DISTINCT contact_id) FILTER (WHERE type = 'sent'))::int AS contacts_sent"),
        db.raw("(count(*) FILTER (WHERE type = 'replied'))::int AS replies"),
        db.raw("(count(DISTINCT contact_id) FILTER (WHERE type = 'replied'))::int AS unique_replies"),
        db.raw("(count(*) FILTER (WHERE type = 'autoReplied'))::int AS auto_replies"),
        db.raw("(count(*) FILTER (WHERE type = 'bounced'))::int AS bounces"),
        db.raw("(count(DISTINCT contact_id) FILTER (WHERE type = 'bounced'))::int AS unique_bounces"),
      );
  }
}

export interface ReplyCountRow {
  step_id: string | null;
  variant_id: string | null;
  g_step: number;
  g_variant: number;
  sent: number;
  contacts_sent: number;
  replies: number;
  unique_replies: number;
  auto_replies: number;
  bounces: number;
  unique_bounces: number;
}

