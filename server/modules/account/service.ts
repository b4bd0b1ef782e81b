/**
 * Email accounts: connect (v2), list, status, vitals, warm-up enable/pause and removal. Passwords are
 * encrypted before they reach the database (server/platform/secrets.ts); numbers such as sentToday come from the
 * stored email events (the events module), in the workspace's time zone.
 */
import type { components } from '../../../generated/api';
import { isUniqueViolation, queryAll, type Db, type Executor } from '../../db';
import type { Clock } from '../../platform/clock';
import type { Config } from '../../platform/config';
import type { DnsLookup } from '../../platform/dns';
import { newId } from '../../platform/ids';
import { domainOf } from '../../platform/email-address';
import { conflict, detail, forbidden, invalid, notFound } from '../../platform/errors';
import { pageOf } from '../../platform/paging';
import { dayIn } from '../../time/days';
import { type EventService, percent } from '../events';
import { hasImapLogin, inWarmupPool, toAccount, toAccountAuth, warmupReason } from './mapping';
import type { SecretBox } from '../../platform/secrets';
import type { AccountRow, AccountStore, RetryProtocol, WarmupColumns } from './store';
import { checkBlocklists, checkDomain, memoizedA, scoreOf, type DomainVitals } from './vitals';
import type { WorkspaceService, ZonedWorkspace } from '../workspace';
import type { LoginFailure, MailLogin } from '../mail';
import type { TrackingDomainService } from '../tracking-domain';

export type { AccountRow } from './store';

type Schemas = components['schemas'];
type ConnectRequest = Schemas['EmailAccountConnectRequest'];
export type WarmupInput = Schemas['EmailAccountWarmupInput'];

export const accountNotFound = () => notFound('Email account not found.');

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

/** Emails of one kind (warm-up, placement tests) each of `accountIds` sent today (local day in `timezone`). */
export type SentTodayOf = (db: Executor, accountIds: string[], timezone: string) => Promise<Map<string, number>>;

/** The warm-up health (inbox share of the last 7 days) of each of `accountIds`. */
/** The tracking domains accounts chose, and the check that one may be chosen (the tracking module's, wired by the composition root). */
export type AccountTrackingDomains = Pick<TrackingDomainService, 'choices' | 'requireVerified'>;

/** Known mailbox providers of mail domains (the sending module's look-ups, wired by the composition root). */
export type MailboxProvidersOf = (db: Executor, domains: string[]) => Promise<Map<string, Schemas['MailboxProvider']>>;

export type WarmupHealthOf = (db: Executor, accountIds: string[]) => Promise<Map<string, Schemas['WarmupHealth']>>;

/** An account as a campaign's account list shows it. */
export type AccountSummary = Pick<Schemas['EmailAccount'], 'id' | 'email' | 'provider' | 'status' | 'dailyLimit'>;

/** The provider's servers, used when the request gives no host/port. */
const PROVIDER_SERVERS: Record<ConnectRequest['provider'], { smtp?: [string, number]; imap?: [string, number] }> = {
  google: { smtp: ['smtp.gmail.com', 587], imap: ['imap.gmail.com', 993] },
  microsoft: { smtp: ['smtp.office365.com', 587], imap: ['outlook.office365.com', 993] },
  smtp: {},
};

const WARMUP_DEFAULTS = {
  dailyLimit: 10,
  increasePerDay: 1,
  replyRatePercent: 30,
  windowFrom: '00:00',
  windowTo: '24:00',
  weekdaysOnly: false,
};

export type WarmupReasonValue = Schemas['WarmupReason'];

const warmupNeedsImap = () =>
  conflict('Warm-up needs to read the mailbox: connect the account with an IMAP login first.', [
    detail('accountId', 'has no IMAP login: warm-up needs to read the mailbox', 'imap_required'),
  ]);

/** The window must open before it closes (the schema bounds each end). */
function checkWindow(row: Pick<AccountRow, 'warmup_window_from' | 'warmup_window_to'>): void {
  if (row.warmup_window_from >= row.warmup_window_to) {
    throw invalid('The warm-up window must open before it closes.', [
      detail('warmup.windowTo', `must be after windowFrom (${row.warmup_window_from})`, 'window_order'),
    ]);
  }
}
/** A warm-up input's window, checked before a flow that stores the account later starts. */
export function validateWarmup(input: WarmupInput): void {
  checkWindow({
    warmup_window_from: input.windowFrom ?? WARMUP_DEFAULTS.windowFrom,
    warmup_window_to: input.windowTo ?? WARMUP_DEFAULTS.windowTo,
  });
}

const REPUTATION_DAYS = 30;

function warmupColumns(input: WarmupInput): WarmupColumns {
  const columns: WarmupColumns = {};
  if (input.dailyLimit !== undefined) columns.warmup_daily_limit = input.dailyLimit;
  if (input.increasePerDay !== undefined) columns.warmup_increase_per_day = input.increasePerDay;
  if (input.replyRatePercent !== undefined) columns.warmup_reply_rate_percent = input.replyRatePercent;
  if (input.windowFrom !== undefined) columns.warmup_window_from = input.windowFrom;
  if (input.windowTo !== undefined) columns.warmup_window_to = input.windowTo;
  if (input.weekdaysOnly !== undefined) columns.warmup_weekdays_only = input.weekdaysOnly;
  return columns;
}

const mailDomainOf = (email: string) => domainOf(email).toLowerCase();

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
  private readonly workspaces: WorkspaceService;
  private readonly secrets: SecretBox;
  private readonly dns: DnsLookup;
  private readonly config: Pick<Config, 'dkimSelectors' | 'dnsblIpZones' | 'dnsblDomainZones'>;
  private readonly clock: Clock;
  private readonly warmupSentToday: SentTodayOf;
  private readonly warmupHealth: WarmupHealthOf;
  private readonly placementSentToday: SentTodayOf;
  private readonly trackingDomains: AccountTrackingDomains;
  private readonly mailboxProviders: MailboxProvidersOf;
  private readonly loginCheck: MailLoginCheck | null;

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
    this.workspaces = workspaces;
    this.secrets = secrets;
    this.dns = dns;
    this.config = config;
    this.clock = clock;
    this.warmupSentToday = warmupSentToday;
    this.warmupHealth = warmupHealth;
    this.placementSentToday = placementSentToday;
    this.trackingDomains = trackingDomains;
    this.mailboxProviders = mailboxProviders;
    this.loginCheck = loginCheck;
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

  private async view(db: Executor, workspace: ZonedWorkspace, row: AccountRow): Promise<Schemas['EmailAccount']> {
    return (await this.views(db, workspace, [row]))[0];
  }

  private async views(db: Executor, workspace: ZonedWorkspace, rows: AccountRow[]): Promise<Schemas['EmailAccount'][]> {
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

  /** Changes an account's settings (POST /v2/account/update): its tracking domain, its bounce protection. */
  async update(
    workspace: ZonedWorkspace,
    input: Schemas['EmailAccountUpdateRequest'],
  ): Promise<Schemas['EmailAccount']> {
    return this.db.transaction(async (trx) => {
      let row = await this.require(trx, workspace.id, input.accountId, true);
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
      return this.view(trx, workspace, row);
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
    const before = await this.require(this.db, workspace.id, input.accountId);
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
    await this.checkLogins(
      before,
      secret(smtpPassword, 'smtp'),
      hasImapLogin(before) ? secret(imapPassword, 'imap') : null,
    );
    return this.db.transaction(async (trx) => {
      let row = await this.require(trx, workspace.id, input.accountId, true);
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
      return this.view(trx, workspace, row);
    });
  }

  private async require(db: Executor, workspaceId: string, id: string, forUpdate = false): Promise<AccountRow> {
    const row = await this.store.find(db, workspaceId, id, { forUpdate });
    if (!row) throw accountNotFound();
    return row;
  }

  async connect(workspaceId: string, body: ConnectRequest): Promise<Schemas['EmailAccount']> {
    // No key, no account: answer 409 before touching anything.
    this.secrets.ensureKey('emailAccounts');
    const smtp = body.smtp;
    if (!smtp)
      throw invalid('An SMTP login (smtp) or an OAuth grant (auth) is required.', [
        detail('smtp', 'is required without auth', 'required'),
      ]);
    const defaults = PROVIDER_SERVERS[body.provider];
    const smtpHost = smtp.host ?? defaults.smtp?.[0];
    const smtpPort = smtp.port ?? defaults.smtp?.[1];
    const missing = [!smtpHost && 'host', !smtpPort && 'port'].filter((f): f is string => Boolean(f));
    if (missing.length) {
      throw invalid(
        `Provider smtp needs the SMTP ${missing.join(' and ')}.`,
        missing.map((f) => detail(`smtp.${f}`, 'is required for provider smtp', 'required')),
      );
    }
    if (body.imap && !(body.imap.host ?? defaults.imap?.[0])) {
      throw invalid('Provider smtp needs the IMAP host when an IMAP login is given.', [
        detail('imap.host', 'is required for provider smtp', 'required'),
      ]);
    }
    const email = body.email.trim().toLowerCase();
    const id = newId();
    const row = this.newRow(id, workspaceId, email, body, {
      provider: body.provider,
      auth_type: 'password',
      oauth_provider: null,
      smtp_host: smtpHost!,
      smtp_port: smtpPort!,
      smtp_user: smtp.username ?? email,
      smtp_password_enc: this.secrets.encrypt(smtp.password, `${id}:smtp`),
      imap_host: body.imap ? (body.imap.host ?? defaults.imap![0]) : null,
      imap_port: body.imap ? (body.imap.port ?? defaults.imap?.[1] ?? 993) : null,
      imap_user: body.imap ? (body.imap.username ?? email) : null,
      imap_password_enc: body.imap ? this.secrets.encrypt(body.imap.password, `${id}:imap`) : null,
    });
    if (body.warmup !== undefined && !body.imap) throw warmupNeedsImap();
    await this.checkLogins(row, { password: smtp.password }, body.imap ? { password: body.imap.password } : null);
    await this.db.transaction((trx) => this.insertNew(trx, row));
    return toAccount(
      row,
      { campaign: 0, warmup: 0 },
      row.tracking_domain_id
        ? ((await this.trackingDomains.choices(this.db, workspaceId, [row.tracking_domain_id])).get(
            row.tracking_domain_id,
          ) ?? null)
        : null,
      (await this.mailboxProviders(this.db, [mailDomainOf(email)])).get(mailDomainOf(email)) ?? null,
    );
  }

  /** A new account's row: its logins (`logins`) and the request's daily limit and warm-up (checked). */
  newRow(
    id: string,
    workspaceId: string,
    email: string,
    body: { dailyLimit?: number; warmup?: WarmupInput; trackingDomainId?: string | null },
    logins: Pick<
      AccountRow,
      | 'provider'
      | 'auth_type'
      | 'oauth_provider'
      | 'smtp_host'
      | 'smtp_port'
      | 'smtp_user'
      | 'smtp_password_enc'
      | 'imap_host'
      | 'imap_port'
      | 'imap_user'
      | 'imap_password_enc'
    >,
  ): AccountRow {
    const now = this.clock.now();
    const row: AccountRow = {
      id,
      workspace_id: workspaceId,
      email,
      status: 'active',
      daily_limit: body.dailyLimit ?? 50,
      ...logins,
      warmup_enabled: body.warmup !== undefined,
      warmup_status: body.warmup !== undefined ? 'active' : 'paused',
      warmup_daily_limit: body.warmup?.dailyLimit ?? WARMUP_DEFAULTS.dailyLimit,
      warmup_increase_per_day: body.warmup?.increasePerDay ?? WARMUP_DEFAULTS.increasePerDay,
      warmup_reply_rate_percent: body.warmup?.replyRatePercent ?? WARMUP_DEFAULTS.replyRatePercent,
      warmup_window_from: body.warmup?.windowFrom ?? WARMUP_DEFAULTS.windowFrom,
      warmup_window_to: body.warmup?.windowTo ?? WARMUP_DEFAULTS.windowTo,
      warmup_weekdays_only: body.warmup?.weekdaysOnly ?? WARMUP_DEFAULTS.weekdaysOnly,
      warmup_reason_code: null,
      warmup_reason_message: null,
      warmup_started_at: body.warmup !== undefined ? now : null,
      tracking_domain_id: body.trackingDomainId ?? null,
      bounce_rate_percent: null,
      bounce_window: null,
      created_at: now,
      updated_at: now,
    };
    if (body.warmup !== undefined) checkWindow(row);
    return row;
  }

  /**
   * Stores a new account under the plan's cap, in the caller's transaction (which locks the workspace), and
   * records `account.connected` with it.
   */
  async insertNew(trx: Executor, row: AccountRow): Promise<void> {
    await this.workspaces.lock(trx, row.workspace_id);
    const { maxEmailAccounts: cap } = await this.workspaces.planCaps(trx, row.workspace_id);
    if (cap !== null && (await this.store.count(trx, row.workspace_id)) >= cap) {
      throw forbidden(`Your plan allows at most ${cap} email accounts; remove one or upgrade the plan.`);
    }
    if (await this.store.emailTaken(trx, row.workspace_id, row.email)) throw duplicate(row.email);
    if (row.tracking_domain_id)
      await this.trackingDomains.requireVerified(trx, row.workspace_id, row.tracking_domain_id, 'trackingDomainId');
    try {
      await this.store.insert(trx, row);
    } catch (err) {
      // Two connects of one address at once: the unique index decides.
      if (isUniqueViolation(err)) throw duplicate(row.email);
      throw err;
    }
    const connected: Schemas['AccountConnectedData'] = {
      accountId: row.id,
      email: row.email,
      provider: row.provider,
      auth: toAccountAuth(row),
    };
    await this.events.record(trx, { workspaceId: row.workspace_id, type: 'account.connected', data: connected });
  }

  /**
   * Logs in to SMTP (and IMAP when given) with a password or an access token in hand, before anything is
   * stored; a failure names which and why.
   */
  async checkLogins(row: AccountRow, smtp: LoginSecret, imap: LoginSecret | null): Promise<void> {
    if (!this.loginCheck) return;
    const logins: ({ kind: 'smtp' | 'imap'; host: string; port: number; username: string } & LoginSecret)[] = [
      { kind: 'smtp', host: row.smtp_host!, port: row.smtp_port!, username: row.smtp_user!, ...smtp },
    ];
    if (imap)
      logins.push({ kind: 'imap', host: row.imap_host!, port: row.imap_port!, username: row.imap_user!, ...imap });
    const failures = await Promise.all(
      logins.map(async ({ kind, ...server }) => ({
        kind,
        failure: await this.loginCheck![kind]({
          accountId: row.id,
          workspaceId: row.workspace_id,
          email: row.email,
          ...server,
        }),
      })),
    );
    const failed = failures.filter((f) => f.failure !== null);
    if (failed.length) {
      throw invalid(
        failed.map((f) => `The ${f.kind.toUpperCase()} login failed: ${f.failure!.message}`).join(' '),
        failed.map((f) => detail(f.kind, f.failure!.message, f.failure!.reason)),
        'mail_login_failed',
      );
    }
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

  async enableWarmup(workspace: ZonedWorkspace, accountId: string, input: WarmupInput = {}) {
    return this.changeWarmup(workspace, accountId, (row) => {
      if (row.warmup_status === 'banned') {
        throw conflict('Warm-up cannot be enabled: the warm-up network has banned this account.', [
          detail('accountId', row.warmup_reason_message ?? 'banned', 'warmup_banned'),
        ]);
      }
      if (!hasImapLogin(row)) throw warmupNeedsImap();
      const columns: WarmupColumns = {
        warmup_enabled: true,
        warmup_status: 'active',
        warmup_reason_code: null,
        warmup_reason_message: null,
        ...warmupColumns(input),
      };
      checkWindow({ ...row, ...columns });
      // From paused the ramp starts again at day 1: a mailbox that stopped is treated as new.
      if (!row.warmup_enabled || row.warmup_status !== 'active') columns.warmup_started_at = this.clock.now();
      return columns;
    });
  }

  async pauseWarmup(workspace: ZonedWorkspace, accountId: string) {
    return this.changeWarmup(workspace, accountId, (row) =>
      // A ban is the network's decision: pausing does not lift it.
      row.warmup_status === 'banned'
        ? { warmup_enabled: false }
        : {
            warmup_enabled: false,
            warmup_status: 'paused',
            warmup_reason_code: 'paused_by_user',
            warmup_reason_message: 'Warm-up was paused through the API.',
          },
    );
  }

  /** Applies `change` under a row lock; `changed` is false when it would change nothing (idempotent calls). */
  private async changeWarmup(workspace: ZonedWorkspace, accountId: string, change: (row: AccountRow) => WarmupColumns) {
    return this.db.transaction(async (trx) => {
      const before = await this.require(trx, workspace.id, accountId, true);
      let row = before;
      const columns = change(row);
      const changed = (Object.keys(columns) as (keyof WarmupColumns)[]).some(
        (k) => k !== 'warmup_started_at' && row[k] !== columns[k],
      );
      if (changed) {
        row = await this.store.update(trx, workspace.id, row.id, { ...columns, updated_at: this.clock.now() });
        await this.recordWarmupChange(trx, before, row);
      }
      return { changed, account: await this.view(trx, workspace, row) };
    });
  }

  /** Records account.warmupEnabled / warmupPaused / warmupBanned when the state (not only a setting) changed. */
  private async recordWarmupChange(trx: Executor, before: AccountRow, after: AccountRow): Promise<void> {
    if (before.warmup_enabled === after.warmup_enabled && before.warmup_status === after.warmup_status) return;
    const type =
      after.warmup_status === 'banned'
        ? 'account.warmupBanned'
        : after.warmup_enabled && after.warmup_status === 'active'
          ? 'account.warmupEnabled'
          : 'account.warmupPaused';
    await this.events.record(trx, {
      workspaceId: after.workspace_id,
      type,
      data: {
        accountId: after.id,
        email: after.email,
        status: after.warmup_status,
        enabled: after.warmup_enabled,
        reason: warmupReason(after),
      },
    });
  }

  // --- the warm-up pool's side (the warmup module calls these; any workspace's account) ---

  /** Accounts of every workspace with warm-up enabled and running, and whether each is in the pool now. */
  async warmupAccounts(db: Executor): Promise<(AccountRow & { in_pool: boolean })[]> {
    return (await this.store.warmupEnabled(db)).map((row) => ({ ...row, in_pool: inWarmupPool(row) }));
  }

  async findAnyAccount(db: Executor, accountId: string): Promise<AccountRow | undefined> {
    return this.store.findAny(db, accountId);
  }

  /**
   * Protection: pauses or bans the account's warm-up with a reason code, in the caller's transaction, and
   * records the event; false when it was no longer running.
   */
  async stopWarmup(
    trx: Executor,
    accountId: string,
    status: 'paused' | 'banned',
    reason: WarmupReasonValue,
  ): Promise<boolean> {
    const before = await this.store.findAny(trx, accountId, { forUpdate: true });
    if (!before || (before.warmup_status === status && !before.warmup_enabled)) return false;
    const columns: WarmupColumns = {
      warmup_enabled: false,
      warmup_status: status,
      warmup_reason_code: reason.code,
      warmup_reason_message: reason.message.slice(0, 500),
    };
    await this.store.updateWarmup(trx, accountId, { ...columns, updated_at: this.clock.now() });
    await this.recordWarmupChange(trx, before, { ...before, ...columns });
    return true;
  }

  /** A note on a running warm-up (`pool_too_small`), or null to clear it; no event (the state did not change). */
  async noteWarmup(db: Executor, accountId: string, reason: WarmupReasonValue | null): Promise<void> {
    await this.store.updateWarmup(db, accountId, {
      warmup_reason_code: reason?.code ?? null,
      warmup_reason_message: reason?.message ?? null,
      updated_at: this.clock.now(),
    });
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
      const row = await this.require(trx, workspaceId, accountId, true);
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

  async vitals(
    workspace: ZonedWorkspace,
    body: Schemas['EmailAccountVitalsRequest'],
  ): Promise<Schemas['EmailAccountVitals'][]> {
    const rows = await this.store.findMany(this.db, workspace.id, body.accountIds);
    const byId = new Map(rows.map((r) => [r.id, r]));
    const unknown = body.accountIds.map((id, i) => ({ id, i })).filter(({ id }) => !byId.has(id));
    if (unknown.length) {
      throw notFound(
        unknown.length === 1 ? 'Email account not found.' : `${unknown.length} email accounts not found.`,
        unknown.map(({ id, i }) => detail(`accountIds.${i}`, `email account ${id} not found`, 'not_found')),
      );
    }
    const selectors = body.dkimSelectors ?? this.config.dkimSelectors;
    // One look-up set per domain, however many accounts share it.
    const domains = new Map<string, Promise<DomainVitals>>();
    const domainOfRow = (row: AccountRow) => domainOf(row.email).toLowerCase();
    for (const row of rows) {
      const domain = domainOfRow(row);
      if (!domains.has(domain)) domains.set(domain, checkDomain(this.dns, domain, selectors));
    }
    const since = new Date(this.clock.now().getTime() - REPUTATION_DAYS * 86_400_000);
    const a = memoizedA(this.dns);
    const zones = { ip: this.config.dnsblIpZones, domain: this.config.dnsblDomainZones };
    const health = await this.warmupHealth(this.db, body.accountIds);
    return Promise.all(
      body.accountIds.map(async (id) => {
        const row = byId.get(id)!;
        const domain = domainOfRow(row);
        const smtpHost = row.smtp_host ?? PROVIDER_SERVERS[row.provider].smtp?.[0] ?? domain;
        const [checks, blocklists, totals] = await Promise.all([
          domains.get(domain)!,
          checkBlocklists(a, domain, smtpHost, zones),
          this.events.accountCountsSince(this.db, {
            workspaceId: workspace.id,
            accountId: id,
            since,
            timezone: workspace.timezone,
          }),
        ]);
        const reputation = {
          days: REPUTATION_DAYS,
          sent: totals.sent,
          bounced: totals.bounced,
          replied: totals.replied,
          unsubscribed: totals.unsubscribed,
          bounceRatePercent: percent(totals.bounced, totals.sent),
          replyRatePercent: percent(totals.replied, totals.sent),
          unsubscribeRatePercent: percent(totals.unsubscribed, totals.sent),
        } as const;
        return {
          accountId: row.id,
          email: row.email,
          domain,
          ...checks,
          blocklists,
          reputation,
          warmupHealth: health.get(id)!,
          ...scoreOf({
            domain,
            checks,
            blocklists,
            bounceRatePercent: reputation.bounceRatePercent,
            unsubscribeRatePercent: reputation.unsubscribeRatePercent,
            warmupHealth: health.get(id)!,
          }),
        };
      }),
    );
  }
}

/** What a login is tried with before an account is stored: a password, or an access token of the grant to store. */
export type LoginSecret = Pick<MailLogin, 'password' | 'accessToken'>;

/** Tries an SMTP or IMAP login (the mail module does); null when it worked. */
export type MailLoginCheck = Record<'smtp' | 'imap', (login: MailLogin) => Promise<LoginFailure | null>>;

/** What changed when a connection failure changed an account's status (the caller records `account.statusChanged`). */
export interface AccountStatusChange {
  accountId: string;
  workspaceId: string;
  email: string;
  previous: AccountRow['status'];
  status: AccountRow['status'];
  reason: string;
}

/** Waits before the next try of a server that could not be reached: 1 minute, doubling, at most 30 minutes. */
const CONNECTION_RETRY_WAITS = { firstWaitMs: 60_000, maxWaitMs: 30 * 60_000 };

/** What AccountMailAccess is built from, by name. */
export interface AccountMailAccessDeps {
  store: AccountStore;
  secrets: SecretBox;
  clock: Clock;
  events: Pick<EventService, 'record'>;
}

export class AccountMailAccess {
  private readonly store: AccountStore;
  private readonly secrets: SecretBox;
  private readonly clock: Clock;
  private readonly events: Pick<EventService, 'record'>;

  constructor({ store, secrets, clock, events }: AccountMailAccessDeps) {
    this.store = store;
    this.secrets = secrets;
    this.clock = clock;
    this.events = events;
  }

  /** The account's own bounce protection (nulls: the workspace's); both null for an account that is gone. */
  async bounceRule(db: Executor, accountId: string): Promise<{ ratePercent: number | null; window: number | null }> {
    const row = await this.store.findAny(db, accountId);
    return { ratePercent: row?.bounce_rate_percent ?? null, window: row?.bounce_window ?? null };
  }

  /** Accounts whose mailbox the reader reads now (an IMAP login, not in connectionError, not waiting for a retry). */
  readableImapAccounts(db: Executor): Promise<{ id: string; workspace_id: string }[]> {
    return this.store.readableImapAccounts(db, this.clock.now());
  }

  /**
   * The account's SMTP or IMAP server could not be reached (refused, timed out, a 4xx greeting, an address this
   * process may not reach): the account keeps its status and the server is tried again after a wait that
   * doubles with each failure in a row. Returns when.
   */
  async connectionFailed(
    db: Executor,
    accountId: string,
    protocol: RetryProtocol,
    reason: string,
  ): Promise<{ failures: number; nextTryAt: Date }> {
    const row = await this.store.noteConnectionFailure(
      db,
      { accountId, protocol, reason: reason.slice(0, 1000), now: this.clock.now() },
      CONNECTION_RETRY_WAITS,
    );
    return { failures: row.failures, nextTryAt: new Date(row.next_try_at) };
  }

  /**
   * Holds these accounts' send slot until the caller's transaction ends: every sender (campaigns, warm-up)
   * counts an account's sends of the day and claims its next ones under this lock, so two claims of one
   * account at one instant cannot both take the last of its daily limit.
   */
  lockForSending(db: Executor, accountIds: string[]): Promise<void> {
    return this.store.lockRows(db, [...new Set(accountIds)].sort());
  }

  /** The account's server answered: it is no longer waiting for a retry. */
  connectionWorks(db: Executor, accountId: string, protocol: RetryProtocol): Promise<void> {
    return this.store.clearConnectionFailure(db, accountId, protocol);
  }

  /** The account's IMAP login, or null when it has none or cannot log in (connectionError, reconnectRequired). */
  async imapLogin(db: Executor, accountId: string): Promise<MailLogin | null> {
    const row = await this.store.findAny(db, accountId);
    if (!row || row.status === 'connectionError' || row.status === 'reconnectRequired') return null;
    return this.login(row, 'imap', row.imap_host, row.imap_port, row.imap_user, row.imap_password_enc);
  }

  /** The account's SMTP login (the workspace's account only), or null. */
  async smtpLogin(db: Executor, workspaceId: string, accountId: string): Promise<MailLogin | null> {
    const row = await this.store.findAny(db, accountId);
    if (!row || row.workspace_id !== workspaceId) return null;
    return this.login(row, 'smtp', row.smtp_host, row.smtp_port, row.smtp_user, row.smtp_password_enc);
  }

  /** The SMTP or IMAP login of an account row the caller already holds (the warm-up pool's), or null when it has none. */
  loginFromRow(row: AccountRow, kind: 'smtp' | 'imap'): MailLogin | null {
    return kind === 'smtp'
      ? this.login(row, 'smtp', row.smtp_host, row.smtp_port, row.smtp_user, row.smtp_password_enc)
      : this.login(row, 'imap', row.imap_host, row.imap_port, row.imap_user, row.imap_password_enc);
  }

  private login(
    row: AccountRow,
    kind: 'smtp' | 'imap',
    host: string | null,
    port: number | null,
    user: string | null,
    passwordEnc: string | null,
  ): MailLogin | null {
    const oauth = row.auth_type === 'oauth2';
    if (!host || !port || (!passwordEnc && !oauth)) return null;
    // An OAuth account's mail module asks its grant for an access token at login.
    const password = oauth ? null : this.secrets.decrypt(passwordEnc!, `${row.id}:${kind}`);
    return {
      accountId: row.id,
      workspaceId: row.workspace_id,
      email: row.email,
      host,
      port,
      username: user ?? row.email,
      password,
    };
  }

  /**
   * Puts the account in connectionError with a reason, in the caller's transaction, with `account.statusChanged`;
   * null when it already is (or is gone).
   */
  async markConnectionError(db: Executor, accountId: string, reason: string): Promise<AccountStatusChange | null> {
    return this.changeStatus(db, accountId, 'connectionError', reason);
  }

  /**
   * Sets a status the mail workers decide (errors, bounce protection) with its reason and records
   * `account.statusChanged`, in the caller's transaction; null when unchanged.
   */
  async changeStatus(
    db: Executor,
    accountId: string,
    status: AccountRow['status'],
    reason: string,
  ): Promise<AccountStatusChange | null> {
    const row = await this.store.findAny(db, accountId, { forUpdate: true });
    // A dead grant is left only by reconnecting: what a send or read made of it later changes nothing.
    if (!row || row.status === status || row.status === 'reconnectRequired') return null;
    await this.store.setStatus(db, row.id, status, reason.slice(0, 500), this.clock.now());
    const change = { accountId: row.id, email: row.email, previous: row.status, status, reason };
    await this.events.record(db, { workspaceId: row.workspace_id, type: 'account.statusChanged', data: change });
    return { ...change, workspaceId: row.workspace_id };
  }
}

const duplicate = (email: string) =>
  conflict(`An email account with the address ${email} is already connected in this workspace.`, [
    detail('email', 'is already connected', 'duplicate'),
  ]);
