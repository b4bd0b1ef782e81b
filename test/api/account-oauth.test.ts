/**
 * Mailboxes connected by OAuth, through HTTP, against real parts on loopback: an identity provider
 * (test/helpers/oauth-provider.ts: authorization code with PKCE, rotating refresh tokens, revocation, a
 * user-info endpoint), the SMTP sink taking XOAUTH2 and a private Dovecot with `passdb oauth2`, both checking
 * each token against the provider. The flow (start, the provider's redirect, the callback, the session), a
 * campaign sent over XOAUTH2, a reply read over IMAP, one refresh across two workers, a revoked grant and the
 * reconnect; then the refusals.
 */
import { createHash, randomBytes } from 'node:crypto';
import { expect } from '@jest/globals';
import pino from 'pino';
import { createServices, type Services } from '../../server/services';
import type { AccountRow } from '../../server/modules/account/store';
import type { CheckpointRow } from '../../server/modules/inbox/store';
import { describeWithDovecot, startImapServer, type ImapTestServer } from '../helpers/imap-server';
import { startOAuthProvider, type OAuthTestProvider } from '../helpers/oauth-provider';
import { startSmtpSink, type SmtpSink } from '../helpers/smtp-sink';
import { startTestServer, type TestServer, type TestWorkspace } from '../helpers/server';
import { TestClock } from '../helpers/clock';
import { found } from '../helpers/rows';

const ANA = 'ana@acme-mail.io';
const HOUR = 3_600_000;
const weekdaysUtc = { timezone: 'UTC', days: [1, 2, 3, 4, 5], from: '09:00', to: '17:00' };

describeWithDovecot('accounts connected by OAuth', () => {
  const clock = new TestClock('2026-11-23T10:00:00.000Z');
  let idp: OAuthTestProvider;
  let sink: SmtpSink;
  let imap: ImapTestServer;
  let t: TestServer;
  let ws: TestWorkspace;
  let second: Services;
  let accountId: string;
  let campaignId: string;
  const logLines: string[] = [];

  beforeAll(async () => {
    idp = await startOAuthProvider({ now: () => clock.now() });
    sink = await startSmtpSink({ oauth: { userInfoUrl: idp.userInfoUrl } });
    imap = await startImapServer({ oauth2: { userInfoUrl: idp.userInfoUrl } });
    t = await startTestServer({
      clock,
      logger: pino({ level: 'info' }, { write: (line: string) => logLines.push(line) }),
      config: {
        secretKey: '5a'.repeat(32),
        allowPrivateMailHosts: true,
        verifyMailLogins: true,
        smtpTimeoutMs: 5000,
        imapTimeoutMs: 5000,
        publicUrl: 'https://api.example.test',
        oauth: idp.settings({
          smtp: { host: '127.0.0.1', port: sink.port },
          imap: { host: '127.0.0.1', port: imap.port },
          returnUrls: ['https://app.example.test/mailboxes'],
          timeoutMs: 1500,
        }),
      },
    });
    // A second worker process on the same database.
    second = createServices(t.deps);
    ws = await t.createWorkspace();
    // A loaded machine takes long to start Dovecot and migrate a fresh database.
  }, 120_000);
  afterAll(async () => {
    t.services.mail.close();
    second.mail.close();
    await t.close();
    await sink.close();
    await imap.close();
    await idp.close();
  });

  const start = (body: Record<string, unknown>) =>
    ws.client.POST('/v2/account/oauth/start', { body: { provider: 'generic', ...body } as never });

  /** Follows the authorization URL (the provider consents by itself) and the callback it redirects to. */
  async function follow(authorizationUrl: string): Promise<{ callback: Response; callbackUrl: string }> {
    const consent = await fetch(authorizationUrl, { redirect: 'manual' });
    expect(consent.status).toBe(302);
    const back = new URL(consent.headers.get('location')!);
    expect(back.origin + back.pathname).toBe('https://api.example.test/oauth/callback');
    const callbackUrl = `${back.pathname}${back.search}`;
    return { callback: await t.fetch(callbackUrl, { redirect: 'manual' }), callbackUrl };
  }

  const session = async (sessionId: string) =>
    (await ws.client.GET('/v2/account/oauth/session', { params: { query: { sessionId } } })).data!.data;

  const account = () => found(t.db<AccountRow>('email_accounts').where({ id: accountId }).first(), 'account');

  const statusEvents = async () => {
    const res = await ws.client.GET('/v2/event/list', {
      params: { query: { types: 'account.statusChanged' } as never },
    });
    return res.data!.data.items.map((e) => e.data as { status: string; previous: string; reason: string });
  };

  it('connects a mailbox: start, consent, callback, proved SMTP and IMAP logins, session connected', async () => {
    const started = await start({ loginHint: ANA, dailyLimit: 30 });
    expect(started.response.status).toBe(201);
    const { sessionId, authorizationUrl } = started.data!.data;
    const url = new URL(authorizationUrl);
    expect(url.searchParams.get('code_challenge_method')).toBe('S256');
    expect(url.searchParams.get('redirect_uri')).toBe('https://api.example.test/oauth/callback');
    expect((await session(sessionId)).status).toBe('pending');

    const { callback, callbackUrl } = await follow(authorizationUrl);
    expect(callback.status).toBe(200);
    expect(await callback.text()).toContain(`${ANA} is connected`);
    // The callback's code and state are credentials: the request log shows neither.
    const query = new URL(callbackUrl, t.url).searchParams;
    const logged = logLines.join('\n');
    expect(logged).toContain('/oauth/callback?state=REDACTED&code=REDACTED');
    for (const secret of [query.get('code')!, query.get('state')!]) expect(logged).not.toContain(secret);
    expect(sink.oauthLogins).toContain(ANA);

    const done = await session(sessionId);
    expect(done).toMatchObject({
      status: 'connected',
      reason: null,
      account: {
        email: ANA,
        provider: 'smtp',
        status: 'active',
        dailyLimit: 30,
        auth: { type: 'oauth2', provider: 'generic' },
      },
    });
    accountId = done.account!.id;
    // Stored encrypted; the answers carry no token.
    const grant = await found(
      t
        .db<{ account_id: string; refresh_token_enc: string }>('mailbox_oauth_grants')
        .where({ account_id: accountId })
        .first(),
      'grant',
    );
    expect(grant.refresh_token_enc).toMatch(/^v1\./);
    expect(JSON.stringify(done)).not.toMatch(/token/i);
    const connected = await ws.client.GET('/v2/event/list', { params: { query: { types: ['account.connected'] } } });
    expect(connected.data!.data.items.map((e) => e.data)).toEqual([
      { accountId, email: ANA, provider: 'smtp', auth: { type: 'oauth2', provider: 'generic' } },
    ]);
  });

  it('sends a campaign over XOAUTH2 and reads the reply over IMAP', async () => {
    const created = await ws.client.POST('/v2/campaign/create', {
      body: {
        name: 'OAuth',
        accountIds: [accountId],
        schedule: weekdaysUtc,
        options: { emailGapMinutes: 0, randomWaitMaxMinutes: 0 },
      } as never,
    });
    campaignId = created.data!.data.campaign.id;
    await ws.client.POST('/v2/campaign/sequence-create', {
      body: { campaignId, steps: [{ delayDays: 0, variants: [{ subject: 'Hello', body: 'A question.' }] }] } as never,
    });
    await ws.client.POST('/v1/contact/add', {
      body: { campaignId, contacts: [{ email: 'joe@globex.test' }] } as never,
    });
    expect((await ws.client.POST('/v2/campaign/launch', { body: { campaignId } })).response.status).toBe(200);
    const logins = sink.oauthLogins.length;
    expect(await t.services.sending.runOnce()).toBe(1);
    expect(sink.received.map((m) => m.envelope)).toEqual([{ from: ANA, to: ['joe@globex.test'] }]);
    expect(sink.oauthLogins.length).toBeGreaterThan(logins);

    const sent = sink.received[0].parsed.messageId!;
    imap.deliverDirect(ANA, [
      [
        'From: Joe <joe@globex.test>',
        `To: ${ANA}`,
        'Subject: Re: Hello',
        `Message-ID: <reply-1@globex.test>`,
        `In-Reply-To: ${sent}`,
        'Date: Mon, 23 Nov 2026 10:30:00 +0000',
        '',
        'Sounds good, tell me more.',
        '',
      ].join('\r\n'),
    ]);
    expect(await t.services.inbox.runOnce()).toBe(1);
    const inbound = await t.db('email_messages').where({ account_id: accountId, direction: 'inbound' });
    expect(inbound.map((m: { subject: string }) => m.subject)).toEqual(['Re: Hello']);
  });

  it('refreshes the access token once across two workers when the clock passes its expiry', async () => {
    const before = idp.refreshes;
    clock.advance(HOUR);
    const [a, b] = await Promise.all([
      t.services.mail.credentials.accessToken(accountId),
      second.mail.credentials.accessToken(accountId),
    ]);
    expect(a).toBe(b);
    expect(idp.refreshes - before).toBe(1);
    // The rotated refresh token was stored with it: the next refresh works.
    clock.advance(HOUR);
    await second.mail.credentials.accessToken(accountId);
    expect(idp.refreshes - before).toBe(2);
  });

  /** A new contact in the campaign, and one run of the sending engine. */
  async function sendTo(email: string, campaign = campaignId): Promise<number> {
    await ws.client.POST('/v1/contact/add', { body: { campaignId: campaign, contacts: [{ email }] } as never });
    return t.services.sending.runOnce();
  }

  it('a token the SMTP server refuses before its expiry is dropped, refreshed once, and the send goes out', async () => {
    idp.dropAccessTokens(ANA);
    const before = idp.refreshes;
    expect(await sendTo('kim@globex.test')).toBe(1);
    expect(sink.received.at(-1)!.envelope.to).toEqual(['kim@globex.test']);
    expect(idp.refreshes - before).toBe(1);
    expect((await account()).status).toBe('active');
  });

  it('a token the IMAP server refuses before its expiry is dropped, refreshed once, and the read goes on', async () => {
    idp.dropAccessTokens(ANA);
    const before = idp.refreshes;
    imap.deliverDirect(ANA, [
      [
        'From: Kim <kim@globex.test>',
        `To: ${ANA}`,
        'Subject: Re: Hello',
        'Message-ID: <reply-2@globex.test>',
        `In-Reply-To: ${sink.received.at(-1)!.parsed.messageId!}`,
        'Date: Mon, 23 Nov 2026 12:30:00 +0000',
        '',
        'Interesting.',
        '',
      ].join('\r\n'),
    ]);
    expect(await t.services.inbox.runOnce()).toBe(1);
    expect(idp.refreshes - before).toBe(1);
    const inbound = await t.db('email_messages').where({ account_id: accountId, direction: 'inbound' });
    expect(inbound).toHaveLength(2);
    expect((await account()).status).toBe('active');
  });

  it('a revoked grant turns the account reconnectRequired with its event, pauses its campaign, stops reads', async () => {
    // Before its access token expires: the IMAP server refuses the token, and the provider the refresh.
    idp.revoke(ANA);
    await t.services.inbox.runOnce();
    const row = await account();
    expect(row.status).toBe('reconnectRequired');
    expect(row.status_reason).toMatch(/^reconnect_required: generic refused the grant/);
    const status = (await ws.client.GET('/v1/account/status', { params: { query: { accountId } } })).data!.data;
    expect(status).toMatchObject({ status: 'reconnectRequired', canSend: false, reason: 'reconnectRequired' });
    expect((await statusEvents()).map((e) => [e.previous, e.status])).toEqual([['active', 'reconnectRequired']]);
    const campaign = await found(
      t.db<{ id: string; status: string }>('campaigns').where({ id: campaignId }).first(),
      'campaign',
    );
    expect(campaign.status).toBe('paused');

    // No retry loop: the reader skips the account and nothing asks the provider again.
    const refreshes = idp.refreshes;
    await t.services.inbox.runOnce();
    // Another worker, once its cached token is due, learns of the death from the database.
    clock.advance(HOUR);
    await expect(second.mail.credentials.accessToken(accountId)).rejects.toThrow(/reconnect_required/);
    expect(idp.refreshes).toBe(refreshes);
  });

  it('reconnecting with accountId keeps the account id, turns it active and records the change', async () => {
    const started = await start({ accountId });
    idp.consentAs = ANA;
    const { callback } = await follow(started.data!.data.authorizationUrl);
    expect(callback.status).toBe(200);
    const done = await session(started.data!.data.sessionId);
    expect(done).toMatchObject({ status: 'connected', account: { id: accountId, status: 'active' } });
    expect((await statusEvents()).map((e) => e.status)).toEqual(['reconnectRequired', 'active']);
    expect((await account()).status).toBe('active');
  });

  it('a mailbox already connected is reconnected, not duplicated, by a flow without accountId', async () => {
    const started = await start({ loginHint: ANA });
    await follow(started.data!.data.authorizationUrl);
    expect((await session(started.data!.data.sessionId)).account!.id).toBe(accountId);
    const rows = await t.db('email_accounts').where({ workspace_id: ws.workspaceId });
    expect(rows.map((r: AccountRow) => r.id)).toEqual([accountId]);
  });

  it('refuses unknown and reused states with a page, and stores nothing', async () => {
    const unknown = await t.fetch('/oauth/callback?state=nope&code=abc');
    expect(unknown.status).toBe(400);
    expect(await unknown.text()).toContain('not valid');

    const started = await start({ loginHint: 'bo@acme-mail.io' });
    const { callback, callbackUrl } = await follow(started.data!.data.authorizationUrl);
    expect(callback.status).toBe(200);
    const again = await t.fetch(callbackUrl);
    expect(again.status).toBe(400);
    expect(await again.text()).toContain('already used');
  });

  it('an expired state fails the flow with state_expired', async () => {
    const started = await start({ loginHint: 'cy@acme-mail.io' });
    clock.advance(11 * 60_000);
    const { callback } = await follow(started.data!.data.authorizationUrl);
    expect(callback.status).toBe(400);
    expect(await callback.text()).toContain('expired');
    expect((await session(started.data!.data.sessionId)).reason!.code).toBe('state_expired');
    expect(await t.db('email_accounts').where({ email: 'cy@acme-mail.io' })).toEqual([]);
  });

  it('fails a consent for another mailbox (mailbox_mismatch) and a declined one (access_denied)', async () => {
    const mismatch = await start({ loginHint: 'di@acme-mail.io' });
    idp.consentAs = 'eve@acme-mail.io';
    expect((await follow(mismatch.data!.data.authorizationUrl)).callback.status).toBe(400);
    expect((await session(mismatch.data!.data.sessionId)).reason).toMatchObject({
      code: 'mailbox_mismatch',
      message: 'The consent was given for eve@acme-mail.io, not di@acme-mail.io.',
    });

    const denied = await start({ loginHint: 'di@acme-mail.io' });
    idp.denyNext = true;
    await follow(denied.data!.data.authorizationUrl);
    expect((await session(denied.data!.data.sessionId)).reason!.code).toBe('access_denied');
    expect(await t.db('email_accounts').whereIn('email', ['di@acme-mail.io', 'eve@acme-mail.io'])).toEqual([]);
  });

  it('a provider that hangs is cut off by the deadline: provider_unreachable', async () => {
    const started = await start({ loginHint: 'fay@acme-mail.io' });
    idp.hang = true;
    try {
      const { callback } = await follow(started.data!.data.authorizationUrl);
      expect(callback.status).toBe(400);
    } finally {
      idp.hang = false;
    }
    expect((await session(started.data!.data.sessionId)).reason!.code).toBe('provider_unreachable');
  });

  it('redirects to an allowed return URL with the session id, and refuses others', async () => {
    const started = await start({ loginHint: 'gus@acme-mail.io', returnUrl: 'https://app.example.test/mailboxes?x=1' });
    const { callback } = await follow(started.data!.data.authorizationUrl);
    expect(callback.status).toBe(303);
    const to = new URL(callback.headers.get('location')!);
    expect(to.searchParams.get('sessionId')).toBe(started.data!.data.sessionId);
    expect(to.searchParams.get('status')).toBe('connected');

    const refused = await start({ returnUrl: 'https://evil.example.test/' });
    expect(refused.response.status).toBe(400);
    expect(refused.error!.details[0].code).toBe('return_url_not_allowed');
  });

  it('answers 409 naming the setting for a provider that is not configured', async () => {
    const res = await start({ provider: 'google' });
    expect(res.response.status).toBe(409);
    expect(res.error!.error).toContain('OAUTH_GOOGLE_CLIENT_ID');
  });

  /** The integrator's own consent for `email`: a code flow against the provider; its refresh token. */
  async function integratorGrant(email: string, scope = idp.scopes): Promise<string> {
    const verifier = randomBytes(32).toString('base64url');
    const redirectUri = 'https://integrator.example.test/cb';
    const authorize = new URL(idp.authorizeUrl);
    for (const [k, v] of Object.entries({
      client_id: idp.clientId,
      redirect_uri: redirectUri,
      state: 's',
      login_hint: email,
      scope: scope.join(' '),
      code_challenge: createHash('sha256').update(verifier).digest('base64url'),
      code_challenge_method: 'S256',
    }))
      authorize.searchParams.set(k, v);
    const consent = await fetch(authorize, { redirect: 'manual' });
    const code = new URL(consent.headers.get('location')!).searchParams.get('code')!;
    const answer = await fetch(idp.tokenUrl, {
      method: 'POST',
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code,
        code_verifier: verifier,
        redirect_uri: redirectUri,
        client_id: idp.clientId,
        client_secret: idp.clientSecret,
      }),
    });
    return ((await answer.json()) as { refresh_token: string }).refresh_token;
  }

  it('connects a grant an integrator holds through POST /v2/account/connect, and refuses a wrong or dead one', async () => {
    const connect = (email: string, refreshToken: string) =>
      ws.client.POST('/v2/account/connect', {
        body: { email, provider: 'smtp', auth: { type: 'oauth2', provider: 'generic', refreshToken } },
      });
    const narrow = await connect('hal@acme-mail.io', await integratorGrant('hal@acme-mail.io', ['openid', 'email']));
    expect(narrow.response.status).toBe(400);
    expect(narrow.error!.details[0]).toMatchObject({
      code: 'scope_missing',
      message: 'The grant lacks the mail scope mail.',
    });

    const token = await integratorGrant('hal@acme-mail.io');
    const ok = await connect('hal@acme-mail.io', token);
    expect(ok.error).toBeUndefined();
    expect(ok.response.status).toBe(201);
    expect(ok.data!.data.account).toMatchObject({
      email: 'hal@acme-mail.io',
      auth: { type: 'oauth2', provider: 'generic' },
    });

    const wrong = await connect('ivy@acme-mail.io', await integratorGrant('hal@acme-mail.io'));
    expect(wrong.response.status).toBe(400);
    expect(wrong.error!.details[0].code).toBe('mailbox_mismatch');
    // The provider rotated the first token when it was used: it is dead now.
    const dead = await connect('hal@acme-mail.io', token);
    expect(dead.response.status).toBe(400);
    expect(dead.error!.details[0].code).toBe('invalid_grant');
    expect(await t.db('email_accounts').where({ email: 'ivy@acme-mail.io' })).toEqual([]);

    const both = await ws.client.POST('/v2/account/connect', {
      body: {
        email: 'hal@acme-mail.io',
        provider: 'smtp',
        smtp: { password: 'x', host: 'smtp.acme-mail.io', port: 587 },
        auth: { type: 'oauth2', provider: 'generic', refreshToken: token },
      },
    });
    expect(both.response.status).toBe(400);
  });

  it('a refreshed token refused too puts the account in connectionError with the answer, refreshing once', async () => {
    const created = await ws.client.POST('/v2/campaign/create', {
      body: {
        name: 'Refused',
        accountIds: [accountId],
        schedule: weekdaysUtc,
        options: { emailGapMinutes: 0, randomWaitMaxMinutes: 0 },
      } as never,
    });
    const refusedCampaign = created.data!.data.campaign.id;
    await ws.client.POST('/v2/campaign/sequence-create', {
      body: {
        campaignId: refusedCampaign,
        steps: [{ delayDays: 0, variants: [{ subject: 'Hi', body: 'Hello.' }] }],
      } as never,
    });
    await ws.client.POST('/v1/contact/add', {
      body: { campaignId: refusedCampaign, contacts: [{ email: 'lou@globex.test' }] } as never,
    });
    expect(
      (await ws.client.POST('/v2/campaign/launch', { body: { campaignId: refusedCampaign } })).response.status,
    ).toBe(200);
    sink.oauthRefused.add(ANA);
    const before = idp.refreshes;
    const received = sink.received.length;
    try {
      await t.services.sending.runOnce();
    } finally {
      sink.oauthRefused.delete(ANA);
    }
    expect(sink.received.length).toBe(received);
    expect(idp.refreshes - before).toBe(1);
    const row = await account();
    expect(row.status).toBe('connectionError');
    expect(row.status_reason).toMatch(/^auth_failed: /);
    expect((await statusEvents()).at(-1)).toMatchObject({ previous: 'active', status: 'connectionError' });
  });
  it('POST /v2/account/reconnect logs an OAuth account in with its grant and makes it active again', async () => {
    expect((await account()).status).toBe('connectionError');
    const withPassword = await ws.client.POST('/v2/account/reconnect', { body: { accountId, password: 'x' } });
    expect(withPassword.response.status).toBe(400);
    expect(withPassword.error!.details[0]).toMatchObject({ field: 'body.password', code: 'oauth_account' });
    const res = await ws.client.POST('/v2/account/reconnect', { body: { accountId } });
    expect(res.response.status).toBe(200);
    expect(res.data!.data.account.status).toBe('active');
  });

  describe('a provider whose user-info answers 403 to a dead token (Dovecot: "Temporary authentication failure")', () => {
    beforeAll(() => {
      idp.deadTokenStatus = 403;
    });
    afterAll(() => {
      idp.deadTokenStatus = 401;
    });

    it('a token dropped before its expiry is refreshed once over IMAP, and the read goes on', async () => {
      idp.dropAccessTokens(ANA);
      const before = idp.refreshes;
      await t.services.inbox.runOnce();
      expect(idp.refreshes - before).toBe(1);
      expect((await account()).status).toBe('active');
      const checkpoint = await t.db<CheckpointRow>('mailbox_checkpoints').where({ account_id: accountId }).first();
      expect(checkpoint).toMatchObject({ last_error: null, failures: 0 });
    });

    it('a revoked grant gives one refresh, invalid_grant, and reconnectRequired; reconnect then asks for the OAuth flow', async () => {
      idp.revoke(ANA);
      const before = idp.refusedRefreshes;
      await t.services.inbox.runOnce();
      expect(idp.refusedRefreshes - before).toBe(1);
      const row = await account();
      expect(row.status).toBe('reconnectRequired');
      expect(row.status_reason).toMatch(/^reconnect_required: generic refused the grant/);
      const res = await ws.client.POST('/v2/account/reconnect', { body: { accountId } });
      expect(res.response.status).toBe(409);
      expect(res.error!.details[0]).toMatchObject({ field: 'body.accountId', code: 'reconnect_required' });
    });
  });
});
