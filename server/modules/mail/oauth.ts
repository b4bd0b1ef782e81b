/**
 * The identity providers mailboxes are connected through: Google, Microsoft and a generic one defined by
 * its endpoints, each with the operator's client (config `oauth`). Builds the authorization URL
 * (authorization code with PKCE S256), exchanges a code, refreshes an access token and reads the mailbox
 * address. Every call to a provider passes the outbound rule and has a total deadline; no token is ever put
 * in an error message.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { OAuthSettings } from '../../platform/config';
import { OutboundRefusedError } from '../../net/outbound';
import { outboundRequest } from '../../net/outbound-http';

export type OAuthProviderName = 'google' | 'microsoft' | 'generic';

export interface MailServer {
  host: string;
  port: number;
}

export interface OAuthProvider {
  name: OAuthProviderName;
  /** The account's `provider` field: the generic provider's mailboxes are any SMTP server's. */
  accountProvider: 'google' | 'microsoft' | 'smtp';
  clientId: string;
  clientSecret: string;
  authorizeUrl: string;
  tokenUrl: string;
  /** Asked for the mailbox address when the token answer has no ID token naming it; empty: none. */
  userInfoUrl: string;
  scopes: string[];
  /** The scopes without which the grant cannot log in to the mailbox (checked against the granted ones). */
  mailScopes: string[];
  /** Parameters the provider needs on the authorization URL (Google's offline access). */
  authorizeParams: Record<string, string>;
  smtp: MailServer;
  imap: MailServer;
}

/** Each provider's setting that turns it on, named in the 409 of a provider that is off. */
export const PROVIDER_SETTING: Record<OAuthProviderName, string> = {
  google: 'OAUTH_GOOGLE_CLIENT_ID',
  microsoft: 'OAUTH_MICROSOFT_CLIENT_ID',
  generic: 'OAUTH_GENERIC_CLIENT_ID',
};

const GOOGLE_MAIL_SCOPE = 'https://mail.google.com/';
const MICROSOFT_MAIL_SCOPES = [
  'https://outlook.office.com/IMAP.AccessAsUser.All',
  'https://outlook.office.com/SMTP.Send',
];
/** Scopes that name the person, not the mailbox (never required for a mail login). */
const IDENTITY_SCOPES = new Set(['openid', 'email', 'profile', 'offline_access']);

/** Why a provider call failed: the grant is dead (a person must reconnect), or the provider could not answer. */
export class OAuthError extends Error {
  constructor(
    readonly code: 'invalid_grant' | 'access_denied' | 'provider_unreachable' | 'provider_error',
    message: string,
  ) {
    super(message);
  }
}

export interface TokenAnswer {
  accessToken: string;
  /** A new refresh token when the provider rotates them (Microsoft), or the first one from a code. */
  refreshToken: string | null;
  /** Seconds the access token lives (the caller's clock turns it into a time). */
  expiresInSeconds: number;
  /** The granted scopes, when the provider says. */
  scopes: string[] | null;
  idToken: string | null;
}

/** PKCE (RFC 7636): a random verifier and its S256 challenge. */
export function pkcePair(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

/** What OAuthClients is built from, by name. */
interface OAuthClientsDeps {
  settings: OAuthSettings;
  allowPrivate: boolean;
}

export class OAuthClients {
  private readonly providers = new Map<OAuthProviderName, OAuthProvider>();

  private readonly settings: OAuthSettings;
  private readonly allowPrivate: boolean;

  constructor({ settings, allowPrivate }: OAuthClientsDeps) {
    this.settings = settings;
    this.allowPrivate = allowPrivate;

    const { google, microsoft, generic } = settings;
    if (google)
      this.providers.set('google', {
        name: 'google',
        accountProvider: 'google',
        ...google,
        authorizeUrl: 'https://accounts.google.com/o/oauth2/v2/auth',
        tokenUrl: 'https://oauth2.googleapis.com/token',
        userInfoUrl: 'https://openidconnect.googleapis.com/v1/userinfo',
        scopes: ['openid', 'email', GOOGLE_MAIL_SCOPE],
        mailScopes: [GOOGLE_MAIL_SCOPE],
        // Offline access and consent: Google gives a refresh token only then.
        authorizeParams: { access_type: 'offline', prompt: 'consent' },
        smtp: { host: 'smtp.gmail.com', port: 587 },
        imap: { host: 'imap.gmail.com', port: 993 },
      });
    if (microsoft) {
      const base = `https://login.microsoftonline.com/${encodeURIComponent(microsoft.tenant)}/oauth2/v2.0`;
      this.providers.set('microsoft', {
        name: 'microsoft',
        accountProvider: 'microsoft',
        clientId: microsoft.clientId,
        clientSecret: microsoft.clientSecret,
        authorizeUrl: `${base}/authorize`,
        tokenUrl: `${base}/token`,
        // The mail scopes' tokens are for outlook.office.com, not Graph: the ID token names the mailbox.
        userInfoUrl: '',
        scopes: ['openid', 'email', 'offline_access', ...MICROSOFT_MAIL_SCOPES],
        mailScopes: MICROSOFT_MAIL_SCOPES,
        authorizeParams: { prompt: 'select_account' },
        smtp: { host: 'smtp.office365.com', port: 587 },
        imap: { host: 'outlook.office365.com', port: 993 },
      });
    }
    if (generic)
      this.providers.set('generic', {
        name: 'generic',
        accountProvider: 'smtp',
        clientId: generic.clientId,
        clientSecret: generic.clientSecret,
        authorizeUrl: generic.authorizeUrl,
        tokenUrl: generic.tokenUrl,
        userInfoUrl: generic.userInfoUrl,
        scopes: generic.scopes,
        mailScopes: generic.scopes.filter((s) => !IDENTITY_SCOPES.has(s)),
        authorizeParams: {},
        smtp: generic.smtp,
        imap: generic.imap,
      });
  }

  /** The provider, or null when the operator has not configured it. */
  find(name: OAuthProviderName): OAuthProvider | null {
    return this.providers.get(name) ?? null;
  }

  /** Whether a return URL starts with one of the allowed prefixes (OAUTH_RETURN_URLS). */
  returnUrlAllowed(url: string): boolean {
    return this.settings.returnUrls.some((prefix) => url.startsWith(prefix));
  }

  authorizationUrl(
    provider: OAuthProvider,
    request: { state: string; codeChallenge: string; redirectUri: string; loginHint?: string },
  ): string {
    const url = new URL(provider.authorizeUrl);
    const params: Record<string, string> = {
      response_type: 'code',
      client_id: provider.clientId,
      redirect_uri: request.redirectUri,
      scope: provider.scopes.join(' '),
      state: request.state,
      code_challenge: request.codeChallenge,
      code_challenge_method: 'S256',
      ...provider.authorizeParams,
      ...(request.loginHint ? { login_hint: request.loginHint } : {}),
    };
    for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
    return url.toString();
  }

  exchangeCode(provider: OAuthProvider, code: string, verifier: string, redirectUri: string): Promise<TokenAnswer> {
    return this.token(provider, {
      grant_type: 'authorization_code',
      code,
      code_verifier: verifier,
      redirect_uri: redirectUri,
    });
  }

  refresh(provider: OAuthProvider, refreshToken: string): Promise<TokenAnswer> {
    return this.token(provider, { grant_type: 'refresh_token', refresh_token: refreshToken });
  }

  /** The scopes the provider needs for mail that the grant lacks (none when the answer does not list scopes). */
  missingScopes(provider: OAuthProvider, answer: TokenAnswer): string[] {
    if (!answer.scopes) return [];
    return provider.mailScopes.filter((s) => !answer.scopes!.includes(s));
  }

  /**
   * The mailbox address: the ID token's (received straight from the token endpoint over the checked
   * connection, so its claims are the provider's), else the user-info endpoint's; lower-case.
   */
  async mailboxOf(provider: OAuthProvider, answer: TokenAnswer): Promise<string> {
    const fromIdToken = answer.idToken ? addressIn(claimsOf(answer.idToken)) : null;
    if (fromIdToken) return fromIdToken;
    if (!provider.userInfoUrl)
      throw new OAuthError('provider_error', `${provider.name} named no mailbox address (no email in the ID token).`);
    const info = await this.call(provider, provider.userInfoUrl, {
      method: 'GET',
      headers: { authorization: `Bearer ${answer.accessToken}`, accept: 'application/json' },
    });
    const address = info.status === 200 ? addressIn(parseJson(info.body)) : null;
    if (!address)
      throw new OAuthError(
        'provider_error',
        `${provider.name}'s user info named no mailbox address (HTTP ${info.status}).`,
      );
    return address;
  }

  private async token(provider: OAuthProvider, form: Record<string, string>): Promise<TokenAnswer> {
    const answer = await this.call(provider, provider.tokenUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      body: new URLSearchParams({
        ...form,
        client_id: provider.clientId,
        ...(provider.clientSecret ? { client_secret: provider.clientSecret } : {}),
      }).toString(),
    });
    const json = parseJson(answer.body);
    if (answer.status !== 200 || typeof json.access_token !== 'string') {
      const error = typeof json.error === 'string' ? json.error : `HTTP ${answer.status}`;
      const words = typeof json.error_description === 'string' ? `: ${json.error_description.slice(0, 200)}` : '';
      // A refresh token that is revoked, expired or never was: only a person can fix that.
      if (error === 'invalid_grant')
        throw new OAuthError('invalid_grant', `${provider.name} refused the grant${words}`);
      if (error === 'access_denied') throw new OAuthError('access_denied', `${provider.name} denied access${words}`);
      throw new OAuthError(
        answer.status >= 500 ? 'provider_unreachable' : 'provider_error',
        `${provider.name}'s token endpoint answered ${error}${words}`,
      );
    }
    const expiresIn = Number(json.expires_in);
    return {
      accessToken: json.access_token,
      refreshToken: typeof json.refresh_token === 'string' ? json.refresh_token : null,
      expiresInSeconds: Number.isFinite(expiresIn) && expiresIn > 0 ? expiresIn : 3600,
      scopes: typeof json.scope === 'string' ? json.scope.split(/\s+/).filter(Boolean) : null,
      idToken: typeof json.id_token === 'string' ? json.id_token : null,
    };
  }

  private async call(
    provider: OAuthProvider,
    url: string,
    request: { method: 'GET' | 'POST'; headers: Record<string, string>; body?: string },
  ) {
    try {
      return await outboundRequest(url, {
        ...request,
        allowPrivate: this.allowPrivate,
        deadlineMs: this.settings.timeoutMs,
      });
    } catch (err) {
      const why = err instanceof OutboundRefusedError ? `private_destination: ${err.message}` : (err as Error).message;
      throw new OAuthError('provider_unreachable', `${provider.name} could not be reached: ${why}`);
    }
  }
}

function parseJson(text: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(text);
    return value && typeof value === 'object' ? (value as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

/** A JWT's payload (the signature is the token endpoint's TLS connection's to vouch for). */
function claimsOf(jwt: string): Record<string, unknown> {
  const payload = jwt.split('.')[1];
  return payload ? parseJson(Buffer.from(payload, 'base64url').toString('utf8')) : {};
}

function addressIn(claims: Record<string, unknown>): string | null {
  for (const key of ['email', 'preferred_username', 'upn']) {
    const value = claims[key];
    if (typeof value === 'string' && /^[^@\s]+@[^@\s]+$/.test(value)) return value.trim().toLowerCase();
  }
  return null;
}
