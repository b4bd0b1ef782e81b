/**
 * Recording what happened. Every change that produces an event calls `record` inside its own
 * transaction, so the event (the analytics row and whatever listeners write, such as the webhook
 * outbox) commits or rolls back with the change: no event for a rolled-back change, none lost.
 *
 * The names are the spec's one list (`EventType`). Mail events are also stored in `email_events`
 * under the short analytics name, which is internal to analytics and this module.
 */
import type { components } from '../../../generated/api';
import type { Clock } from '../../clock';
import type { Executor } from '../../db';
import { newId } from '../../ids';
import type { EmailEventScope, EventCounts, EventStore, ReplyCountRow } from './store';

export { zeroCounts, type EventCounts, type EmailEventScope, type ReplyCountRow } from './store';

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
  | { workspaceId: string; type: Exclude<EventType, MailEventType>; occurredAt?: Date; data: Event['data']; mail?: undefined };

/** Called with the recording transaction for every event (the webhook outbox registers one). */
export type EventListener = (db: Executor, event: Event) => Promise<void>;

export class EventService {
  private readonly listeners: EventListener[] = [];

  constructor(
    private readonly store: EventStore,
    private readonly clock: Clock,
  ) {}

  onRecorded(listener: EventListener): void {
    this.listeners.push(listener);
  }

  async record(db: Executor, input: EventInput): Promise<Event> {
    const occurredAt = input.occurredAt ?? this.clock.now();
    const event: Event = { id: newId(), type: input.type, occurredAt: occurredAt.toISOString(), workspaceId: input.workspaceId, data: input.data };
    if (input.mail) {
      const m = input.mail;
      await this.store.insertEmailEvent(db, {
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
      });
    }
    for (const listener of this.listeners) await listener(db, event);
    return event;
  }

  /** Mail events per type, and distinct contacts per type. */
  countsByType(db: Executor, scope: EmailEventScope): Promise<{ totals: EventCounts; unique: EventCounts }> {
    return this.store.countsByType(db, scope);
  }

  /** Mail events per local day and type, for the days of `scope.days` that have any. */
  dailyCounts(db: Executor, scope: EmailEventScope & { days: NonNullable<EmailEventScope['days']> }): Promise<Map<string, EventCounts>> {
    return this.store.dailyCounts(db, scope);
  }

  /** `sent` events of `day` (local) per account: campaign sends and warm-up sends. */
  sentOnDay(db: Executor, workspaceId: string, accountIds: string[], day: string, timezone: string): Promise<Map<string, { campaign: number; warmup: number }>> {
    return this.store.sentOnDay(db, workspaceId, accountIds, day, timezone);
  }

  /** One campaign's sends, replies, auto-replies and bounces per (step, variant), per step and in all. */
  replyCountsByVariant(db: Executor, scope: EmailEventScope & { campaignId: string }): Promise<ReplyCountRow[]> {
    return this.store.replyCountsByVariant(db, scope);
  }
}
