/** webhook_subscriptions, webhook_deliveries (the outbox) and webhook_attempts (the log). */
import { queryAll, type Executor, type RawResult } from '../../db';
import { backlogOf, type Backlog } from '../../observability/telemetry';

export interface SubscriptionRow {
  id: string;
  workspace_id: string;
  url: string;
  event_types: string[];
  campaign_id: string | null;
  description: string | null;
  secret_enc: string;
  status: 'active' | 'disabled';
  disabled_reason: string | null;
  created_at: Date;
  updated_at: Date;
}

export interface DeliveryRow {
  id: string;
  subscription_id: string;
  workspace_id: string;
  event_id: string;
  event_type: string;
  payload: string;
  status: 'pending' | 'delivering' | 'delivered' | 'failed';
  attempts: number;
  next_attempt_at: Date;
  claimed_at: Date | null;
  created_at: Date;
}

export interface AttemptRow {
  id: string;
  delivery_id: string;
  subscription_id: string;
  attempt: number;
  attempted_at: Date;
  status_code: number | null;
  duration_ms: number;
  error: string | null;
  response_excerpt: string | null;
}

export class WebhookStore {
  async insert(db: Executor, row: SubscriptionRow): Promise<void> {
    await db('webhook_subscriptions').insert(row);
  }

  async find(db: Executor, workspaceId: string, id: string): Promise<SubscriptionRow | undefined> {
    return db('webhook_subscriptions').where({ workspace_id: workspaceId, id }).first<SubscriptionRow | undefined>();
  }

  async findById(db: Executor, id: string): Promise<SubscriptionRow | undefined> {
    return db('webhook_subscriptions').where({ id }).first<SubscriptionRow | undefined>();
  }

  async page(
    db: Executor,
    workspaceId: string,
    page: { limit: number; skip: number },
  ): Promise<{ rows: SubscriptionRow[]; total: number }> {
    const [rows, count] = await queryAll(db, [
      () =>
        db<SubscriptionRow>('webhook_subscriptions')
          .where({ workspace_id: workspaceId })
          .orderBy('created_at', 'desc')
          .orderBy('id', 'desc')
          .limit(page.limit)
          .offset(page.skip),
      () => db('webhook_subscriptions').where({ workspace_id: workspaceId }).count<{ n: string }[]>('* as n'),
    ]);
    return { rows, total: Number(count[0].n) };
  }

  async update(db: Executor, id: string, patch: Partial<SubscriptionRow>): Promise<void> {
    await db('webhook_subscriptions').where({ id }).update(patch);
  }

  async delete(db: Executor, workspaceId: string, id: string): Promise<boolean> {
    return (
      (await db('webhook_subscriptions').where({ workspace_id: workspaceId, id }).delete().returning('id')).length > 0
    );
  }

  /** The workspace's subscriptions to `type` (any status: a disabled one queues until resumed). */
  async subscribers(
    db: Executor,
    workspaceId: string,
    type: string,
  ): Promise<Pick<SubscriptionRow, 'id' | 'campaign_id'>[]> {
    return db('webhook_subscriptions')
      .where({ workspace_id: workspaceId })
      .whereRaw('? = ANY(event_types)', [type])
      .select('id', 'campaign_id');
  }

  async insertDeliveries(db: Executor, rows: DeliveryRow[]): Promise<void> {
    if (rows.length) await db('webhook_deliveries').insert(rows).onConflict(['subscription_id', 'event_id']).ignore();
  }

  /** Deliveries due now to active subscriptions, and the earliest due time (the worker's backlog). */
  backlog(db: Executor, now: Date): Promise<Backlog> {
    const due = db('webhook_deliveries as d')
      .join('webhook_subscriptions as s', 's.id', 'd.subscription_id')
      .where({ 'd.status': 'pending', 's.status': 'active' })
      .andWhere('d.next_attempt_at', '<=', now);
    return backlogOf(due, 'd.next_attempt_at');
  }

  /**
   * Claims due deliveries of active subscriptions (SKIP LOCKED), marking them before any request goes out,
   * at most `perSubscription` in flight per subscription (counting other workers' claims), so a slow
   * receiver cannot take the batch. The earliest-due rows are looked at first, up to a bounded number.
   */
  async claimDue(
    db: Executor,
    now: Date,
    limit: number,
    perSubscription: number,
  ): Promise<(DeliveryRow & { url: string; secret_enc: string })[]> {
    const result = await db.raw<RawResult<DeliveryRow>>(
      `WITH due AS (
         SELECT d.id, d.subscription_id, d.next_attempt_at
           FROM webhook_deliveries d JOIN webhook_subscriptions s ON s.id = d.subscription_id
          WHERE d.status = 'pending' AND s.status = 'active' AND d.next_attempt_at <= ?
          ORDER BY d.next_attempt_at LIMIT ?
       ), busy AS (
         SELECT subscription_id, count(*)::int AS n FROM webhook_deliveries WHERE status = 'delivering' GROUP BY subscription_id
       ), ranked AS (
         SELECT due.id, due.next_attempt_at,
                row_number() OVER (PARTITION BY due.subscription_id ORDER BY due.next_attempt_at, due.id) + coalesce(busy.n, 0) AS place
           FROM due LEFT JOIN busy ON busy.subscription_id = due.subscription_id
       ), picked AS (
         SELECT d.id FROM webhook_deliveries d JOIN ranked r ON r.id = d.id
          WHERE r.place <= ? AND d.status = 'pending'
          ORDER BY r.next_attempt_at LIMIT ?
          FOR UPDATE OF d SKIP LOCKED
       )
       UPDATE webhook_deliveries SET status = 'delivering', claimed_at = ?, attempts = attempts + 1
        WHERE id IN (SELECT id FROM picked)
       RETURNING *`,
      [now, limit * 20, perSubscription, limit, now],
    );
    const claimed = result.rows;
    if (claimed.length === 0) return [];
    const subs: { id: string; url: string; secret_enc: string }[] = await db('webhook_subscriptions')
      .whereIn('id', [...new Set(claimed.map((d) => d.subscription_id))])
      .select('id', 'url', 'secret_enc');
    const byId = new Map(subs.map((s) => [s.id, s]));
    return claimed.map((d) => ({
      ...d,
      url: byId.get(d.subscription_id)!.url,
      secret_enc: byId.get(d.subscription_id)!.secret_enc,
    }));
  }

  /**
   * Renews this worker's claim as its request starts; false when the claim is no longer this worker's
   * (it outlived its lease and another claim, which counted another attempt, took it).
   */
  async startAttempt(db: Executor, claim: Pick<DeliveryRow, 'id' | 'attempts'>, now: Date): Promise<boolean> {
    return (
      (await db('webhook_deliveries')
        .where({ id: claim.id, status: 'delivering', attempts: claim.attempts })
        .update({ claimed_at: now })) > 0
    );
  }

  /** Claims never started (the worker is stopping) go back to the queue as they were. */
  async unclaim(db: Executor, claims: Pick<DeliveryRow, 'id' | 'attempts'>[]): Promise<void> {
    for (const claim of claims) {
      await db('webhook_deliveries')
        .where({ id: claim.id, status: 'delivering', attempts: claim.attempts })
        .update({ status: 'pending', attempts: claim.attempts - 1 });
    }
  }

  /** Deliveries whose worker died mid-request go back to the queue (at least once). */
  async releaseStale(db: Executor, before: Date): Promise<void> {
    await db('webhook_deliveries')
      .where({ status: 'delivering' })
      .andWhere('claimed_at', '<', before)
      .update({ status: 'pending' });
  }

  /** The outcome of this worker's claim (`attempts` names it); false when the claim was taken over meanwhile. */
  async finishClaim(
    db: Executor,
    claim: Pick<DeliveryRow, 'id' | 'attempts'>,
    patch: Pick<DeliveryRow, 'status'> & Partial<Pick<DeliveryRow, 'next_attempt_at'>>,
  ): Promise<boolean> {
    return (
      (await db('webhook_deliveries')
        .where({ id: claim.id, status: 'delivering', attempts: claim.attempts })
        .update(patch)) > 0
    );
  }

  async finishDelivery(
    db: Executor,
    id: string,
    patch: Pick<DeliveryRow, 'status'> & Partial<Pick<DeliveryRow, 'next_attempt_at'>>,
  ): Promise<void> {
    await db('webhook_deliveries').where({ id }).update(patch);
  }

  async insertAttempt(db: Executor, row: AttemptRow): Promise<void> {
    await db('webhook_attempts').insert(row);
  }

  /** Waiting and given-up deliveries of a resumed subscription go out at once. */
  async requeue(db: Executor, subscriptionId: string, now: Date, failedSince: Date): Promise<void> {
    await db('webhook_deliveries')
      .where({ subscription_id: subscriptionId })
      .andWhere((q) => {
        q.where('status', 'pending').orWhere((f) => {
          f.where('status', 'failed').andWhere('created_at', '>=', failedSince);
        });
      })
      .update({ status: 'pending', next_attempt_at: now, attempts: 0 });
  }

  async findDelivery(db: Executor, workspaceId: string, id: string): Promise<DeliveryRow | undefined> {
    return db('webhook_deliveries').where({ workspace_id: workspaceId, id }).first<DeliveryRow | undefined>();
  }

  async attempts(db: Executor, subscriptionId: string, page: { limit: number; skip: number }) {
    const [rows, count] = await queryAll(db, [
      () =>
        db('webhook_attempts as a')
          .join('webhook_deliveries as d', 'd.id', 'a.delivery_id')
          .where('a.subscription_id', subscriptionId)
          .orderBy('a.attempted_at', 'desc')
          .orderBy('a.id', 'desc')
          .limit(page.limit)
          .offset(page.skip)
          .select('a.*', 'd.event_id', 'd.event_type', 'd.status as delivery_status', 'd.next_attempt_at'),
      () => db('webhook_attempts').where({ subscription_id: subscriptionId }).count<{ n: string }[]>('* as n'),
    ]);
    return {
      rows: rows as (AttemptRow & {
        event_id: string;
        event_type: string;
        delivery_status: DeliveryRow['status'];
        next_attempt_at: Date;
      })[],
      total: Number(count[0].n),
    };
  }
}
