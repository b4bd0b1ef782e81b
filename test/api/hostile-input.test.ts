/**
 * Input an attacker crafts: inbox cursors that are not ours, contact data that tries to become a
 * `javascript:` link, and tokens from one kind of link used as another.
 */
import { readJson, type ErrorBody } from '../helpers/bodies';
import { startSmtpSink, type SmtpSink } from '../helpers/smtp-sink';
import { startTestServer, type TestServer, type TestWorkspace } from '../helpers/server';

describe('hostile input', () => {
  let t: TestServer;
  let sink: SmtpSink;
  let ws: TestWorkspace;

  beforeAll(async () => {
    sink = await startSmtpSink();
    t = await startTestServer({ config: { secretKey: '88'.repeat(32), allowPrivateMailHosts: true } });
    (t.services.tracking as unknown as { publicUrl: string }).publicUrl = t.url;
    t.clock.set('2026-11-23T10:00:00.000Z');
    ws = await t.createWorkspace();
  });
  afterAll(async () => {
    t.services.mail.close();
    await t.close();
    await sink.close();
  });

  it('answers a crafted inbox cursor with a 400, never a 500', async () => {
    const cursors = [
      `${new Date().toISOString()}|${'-'.repeat(36)}`,
      `2026-11-23T10:00:00.000Z|${'a'.repeat(36)}`,
      '-271821-04-20T00:00:00.000Z|01a20da2-e433-7188-bf23-2202dbe08a7d',
      '+275760-09-13T00:00:00.000Z|01a20da2-e433-7188-bf23-2202dbe08a7d',
      '2026-11-23|01a20da2-e433-7188-bf23-2202dbe08a7d',
      '2026-11-23T10:00:00.000Z|01a20da2-e433-7188-bf23-2202dbe08a7d|x',
      'garbage',
    ].map((c) => Buffer.from(c).toString('base64url'));
    for (const cursor of [...cursors, '%%%', '']) {
      const res = await t.fetch(`/v2/email/list?cursor=${encodeURIComponent(cursor)}`, { apiKey: ws.apiKey });
      const body = await readJson<ErrorBody>(res);
      expect({ cursor, status: res.status }).toEqual({ cursor, status: cursor === '' ? res.status : 400 });
      expect(res.status).toBeLessThan(500);
      if (res.status === 400) expect(body.code).toBe('validation_error');
    }
    // A cursor this API gave still works.
    const good = Buffer.from('2026-11-23T10:00:00.000Z|01a20da2-e433-7188-bf23-2202dbe08a7d').toString('base64url');
    expect((await t.fetch(`/v2/email/list?cursor=${good}`, { apiKey: ws.apiKey })).status).toBe(200);
  });

  it('makes links only of http(s) and mailto URLs, and accepts each token only for its own purpose', async () => {
    const account = await ws.client.POST('/v2/account/connect', {
      body: {
        email: 'eve@acme-mail.io',
        provider: 'smtp',
        smtp: { host: '127.0.0.1', port: sink.port, password: 'pw' },
      } as never,
    });
    const created = await ws.client.POST('/v2/campaign/create', {
      body: {
        name: 'Links',
        accountIds: [account.data!.data.account.id],
        schedule: { timezone: 'UTC', days: [1, 2, 3, 4, 5], from: '09:00', to: '17:00' },
        options: { emailGapMinutes: 0, randomWaitMaxMinutes: 0, trackOpens: true, trackClicks: true },
      } as never,
    });
    const campaignId = created.data!.data.campaign.id;
    const body =
      '<p>Your <a href="{{website}}">site</a>, <a href="JaVaScRiPt&#58;alert(2)">two</a>, <a href="data:text/html,x">three</a>, ' +
      '<a href="https://acme.test/pricing">pricing</a>, <a href="mailto:help@acme.test">mail us</a>. <a href="{{unsubscribeUrl}}">Unsubscribe</a></p>';
    await ws.client.POST('/v2/campaign/sequence-create', {
      body: { campaignId, steps: [{ delayDays: 0, variants: [{ subject: 'Hi', body }] }] } as never,
    });
    const added = await ws.client.POST('/v1/contact/add', {
      body: {
        campaignId,
        contacts: [{ email: 'mal@globex.test', website: 'javascript:alert(document.cookie)' }],
      } as never,
    });
    expect(added.data!.data.added).toHaveLength(1);
    const contactId = added.data!.data.added[0].id;
    await ws.client.POST('/v2/campaign/launch', { body: { campaignId } });
    expect(await t.services.sending.runOnce()).toBe(1);

    const html = sink.received[0].parsed.html as string;
    expect(html).not.toMatch(/javascript|data:text/i);
    expect(html).toContain('<a>site</a>');
    expect(html).toContain('<a>two</a>');
    expect(html).toContain('<a>three</a>');
    expect(html).toContain('href="mailto:help@acme.test"');
    const hrefs = [...html.matchAll(/href="([^"]+)"/g)].map((m) => m[1]);
    const click = hrefs.find((h) => h.includes('/c/'))!;
    const unsubscribe = hrefs.find((h) => h.includes('/u/'))!;
    const pixel = /<img src="([^"]+)"/.exec(html)![1];
    expect([click, unsubscribe, pixel].every(Boolean)).toBe(true);
    expect(sink.received[0].parsed.text).toContain('site');

    const tokenOf = (url: string) => new URL(url).pathname.split('/')[2].replace(/\.gif$/, '');
    const status = async () =>
      (await ws.client.GET('/v1/contact/get', { params: { query: { contactId } } as never })).data!.data.contact.status;
    for (const other of [click, pixel]) {
      const misused = await fetch(`${t.url}/u/${tokenOf(other)}`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: 'List-Unsubscribe=One-Click',
      });
      expect(misused.status).toBe(404);
      expect((await fetch(`${t.url}/u/${tokenOf(other)}`)).status).toBe(404);
    }
    expect(await status()).toBe('completed');
    // An unsubscribe token neither redirects nor counts an open.
    expect((await fetch(`${t.url}/c/${tokenOf(unsubscribe)}`, { redirect: 'manual' })).status).toBe(404);
    await fetch(`${t.url}/o/${tokenOf(unsubscribe)}.gif`);
    expect(
      Number((await t.db('email_events').where({ workspace_id: ws.workspaceId, type: 'opened' }).count('* as n'))[0].n),
    ).toBe(0);
    await fetch(pixel);
    expect(
      Number((await t.db('email_events').where({ workspace_id: ws.workspaceId, type: 'opened' }).count('* as n'))[0].n),
    ).toBe(1);

    const real = await fetch(unsubscribe, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'List-Unsubscribe=One-Click',
    });
    expect(real.status).toBe(200);
    expect(await status()).toBe('unsubscribed');
  });
});
