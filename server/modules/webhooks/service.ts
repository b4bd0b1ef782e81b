/**
 * Webhooks: subscriptions, the outbox and its delivery.
 *
 * Every recorded event (events module) reaches `enqueue` inside the transaction that recorded it, which
 * writes one delivery per matching subscription: no delivery for a rolled-back change, none lost. The
 * worker job claims due deliveries of active subscriptions (SKIP LOCKED, claimed before the request, at
 * most `perSubscription` in flight per subscription), posts them signed within a total deadline, and logs
 * each attempt. The job runs in `lanes` passes side by side: a pass waiting out a slow receiver's deadline
 * holds at most `perSubscription` deliveries of it, so the other lanes keep delivering everyone else's. 2xx delivers; 410 disables the subscription;
 * anything else is retried on RETRY_DELAYS with jitter, and after the last one the subscription is disabled.
 * A claim is renewed as its request starts and is named by its attempt number, and the lease is six times
 * the deadline, so no delivery is ever attempted twice at the same time.
 */
import { randomBytes } from 'node:crypto';
import type { AuditTrail } from '../../platform/audit';
import type { components } from '../../../generated/api';
import type { Clock } from '../../platform/clock';
import type { Config } from '../../platform/config';
import type { Db, Executor } from '../../db';
import type { Backlog } from '../../observability/telemetry';
import { invalid, detail, notFound } from '../../platform/errors';
import { newId } from '../../platform/ids';
import { OutboundRefusedError, resolveAllowedAddress } from '../../net/outbound';
import type { SecretBox } from '../../platform/secrets';
import type { CampaignService } from '../campaign';
import type { Event, EventType } from '../events';
import { postSigned, TIMEOUT_MS, type PostResult } from './deliver';
import type { DeliveryRow, SubscriptionRow, WebhookStore } from './store';
import type { Page } from '../../platform/paging';

type Schemas = components['schemas'];

/** Waits before each retry: about three days in all. */
export const RETRY_DELAYS_MS = [
  5_000,
  5 * 60_000,
  30 * 60_000,
  2 * 3600_000,
  5 * 3600_000,
  10 * 3600_000,
  10 * 3600_000,
];
const CLAIM_LEASE_MS = TIMEOUT_MS * 6;

const toSubscription = (r: SubscriptionRow): Schemas['WebhookSubscription'] => ({
  id: r.id,
  url: r.url,
  eventTypes: r.event_types as EventType[],
  campaignId: r.campaign_id,
  description: r.description,
  status: r.status,
  disabledReason: r.disabled_reason,
  createdAt: r.created_at.toISOString(),
  updatedAt: r.updated_at.toISOString(),
});

export interface WebhookOptions {
  batchSize: number;
  concurrency: number;
  /** Deliveries of one subscription in flight at once. */
  perSubscription: number;
  /** Jitter factor in [0.9, 1.1]; injectable so tests are exact. */
  jitter: () => number;
}

/** One delivery attempt's outcome: `retrying` waits for the next attempt; `failed` and `gone` disable the subscription. */
export type DeliveryOutcome = 'delivered' | 'retrying' | 'failed' | 'gone';

/** What WebhookService is built from, by name. */
export interface WebhookServiceDeps {
  db: Db;
  store: WebhookStore;
  secrets: SecretBox;
  campaigns: Pick<CampaignService, 'get'>;
  config: Pick<Config, 'allowPrivateWebhooks'>;
  clock: Clock;
  /** Each change of a subscription writes its audit entry in its transaction (the worker's disabling too). */
  audit: AuditTrail;
  options?: Partial<WebhookOptions>;
}

export class WebhookService {
  /** Worker passes side by side (see above): more than `perSubscription`, so one slow receiver leaves lanes free. */
  readonly lanes = 8;
  private readonly options: WebhookOptions;
  /** Runs in progress; stop() aborts them: no attempt starts after it, and those in flight end at once. */
  private readonly running = new Set<AbortController>();

  private readonly db: Db;
  private readonly store: WebhookStore;
  private readonly secrets: SecretBox;
  private readonly campaigns: Pick<CampaignService, 'get'>;
  private readonly config: Pick<Config, 'allowPrivateWebhooks'>;
  private readonly clock: Clock;
  private readonly audit: AuditTrail;

  constructor({ db, store, secrets, campaigns, config, clock, audit, options = {} }: WebhookServiceDeps) {
    this.db = db;
    this.store = store;
    this.secrets = secrets;
    this.campaigns = campaigns;
    this.config = config;
    this.clock = clock;
    this.audit = audit;

    this.options = {
      batchSize: 200,
      concurrency: 16,
      perSubscription: 4,
      jitter: () => 0.9 + Math.random() * 0.2,
      ...options,
    };
  }

  // --- the outbox ---

  /** The events module's listener: one delivery per matching subscription, in the recording transaction. */
  readonly enqueue = async (db: Executor, event: Event): Promise<void> => {
    const subscribers = await this.store.subscribers(db, event.workspaceId, event.type);
    const campaignId = (event.data as { campaignId?: string }).campaignId;
    const now = this.clock.now();
    const payload = JSON.stringify(event);
    await this.store.insertDeliveries(
      db,
      subscribers
        .filter((s) => s.campaign_id === null || s.campaign_id === campaignId)
        .map((s) => ({
          id: newId(),
          subscription_id: s.id,
          workspace_id: event.workspaceId,
          event_id: event.id,
          event_type: event.type,
          payload,
          status: 'pending' as const,
          attempts: 0,
          next_attempt_at: now,
          claimed_at: null,
          created_at: now,
        })),
    );
  };

  /** The worker is stopping: attempts in flight end now and are retried at once by the next worker. */
  stop(): void {
    for (const run of this.running) run.abort();
  }

  private readonly attemptListeners: ((outcome: DeliveryOutcome) => void)[] = [];

  /** Called once per delivery attempt with its outcome, after it is recorded (the composition root counts them for metrics). */
  onAttempt(listener: (outcome: DeliveryOutcome) => void): void {
    this.attemptListeners.push(listener);
  }

  /** Worker backlog for metrics: deliveries due now. */
  backlog(): Promise<Backlog> {
    return this.store.backlog(this.db, this.clock.now());
  }

  /** One pass of the worker job; returns how many deliveries it claimed. */
  async runOnce(): Promise<number> {
    const run = new AbortController();
    this.running.add(run);
    try {
      return await this.pass(run.signal);
    } finally {
      this.running.delete(run);
    }
  }

  private async pass(stopped: AbortSignal): Promise<number> {
    const now = this.clock.now();
    await this.store.releaseStale(this.db, new Date(now.getTime() - CLAIM_LEASE_MS));
    const claimed = await this.db.transaction((trx) =>
      this.store.claimDue(trx, now, this.options.batchSize, this.options.perSubscription),
    );
    let next = 0;
    const lane = async () => {
      while (next < claimed.length && !stopped.aborted) {
        const delivery = claimed[next++];
        // A claim that waited past its lease for a lane may have been taken over: then it is not ours to send.
        if (!(await this.store.startAttempt(this.db, delivery, this.clock.now()))) continue;
        const secret = this.secrets.decrypt(delivery.secret_enc, `${delivery.subscription_id}:webhook`);
        const result = await postSigned(
          delivery.url,
          secret,
          delivery.event_id,
          this.clock.now(),
          delivery.payload,
          this.config.allowPrivateWebhooks,
          stopped,
        );
        const outcome = await this.db.transaction((trx) => this.recordAttempt(trx, delivery, result, stopped.aborted));
        for (const listener of this.attemptListeners) listener(outcome);
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.options.concurrency, claimed.length) }, lane));
    await this.store.unclaim(this.db, claimed.slice(next));
    return claimed.length;
  }

  private async recordAttempt(
    trx: Executor,
    delivery: DeliveryRow,
    result: PostResult,
    interrupted: boolean,
  ): Promise<DeliveryOutcome> {
    const now = this.clock.now();
    await this.store.insertAttempt(trx, {
      id: newId(),
      delivery_id: delivery.id,
      subscription_id: delivery.subscription_id,
      attempt: delivery.attempts,
      attempted_at: now,
      status_code: result.statusCode,
      duration_ms: result.durationMs,
      error: result.error,
      response_excerpt: result.excerpt,
    });
    const code = result.statusCode ?? 0;
    if (code >= 200 && code < 300) {
      await this.store.finishClaim(trx, delivery, { status: 'delivered' });
      return 'delivered';
    }
    // Cut short by the shutdown: the next worker tries again at once.
    if (interrupted && result.statusCode === null) {
      await this.store.finishClaim(trx, delivery, { status: 'pending', next_attempt_at: now });
      return 'retrying';
    }
    if (code === 410) {
      if (await this.store.finishClaim(trx, delivery, { status: 'failed' })) {
        await this.store.update(trx, delivery.subscription_id, {
          status: 'disabled',
          disabled_reason: 'The endpoint answered 410 Gone.',
          updated_at: now,
        });
        await this.audit.recordChange(trx, delivery.workspace_id, { targetIds: [delivery.subscription_id] });
      }
      return 'gone';
    }
    const wait = RETRY_DELAYS_MS[delivery.attempts - 1];
    if (wait === undefined) {
      if (await this.store.finishClaim(trx, delivery, { status: 'failed' })) {
        const why = result.statusCode ? `HTTP ${result.statusCode}` : result.error;
        await this.store.update(trx, delivery.subscription_id, {
          status: 'disabled',
          disabled_reason: `Every attempt of a delivery failed for about three days (last: ${why}).`,
          updated_at: now,
        });
        await this.audit.recordChange(trx, delivery.workspace_id, { targetIds: [delivery.subscription_id] });
      }
      return 'failed';
    }
    await this.store.finishClaim(trx, delivery, {
      status: 'pending',
      next_attempt_at: new Date(now.getTime() + Math.round(wait * this.options.jitter())),
    });
    return 'retrying';
  }

  // --- subscriptions ---

  private async checkUrl(url: string, field: string): Promise<void> {
    // The spec's `format: uri` lets through what WHATWG URL parsing refuses (`%2f` or `%00` in a host, an IPv6 zone).
    let target: URL;
    try {
      target = new URL(url);
    } catch {
      throw invalid('The webhook URL cannot be parsed as a URL.', [
        detail(field, 'is not a URL a request can be sent to', 'format'),
      ]);
    }
    const plainAllowed = this.config.allowPrivateWebhooks;
    if (target.protocol !== 'https:' && !(plainAllowed && target.protocol === 'http:')) {
      throw invalid('A webhook URL must use https.', [detail(field, 'must be an https URL', 'https_required')]);
    }
    try {
      await resolveAllowedAddress(target.hostname.replace(/^\[|\]$/g, ''), { allowPrivate: plainAllowed });
    } catch (err) {
      const message = err instanceof OutboundRefusedError ? err.message : `${target.hostname} cannot be resolved.`;
      throw invalid(`The webhook URL cannot be used: ${message}`, [
        detail(field, message, err instanceof OutboundRefusedError ? 'private_destination' : 'unresolvable'),
      ]);
    }
  }

  private async checkCampaign(workspaceId: string, campaignId: string | null | undefined): Promise<void> {
    if (campaignId) await this.campaigns.get(workspaceId, campaignId);
  }

  private newSecret(id: string): { secret: string; secret_enc: string } {
    const secret = `whsec_${randomBytes(24).toString('base64')}`;
    return { secret, secret_enc: this.secrets.encrypt(secret, `${id}:webhook`) };
  }

  private async require(db: Executor, workspaceId: string, id: string): Promise<SubscriptionRow> {
    const row = await this.store.find(db, workspaceId, id);
    if (!row) throw notFound('Webhook subscription not found.');
    return row;
  }

  async create(workspaceId: string, input: Schemas['WebhookSubscriptionInput']) {
    this.secrets.ensureKey('webhooks');
    await this.checkUrl(input.url, 'url');
    await this.checkCampaign(workspaceId, input.campaignId);
    const id = newId();
    const now = this.clock.now();
    const { secret, secret_enc } = this.newSecret(id);
    const row: SubscriptionRow = {
      id,
      workspace_id: workspaceId,
      url: input.url,
      event_types: input.eventTypes,
      campaign_id: input.campaignId ?? null,
      description: input.description ?? null,
      secret_enc,
      status: 'active',
      disabled_reason: null,
      created_at: now,
      updated_at: now,
    };
    await this.db.transaction(async (trx) => {
      await this.store.insert(trx, row);
      await this.audit.recordChange(trx, workspaceId, { targetIds: [id] });
    });
    return { subscription: toSubscription(row), secret };
  }

  async list(workspaceId: string, page: Page) {
    const { rows, total } = await this.store.page(this.db, workspaceId, page);
    return { items: rows.map(toSubscription), page, total };
  }

  async get(workspaceId: string, id: string) {
    return { subscription: toSubscription(await this.require(this.db, workspaceId, id)) };
  }

  async update(workspaceId: string, input: Schemas['WebhookSubscriptionUpdate']) {
    const row = await this.require(this.db, workspaceId, input.id);
    if (input.url !== undefined) await this.checkUrl(input.url, 'url');
    await this.checkCampaign(workspaceId, input.campaignId);
    const patch: Partial<SubscriptionRow> = { updated_at: this.clock.now() };
    if (input.url !== undefined) patch.url = input.url;
    if (input.eventTypes !== undefined) patch.event_types = input.eventTypes;
    if (input.campaignId !== undefined) patch.campaign_id = input.campaignId;
    if (input.description !== undefined) patch.description = input.description;
    await this.changed(workspaceId, row.id, (trx) => this.store.update(trx, row.id, patch));
    return this.get(workspaceId, row.id);
  }

  async delete(workspaceId: string, id: string) {
    await this.changed(workspaceId, id, async (trx) => {
      if (!(await this.store.delete(trx, workspaceId, id))) throw notFound('Webhook subscription not found.');
    });
    return { deletedId: id };
  }

  async resume(workspaceId: string, id: string) {
    const row = await this.require(this.db, workspaceId, id);
    const now = this.clock.now();
    await this.changed(workspaceId, row.id, async (trx) => {
      await this.store.update(trx, row.id, { status: 'active', disabled_reason: null, updated_at: now });
      await this.store.requeue(trx, row.id, now, new Date(now.getTime() - 3 * 86_400_000));
    });
    return this.get(workspaceId, id);
  }

  async rotateSecret(workspaceId: string, id: string) {
    const row = await this.require(this.db, workspaceId, id);
    const { secret, secret_enc } = this.newSecret(row.id);
    await this.changed(workspaceId, row.id, (trx) =>
      this.store.update(trx, row.id, { secret_enc, updated_at: this.clock.now() }),
    );
    return { ...(await this.get(workspaceId, id)), secret };
  }

  /** A change of one subscription and its audit entry, in one transaction. */
  private changed(workspaceId: string, id: string, change: (trx: Executor) => Promise<unknown>): Promise<void> {
    return this.db.transaction(async (trx) => {
      await change(trx);
      await this.audit.recordChange(trx, workspaceId, { targetIds: [id] });
    });
  }

  async test(workspaceId: string, id: string): Promise<Schemas['WebhookTestResult']> {
    const row = await this.require(this.db, workspaceId, id);
    await this.checkUrl(row.url, 'url');
    const now = this.clock.now();
    const event: Event = {
      id: newId(),
      type: row.event_types[0] as EventType,
      occurredAt: now.toISOString(),
      workspaceId,
      data: { test: true },
    };
    const secret = this.secrets.decrypt(row.secret_enc, `${row.id}:webhook`);
    const result = await postSigned(
      row.url,
      secret,
      event.id,
      now,
      JSON.stringify(event),
      this.config.allowPrivateWebhooks,
    );
    const code = result.statusCode ?? 0;
    return {
      eventId: event.id,
      statusCode: result.statusCode,
      durationMs: result.durationMs,
      error: result.error,
      delivered: code >= 200 && code < 300,
    };
  }

  async deliveries(workspaceId: string, id: string, page: { limit: number; skip: number }) {
    await this.require(this.db, workspaceId, id);
    const { rows, total } = await this.store.attempts(this.db, id, page);
    const items = rows.map((r): Schemas['WebhookAttempt'] => ({
      deliveryId: r.delivery_id,
      eventId: r.event_id,
      eventType: r.event_type as EventType,
      attempt: r.attempt,
      attemptedAt: r.attempted_at.toISOString(),
      statusCode: r.status_code,
      durationMs: r.duration_ms,
      error: r.error,
      responseExcerpt: r.response_excerpt,
      deliveryStatus: r.delivery_status,
      nextAttemptAt: r.delivery_status === 'pending' ? new Date(r.next_attempt_at).toISOString() : null,
    }));
    return { items, page, total };
  }

  async retry(workspaceId: string, deliveryId: string) {
    const now = this.clock.now();
    return this.db.transaction(async (trx) => {
      const delivery = await this.store.findDelivery(trx, workspaceId, deliveryId);
      if (!delivery) throw notFound('Webhook delivery not found.');
      await this.store.finishDelivery(trx, delivery.id, { status: 'pending', next_attempt_at: now });
      return { deliveryId, nextAttemptAt: now.toISOString() };
    });
  }
}
