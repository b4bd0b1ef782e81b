/**
 * How the mail module logs in to an account's SMTP or IMAP server now: with its password, or with an access
 * token of its OAuth grant (XOAUTH2 / OAUTHBEARER). The one place that answers it is `MailCredentials`:
 * access tokens are kept until shortly before they expire, and a refresh happens once across processes (the
 * grant's row is locked while the provider is asked, and a rotated refresh token is stored in that same
 * transaction). A grant the provider refuses dies: the account's owner is told (GrantDeathHandler) and
 * every later login says `reconnect_required` without asking the provider again. A token a mail server
 * refuses before its time is dropped and the grant refreshed once (afterRefusal); only when that refresh or
 * the new token is refused too does the refusal reach the account.
 */
import type { Clock } from '../../platform/clock';
import type { Db, Executor } from '../../db';
import type { SecretBox } from '../../platform/secrets';
import type { GrantStore, GrantRow } from './grants';
import { OAuthError, PROVIDER_SETTING, type OAuthClients, type OAuthProviderName, type TokenAnswer } from './oauth';

/** A decrypted mail-server login, for the workers only (never returned by the API). */
export interface MailLogin {
  accountId: string;
  workspaceId: string;
  email: string;
  host: string;
  port: number;
  username: string;
  /** The password; null for an account that logs in with its OAuth grant. */
  password: string | null;
  /** An access token in hand (a grant proved before it is stored); without it, the stored grant's. */
  accessToken?: string;
}

/** What nodemailer and imapflow are given to log in. */
export type LoginAuth = { user: string; pass: string } | { user: string; accessToken: string };

/** Why a login try failed: `auth_failed`, `private_destination`, `unreachable` (refused, unknown host, timeout). */
export interface LoginFailure {
  reason: 'auth_failed' | 'private_destination' | 'unreachable' | 'reconnect_required';
  message: string;
}

export interface ConnectionOptions {
  /** Whether loopback and private addresses may be reached (tests, self-hosted relays). */
  allowPrivate: boolean;
  timeoutMs: number;
  /** How to log in to the account now (MailCredentials.authOf). */
  authOf(login: MailLogin): Promise<LoginAuth>;
  /**
   * The server refused `auth`: the login to try once more (a refreshed access token), or null when there is
   * none (a password, a token in hand) and the refusal stands (MailCredentials.afterRefusal).
   */
  afterRefusal(login: MailLogin, auth: LoginAuth): Promise<LoginAuth | null>;
}

/** The account's OAuth grant is dead (revoked, expired, refused): a person must connect the mailbox again. */
export class GrantDeadError extends Error {
  readonly code = 'reconnect_required';
}

/**
 * What the account's owner does when its grant dies, in the transaction that records the death: the
 * account turns `reconnectRequired`, its event is recorded, campaigns left without a sender pause.
 */
export type GrantDeathHandler = (trx: Executor, accountId: string, reason: string) => Promise<void>;

/** An access token is refreshed when it has less than this left (a login takes seconds, a send batch minutes). */
const REFRESH_MARGIN_MS = 5 * 60_000;

const refreshContext = (accountId: string) => `${accountId}:oauth_refresh`;
const accessContext = (accountId: string) => `${accountId}:oauth_access`;

/** What MailCredentials is built from, by name. */
interface MailCredentialsDeps {
  db: Db;
  store: GrantStore;
  clients: OAuthClients;
  secrets: SecretBox;
  clock: Clock;
  grantDied: GrantDeathHandler;
}

export class MailCredentials {
  /** Decrypted access tokens of this process, until REFRESH_MARGIN_MS before they expire. */
  private readonly cached = new Map<string, { token: string; expiresAt: number }>();
  /** One look-up or refresh per account at a time in this process (once). */
  private readonly pending = new Map<string, Promise<string>>();
  /** Refreshes this process asked a provider for (tests and the bench read it). */
  refreshes = 0;

  private readonly db: Db;
  private readonly store: GrantStore;
  private readonly clients: OAuthClients;
  private readonly secrets: SecretBox;
  private readonly clock: Clock;
  private readonly grantDied: GrantDeathHandler;

  constructor({ db, store, clients, secrets, clock, grantDied }: MailCredentialsDeps) {
    this.db = db;
    this.store = store;
    this.clients = clients;
    this.secrets = secrets;
    this.clock = clock;
    this.grantDied = grantDied;
  }

  /** The login for nodemailer or imapflow: the password, or a valid access token of the grant. */
  async authOf(login: MailLogin): Promise<LoginAuth> {
    if (login.password !== null) return { user: login.username, pass: login.password };
    return { user: login.username, accessToken: login.accessToken ?? (await this.accessToken(login.accountId)) };
  }

  /** A valid access token of the account's grant. Throws GrantDeadError, or OAuthError when the provider fails. */
  accessToken(accountId: string): Promise<string> {
    const hit = this.cached.get(accountId);
    if (hit && hit.expiresAt - this.clock.now().getTime() > REFRESH_MARGIN_MS) return Promise.resolve(hit.token);
    return this.once(accountId, () => this.freshToken(accountId, null));
  }

  /**
   * A mail server refused an access token we believed valid (revoked, or expired early): the token is dropped
   * and the grant refreshed once, and the new token is the one login tried again. A token another process
   * refreshed meanwhile is taken instead of a second refresh. Null for a password or a token in hand, whose
   * refusal stands. Throws GrantDeadError when the provider refuses the refresh (the account turns
   * reconnectRequired), or OAuthError when it does not answer.
   */
  async afterRefusal(login: MailLogin, auth: LoginAuth): Promise<LoginAuth | null> {
    if (login.password !== null || login.accessToken !== undefined || !('accessToken' in auth)) return null;
    const refused = auth.accessToken;
    if (this.cached.get(login.accountId)?.token === refused) this.cached.delete(login.accountId);
    let token = await this.once(login.accountId, () => this.freshToken(login.accountId, refused));
    // A look-up that began before the refusal answered the refused token: refresh now.
    if (token === refused) token = await this.once(login.accountId, () => this.freshToken(login.accountId, refused));
    return { user: login.username, accessToken: token };
  }

  /** One look-up or refresh per account at a time in this process; the others wait for its answer. */
  private once(accountId: string, work: () => Promise<string>): Promise<string> {
    let pending = this.pending.get(accountId);
    if (!pending) {
      pending = work().finally(() => this.pending.delete(accountId));
      this.pending.set(accountId, pending);
    }
    return pending;
  }

  /** Stores a proved grant for the account (a connect or reconnect), in the caller's transaction. */
  async storeGrant(
    trx: Executor,
    accountId: string,
    provider: OAuthProviderName,
    refreshToken: string,
    answer: TokenAnswer,
  ): Promise<void> {
    const now = this.clock.now();
    const expiresAt = new Date(now.getTime() + answer.expiresInSeconds * 1000);
    await this.store.put(trx, {
      account_id: accountId,
      provider,
      refresh_token_enc: this.secrets.encrypt(refreshToken, refreshContext(accountId)),
      access_token_enc: this.secrets.encrypt(answer.accessToken, accessContext(accountId)),
      access_expires_at: expiresAt,
      revoked_at: null,
      revoked_reason: null,
      created_at: now,
      updated_at: now,
    });
    this.cached.set(accountId, { token: answer.accessToken, expiresAt: expiresAt.getTime() });
  }

  /**
   * The stored access token while it is fresh (and is not the one a server `refused`); otherwise one refresh,
   * under the grant's row lock.
   */
  private async freshToken(accountId: string, refused: string | null): Promise<string> {
    const stored = await this.store.find(this.db, accountId);
    const usable = stored && this.usable(stored, refused);
    if (usable) return usable;
    let died: string | null = null;
    const token = await this.db.transaction(async (trx) => {
      const row = await this.store.find(trx, accountId, { forUpdate: true });
      if (!row) {
        died = 'the account has no OAuth grant';
        return null;
      }
      if (row.revoked_at) {
        died = row.revoked_reason ?? 'the grant was revoked';
        return null;
      }
      // Another process refreshed while this one waited for the lock.
      const again = this.usable(row, refused);
      if (again) return again;
      const provider = this.clients.find(row.provider as OAuthProviderName);
      if (!provider)
        throw new OAuthError(
          'provider_error',
          `provider ${row.provider} is not configured (${PROVIDER_SETTING[row.provider as OAuthProviderName] ?? 'OAUTH_*'})`,
        );
      let answer: TokenAnswer;
      try {
        this.refreshes += 1;
        answer = await this.clients.refresh(
          provider,
          this.secrets.decrypt(row.refresh_token_enc, refreshContext(accountId)),
        );
      } catch (err) {
        if (!(err instanceof OAuthError && err.code === 'invalid_grant')) throw err;
        died = err.message.slice(0, 500);
        const now = this.clock.now();
        await this.store.update(trx, accountId, {
          revoked_at: now,
          revoked_reason: died,
          access_token_enc: null,
          access_expires_at: null,
          updated_at: now,
        });
        await this.grantDied(trx, accountId, died);
        return null;
      }
      const now = this.clock.now();
      const expiresAt = new Date(now.getTime() + answer.expiresInSeconds * 1000);
      await this.store.update(trx, accountId, {
        access_token_enc: this.secrets.encrypt(answer.accessToken, accessContext(accountId)),
        access_expires_at: expiresAt,
        // A provider that rotates refresh tokens invalidates the old one: the new one is stored with the refresh.
        ...(answer.refreshToken
          ? { refresh_token_enc: this.secrets.encrypt(answer.refreshToken, refreshContext(accountId)) }
          : {}),
        updated_at: now,
      });
      this.cached.set(accountId, { token: answer.accessToken, expiresAt: expiresAt.getTime() });
      return answer.accessToken;
    });
    if (token === null) {
      this.cached.delete(accountId);
      throw new GrantDeadError(`reconnect_required: ${died}`);
    }
    return token;
  }

  private usable(row: GrantRow, refused: string | null): string | null {
    if (row.revoked_at || !row.access_token_enc || !row.access_expires_at) return null;
    const expiresAt = new Date(row.access_expires_at).getTime();
    if (expiresAt - this.clock.now().getTime() <= REFRESH_MARGIN_MS) return null;
    const token = this.secrets.decrypt(row.access_token_enc, accessContext(row.account_id));
    if (token === refused) return null;
    this.cached.set(row.account_id, { token, expiresAt });
    return token;
  }
}
