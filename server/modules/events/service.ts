/**
 * Recording what happened. Every change that produces an event calls `record` inside its own
 * transaction, so the event (the analytics row and whatever listeners write, such as the webhook
 * outbox) commits or rolls back with the change: no event for a rolled-back change, none lost.
 *
 * The names are the spec's one list (`EventType`). Mail events are also stored in `email_events`
 * under the short analytics name, which is internal to analytics and this module.
 */
import type { components } from '../../../generated/api';
import type { Clock } from '../../platform/clock';
import type { Db, Executor } from '../../db';
import { invalid, detail } from '../../platform/errors';
import { newId } from '../../platform/ids';
import { addMonths, monthOf } from './partitions';
import { rebuildRollups } from './rollups';
import {
  EVENT_TYPES,
  zeroCounts,
  type CountedType,
  type EmailEventRow,
  type EventCounts,
  type EventStore,
} from './store';

export { zeroCounts, type EventCounts } from './store';

/** Calendar days in `timezone`, both included. */
export type Days = { startDate: string; endDate: string; timezone: string };

/** What the step/variant breakdown shows of one campaign, step or variant over a range. */
export interface ReplyCounts {
  sent: number;
  contactsSent: number;
  replies: number;
  uniqueReplies: number;
  autoReplies: number;
  bounces: number;
  uniqueBounces: number;
}

/** Totals and uniques per counted type, from rollup rows of one scope. */
function countsOf(rows: { type: string; total: number; uniq: number }[]): { totals: EventCounts; unique: EventCounts } {
  const totals = zeroCounts();
  const unique = zeroCounts();
  for (const row of rows) {
    if (!(EVENT_TYPES as readonly string[]).includes(row.type)) continue;
    totals[row.type as CountedType] += row.total;
    unique[row.type as CountedType] += row.uniq;
  }
  return { totals, unique };
}

/** `part` of `whole` in percent with two decimals; 0 when `whole` is 0. */
export function percent(part: number, whole: number): number {
  return whole === 0 ? 0 : Math.round((part / whole) * 10_000) / 100;
}

export type EventType = components['schemas']['EventType'];
export type Event = components['schemas']['Event'];

/** The analytics name of each event that analytics count. */
export const ANALYTICS_NAME = {
  'email.sent': 'sent',
  'email.opened': 'opened',
  'email.clicked': 'clicked',
  'email.replied': 'replied',
  'email.autoReplied': 'autoReplied',
  'email.bounced': 'bounced',
  'contact.unsubscribed': 'unsubscribed',
} as const satisfies Partial<Record<EventType, string>>;

export type MailEventType = keyof typeof ANALYTICS_NAME;

/** Which campaign, step, variant, account, contact and message a mail event is about. */
export interface MailEventSubject {
  campaignId?: string | null;
  stepId?: string | null;
  variantId?: string | null;
  accountId?: string | null;
  contactId?: string | null;
  messageId?: string | null;
  warmup?: boolean;
  /** Recorded, but left out of unique rates by default (a proxy or scanner opened it). */
  flagged?: boolean;
}

export type EventInput =
  | { workspaceId: string; type: MailEventType; occurredAt?: Date; data: Event['data']; mail: MailEventSubject }
  | {
      workspaceId: string;
      type: Exclude<EventType, MailEventType>;
      occurredAt?: Date;
      data: Event['data'];
      mail?: undefined;
    };

/** Called with the recording transaction for every event (the webhook outbox registers one). */
export type EventListener = (db: Executor, event: Event) => Promise<void>;

/** Feed cursors: `ev1.<position>`, the position of the last event a reader has. */
const CURSOR = /^ev1\.(0|[1-9][0-9]{0,17})$/;
const PRUNE_BATCH = 5000;
const DAY_MS = 86_400_000;
/** Months of email_events partitioned ahead of the clock, beside the current one. */
const MONTHS_AHEAD = 2;
/**
 * How often the partition job reads the catalog and the default partition: months are made two ahead and
 * dropped a month at a time, so an hour late changes nothing, and an event in the default partition is
 * stored and counted meanwhile.
 */
const PARTITION_CHECK_MS = 3_600_000;

/** What the partition job has to do: months to create and to drop, and the default's events to delete. */
interface PartitionWork {
  create: string[];
  drop: string[];
  pruneBefore: Date | undefined;
}

/** What EventService is built from, by name. */
export interface EventServiceDeps {
  db: Db;
  store: EventStore;
  clock: Clock;
  retentionDays?: number;
  /** Months of raw mail events kept before the current one (EMAIL_EVENT_RETENTION_MONTHS); 0 keeps them all. */
  emailEventRetentionMonths?: number;
}

export class EventService {
  private readonly listeners: EventListener[] = [];
  /** When this process's partition job last found nothing to do or did it (the clock's ms). */
  private partitionsCheckedAt: number | undefined;

  private readonly db: Db;
  private readonly store: EventStore;
  private readonly clock: Clock;
  private readonly retentionDays: number;
  private readonly emailEventRetentionMonths: number;

  constructor({ db, store, clock, retentionDays = 30, emailEventRetentionMonths = 0 }: EventServiceDeps) {
    this.db = db;
    this.store = store;
    this.clock = clock;
    this.retentionDays = retentionDays;
    this.emailEventRetentionMonths = emailEventRetentionMonths;
  }

  onRecorded(listener: EventListener): void {
    this.listeners.push(listener);
  }

  async record(db: Executor, input: EventInput): Promise<Event> {
    const occurredAt = input.occurredAt ?? this.clock.now();
    const event: Event = {
      id: newId(),
      type: input.type,
      occurredAt: occurredAt.toISOString(),
      workspaceId: input.workspaceId,
      data: input.data,
    };
    if (input.mail) {
      const m = input.mail;
      const row: EmailEventRow = {
        id: event.id,
        workspace_id: input.workspaceId,
        campaign_id: m.campaignId ?? null,
        step_id: m.stepId ?? null,
        variant_id: m.variantId ?? null,
        account_id: m.accountId ?? null,
        contact_id: m.contactId ?? null,
        message_id: m.messageId ?? null,
        type: ANALYTICS_NAME[input.type],
        is_warmup: m.warmup ?? false,
        flagged: m.flagged ?? false,
        occurred_at: occurredAt,
      };
      await this.store.insertEmailEvent(db, row);
      await this.store.addToRollups(db, row);
    }
    await this.store.insertFeedEvent(db, {
      id: event.id,
      workspace_id: event.workspaceId,
      type: event.type,
      campaign_id: (event.data as { campaignId?: string | null }).campaignId ?? null,
      occurred_at: occurredAt,
      recorded_at: this.clock.now(),
      payload: JSON.stringify(event),
    });
    for (const listener of this.listeners) await listener(db, event);
    return event;
  }

  /** GET /v2/event/list: the events after the cursor, and the cursor to continue from (see the spec). */
  async feed(workspaceId: string, query: { after?: string; types?: EventType[]; campaignId?: string; limit: number }) {
    let after = 0;
    if (query.after !== undefined) {
      const m = CURSOR.exec(query.after);
      if (!m)
        throw invalid('The cursor is not one this API gave.', [
          detail('after', 'is not a nextCursor of the event feed', 'invalid', 'query'),
        ]);
      after = Number(m[1]);
    }
    const { head, rows } = await this.store.feedPage(this.db, {
      workspaceId,
      after,
      types: query.types,
      campaignId: query.campaignId,
      limit: query.limit + 1,
    });
    if (after > head)
      throw invalid("The cursor is not one of this workspace's feed.", [
        detail('after', 'is ahead of the newest event of this workspace', 'invalid', 'query'),
      ]);
    const page = rows.slice(0, query.limit);
    const hasMore = rows.length > query.limit;
    // A page that reached the newest event moves the cursor to the head: filtered-out events are not read again.
    const next = hasMore ? page[page.length - 1].position : head;
    return {
      items: page.map((r) => r.payload as Event),
      pagination: { limit: query.limit, nextCursor: `ev1.${next}`, hasMore },
    };
  }

  /** The worker's job: deletes feed events older than the retention, a batch per run. */
  readonly retention = {
    runOnce: (): Promise<number> =>
      this.store.pruneFeed(this.db, new Date(this.clock.now().getTime() - this.retentionDays * DAY_MS), PRUNE_BATCH),
  };

  /**
   * The worker's job over email_events' partitions (partitions.ts): the current month and the next
   * two get partitions ahead of their events, events that fell into the default partition get partitions of
   * their months, and with a retention the months before it are dropped whole (the default's events before it
   * deleted). Returns how many changes it made, 0 when there was nothing to do. It looks at its first run and
   * then at most hourly (PARTITION_CHECK_MS). Workers take turns (an advisory lock); one that finds the lock
   * taken, or whose run failed, looks again at its next run.
   */
  readonly partitions = {
    runOnce: async (): Promise<number> => {
      const now = this.clock.now().getTime();
      if (this.partitionsCheckedAt !== undefined && now - this.partitionsCheckedAt < PARTITION_CHECK_MS) return 0;
      const changes = await this.changePartitions();
      if (changes !== undefined) this.partitionsCheckedAt = now;
      return changes ?? 0;
    },
  };

  /** The partition job's work: how many changes it made, or undefined when another worker holds the lock. */
  private async changePartitions(): Promise<number | undefined> {
    if (!this.partitionWork(await this.store.eventPartitions(this.db))) return 0;
    return this.db.transaction(async (trx) => {
      if (!(await this.store.lockPartitions(trx))) return undefined;
      // Read again under the lock: another worker may have done it meanwhile.
      const work = this.partitionWork(await this.store.eventPartitions(trx));
      if (!work) return 0;
      for (const month of work.create) await this.store.createEventPartition(trx, month);
      for (const month of work.drop) await this.store.dropEventPartition(trx, month);
      const pruned = work.pruneBefore ? await this.store.pruneDefaultPartition(trx, work.pruneBefore) : 0;
      return work.create.length + work.drop.length + pruned;
    });
  }

  private partitionWork(state: { months: string[]; inDefault: string[] }): PartitionWork | undefined {
    const current = monthOf(this.clock.now());
    const oldest = this.emailEventRetentionMonths > 0 ? addMonths(current, -this.emailEventRetentionMonths) : undefined;
    const kept = (month: string) => oldest === undefined || month >= oldest;
    const ahead = Array.from({ length: MONTHS_AHEAD + 1 }, (_, i) => addMonths(current, i));
    const wanted = new Set([...ahead, ...state.inDefault.filter(kept)]);
    const create = [...wanted].filter((m) => !state.months.includes(m)).sort();
    const drop = state.months.filter((m) => !kept(m)).sort();
    const pruneBefore =
      oldest !== undefined && state.inDefault.some((m) => !kept(m)) ? new Date(`${oldest}-01T00:00:00Z`) : undefined;
    return create.length || drop.length || pruneBefore ? { create, drop, pruneBefore } : undefined;
  }

  /**
   * Rollup days are cut in the zone of email_rollup_zones; a read in another zone (the workspace's changed,
   * or its first events were cut in UTC) rebuilds the workspace's rollups in its zone first (rollups.ts).
   */
  private async inZone(db: Executor, workspaceId: string, timezone: string): Promise<void> {
    if ((await this.store.rollupZone(db, workspaceId)) !== timezone)
      await rebuildRollups(db, workspaceId, { unlessZone: timezone });
  }

  /** All time: mail events per type and unique contacts per type, of a workspace or one campaign. */
  async allTimeCounts(
    db: Executor,
    q: { workspaceId: string; campaignId?: string },
  ): Promise<{ totals: EventCounts; unique: EventCounts }> {
    const scope = q.campaignId
      ? ({ scope: 'campaign', scopeId: q.campaignId } as const)
      : ({ scope: 'workspace', scopeId: q.workspaceId } as const);
    return countsOf(await this.store.allTimeCounts(db, { workspaceId: q.workspaceId, ...scope, warmup: false }));
  }

  /** All-time emails sent and replies per step (a subsequence's figures). */
  async stepTotals(
    db: Executor,
    workspaceId: string,
    stepIds: string[],
  ): Promise<Map<string, { sent: number; replied: number }>> {
    const totals = new Map<string, { sent: number; replied: number }>();
    for (const row of await this.store.stepTotals(db, workspaceId, stepIds)) {
      const t = totals.get(row.scope_id) ?? { sent: 0, replied: 0 };
      if (row.type === 'sent') t.sent = row.total;
      else t.replied = row.total;
      totals.set(row.scope_id, t);
    }
    return totals;
  }

  /**
   * Over calendar days: mail events per type, contacts whose first event of a type (in the workspace, or in
   * the campaign) falls in the range, and the events per local day (days without events left out). A
   * campaign's from its row per day, the workspace's from the rollups' rows per type and day.
   */
  async rangeCounts(
    db: Executor,
    q: { workspaceId: string; campaignId?: string; days: Days },
  ): Promise<{ totals: EventCounts; unique: EventCounts; byDay: Map<string, EventCounts> }> {
    await this.inZone(db, q.workspaceId, q.days.timezone);
    if (!q.campaignId) {
      const rows = await this.store.rangeCounts(db, {
        workspaceId: q.workspaceId,
        scopes: [['workspace', [q.workspaceId]]],
        warmup: false,
        types: EVENT_TYPES,
        days: q.days,
        byDay: true,
      });
      const byDay = new Map<string, EventCounts>();
      for (const row of rows) {
        const counts = byDay.get(row.day!) ?? zeroCounts();
        counts[row.type as CountedType] += row.total;
        byDay.set(row.day!, counts);
      }
      return { ...countsOf(rows), byDay };
    }
    const rows = await this.store.campaignDays(db, {
      workspaceId: q.workspaceId,
      campaignId: q.campaignId,
      days: q.days,
    });
    const totals = zeroCounts();
    const unique = zeroCounts();
    const byDay = new Map<string, EventCounts>();
    for (const row of rows) {
      const counts = zeroCounts();
      for (const type of EVENT_TYPES) {
        counts[type] = row[type];
        totals[type] += row[type];
        unique[type] += row[`${type}_uniq`];
      }
      byDay.set(row.day, counts);
    }
    return { totals, unique, byDay };
  }

  /** Campaign sends and warm-up sends per account on one local day. */
  async sentOnDay(
    db: Executor,
    workspaceId: string,
    accountIds: string[],
    day: string,
    timezone: string,
  ): Promise<Map<string, { campaign: number; warmup: number }>> {
    await this.inZone(db, workspaceId, timezone);
    const rows = await this.store.rangeCounts(db, {
      workspaceId,
      scopes: [['account', accountIds]],
      types: ['sent'],
      days: { startDate: day, endDate: day },
    });
    const result = new Map<string, { campaign: number; warmup: number }>();
    for (const row of rows) {
      const sent = result.get(row.scope_id) ?? { campaign: 0, warmup: 0 };
      sent[row.is_warmup ? 'warmup' : 'campaign'] += row.total;
      result.set(row.scope_id, sent);
    }
    return result;
  }

  /** One account's campaign mail events per type since an instant (vitals' reputation window). */
  async accountCountsSince(
    db: Executor,
    q: { workspaceId: string; accountId: string; since: Date; timezone: string },
  ): Promise<EventCounts> {
    await this.inZone(db, q.workspaceId, q.timezone);
    const byType = await this.store.accountCountsSince(db, { ...q, warmup: false });
    const totals = zeroCounts();
    for (const type of EVENT_TYPES) totals[type] = byType.get(type) ?? 0;
    return totals;
  }

  /** The counted types (of `types`) each of these contacts did in the campaign, machine opens and clicks left out. */
  async contactsWhoDid(
    db: Executor,
    q: { workspaceId: string; campaignId: string; types: CountedType[]; contactIds: string[] },
  ): Promise<Map<string, Set<CountedType>>> {
    const result = new Map<string, Set<CountedType>>();
    for (const row of await this.store.contactFirsts(db, q)) {
      const did = result.get(row.contact_id) ?? new Set<CountedType>();
      did.add(row.type as CountedType);
      result.set(row.contact_id, did);
    }
    return result;
  }

  /**
   * Contacts per counted type of each variant (first events; machine opens and clicks left out): over calendar
   * days, or all time without `days` (the A/Z winner's figures, which need no zone).
   */
  async variantContacts(
    db: Executor,
    q: { workspaceId: string; variantIds: string[]; days?: Days },
  ): Promise<Map<string, EventCounts>> {
    if (q.days) await this.inZone(db, q.workspaceId, q.days.timezone);
    const rows = await this.store.rangeCounts(db, {
      workspaceId: q.workspaceId,
      scopes: [['variant', q.variantIds]],
      warmup: false,
      types: EVENT_TYPES,
      days: q.days ?? { startDate: '0001-01-01', endDate: '9999-12-31' },
    });
    const result = new Map<string, EventCounts>();
    for (const row of rows) {
      const counts = result.get(row.scope_id) ?? zeroCounts();
      counts[row.type as CountedType] += row.uniq;
      result.set(row.scope_id, counts);
    }
    return result;
  }

  /**
   * Sends, replies, auto-replies and bounces over calendar days of one campaign, each of its steps and each
   * of its variants, keyed `campaign:<id>`, `step:<id>`, `variant:<id>`.
   */
  async replyCounts(
    db: Executor,
    q: { workspaceId: string; campaignId: string; stepIds: string[]; variantIds: string[]; days: Days },
  ): Promise<Map<string, ReplyCounts>> {
    await this.inZone(db, q.workspaceId, q.days.timezone);
    const rows = await this.store.rangeCounts(db, {
      workspaceId: q.workspaceId,
      scopes: [
        ['campaign', [q.campaignId]],
        ['step', q.stepIds],
        ['variant', q.variantIds],
      ],
      warmup: false,
      types: ['sent', 'replied', 'autoReplied', 'bounced'],
      days: q.days,
    });
    const result = new Map<string, ReplyCounts>();
    for (const row of rows) {
      const key = `${row.scope}:${row.scope_id}`;
      const c = result.get(key) ?? {
        sent: 0,
        contactsSent: 0,
        replies: 0,
        uniqueReplies: 0,
        autoReplies: 0,
        bounces: 0,
        uniqueBounces: 0,
      };
      if (row.type === 'sent') [c.sent, c.contactsSent] = [row.total, row.uniq];
      else if (row.type === 'replied') [c.replies, c.uniqueReplies] = [row.total, row.uniq];
      else if (row.type === 'bounced') [c.bounces, c.uniqueBounces] = [row.total, row.uniq];
      else c.autoReplies = row.total;
      result.set(key, c);
    }
    return result;
  }
}
