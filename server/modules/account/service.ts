/**
 * Email accounts: connect (v2), list, status, vitals, warm-up enable/pause and removal. Passwords are
 * encrypted before they reach the database (server/platform/secrets.ts); numbers such as sentToday come from the
 * stored email events (the events module), in the workspace's time zone.
 *
 * Cut along its jobs: connecting in connect.ts; the accounts as the API shows them (today's sends, the
 * connection status) in views.ts; the warm-up settings and state in warmup-settings.ts; vitals in
 * vitals-report.ts (its DNS checks in vitals.ts); what the mail side needs (logins, back-off, status changes)
 * in mail-access.ts. This service composes them, and changes and removes accounts.
 */
import type { components } from '../../../generated/api';
import type { Db, Executor } from '../../db';
import type { Clock } from '../../platform/clock';
import type { Config } from '../../platform/config';
import { conflict, detail, invalid } from '../../platform/errors';
import type { DnsLookup } from '../../platform/dns';
import type { SecretBox } from '../../platform/secrets';
import type { EventService } from '../events';
import type { WorkspaceService, ZonedWorkspace } from '../workspace';
import { AccountConnector, type LoginSecret, type MailLoginCheck } from './connect';
import { hasImapLogin } from './mapping';
import type { AccountRow, AccountStore } from './store';
import {
  accountNotFound,
  AccountViews,
  type AccountTrackingDomains,
  type MailboxProvidersOf,
  type SentTodayOf,
} from './views';
import { AccountVitals, type WarmupHealthOf } from './vitals-report';
import { AccountWarmup, type WarmupInput, type WarmupReasonValue } from './warmup-settings';

export type { AccountRow } from './store';
export type { MailLoginCheck } from './connect';
export type { MailboxProvidersOf, SentTodayOf } from './views';
export type { WarmupHealthOf } from './vitals-report';

type Schemas = components['schemas'];

/**
 * What removing an account does to the campaigns that send from it: the campaign module's rule (an
 * active campaign keeps a sender), injected by the composition root.
 */
export interface LinkedCampaigns {
  /** Locks the campaigns linked to the account, before it goes. */
  lockLinkedTo(trx: Executor, workspaceId: string, accountId: string): Promise<{ id: string; name: string }[]>;
  /** After the account went: pauses those of `campaignIds` left active without an account; returns them. */
  pauseWithoutAccounts(trx: Executor, campaignIds: string[]): Promise<string[]>;
  /** After the account stopped sending for good: pauses those left active without an active account. */
  pauseWithoutSenders(trx: Executor, campaignIds: string[]): Promise<string[]>;
}

/** An account as a campaign's account list shows it. */
export type AccountSummary = Pick<Schemas['EmailAccount'], 'id' | 'email' | 'provider' | 'status' | 'dailyLimit'>;

/** What AccountService is built from, by name. */
export interface AccountServiceDeps {
  db: Db;
  store: AccountStore;
  events: EventService;
  campaigns: LinkedCampaigns;
  workspaces: WorkspaceService;
  secrets: SecretBox;
  dns: DnsLookup;
  config: Pick<Config, 'dkimSelectors' | 'dnsblIpZones' | 'dnsblDomainZones'>;
  clock: Clock;
  /** Warm-up sends today per account (the warmup module's count, wired by the composition root). */
  warmupSentToday: SentTodayOf;
  /** Warm-up health per account for vitals (the warmup module's, wired by the composition root). */
  warmupHealth: WarmupHealthOf;
  /** Inbox-placement-test sends today per account (the placement module's count, wired by the composition root). */
  placementSentToday: SentTodayOf;
  trackingDomains: AccountTrackingDomains;
  mailboxProviders: MailboxProvidersOf;
  /** Tries the logins before an account is stored; null skips it (VERIFY_MAIL_LOGINS=0). */
  loginCheck?: MailLoginCheck | null;
}

export class AccountService {
  private readonly db: Db;
  private readonly store: AccountStore;
  private readonly events: EventService;
  private readonly campaigns: LinkedCampaigns;
  private readonly clock: Clock;
  private readonly secrets: SecretBox;
  private readonly trackingDomains: AccountTrackingDomains;
  private readonly views: AccountViews;
  private readonly connector: AccountConnector;
  private readonly warmup: AccountWarmup;
  private readonly vitalsReport: AccountVitals;

  constructor({
    db,
    store,
    events,
    campaigns,
    workspaces,
    secrets,
    dns,
    config,
    clock,
    warmupSentToday,
    warmupHealth,
    placementSentToday,
    trackingDomains,
    mailboxProviders,
    loginCheck = null,
  }: AccountServiceDeps) {
    this.db = db;
    this.store = store;
    this.events = events;
    this.campaigns = campaigns;
    this.clock = clock;
    this.secrets = secrets;
    this.trackingDomains = trackingDomains;
    this.views = new AccountViews({
      db,
      store,
      events,
      clock,
      warmupSentToday,
      placementSentToday,
      trackingDomains,
      mailboxProviders,
    });
    this.connector = new AccountConnector({
      db,
      store,
      events,
      workspaces,
      secrets,
      clock,
      trackingDomains,
      mailboxProviders,
      loginCheck,
    });
    this.warmup = new AccountWarmup({ db, store, events, clock, views: this.views });
    this.vitalsReport = new AccountVitals({ db, store, events, dns, config, clock, warmupHealth });
  }

  /** Changes an account's settings (POST /v2/account/update): its tracking domain, its bounce protection. */
  async update(
    workspace: ZonedWorkspace,
    input: Schemas['EmailAccountUpdateRequest'],
  ): Promise<Schemas['EmailAccount']> {
    return this.db.transaction(async (trx) => {
      let row = await this.views.require(trx, workspace.id, input.accountId, true);
      if (input.trackingDomainId !== undefined) {
        if (input.trackingDomainId)
          await this.trackingDomains.requireVerified(trx, workspace.id, input.trackingDomainId, 'trackingDomainId');
        row = await this.store.update(trx, workspace.id, row.id, {
          tracking_domain_id: input.trackingDomainId,
          updated_at: this.clock.now(),
        });
      }
      if (input.bounceProtection) {
        row = await this.store.update(trx, workspace.id, row.id, {
          bounce_rate_percent: input.bounceProtection.ratePercent,
          bounce_window: input.bounceProtection.window,
          updated_at: this.clock.now(),
        });
      }
      return this.views.view(trx, workspace, row);
    });
  }

  /**
   * Logs the account in again now (POST /v2/account/reconnect), with new passwords when given: when the logins
   * work, the passwords are stored, the waits before retrying its servers end, and an account in an error status
   * is active again. A failed login changes nothing.
   */
  async reconnect(
    workspace: ZonedWorkspace,
    input: Schemas['EmailAccountReconnectRequest'],
  ): Promise<Schemas['EmailAccount']> {
    const before = await this.views.require(this.db, workspace.id, input.accountId);
    const oauth = before.auth_type === 'oauth2';
    if (oauth && (input.password !== undefined || input.imapPassword !== undefined)) {
      throw invalid('An OAuth account logs in with its grant and takes no password.', [
        detail(
          input.password !== undefined ? 'password' : 'imapPassword',
          'is not taken by an OAuth account',
          'oauth_account',
        ),
      ]);
    }
    if (before.status === 'reconnectRequired') {
      throw conflict(
        "The provider revoked this account's grant: connect it again through POST /v2/account/oauth/start with its accountId.",
        [detail('accountId', before.status_reason ?? 'the grant was revoked', 'reconnect_required')],
      );
    }
    const smtpPassword = input.password;
    const imapPassword = input.imapPassword ?? input.password;
    // Given passwords are tried as they are; stored ones (and an OAuth grant, password null) by the mail module.
    const stored = (kind: 'smtp' | 'imap') => {
      const enc = kind === 'smtp' ? before.smtp_password_enc : before.imap_password_enc;
      return enc ? this.secrets.decrypt(enc, `${before.id}:${kind}`) : null;
    };
    const secret = (given: string | undefined, kind: 'smtp' | 'imap'): LoginSecret => ({
      password: given ?? (oauth ? null : stored(kind)),
    });
    await this.connector.checkLogins(
      before,
      secret(smtpPassword, 'smtp'),
      hasImapLogin(before) ? secret(imapPassword, 'imap') : null,
    );
    return this.db.transaction(async (trx) => {
      let row = await this.views.require(trx, workspace.id, input.accountId, true);
      const passwords: Partial<AccountRow> = {};
      if (smtpPassword !== undefined)
        passwords.smtp_password_enc = this.secrets.encrypt(smtpPassword, `${row.id}:smtp`);
      if (imapPassword !== undefined && hasImapLogin(row))
        passwords.imap_password_enc = this.secrets.encrypt(imapPassword, `${row.id}:imap`);
      if (Object.keys(passwords).length)
        row = await this.store.update(trx, workspace.id, row.id, { ...passwords, updated_at: this.clock.now() });
      await this.store.clearConnectionFailure(trx, row.id, 'smtp');
      await this.store.clearConnectionFailure(trx, row.id, 'imap');
      if (row.status === 'connectionError' || row.status === 'sendingError') {
        await this.store.setStatus(trx, row.id, 'active', null, this.clock.now());
        const change = {
          accountId: row.id,
          email: row.email,
          previous: row.status,
          status: 'active' as const,
          reason: 'reconnected: the logins work',
        };
        await this.events.record(trx, { workspaceId: row.workspace_id, type: 'account.statusChanged', data: change });
        row = { ...row, status: 'active', status_reason: null };
      }
      return this.views.view(trx, workspace, row);
    });
  }

  connect(workspaceId: string, body: Schemas['EmailAccountConnectRequest']): Promise<Schemas['EmailAccount']> {
    return this.connector.connect(workspaceId, body);
  }

  /** A new account's row: its logins (`logins`) and the request's daily limit and warm-up (checked). */
  newRow(...args: Parameters<AccountConnector['newRow']>): AccountRow {
    return this.connector.newRow(...args);
  }

  /** Stores a new account under the plan's cap, in the caller's transaction, with `account.connected`. */
  insertNew(trx: Executor, row: AccountRow): Promise<void> {
    return this.connector.insertNew(trx, row);
  }

  /** Logs in to SMTP (and IMAP when given) before anything is stored; a failure names which and why. */
  checkLogins(row: AccountRow, smtp: LoginSecret, imap: LoginSecret | null): Promise<void> {
    return this.connector.checkLogins(row, smtp, imap);
  }

  /** A page of the workspace's accounts (one of them, with `id`). */
  list(workspace: ZonedWorkspace, query: { limit?: number; skip?: number; status?: string; id?: string }) {
    return this.views.list(workspace, query);
  }

  get(workspace: ZonedWorkspace, accountId: string): Promise<Schemas['EmailAccount']> {
    return this.views.get(workspace, accountId);
  }

  /** One account by exactly one of its id or its address (any case): GET /v2/account/get. */
  async find(workspace: ZonedWorkspace, by: { accountId?: string; email?: string }): Promise<Schemas['EmailAccount']> {
    if ((by.accountId === undefined) === (by.email === undefined)) {
      const message = 'Give exactly one of accountId and email.';
      throw invalid(message, [detail(by.accountId === undefined ? 'accountId' : 'email', message, 'one_of', 'query')]);
    }
    if (by.accountId !== undefined) return this.get(workspace, by.accountId);
    const row = await this.store.findByEmail(this.db, workspace.id, by.email!);
    if (!row) throw accountNotFound();
    return this.views.view(this.db, workspace, row);
  }

  /** Every account's sends today (the workspace's day), oldest account first: GET /v2/usage. */
  sendsToday(workspace: ZonedWorkspace) {
    return this.views.sendsToday(workspace);
  }

  status(workspace: ZonedWorkspace, accountId: string): Promise<Schemas['EmailAccountConnection']> {
    return this.views.status(workspace, accountId);
  }

  /** Which of `ids` are the workspace's accounts. */
  async existingIds(db: Executor, workspaceId: string, ids: string[]): Promise<Set<string>> {
    return new Set((await this.store.findMany(db, workspaceId, ids)).map((r) => r.id));
  }

  /** The workspace's accounts among `ids`; `lock` holds their rows (in id order) until the caller's transaction ends. */
  async summaries(
    db: Executor,
    workspaceId: string,
    ids: string[],
    options: { lock?: boolean } = {},
  ): Promise<Map<string, AccountSummary>> {
    const rows = await this.store.findMany(db, workspaceId, ids, options);
    return new Map(
      rows.map((r) => [
        r.id,
        { id: r.id, email: r.email, provider: r.provider, status: r.status, dailyLimit: r.daily_limit },
      ]),
    );
  }

  /** How many of `ids` may send (status active). */
  countActive(db: Executor, workspaceId: string, ids: string[]): Promise<number> {
    return this.store.countActive(db, workspaceId, ids);
  }

  enableWarmup(workspace: ZonedWorkspace, accountId: string, input: WarmupInput = {}) {
    return this.warmup.enableWarmup(workspace, accountId, input);
  }

  pauseWarmup(workspace: ZonedWorkspace, accountId: string) {
    return this.warmup.pauseWarmup(workspace, accountId);
  }

  // --- the warm-up pool's side (the warmup module calls these; any workspace's account) ---

  /** Accounts of every workspace with warm-up enabled and running, and whether each is in the pool now. */
  warmupAccounts(db: Executor): Promise<(AccountRow & { in_pool: boolean })[]> {
    return this.warmup.warmupAccounts(db);
  }

  findAnyAccount(db: Executor, accountId: string): Promise<AccountRow | undefined> {
    return this.warmup.findAnyAccount(db, accountId);
  }

  /** Protection: pauses or bans the account's warm-up with a reason code and its event; false when it was not running. */
  stopWarmup(
    trx: Executor,
    accountId: string,
    status: 'paused' | 'banned',
    reason: WarmupReasonValue,
  ): Promise<boolean> {
    return this.warmup.stopWarmup(trx, accountId, status, reason);
  }

  /** A note on a running warm-up (`pool_too_small`), or null to clear it; no event (the state did not change). */
  noteWarmup(db: Executor, accountId: string, reason: WarmupReasonValue | null): Promise<void> {
    return this.warmup.noteWarmup(db, accountId, reason);
  }

  /**
   * The account's OAuth grant died (the mail module's refresh found it revoked or expired), in that
   * transaction: the account turns reconnectRequired with the reason, `account.statusChanged` is recorded,
   * and campaigns it leaves without an active sender pause.
   */
  async grantDied(trx: Executor, accountId: string, reason: string): Promise<void> {
    const row = await this.store.findAny(trx, accountId, { forUpdate: true });
    if (!row || row.status === 'reconnectRequired') return;
    const why = `reconnect_required: ${reason}`.slice(0, 500);
    await this.store.setStatus(trx, row.id, 'reconnectRequired', why, this.clock.now());
    await this.events.record(trx, {
      workspaceId: row.workspace_id,
      type: 'account.statusChanged',
      data: { accountId: row.id, email: row.email, previous: row.status, status: 'reconnectRequired', reason: why },
    });
    const linked = await this.campaigns.lockLinkedTo(trx, row.workspace_id, row.id);
    await this.campaigns.pauseWithoutSenders(
      trx,
      linked.map((c) => c.id),
    );
  }

  async remove(workspaceId: string, accountId: string): Promise<Schemas['EmailAccountDeletion']> {
    return this.db.transaction(async (trx) => {
      const row = await this.views.require(trx, workspaceId, accountId, true);
      const linked = await this.campaigns.lockLinkedTo(trx, workspaceId, row.id);
      await this.store.delete(trx, workspaceId, row.id);
      const orphaned = await this.campaigns.pauseWithoutAccounts(
        trx,
        linked.map((c) => c.id),
      );
      return {
        accountId: row.id,
        email: row.email,
        unlinkedCampaignIds: linked.map((c) => c.id),
        pausedCampaigns: linked.filter((c) => orphaned.includes(c.id)).map(({ id, name }) => ({ id, name })),
      };
    });
  }

  /** The accounts' DNS records, blocklist listings, reputation and warm-up health, with a score (POST /v2/account/vitals). */
  vitals(
    workspace: ZonedWorkspace,
    body: Schemas['EmailAccountVitalsRequest'],
  ): Promise<Schemas['EmailAccountVitals'][]> {
    return this.vitalsReport.check(workspace, body);
  }
}
