/**
 * Connecting mailboxes by OAuth: the authorization-code flow with PKCE (start, the public callback, the
 * flow's outcome) and a grant an integrator already holds (`POST /v2/account/connect` with `auth`). Both
 * end in `establish`: the mailbox address read from the provider must be the one expected, the mail scopes
 * granted, and real SMTP and IMAP logins with the access token must work before the account and its grant
 * are stored. A mailbox already connected in the workspace is reconnected (same account), never duplicated.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { components } from '../../../generated/api';
import type { Clock } from '../../platform/clock';
import type { Db, Executor } from '../../db';
import { conflict, detail, DomainError, forbidden, invalid, notFound, unavailable } from '../../platform/errors';
import { newId } from '../../platform/ids';
import type { SecretBox } from '../../platform/secrets';
import type { EventService } from '../events';
import {
  type OAuthClients,
  OAuthError,
  type OAuthProvider,
  type OAuthProviderName,
  PROVIDER_SETTING,
  type TokenAnswer,
  pkcePair,
} from '../mail';
import type { ZonedWorkspace } from '../workspace';
import type { OAuthSessionRow, OAuthSessionStore } from './oauth-sessions';
import { accountNotFound, validateWarmup, type AccountService, type WarmupInput } from './service';
import type { AccountRow, AccountStore } from './store';

type Schemas = components['schemas'];
type FailureCode = NonNullable<Schemas['OAuthSession']['reason']>['code'];

/** The public callback's path under PUBLIC_URL: the redirect URI registered with each provider. */
export const CALLBACK_PATH = '/oauth/callback';
const STATE_TTL_MS = 10 * 60_000;

/** What the account module needs of the mail module to connect a grant. */
export interface MailGrants {
  clients: OAuthClients;
  storeGrant(
    trx: Executor,
    accountId: string,
    provider: OAuthProviderName,
    refreshToken: string,
    answer: TokenAnswer,
  ): Promise<void>;
}

/** Why a grant was not connected, as a flow's reason code; `answer` is what the connect operation throws. */
class ConnectFailure extends Error {
  constructor(
    readonly code: FailureCode,
    message: string,
    readonly answer: DomainError = invalid(message),
  ) {
    super(message);
  }
}

/** What the callback shows: a page, or a redirect to the flow's allowed return URL. */
export type CallbackOutcome =
  | { kind: 'refused'; title: string; message: string }
  | { kind: 'done'; connected: boolean; title: string; message: string; redirect: string | null };

const hashState = (state: string) => createHash('sha256').update(state).digest('hex');

function failureOf(err: OAuthError): ConnectFailure {
  if (err.code === 'provider_unreachable') return new ConnectFailure(err.code, err.message, unavailable(err.message));
  if (err.code === 'invalid_grant' || err.code === 'access_denied')
    return new ConnectFailure(
      err.code === 'access_denied' ? 'access_denied' : 'provider_error',
      err.message,
      invalid(err.message, [detail('auth.refreshToken', err.message, err.code)], 'mail_login_failed'),
    );
  return new ConnectFailure(
    'provider_error',
    err.message,
    invalid(err.message, [detail('auth', err.message, 'provider_error')], 'mail_login_failed'),
  );
}

/** What OAuthConnectService is built from, by name. */
export interface OAuthConnectServiceDeps {
  db: Db;
  sessions: OAuthSessionStore;
  accounts: AccountService;
  store: AccountStore;
  mail: MailGrants;
  secrets: SecretBox;
  events: EventService;
  clock: Clock;
  publicUrl: string;
}

export class OAuthConnectService {
  private readonly db: Db;
  private readonly sessions: OAuthSessionStore;
  private readonly accounts: AccountService;
  private readonly store: AccountStore;
  private readonly mail: MailGrants;
  private readonly secrets: SecretBox;
  private readonly events: EventService;
  private readonly clock: Clock;
  private readonly publicUrl: string;

  constructor({ db, sessions, accounts, store, mail, secrets, events, clock, publicUrl }: OAuthConnectServiceDeps) {
    this.db = db;
    this.sessions = sessions;
    this.accounts = accounts;
    this.store = store;
    this.mail = mail;
    this.secrets = secrets;
    this.events = events;
    this.clock = clock;
    this.publicUrl = publicUrl;
  }

  private get redirectUri(): string {
    return `${this.publicUrl}${CALLBACK_PATH}`;
  }

  /** The configured provider, or the 409 naming the setting that turns it on. */
  private provider(name: OAuthProviderName): OAuthProvider {
    const provider = this.mail.clients.find(name);
    if (!provider)
      throw conflict(
        `The ${name} OAuth provider is not configured on this server: set ${PROVIDER_SETTING[name]} (and its secret).`,
        [detail('provider', `is not configured (${PROVIDER_SETTING[name]})`, 'provider_not_configured')],
      );
    return provider;
  }

  async start(workspaceId: string, body: Schemas['OAuthStartRequest']): Promise<Schemas['OAuthStart']> {
    this.secrets.ensureKey('emailAccounts');
    const provider = this.provider(body.provider);
    if (body.returnUrl && !this.mail.clients.returnUrlAllowed(body.returnUrl))
      throw invalid('The return URL is not among the allowed ones (OAUTH_RETURN_URLS).', [
        detail('returnUrl', 'is not allowed by OAUTH_RETURN_URLS', 'return_url_not_allowed'),
      ]);
    if (body.warmup) validateWarmup(body.warmup);
    if (body.accountId && !(await this.store.find(this.db, workspaceId, body.accountId))) throw accountNotFound();
    const now = this.clock.now();
    const id = newId();
    const state = randomBytes(24).toString('base64url');
    const pkce = pkcePair();
    const row: OAuthSessionRow = {
      id,
      workspace_id: workspaceId,
      provider: body.provider,
      state_hash: hashState(state),
      code_verifier_enc: this.secrets.encrypt(pkce.verifier, `${id}:pkce`),
      login_hint: body.loginHint?.toLowerCase() ?? null,
      reconnect_account_id: body.accountId ?? null,
      return_url: body.returnUrl ?? null,
      daily_limit: body.dailyLimit ?? null,
      warmup: body.warmup ?? null,
      status: 'pending',
      reason_code: null,
      reason_message: null,
      account_id: null,
      expires_at: new Date(now.getTime() + STATE_TTL_MS),
      created_at: now,
      completed_at: null,
    };
    await this.db.transaction((trx) => this.sessions.insert(trx, row));
    return {
      sessionId: id,
      authorizationUrl: this.mail.clients.authorizationUrl(provider, {
        state,
        codeChallenge: pkce.challenge,
        redirectUri: this.redirectUri,
        loginHint: body.loginHint,
      }),
      expiresAt: row.expires_at.toISOString(),
    };
  }

  async session(workspace: ZonedWorkspace, sessionId: string): Promise<Schemas['OAuthSession']> {
    const row = await this.sessions.find(this.db, workspace.id, sessionId);
    if (!row) throw notFound('OAuth connect flow not found.');
    let account: Schemas['EmailAccount'] | null = null;
    if (row.status === 'connected' && row.account_id) {
      account = await this.accounts.get(workspace, row.account_id).catch((err: unknown) => {
        if (err instanceof DomainError && err.kind === 'notFound') return null;
        throw err;
      });
    }
    return {
      sessionId: row.id,
      provider: row.provider,
      status: row.status === 'exchanging' ? 'pending' : row.status,
      reason:
        row.status === 'failed'
          ? { code: row.reason_code as FailureCode, message: (row.reason_message ?? '').slice(0, 1000) }
          : null,
      account,
      expiresAt: new Date(row.expires_at).toISOString(),
      createdAt: new Date(row.created_at).toISOString(),
    };
  }

  /**
   * The provider sent the person back. An unknown, expired or already used state is refused and stores
   * nothing (an expired flow reads `state_expired`); otherwise the code is exchanged and the grant
   * established, and the flow records the outcome.
   */
  async callback(query: {
    state?: string;
    code?: string;
    error?: string;
    error_description?: string;
  }): Promise<CallbackOutcome> {
    const refused = (message: string): CallbackOutcome => ({ kind: 'refused', title: 'Link not valid', message });
    if (!query.state || query.state.length > 200) return refused('This sign-in link is not valid.');
    const found = await this.sessions.take(this.db, hashState(query.state));
    if (!found) return refused('This sign-in link is not valid.');
    const { row, taken } = found;
    if (!taken) return refused('This sign-in link was already used. Start connecting the mailbox again.');
    const now = this.clock.now();
    let outcome: { account: AccountRow } | ConnectFailure;
    if (now.getTime() > new Date(row.expires_at).getTime()) {
      await this.finish(row, new ConnectFailure('state_expired', 'The sign-in took longer than 10 minutes.'));
      return refused('This sign-in link has expired. Start connecting the mailbox again.');
    }
    try {
      outcome = { account: await this.exchange(row, query) };
    } catch (err) {
      if (!(err instanceof ConnectFailure)) {
        await this.finish(row, new ConnectFailure('provider_error', 'The connection failed unexpectedly.'));
        throw err;
      }
      outcome = err;
    }
    await this.finish(row, outcome);
    const connected = !(outcome instanceof ConnectFailure);
    const redirect = row.return_url ? this.returnTo(row, connected) : null;
    return outcome instanceof ConnectFailure
      ? { kind: 'done', connected, redirect, title: 'Mailbox not connected', message: outcome.message }
      : {
          kind: 'done',
          connected,
          redirect,
          title: 'Mailbox connected',
          message: `${outcome.account.email} is connected. You can close this window.`,
        };
  }

  /** The flow's return URL with the flow's id and outcome in its query. */
  private returnTo(row: OAuthSessionRow, connected: boolean): string {
    const url = new URL(row.return_url!);
    url.searchParams.set('sessionId', row.id);
    url.searchParams.set('status', connected ? 'connected' : 'failed');
    return url.toString();
  }

  private async exchange(
    row: OAuthSessionRow,
    query: { code?: string; error?: string; error_description?: string },
  ): Promise<AccountRow> {
    if (query.error || !query.code) {
      const message = `The provider answered ${query.error ?? 'without a code'}${query.error_description ? `: ${query.error_description.slice(0, 200)}` : ''}.`;
      throw new ConnectFailure(query.error === 'access_denied' ? 'access_denied' : 'provider_error', message);
    }
    const provider = this.provider(row.provider);
    let answer: TokenAnswer;
    try {
      answer = await this.mail.clients.exchangeCode(
        provider,
        query.code,
        this.secrets.decrypt(row.code_verifier_enc, `${row.id}:pkce`),
        this.redirectUri,
      );
    } catch (err) {
      if (err instanceof OAuthError) throw failureOf(err);
      throw err;
    }
    if (!answer.refreshToken)
      throw new ConnectFailure(
        'no_refresh_token',
        `${provider.name} gave no refresh token: the mailbox could not stay connected.`,
      );
    return this.establish(row.workspace_id, provider, answer.refreshToken, answer, {
      email: row.login_hint,
      accountId: row.reconnect_account_id,
      dailyLimit: row.daily_limit ?? undefined,
      warmup: row.warmup ?? undefined,
    });
  }

  private async finish(row: OAuthSessionRow, outcome: { account: AccountRow } | ConnectFailure): Promise<void> {
    const failed = outcome instanceof ConnectFailure;
    await this.sessions.finish(this.db, row.id, {
      status: failed ? 'failed' : 'connected',
      reason_code: failed ? outcome.code : null,
      reason_message: failed ? outcome.message.slice(0, 1000) : null,
      account_id: failed ? null : outcome.account.id,
      completed_at: this.clock.now(),
    });
  }

  /** `POST /v2/account/connect` with `auth`: a grant the caller holds, proved like the callback's. */
  async connectGrant(
    workspace: ZonedWorkspace,
    body: Schemas['EmailAccountConnectRequest'] & { auth: Schemas['EmailAccountOAuthGrantInput'] },
  ): Promise<Schemas['EmailAccount']> {
    this.secrets.ensureKey('emailAccounts');
    if (body.smtp || body.imap)
      throw invalid('An OAuth grant (auth) logs in to both servers: leave smtp and imap out.', [
        detail(body.smtp ? 'smtp' : 'imap', 'is not allowed with auth', 'not_allowed'),
      ]);
    const provider = this.provider(body.auth.provider);
    if (body.warmup) validateWarmup(body.warmup);
    try {
      let answer: TokenAnswer;
      try {
        answer = await this.mail.clients.refresh(provider, body.auth.refreshToken);
      } catch (err) {
        if (err instanceof OAuthError) throw failureOf(err);
        throw err;
      }
      const row = await this.establish(workspace.id, provider, answer.refreshToken ?? body.auth.refreshToken, answer, {
        email: body.email.toLowerCase(),
        accountId: null,
        dailyLimit: body.dailyLimit,
        warmup: body.warmup,
      });
      return this.accounts.get(workspace, row.id);
    } catch (err) {
      if (err instanceof ConnectFailure) throw err.answer;
      throw err;
    }
  }

  /**
   * Proves the grant and stores it with the account: the mailbox the provider names must be `want.email`
   * (or the reconnected account's), the mail scopes granted, SMTP and IMAP logins with the access token must
   * work; then the account (new, or the workspace's one with that address, or `want.accountId`) and its
   * grant are stored in one transaction. Throws ConnectFailure.
   */
  private async establish(
    workspaceId: string,
    provider: OAuthProvider,
    refreshToken: string,
    answer: TokenAnswer,
    want: { email: string | null; accountId: string | null; dailyLimit?: number; warmup?: WarmupInput },
  ): Promise<AccountRow> {
    let mailbox: string;
    try {
      mailbox = await this.mail.clients.mailboxOf(provider, answer);
    } catch (err) {
      if (err instanceof OAuthError) throw failureOf(err);
      throw err;
    }
    const target = want.accountId ? await this.store.find(this.db, workspaceId, want.accountId) : undefined;
    const expected = target?.email ?? want.email;
    if (expected && expected !== mailbox) {
      const message = `The consent was given for ${mailbox}, not ${expected}.`;
      throw new ConnectFailure(
        'mailbox_mismatch',
        message,
        invalid(message, [detail('email', message, 'mailbox_mismatch')]),
      );
    }
    const missing = this.mail.clients.missingScopes(provider, answer);
    if (missing.length) {
      const message = `The grant lacks the mail scope${missing.length > 1 ? 's' : ''} ${missing.join(', ')}.`;
      throw new ConnectFailure(
        'scope_missing',
        message,
        invalid(message, [detail('auth.refreshToken', message, 'scope_missing')]),
      );
    }
    const id = target?.id ?? newId();
    const row = this.accounts.newRow(
      id,
      workspaceId,
      mailbox,
      { dailyLimit: want.dailyLimit, warmup: want.warmup },
      {
        provider: provider.accountProvider,
        auth_type: 'oauth2',
        oauth_provider: provider.name,
        smtp_host: provider.smtp.host,
        smtp_port: provider.smtp.port,
        smtp_user: mailbox,
        smtp_password_enc: null,
        imap_host: provider.imap.host,
        imap_port: provider.imap.port,
        imap_user: mailbox,
        imap_password_enc: null,
      },
    );
    try {
      const token = { password: null, accessToken: answer.accessToken };
      await this.accounts.checkLogins(row, token, token);
    } catch (err) {
      if (err instanceof DomainError) throw new ConnectFailure('login_failed', err.message, err);
      throw err;
    }
    try {
      return await this.db.transaction(async (trx) => {
        const existing = target
          ? await this.store.findAny(trx, target.id, { forUpdate: true })
          : await this.store.findByEmail(trx, workspaceId, mailbox);
        if (!existing) {
          await this.accounts.insertNew(trx, row);
          await this.mail.storeGrant(trx, row.id, provider.name, refreshToken, answer);
          return row;
        }
        const reconnected = await this.store.reconnect(trx, existing.id, provider.name, this.clock.now());
        await this.mail.storeGrant(trx, existing.id, provider.name, refreshToken, answer);
        if (existing.status !== 'active')
          await this.events.record(trx, {
            workspaceId,
            type: 'account.statusChanged',
            data: {
              accountId: existing.id,
              email: existing.email,
              previous: existing.status,
              status: 'active',
              reason: `reconnected with a new ${provider.name} grant`,
            },
          });
        return reconnected;
      });
    } catch (err) {
      if (err instanceof DomainError && err.kind === 'forbidden')
        throw new ConnectFailure('plan_limit', err.message, forbidden(err.message));
      if (err instanceof DomainError && err.kind === 'conflict')
        throw new ConnectFailure('duplicate', err.message, err);
      throw err;
    }
  }
}
