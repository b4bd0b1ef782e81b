/** Email accounts as the API shows them: one, a page, the sends of today, the connection status. */
import type { components } from '../../../generated/api';
import { queryAll, type Db, type Executor } from '../../db';
import type { Clock } from '../../platform/clock';
import { domainOf } from '../../platform/email-address';
import { notFound } from '../../platform/errors';
import { pageOf } from '../../platform/paging';
import { dayIn } from '../../time/days';
import type { EventService } from '../events';
import type { TrackingDomainService } from '../tracking-domain';
import type { ZonedWorkspace } from '../workspace';
import { toAccount } from './mapping';
import type { AccountRow, AccountStore } from './store';

type Schemas = components['schemas'];

export const accountNotFound = () => notFound('Email account not found.');

/** Emails of one kind (warm-up, placement tests) each of `accountIds` sent today (local day in `timezone`). */
export type SentTodayOf = (db: Executor, accountIds: string[], timezone: string) => Promise<Map<string, number>>;

/** The tracking domains accounts chose, and the check that one may be chosen (the tracking module's, wired by the composition root). */
export type AccountTrackingDomains = Pick<TrackingDomainService, 'choices' | 'requireVerified'>;

/** Known mailbox providers of mail domains (the sending module's look-ups, wired by the composition root). */
export type MailboxProvidersOf = (db: Executor, domains: string[]) => Promise<Map<string, Schemas['MailboxProvider']>>;

export const mailDomainOf = (email: string) => domainOf(email).toLowerCase();

/** What AccountViews is built from, by name. */
interface AccountViewsDeps {
  db: Db;
  store: AccountStore;
  events: EventService;
  clock: Clock;
  /** Warm-up sends today per account (the warmup module's count, wired by the composition root). */
  warmupSentToday: SentTodayOf;
  /** Inbox-placement-test sends today per account (the placement module's count, wired by the composition root). */
  placementSentToday: SentTodayOf;
  trackingDomains: AccountTrackingDomains;
  mailboxProviders: MailboxProvidersOf;
}

/** Accounts as the API shows them, with today's sends from the events, warm-up and placement tests. */
export class AccountViews {
  private readonly db: Db;
  private readonly store: AccountStore;
  private readonly events: EventService;
  private readonly clock: Clock;
  private readonly warmupSentToday: SentTodayOf;
  private readonly placementSentToday: SentTodayOf;
  private readonly trackingDomains: AccountTrackingDomains;
  private readonly mailboxProviders: MailboxProvidersOf;

  constructor({
    db,
    store,
    events,
    clock,
    warmupSentToday,
    placementSentToday,
    trackingDomains,
    mailboxProviders,
  }: AccountViewsDeps) {
    this.db = db;
    this.store = store;
    this.events = events;
    this.clock = clock;
    this.warmupSentToday = warmupSentToday;
    this.placementSentToday = placementSentToday;
    this.trackingDomains = trackingDomains;
    this.mailboxProviders = mailboxProviders;
  }
  private today(workspace: ZonedWorkspace): string {
    return dayIn(workspace.timezone, this.clock.now());
  }

  /**
   * Sends today per account: campaign sends (stored events) and placement-test sends (the mail record) as
   * `campaign`, warm-up sends (the pool's record) as `warmup`; all three share the daily limit.
   */
  private async sentToday(
    db: Executor,
    workspace: ZonedWorkspace,
    ids: string[],
  ): Promise<Map<string, { campaign: number; warmup: number }>> {
    const [campaign, placement, warmup] = await queryAll(db, [
      () => this.events.sentOnDay(db, workspace.id, ids, this.today(workspace), workspace.timezone),
      () => this.placementSentToday(db, ids, workspace.timezone),
      () => this.warmupSentToday(db, ids, workspace.timezone),
    ]);
    return new Map(
      ids.map((id) => [
        id,
        { campaign: (campaign.get(id)?.campaign ?? 0) + (placement.get(id) ?? 0), warmup: warmup.get(id) ?? 0 },
      ]),
    );
  }

  async view(db: Executor, workspace: ZonedWorkspace, row: AccountRow): Promise<Schemas['EmailAccount']> {
    return (await this.views(db, workspace, [row]))[0];
  }

  async views(db: Executor, workspace: ZonedWorkspace, rows: AccountRow[]): Promise<Schemas['EmailAccount'][]> {
    const ids = rows.map((r) => r.id);
    const domainIds = rows.flatMap((r) => (r.tracking_domain_id ? [r.tracking_domain_id] : []));
    const smtpDomains = rows.filter((r) => r.provider === 'smtp').map((r) => mailDomainOf(r.email));
    const sent = await this.sentToday(db, workspace, ids);
    const domains = await this.trackingDomains.choices(db, workspace.id, domainIds);
    const providers = await this.mailboxProviders(db, smtpDomains);
    return rows.map((row) =>
      toAccount(
        row,
        sent.get(row.id)!,
        row.tracking_domain_id ? (domains.get(row.tracking_domain_id) ?? null) : null,
        providers.get(mailDomainOf(row.email)) ?? null,
      ),
    );
  }

  /** The workspace's account, or 404; `forUpdate` locks its row. */
  async require(db: Executor, workspaceId: string, id: string, forUpdate = false): Promise<AccountRow> {
    const row = await this.store.find(db, workspaceId, id, { forUpdate });
    if (!row) throw accountNotFound();
    return row;
  }

  /** A page of the workspace's accounts (one of them, with `id`). */
  async list(workspace: ZonedWorkspace, query: { limit?: number; skip?: number; status?: string; id?: string }) {
    const page = pageOf(query);
    const { rows, total } = await this.store.list(this.db, workspace.id, {
      ...page,
      status: query.status,
      id: query.id,
    });
    return { items: await this.views(this.db, workspace, rows), page, total };
  }

  async get(workspace: ZonedWorkspace, accountId: string): Promise<Schemas['EmailAccount']> {
    return this.view(this.db, workspace, await this.require(this.db, workspace.id, accountId));
  }

  /** Every account's sends today (the workspace's day), oldest account first: GET /v2/usage. */
  async sendsToday(workspace: ZonedWorkspace) {
    const rows = await this.store.all(this.db, workspace.id);
    const sent = await this.sentToday(
      this.db,
      workspace,
      rows.map((r) => r.id),
    );
    return {
      day: this.today(workspace),
      accounts: rows.map((r) => ({
        accountId: r.id,
        email: r.email,
        sent: sent.get(r.id)!.campaign,
        warmupSent: sent.get(r.id)!.warmup,
        dailyLimit: r.daily_limit,
      })),
    };
  }

  async status(workspace: ZonedWorkspace, accountId: string): Promise<Schemas['EmailAccountConnection']> {
    const row = await this.require(this.db, workspace.id, accountId);
    const sent = (await this.sentToday(this.db, workspace, [row.id])).get(row.id)!;
    const sentToday = sent.campaign;
    // Campaign, placement-test and warm-up mail share the daily limit.
    const remainingToday = Math.max(0, row.daily_limit - sent.campaign - sent.warmup);
    const now = this.clock.now();
    const retries = await this.store.connectionRetries(this.db, row.id);
    const smtpWaits = retries.some((r) => r.protocol === 'smtp' && new Date(r.next_try_at) > now);
    const reason =
      row.status !== 'active'
        ? row.status
        : remainingToday === 0
          ? 'dailyLimitReached'
          : smtpWaits
            ? 'smtpRetrying'
            : null;
    return {
      accountId: row.id,
      email: row.email,
      status: row.status,
      canSend: reason === null,
      reason,
      statusReason: row.status === 'active' ? null : (row.status_reason ?? null),
      sentToday,
      dailyLimit: row.daily_limit,
      remainingToday,
      warmupStatus: row.warmup_status,
      retries: retries.map((r) => ({
        protocol: r.protocol,
        reason: r.reason,
        failures: r.failures,
        since: new Date(r.since).toISOString(),
        nextTryAt: new Date(r.next_try_at).toISOString(),
      })),
    };
  }
}
