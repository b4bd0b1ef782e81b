/**
 * The console end to end in headless Chromium against one real server and loopback parts, on the embedded
 * database only (it proves nothing about storage): a people search whose most possible cost is shown before the
 * reveal, saved to a list whose members export as CSV; a webhook created with its secret shown once and its test
 * answered by a loopback receiver; a tracking domain added, its CNAME shown and verified against a loopback DNS
 * server, the event in that webhook's delivery log; the sending settings saved; a contact's reply read from
 * Dovecot into the unibox with its intent and answered from there to the SMTP sink; a mailbox connected by OAuth
 * through the identity provider's consent page in a new tab; a key that may only read these screens; and the
 * webhook deleted once its dialog is confirmed. axe-core checks each new screen.
 */
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { accessibilityViolations, browserSuite, buildConsole, launchChromium, signIn } from '../helpers/browser';
import { startDnsServer, type TestDnsServer } from '../helpers/dns-server';
import { dovecotMissing, replyMessage, startImapServer, type ImapTestServer } from '../helpers/imap-server';
import { startOAuthProvider, type OAuthTestProvider } from '../helpers/oauth-provider';
import { startSmtpSink, type SmtpSink } from '../helpers/smtp-sink';
import { startTestServer, type TestServer, type TestWorkspace } from '../helpers/server';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver';
import { TestClock } from '../helpers/clock';
import { describeIf } from '../helpers/binaries';
import { insertFixtures } from '../api/people-search-fixtures';

const SDR = 'maya@acme-mail.io';
const ANA = 'ana@acme-mail.io';
const TARGET = 'track.leadreach.test';
/** The public address the identity provider sends the browser back to; the test routes it to the server. */
const PUBLIC_URL = 'https://api.example.test';

const noDovecot = dovecotMissing();
const suite = noDovecot ? describeIf(null, 'dovecot', noDovecot) : browserSuite();

suite('the console end to end (headless Chromium)', () => {
  const clock = new TestClock('2026-11-23T10:00:00.000Z'); // a Monday
  let idp: OAuthTestProvider;
  let sink: SmtpSink;
  let imap: ImapTestServer;
  let dns: TestDnsServer;
  let receiver: WebhookReceiver;
  let t: TestServer;
  let ws: TestWorkspace;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  const cspViolations: string[] = [];

  const expectAccessible = async () => expect(await accessibilityViolations(page)).toEqual([]);
  const fits = async (width: number) => {
    await page.setViewportSize({ width, height: 844 });
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(width);
    await page.setViewportSize({ width: 1280, height: 900 });
  };
  const screen = (name: string) => page.getByRole('navigation', { name: 'Screens' }).getByRole('link', { name });
  const settings = async (section: string) => {
    await screen('Settings').click();
    await page.getByRole('navigation', { name: 'Settings sections' }).getByRole('link', { name: section }).click();
  };

  beforeAll(async () => {
    await buildConsole();
    idp = await startOAuthProvider({ now: () => clock.now() });
    idp.consentPage = true;
    // The sink takes any password, and XOAUTH2 logins whose token the provider vouches for; Dovecot the same.
    sink = await startSmtpSink({ oauth: { userInfoUrl: idp.userInfoUrl } });
    imap = await startImapServer({
      users: [{ user: SDR, password: 'imap-pw' }],
      oauth2: { userInfoUrl: idp.userInfoUrl },
    });
    dns = await startDnsServer({});
    receiver = await startWebhookReceiver();
    t = await startTestServer({
      clock,
      config: {
        secretKey: '6b'.repeat(32),
        allowPrivateMailHosts: true,
        // The callback proves the grant with SMTP and IMAP logins, as in production.
        verifyMailLogins: true,
        allowPrivateWebhooks: true,
        dnsServers: [dns.address],
        dnsTimeoutMs: 2000,
        trackingCnameTarget: TARGET,
        publicUrl: PUBLIC_URL,
        oauth: idp.settings({
          smtp: { host: '127.0.0.1', port: sink.port },
          imap: { host: '127.0.0.1', port: imap.port },
        }),
      },
    });
    await insertFixtures(t.db);
    ws = await t.createWorkspace({ credits: 100 });
    browser = await launchChromium();
    context = await browser.newContext({ viewport: { width: 1280, height: 900 }, acceptDownloads: true });
    // The provider's redirect to the public callback reaches this server, as a reverse proxy would pass it on.
    await context.route(`${PUBLIC_URL}/**`, async (route) => {
      const { pathname, search } = new URL(route.request().url());
      await route.fulfill({ response: await route.fetch({ url: `${t.url}${pathname}${search}` }) });
    });
    page = await context.newPage();
    page.on('console', (m) => {
      if (/Content Security Policy/i.test(m.text())) cspViolations.push(m.text());
    });
    await signIn(page, t.url, ws.apiKey);
    // The build, Dovecot, a fresh database and Chromium took well over a minute together on a loaded machine.
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    t?.services.mail.close();
    await t?.close();
    await Promise.all([sink?.close(), imap?.close(), dns?.close(), receiver?.close(), idp?.close()]);
  });

  it('searches people for free, shows the most a reveal costs, reveals, saves them to a list and exports it', async () => {
    await screen('Leads').click();
    await page.getByRole('heading', { name: 'Search people' }).waitFor();
    await expectAccessible();
    await page.locator('summary', { hasText: 'Department' }).click();
    await page.getByRole('checkbox', { name: 'Sales' }).check();
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    await page.getByText('3 people found; page 1 of 1.').waitFor();
    expect(await page.getByRole('cell', { name: 'not revealed (verified)' }).count()).toBe(1);

    // Jane has an email and a mobile, Luis an email, Bob neither: 1 + 5 + 1 at the default prices.
    await page.getByRole('checkbox', { name: /^Mobile phone/ }).check();
    expect(await page.locator('[data-cost]').getAttribute('data-cost')).toBe('7');
    await expectAccessible();
    await page.getByRole('button', { name: 'Reveal for at most 7 credits' }).click();
    await page.getByText('Charged 7 credits; 93 credits left.').waitFor();
    await page.getByRole('cell', { name: 'jane.doe@northwindanalytics.com' }).waitFor();
    await fits(390);

    await page.getByRole('checkbox', { name: 'Select every row of this page' }).check();
    await page.getByLabel("New list's name").fill('Sales leaders');
    await page.getByRole('button', { name: 'Save 3 people' }).click();
    await page.getByText('Added 3 people to Sales leaders.').waitFor();
    await page.getByRole('link', { name: 'Sales leaders' }).click();
    await page.getByRole('heading', { name: 'Sales leaders' }).waitFor();
    await page.getByRole('cell', { name: 'lortega@brightpathlogistics.com' }).waitFor();
    expect(await page.getByRole('table', { name: 'Members of Sales leaders' }).locator('tbody tr').count()).toBe(3);
    await expectAccessible();

    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'Export as CSV' }).click(),
    ]);
    expect(download.suggestedFilename()).toBe('Sales leaders.csv');
    const csv = await new Promise<string>((resolve, reject) => {
      void download.createReadStream().then((stream) => {
        const chunks: Buffer[] = [];
        stream.on('data', (c: Buffer) => chunks.push(c));
        stream.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
        stream.on('error', reject);
      });
    });
    const lines = csv.trim().split(/\r?\n/);
    expect(lines[0]).toMatch(/^id,firstName,lastName,/);
    expect(lines).toHaveLength(4);
    expect(csv).toContain('jane.doe@northwindanalytics.com');
  });

  it('creates a webhook, shows its secret once and the answer to a test event', async () => {
    await settings('Webhooks');
    await page.getByText('No webhooks yet.').waitFor();
    await expectAccessible();
    await page.getByLabel('URL', { exact: true }).fill(receiver.url);
    await page.locator('summary', { hasText: 'Events (1)' }).click();
    await page.getByRole('checkbox', { name: 'A tracking domain was verified' }).check();
    await page.getByRole('button', { name: 'Create webhook' }).click();
    expect(await page.locator('[data-secret]').textContent()).toMatch(/^whsec_/);
    await page.getByRole('heading', { name: receiver.url }).waitFor();
    await page.getByRole('button', { name: 'Send test' }).click();
    await page.locator('[data-test-result="delivered"]', { hasText: 'HTTP 200' }).waitFor();
    expect(receiver.received).toHaveLength(1);
    expect(receiver.received[0].headers['webhook-signature']).toMatch(/^v1,/);
    await expectAccessible();
    await fits(390);
  });

  it("adds a tracking domain with its CNAME record, verifies it, and the event reaches the webhook's log", async () => {
    await settings('Tracking domains');
    await page.getByText('No tracking domains yet.').waitFor();
    await expectAccessible();
    await page.getByLabel('Domain', { exact: true }).fill('links.acme.test');
    await page.getByRole('button', { name: 'Add domain' }).click();
    await page.getByRole('heading', { name: 'links.acme.test' }).waitFor();
    expect(await page.locator('[data-cname-target]').textContent()).toBe(TARGET);
    await page.locator('.badge.pending').waitFor();
    await expectAccessible();

    dns.zone['links.acme.test'] = { CNAME: TARGET };
    await page.getByRole('button', { name: 'Check links.acme.test now' }).click();
    await page.getByText('Verified.').waitFor();
    expect(await t.services.webhooks.runOnce()).toBeGreaterThan(0);

    await settings('Webhooks');
    await page.getByRole('button', { name: 'Delivery log' }).click();
    await page.getByRole('cell', { name: 'tracking.domainVerified' }).waitFor();
    expect(await page.locator('[data-status-code="200"]').count()).toBe(1);
    await expectAccessible();
  });

  it('saves the sending settings', async () => {
    await settings('Sending');
    await page.getByLabel('Emails a day to one recipient domain').fill('20');
    await page.getByRole('button', { name: 'Save sending settings' }).click();
    await page.getByText(/^Sending settings saved/).waitFor();
    const saved = await ws.client.GET('/v2/sending/settings');
    expect(saved.data!.data.settings.recipientDomainDailyLimit).toBe(20);
  });

  it("shows a contact's reply in the unibox with its intent, and sends the answer written there", async () => {
    await screen('Accounts').click();
    await page.getByLabel('Email address', { exact: true }).fill(SDR);
    await page.getByLabel('Password', { exact: true }).fill('imap-pw');
    await page.getByLabel('SMTP host').fill('127.0.0.1');
    await page.getByLabel('SMTP port').fill(String(sink.port));
    await page.getByLabel('IMAP host (for replies; optional)').fill('127.0.0.1');
    await page.getByLabel('IMAP port').fill(String(imap.port));
    await page.getByRole('button', { name: 'Connect', exact: true }).click();
    await page.getByText('Account connected.').waitFor();

    // The campaign is written through the API (the console's editor has its own test); it is launched here.
    const accounts = await ws.client.GET('/v2/account/list', { params: { query: {} } });
    const created = await ws.client.POST('/v2/campaign/create', {
      body: {
        name: 'Reply flow',
        accountIds: [accounts.data!.data.items[0].id],
        schedule: { timezone: 'UTC', days: [1, 2, 3, 4, 5], from: '09:00', to: '17:00' },
        options: { stopOnReply: true, emailGapMinutes: 0, randomWaitMaxMinutes: 0 },
      },
    });
    const campaignId = created.data!.data.campaign.id;
    await ws.client.POST('/v2/campaign/sequence-create', {
      body: {
        campaignId,
        steps: [{ delayDays: 0, variants: [{ subject: 'Quick question, {{firstName}}', body: 'Hi' }] }],
      },
    });
    await ws.client.POST('/v2/contact/add', {
      body: { campaignId, contacts: [{ email: 'tom@globex.test', firstName: 'Tom' }] },
    });
    await page.goto(`${t.url}/app/#/campaigns/${campaignId}`);
    await page.getByRole('button', { name: 'Launch' }).click();
    await page.getByRole('button', { name: 'Pause' }).waitFor();
    for (let i = 0; i < 10 && sink.received.length === 0; i++) {
      await t.services.sending.runOnce();
      clock.advance(60_000);
    }
    const sent = sink.received.find((m) => m.envelope.to[0] === 'tom@globex.test')!;
    const sentId = sent.parsed.messageId!;

    clock.set('2026-11-23T11:00:00.000Z');
    await imap.deliver(
      SDR,
      replyMessage({
        from: 'Tom <tom@globex.test>',
        to: SDR,
        subject: 'Re: Quick question, Tom',
        messageId: '<tom-1@globex.test>',
        inReplyTo: sentId,
        date: 'Mon, 23 Nov 2026 11:00:00 +0000',
        text: 'Sounds good, call me.',
      }),
    );
    expect(await t.services.inbox.runOnce()).toBe(1);

    await screen('Unibox').click();
    const reply = page.getByRole('listitem').filter({ hasText: 'tom@globex.test: Re: Quick question, Tom' });
    await reply.getByText('reply, meetingRequest').waitFor();
    await reply.getByRole('button').click();
    expect(await page.getByLabel('Intent').inputValue()).toBe('meetingRequest');
    sink.received.length = 0;
    await page.getByLabel('Reply in thread').fill('Thursday 3 pm it is.');
    await page.getByRole('button', { name: 'Send reply' }).click();
    await page.getByText('Reply sent.').waitFor();
    expect(sink.received).toHaveLength(1);
    expect(sink.received[0].envelope).toEqual({ from: SDR, to: ['tom@globex.test'] });
    expect(sink.received[0].parsed.inReplyTo).toBe('<tom-1@globex.test>');
    expect(sink.received[0].parsed.text).toContain('Thursday 3 pm it is.');
  });

  it("connects a mailbox by OAuth through the provider's consent page in a new tab", async () => {
    await screen('Accounts').click();
    await page.getByLabel('Mailbox (optional)').fill(ANA);
    const [consent] = await Promise.all([
      context.waitForEvent('page'),
      page.getByRole('button', { name: "Connect with your organisation's provider" }).click(),
    ]);
    await consent.getByRole('heading', { name: `Allow access to ${ANA}?` }).waitFor();
    await consent.getByRole('button', { name: 'Allow' }).click();
    await consent.getByText(`${ANA} is connected`).waitFor();
    await consent.close();
    // The console asks for the flow's outcome every 2 s.
    await page.getByText(`Connected ${ANA}.`).waitFor();
    const row = page.getByRole('row').filter({ has: page.getByRole('button', { name: ANA }) });
    await row.getByText('active', { exact: true }).waitFor();
    expect(sink.oauthLogins).toContain(ANA);
  });

  it('shows a key that may only read them these screens without their write controls', async () => {
    const created = await ws.client.POST('/v2/api-key/create', {
      body: { name: 'reader', scopes: ['lists:read', 'webhooks:read', 'deliverability:read', 'sending:read'] },
    });
    const reader = await context.newPage();
    await signIn(reader, t.url, created.data!.data.apiKey);
    const nav = reader.getByRole('navigation', { name: 'Screens' });
    expect(await nav.getByRole('link', { name: 'Leads' }).count()).toBe(0);
    await nav.getByRole('link', { name: 'Lists' }).click();
    await reader.getByRole('link', { name: 'Sales leaders' }).waitFor();
    expect(await reader.getByRole('button', { name: 'Create list' }).count()).toBe(0);
    await nav.getByRole('link', { name: 'Settings' }).click();
    // Usage and keys are not this key's to read: its first section is the webhooks.
    await reader.getByRole('heading', { name: receiver.url }).waitFor();
    expect(await reader.getByRole('button', { name: /Create webhook|Send test|Delete|Resume/ }).count()).toBe(0);
    const sections = reader.getByRole('navigation', { name: 'Settings sections' });
    await sections.getByRole('link', { name: 'Tracking domains' }).click();
    await reader.getByRole('heading', { name: 'links.acme.test' }).waitFor();
    expect(await reader.getByRole('button', { name: /Add domain|Check/ }).count()).toBe(0);
    await sections.getByRole('link', { name: 'Sending' }).click();
    await reader.getByLabel('Emails a day to one recipient domain').waitFor();
    expect(await reader.getByLabel('Emails a day to one recipient domain').isDisabled()).toBe(true);
    expect(await reader.getByRole('button', { name: 'Save sending settings' }).count()).toBe(0);
    await reader.close();
  });

  it('deletes a webhook only once its dialog is confirmed', async () => {
    await settings('Webhooks');
    const dialog = page.getByRole('dialog');
    await page.getByRole('button', { name: 'Delete', exact: true }).click();
    await expectAccessible();
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await dialog.waitFor({ state: 'hidden' });
    await page.getByRole('button', { name: 'Delete', exact: true }).click();
    await dialog.getByRole('button', { name: 'Delete it and its log' }).click();
    await page.getByText('No webhooks yet.').waitFor();
    const listed = await ws.client.GET('/v2/webhook/list', { params: { query: {} } });
    expect(listed.data!.data.items).toEqual([]);
  });

  it('logged no Content-Security-Policy violation on these screens', () => {
    expect(cspViolations).toEqual([]);
  });
});
