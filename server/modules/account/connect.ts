/**
 * Connecting an account with a password (POST /v2/account/connect): the provider's servers filled in, the
 * passwords encrypted, the logins tried before anything is stored, and the row stored under the plan's cap
 * with `account.connected`.
 */
import type { components } from '../../../generated/api';
import { isUniqueViolation, type Db, type Executor } from '../../db';
import type { Clock } from '../../platform/clock';
import { created } from '../../platform/cause';
import { newId } from '../../platform/ids';
import { conflict, detail, forbidden, invalid } from '../../platform/errors';
import type { SecretBox } from '../../platform/secrets';
import type { EventService } from '../events';
import type { LoginFailure, MailLogin } from '../mail';
import type { WorkspaceService } from '../workspace';
import { toAccount, toAccountAuth } from './mapping';
import type { AccountRow, AccountStore } from './store';
import { mailDomainOf, type AccountTrackingDomains, type MailboxProvidersOf } from './views';
import { checkWindow, WARMUP_DEFAULTS, warmupNeedsImap, type WarmupInput } from './warmup-settings';

type Schemas = components['schemas'];
type ConnectRequest = Schemas['EmailAccountConnectRequest'];

/** The provider's servers, used when the request gives no host/port. */
export const PROVIDER_SERVERS: Record<
  ConnectRequest['provider'],
  { smtp?: [string, number]; imap?: [string, number] }
> = {
  google: { smtp: ['smtp.gmail.com', 587], imap: ['imap.gmail.com', 993] },
  microsoft: { smtp: ['smtp.office365.com', 587], imap: ['outlook.office365.com', 993] },
  smtp: {},
};

/** What a login is tried with before an account is stored: a password, or an access token of the grant to store. */
export type LoginSecret = Pick<MailLogin, 'password' | 'accessToken'>;

/** Tries an SMTP or IMAP login (the mail module does); null when it worked. */
export type MailLoginCheck = Record<'smtp' | 'imap', (login: MailLogin) => Promise<LoginFailure | null>>;

const duplicate = (email: string) =>
  conflict(`An email account with the address ${email} is already connected in this workspace.`, [
    detail('email', 'is already connected', 'duplicate'),
  ]);

/** What AccountConnector is built from, by name. */
interface AccountConnectorDeps {
  db: Db;
  store: AccountStore;
  events: EventService;
  workspaces: WorkspaceService;
  secrets: SecretBox;
  clock: Clock;
  trackingDomains: AccountTrackingDomains;
  mailboxProviders: MailboxProvidersOf;
  /** Tries the logins before an account is stored; null skips it (VERIFY_MAIL_LOGINS=0). */
  loginCheck: MailLoginCheck | null;
}

/** Connects accounts with a password; the OAuth flow stores its accounts through newRow and insertNew. */
export class AccountConnector {
  private readonly db: Db;
  private readonly store: AccountStore;
  private readonly events: EventService;
  private readonly workspaces: WorkspaceService;
  private readonly secrets: SecretBox;
  private readonly clock: Clock;
  private readonly trackingDomains: AccountTrackingDomains;
  private readonly mailboxProviders: MailboxProvidersOf;
  private readonly loginCheck: MailLoginCheck | null;

  constructor({
    db,
    store,
    events,
    workspaces,
    secrets,
    clock,
    trackingDomains,
    mailboxProviders,
    loginCheck,
  }: AccountConnectorDeps) {
    this.db = db;
    this.store = store;
    this.events = events;
    this.workspaces = workspaces;
    this.secrets = secrets;
    this.clock = clock;
    this.trackingDomains = trackingDomains;
    this.mailboxProviders = mailboxProviders;
    this.loginCheck = loginCheck;
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
    const id = created(newId());
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
}
