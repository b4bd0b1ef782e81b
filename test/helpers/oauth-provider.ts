/**
 * A loopback OAuth 2.0 / OpenID Connect identity provider for tests, on the test's clock:
 *   GET  /authorize  authorization code with PKCE S256; consents at once (no page) for `login_hint`, or for
 *                    `consentAs` when set, and redirects back with the code; `denyNext` answers access_denied.
 *                    With `consentPage` it answers a consent page instead, whose Allow and Deny buttons post
 *                    to /authorize with the same query (a browser clicks through it as a person would)
 *   POST /token      authorization_code (PKCE checked) and refresh_token grants; refresh tokens rotate, and
 *                    each answer has an RS256 ID token naming the mailbox
 *   GET  /userinfo   the mailbox of a valid access token (401 for an unknown, expired or revoked one): what
 *                    the SMTP sink and Dovecot check each XOAUTH2 login against
 *   GET  /jwks       the signing key
 *
 *   const idp = await startOAuthProvider({ now: () => clock.now() });
 *   idp.revoke('ana@acme-mail.io');   // every token of the mailbox stops working
 *   idp.dropAccessTokens('ana@acme-mail.io');  // its access tokens stop working before their time; refreshes work
 *   idp.hang = true;                  // /token never answers (a provider that hangs)
 *   config.oauth = idp.settings({ smtp, imap });  // the server's settings with this provider as its only one
 */
import { createHash, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { OAuthSettings } from '../../server/platform/config';

export interface OAuthTestProvider {
  url: string;
  clientId: string;
  clientSecret: string;
  authorizeUrl: string;
  tokenUrl: string;
  userInfoUrl: string;
  /** Scopes granted (what the server asks for). */
  scopes: string[];
  /** Access tokens live this long (seconds). */
  accessTokenSeconds: number;
  /** The next consent is for this mailbox whatever the login hint (a person signing in as someone else). */
  consentAs: string | null;
  /** The next authorization is declined (access_denied). */
  denyNext: boolean;
  /** /authorize shows a page with Allow and Deny instead of consenting at once. */
  consentPage: boolean;
  /** /token accepts the request and never answers. */
  hang: boolean;
  /** Refresh-token grants answered so far. */
  refreshes: number;
  /** Refresh-token grants refused so far (a revoked or unknown refresh token). */
  refusedRefreshes: number;
  /**
   * The status /userinfo answers a dead token: 401 as Google does; some providers answer 400 or 403, which
   * Dovecot's `passdb oauth2` reports as "Temporary authentication failure".
   */
  deadTokenStatus: number;
  /** Revokes every token of the mailbox (the person removed the app's access). */
  revoke(email: string): void;
  /** A refresh token for the mailbox, as a consent would give (an integrator's grant; the benchmarks). */
  grant(email: string): string;
  /** Ends the mailbox's access tokens before their time (a provider's early expiry); its refresh tokens work. */
  dropAccessTokens(email: string): void;
  /** The server's OAuth settings with this provider as the generic one (Google and Microsoft off). */
  settings(options: {
    smtp: { host: string; port: number };
    imap: { host: string; port: number };
    returnUrls?: string[];
    timeoutMs?: number;
  }): OAuthSettings;
  close(): Promise<void>;
}

interface Code {
  email: string;
  challenge: string;
  redirectUri: string;
  scope: string;
}

const b64 = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');

function jwt(key: KeyObject, kid: string, claims: object): string {
  const head = `${b64({ alg: 'RS256', typ: 'JWT', kid })}.${b64(claims)}`;
  return `${head}.${sign('sha256', Buffer.from(head), key).toString('base64url')}`;
}

async function formOf(req: IncomingMessage): Promise<URLSearchParams> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
}

export async function startOAuthProvider(options: { now: () => Date }): Promise<OAuthTestProvider> {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const kid = 'test-key';
  const codes = new Map<string, Code>();
  const refreshTokens = new Map<string, { email: string; scope: string }>();
  const accessTokens = new Map<string, { email: string; expiresAt: number }>();
  const hanging = new Set<ServerResponse>();
  const token = () => randomBytes(24).toString('base64url');

  const json = (res: ServerResponse, status: number, body: object) =>
    res
      .writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' })
      .end(JSON.stringify(body));

  const issue = (email: string, scope: string, withRefresh: boolean) => {
    const access = token();
    accessTokens.set(access, { email, expiresAt: options.now().getTime() + provider.accessTokenSeconds * 1000 });
    const answer: Record<string, unknown> = {
      access_token: access,
      token_type: 'Bearer',
      expires_in: provider.accessTokenSeconds,
      scope,
      id_token: jwt(privateKey, kid, {
        iss: provider.url,
        aud: provider.clientId,
        sub: createHash('sha256').update(email).digest('hex').slice(0, 16),
        email,
        email_verified: true,
        iat: Math.floor(options.now().getTime() / 1000),
        exp: Math.floor(options.now().getTime() / 1000) + 3600,
      }),
    };
    if (withRefresh) {
      const refresh = token();
      refreshTokens.set(refresh, { email, scope });
      answer.refresh_token = refresh;
    }
    return answer;
  };

  /** Consents (or declines) and sends the browser back to the redirect URI with the code or the error. */
  const authorize = (p: URLSearchParams, posted: { declined: boolean } | null, res: ServerResponse) => {
    const back = new URL(p.get('redirect_uri') ?? '');
    back.searchParams.set('state', p.get('state') ?? '');
    if (p.get('client_id') !== provider.clientId || p.get('code_challenge_method') !== 'S256') {
      back.searchParams.set('error', 'invalid_request');
    } else if (provider.denyNext || posted?.declined) {
      provider.denyNext = false;
      back.searchParams.set('error', 'access_denied');
    } else {
      const code = token();
      const email = (provider.consentAs ?? p.get('login_hint') ?? 'someone@example.com').toLowerCase();
      provider.consentAs = null;
      codes.set(code, {
        email,
        challenge: p.get('code_challenge') ?? '',
        redirectUri: back.origin + back.pathname,
        scope: p.get('scope') ?? '',
      });
      back.searchParams.set('code', code);
    }
    // A posted consent is answered 303, so the browser follows it with a GET.
    res.writeHead(posted ? 303 : 302, { location: back.toString() }).end();
  };

  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', provider.url);
    if (req.method === 'GET' && url.pathname === '/authorize' && provider.consentPage) {
      const mailbox = (provider.consentAs ?? url.searchParams.get('login_hint') ?? 'your mailbox').replace(
        /[<>&"]/g,
        '',
      );
      const action = `/authorize${url.search.replace(/&/g, '&amp;').replace(/"/g, '&quot;')}`;
      return res
        .writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
        .end(
          `<!doctype html><html lang="en"><title>Test identity provider</title><h1>Allow access to ${mailbox}?</h1>` +
            `<p>The app asks to read and send mail as ${mailbox}.</p><form method="post" action="${action}">` +
            '<button name="decision" value="allow">Allow</button> <button name="decision" value="deny">Deny</button></form>',
        );
    }
    if ((req.method === 'GET' || req.method === 'POST') && url.pathname === '/authorize') {
      if (req.method === 'POST')
        return void formOf(req).then((form) =>
          authorize(url.searchParams, { declined: form.get('decision') === 'deny' }, res),
        );
      return authorize(url.searchParams, null, res);
    }
    if (req.method === 'POST' && url.pathname === '/token') {
      if (provider.hang) {
        hanging.add(res);
        return;
      }
      void formOf(req).then((form) => {
        if (form.get('client_id') !== provider.clientId || form.get('client_secret') !== provider.clientSecret)
          return json(res, 401, { error: 'invalid_client' });
        if (form.get('grant_type') === 'authorization_code') {
          const code = codes.get(form.get('code') ?? '');
          codes.delete(form.get('code') ?? '');
          const verifier = form.get('code_verifier') ?? '';
          if (
            !code ||
            code.redirectUri !== form.get('redirect_uri') ||
            createHash('sha256').update(verifier).digest('base64url') !== code.challenge
          )
            return json(res, 400, { error: 'invalid_grant', error_description: 'code, redirect URI or PKCE verifier' });
          return json(res, 200, issue(code.email, code.scope, true));
        }
        if (form.get('grant_type') === 'refresh_token') {
          const held = refreshTokens.get(form.get('refresh_token') ?? '');
          if (!held) {
            provider.refusedRefreshes += 1;
            return json(res, 400, { error: 'invalid_grant', error_description: 'refresh token revoked' });
          }
          provider.refreshes += 1;
          // Rotation: the refresh token used is spent, the answer carries the next one.
          refreshTokens.delete(form.get('refresh_token')!);
          return json(res, 200, issue(held.email, held.scope, true));
        }
        json(res, 400, { error: 'unsupported_grant_type' });
      });
      return;
    }
    if (req.method === 'GET' && url.pathname === '/userinfo') {
      const bearer = /^Bearer (.+)$/i.exec(req.headers.authorization ?? '')?.[1];
      const held = bearer ? accessTokens.get(bearer) : undefined;
      if (!held || held.expiresAt <= options.now().getTime())
        return json(res, provider.deadTokenStatus, { error: 'invalid_token' });
      return json(res, 200, { sub: held.email, email: held.email, email_verified: true, active: true });
    }
    if (req.method === 'GET' && url.pathname === '/jwks') {
      return json(res, 200, { keys: [{ ...publicKey.export({ format: 'jwk' }), kid, use: 'sig', alg: 'RS256' }] });
    }
    json(res, 404, { error: 'not_found' });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const provider: OAuthTestProvider = {
    url: base,
    clientId: 'test-client',
    clientSecret: 'test-secret',
    authorizeUrl: `${base}/authorize`,
    tokenUrl: `${base}/token`,
    userInfoUrl: `${base}/userinfo`,
    scopes: ['openid', 'email', 'offline_access', 'mail'],
    accessTokenSeconds: 3600,
    consentAs: null,
    denyNext: false,
    consentPage: false,
    hang: false,
    refreshes: 0,
    refusedRefreshes: 0,
    deadTokenStatus: 401,
    revoke(email) {
      const mailbox = email.toLowerCase();
      for (const [k, v] of refreshTokens) if (v.email === mailbox) refreshTokens.delete(k);
      for (const [k, v] of accessTokens) if (v.email === mailbox) accessTokens.delete(k);
    },
    grant(email) {
      const refresh = token();
      refreshTokens.set(refresh, { email: email.toLowerCase(), scope: provider.scopes.join(' ') });
      return refresh;
    },
    dropAccessTokens(email) {
      for (const [k, v] of accessTokens) if (v.email === email.toLowerCase()) accessTokens.delete(k);
    },
    settings: ({ smtp, imap, returnUrls = [], timeoutMs = 5000 }) => ({
      google: null,
      microsoft: null,
      generic: {
        clientId: provider.clientId,
        clientSecret: provider.clientSecret,
        authorizeUrl: provider.authorizeUrl,
        tokenUrl: provider.tokenUrl,
        userInfoUrl: provider.userInfoUrl,
        scopes: provider.scopes,
        smtp,
        imap,
      },
      returnUrls,
      timeoutMs,
    }),
    close: () =>
      new Promise<void>((resolve) => {
        for (const res of hanging) res.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  return provider;
}
