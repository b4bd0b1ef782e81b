/**
 * The links in emails, reached without an API key: unsubscribe (page and RFC 8058 one-click), open pixel
 * and click redirect (protocol-relative links included), with their signed tokens tampered, forged and replayed.
 */
import { startSmtpSink, type SmtpSink } from '../helpers/smtp-sink';
import { startTestServer, type TestServer, type TestWorkspace } from '../helpers/server';

// Setting up sends a campaign email: slow on a busy machine.
jest.setTimeout(120_000);

describe('tracking and unsubscribe links', () => {
  let t: TestServer;
  let sink: SmtpSink;
  let ws: TestWorkspace;
  let links: { unsubscribe: string; click: string; offer: string; pixel: string; hrefs: string[] };
  let contactId: string;

  beforeAll(async () => {
    sink = await startSmtpSink();
    t = await startTestServer({ config: { secretKey: '44'.repeat(32), allowPrivateMailHosts: true } });
    // Links point at this test server.
    (t.services.tracking as unknown as { publicUrl: string }).publicUrl = t.url;
    t.clock.set('2026-11-23T10:00:00.000Z');
    ws = await t.createWorkspace();
    const account = await ws.client.POST('/v2/account/connect', {
      body: {
        email: 'ana@acme-mail.io',
        provider: 'smtp',
        smtp: { host: '127.0.0.1', port: sink.port, password: 'pw' },
      } as never,
    });
    const created = await ws.client.POST('/v2/campaign/create', {
      body: {
        name: 'Links',
        accountIds: [account.data!.data.account.id],
        schedule: { timezone: 'UTC', days: [1, 2, 3, 4, 5], from: '09:00', to: '17:00' },
        options: { emailGapMinutes: 0, randomWaitMaxMinutes: 0 },
      } as never,
    });
    const campaignId = created.data!.data.campaign.id;
    await ws.client.POST('/v2/campaign/sequence-create', {
      body: {
        campaignId,
        steps: [
          {
            delayDays: 0,
            variants: [
              {
                subject: 'Hi',
                body: '<p>See <a href="https://acme.test/pricing">pricing</a> and <a href="{{offer}}">your offer</a>. <a href="{{unsubscribeUrl}}">Unsubscribe</a></p>',
              },
            ],
          },
          { delayDays: 1, variants: [{ subject: '', body: 'Bump' }] },
        ],
      } as never,
    });
    const added = await ws.client.POST('/v1/contact/add', {
      // A protocol-relative link from contact data.
      body: {
        campaignId,
        contacts: [{ email: 'joe@globex.test', customVariables: { offer: '//offers.test/joe?id=7' } }],
      } as never,
    });
    contactId = added.data!.data.added[0].id;
    await ws.client.POST('/v2/campaign/launch', { body: { campaignId } });
    expect(await t.services.sending.runOnce()).toBe(1);
    const html = sink.received[0].parsed.html as string;
    const hrefs = [...html.matchAll(/href="([^"]+)"/g)].map((m) => m[1]);
    links = {
      click: hrefs.find((h) => h.includes('/c/'))!,
      offer: hrefs.filter((h) => h.includes('/c/'))[1],
      hrefs,
      unsubscribe: hrefs.find((h) => h.includes('/u/'))!,
      pixel: /<img src="([^"]+)"/.exec(html)![1],
    };
    expect(links.unsubscribe).toBe(
      (sink.received[0].parsed.headers.get('list') as { unsubscribe: { url: string } }).unsubscribe.url,
    );
  });
  afterAll(async () => {
    t.services.mail.close();
    await t.close();
    await sink.close();
  });

  /** The same link with one character of its signature changed. */
  const tamper = (url: string) =>
    url.replace(
      /(\/[uoc]\/[A-Za-z0-9_-]+\.)([A-Za-z0-9_-])/,
      (_m, head: string, c: string) => `${head}${c === 'A' ? 'B' : 'A'}`,
    );
  const events = (type: string) =>
    t.db('email_events').where({ workspace_id: ws.workspaceId, type }).select<{ flagged: boolean }[]>('flagged');

  it('flags an open fetched right after the send, counts a later one, and always answers the pixel', async () => {
    const first = await fetch(links.pixel);
    expect(first.status).toBe(200);
    expect(first.headers.get('content-type')).toBe('image/gif');
    t.clock.advance(60_000);
    await fetch(links.pixel, { headers: { 'user-agent': 'Mozilla/5.0 (Macintosh)' } });
    await fetch(links.pixel, { headers: { 'user-agent': 'Mozilla/5.0 (via ggpht.com GoogleImageProxy)' } });
    const bad = await fetch(tamper(links.pixel));
    expect(bad.status).toBe(200);
    expect((await events('opened')).map((e) => e.flagged)).toEqual([true, false, true]);
  });

  it('redirects a click only to the signed target', async () => {
    const res = await fetch(links.click, { redirect: 'manual' });
    expect(res.status).toBe(302);
    expect(res.headers.get('location')).toBe('https://acme.test/pricing');
    const forged = await fetch(tamper(links.click), { redirect: 'manual' });
    expect(forged.status).toBe(404);
    const invented = await fetch(
      `${t.url}/c/${Buffer.from(JSON.stringify({ u: 'https://evil.test' })).toString('base64url')}.AAAA`,
      { redirect: 'manual' },
    );
    expect(invented.status).toBe(404);
    expect(await events('clicked')).toHaveLength(1);
  });

  it('tracks a protocol-relative link like any other, opening it over https', async () => {
    // Every link of the message goes through this server.
    expect(links.hrefs.filter((h) => !h.startsWith(`${t.url}/`))).toEqual([]);
    const res = await fetch(links.offer, { redirect: 'manual' });
    expect(res.status).toBe(302);
    expect(res.headers.get('location')).toBe('https://offers.test/joe?id=7');
    expect(await events('clicked')).toHaveLength(2);
  });

  it('shows a confirmation page, unsubscribes on one-click POST once, suppresses the address and stops the sequence', async () => {
    const page = await fetch(links.unsubscribe);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('<form method="post"');
    expect((await fetch(tamper(links.unsubscribe), { method: 'POST' })).status).toBe(404);

    for (let i = 0; i < 2; i += 1) {
      const res = await fetch(links.unsubscribe, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: 'List-Unsubscribe=One-Click',
      });
      expect(res.status).toBe(200);
    }
    const contact = await ws.client.GET('/v1/contact/get', { params: { query: { contactId } } as never });
    expect(contact.data!.data.contact.status).toBe('unsubscribed');
    expect(await events('unsubscribed')).toHaveLength(1);
    expect(await t.db('suppressions').where({ workspace_id: ws.workspaceId }).select('value', 'reason')).toEqual([
      { value: 'joe@globex.test', reason: 'unsubscribed' },
    ]);
    t.clock.advance(2 * 86_400_000);
    expect(await t.services.sending.runOnce()).toBe(0);
    expect(sink.received).toHaveLength(1);
  });
});
