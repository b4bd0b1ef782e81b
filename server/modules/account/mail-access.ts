/**
 * What the mail side needs of an account (sending, the inbox, warm-up, placement tests): its logins, its
 * bounce rule, the send lock, and the status changes its servers cause (a refused login, a server that
 * cannot be reached and its back-off), each recorded with `account.statusChanged`.
 */
import type { Executor } from '../../db';
import type { Clock } from '../../platform/clock';
import type { SecretBox } from '../../platform/secrets';
import type { EventService } from '../events';
import type { MailLogin } from '../mail';
import type { AccountRow, AccountStore, RetryProtocol } from './store';

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
