/**
 * The OAuth flow's `returnUrl` against OAUTH_RETURN_URLS, through HTTP: compared as parsed URLs (scheme, host and
 * port, no user info, the path at a segment boundary), never as a string prefix; a URL that does not parse is a
 * `400` at start. One allowed URL is followed through the provider and the callback to its redirect.
 */
import { startOAuthProvider, type OAuthTestProvider } from '../helpers/oauth-provider';
import { startTestServer, type TestServer, type TestWorkspace } from '../helpers/server';
import { TestClock } from '../helpers/clock';
import { describeOnEmbeddedDatabase } from '../helpers/binaries';

describeOnEmbeddedDatabase()('OAuth return URLs', () => {
  const clock = new TestClock('2026-11-23T10:00:00.000Z');
  let idp: OAuthTestProvider;
  let t: TestServer;
  let ws: TestWorkspace;

  beforeAll(async () => {
    idp = await startOAuthProvider({ now: () => clock.now() });
    t = await startTestServer({
      clock,
      config: {
        secretKey: '5a'.repeat(32),
        publicUrl: 'https://api.example.test',
        oauth: idp.settings({
          smtp: { host: '127.0.0.1', port: 1 },
          imap: { host: '127.0.0.1', port: 1 },
          returnUrls: ['https://portal.example', 'https://app.example.test/mailboxes'],
          timeoutMs: 1500,
        }),
      },
    });
    ws = await t.createWorkspace();
  }, 120_000);
  afterAll(async () => {
    await t?.close();
    await idp?.close();
  });

  const start = (returnUrl: string) =>
    ws.client.POST('/v2/account/oauth/start', {
      body: { provider: 'generic', loginHint: 'gus@acme-mail.io', returnUrl },
    });

  it('refuses with 400 every URL that only starts like an allowed one, or does not parse', async () => {
    const refused = [
      'https://portal.example@evil.test/',
      'https://portal.example.evil.test/',
      'https://portal.exampleevil.test/',
      'https://portal.example:1@evil.test/',
      'https://portal.example%40evil.test/',
      'https://user@portal.example/',
      'https://portal.example:8443/',
      'http://portal.example/',
      'https://app.example.test/mailboxes-evil',
      'https://app.example.test/mailboxes/../admin',
      'https://app.example.test/',
    ];
    const answers = [];
    for (const url of refused) answers.push(`${url} ${(await start(url)).response.status}`);
    expect(answers).toEqual(refused.map((url) => `${url} 400`));
    const first = await start(refused[0]);
    expect(first.error).toMatchObject({ details: [expect.objectContaining({ code: 'return_url_not_allowed' })] });
    const sessions = await t.db('oauth_sessions').count<{ n: string }[]>({ n: '*' });
    expect(Number(sessions[0].n)).toBe(0);
  });

  it('accepts the allowed URLs and paths below them, and the callback redirects there', async () => {
    const accepted = [
      'https://portal.example',
      'https://PORTAL.example:443/settings?tab=mail',
      'https://app.example.test/mailboxes',
      'https://app.example.test/mailboxes/connected#top',
    ];
    const answers = [];
    for (const url of accepted) answers.push(`${url} ${(await start(url)).response.status}`);
    expect(answers).toEqual(accepted.map((url) => `${url} 201`));

    const started = await start('https://app.example.test/mailboxes/connected?x=1');
    const consent = await fetch(started.data!.data.authorizationUrl, { redirect: 'manual' });
    const back = new URL(consent.headers.get('location')!);
    const callback = await t.fetch(`${back.pathname}${back.search}`, { redirect: 'manual' });
    expect(callback.status).toBe(303);
    const to = new URL(callback.headers.get('location')!);
    expect(to.origin + to.pathname).toBe('https://app.example.test/mailboxes/connected');
    expect(to.searchParams.get('sessionId')).toBe(started.data!.data.sessionId);
  });
});
