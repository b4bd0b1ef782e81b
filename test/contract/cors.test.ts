/**
 * A browser page on another origin calls the API with openapi-fetch (the generated client's engine) in
 * headless Chromium: CORS_ORIGINS lets it, the preflight needs no key and counts toward no quota, and the
 * quota and request-id headers are readable by the page. An origin not listed gets no CORS answer.
 */
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { browserSuite, launchChromium } from '../helpers/browser';
import type { Browser } from 'playwright-core';
import { startTestServer, type TestServer, type TestWorkspace } from '../helpers/server';

const suite = browserSuite();

suite('CORS for browser clients (headless Chromium)', () => {
  let t: TestServer;
  let ws: TestWorkspace;
  let page: Server;
  let pageOrigin: string;
  let browser: Browser;

  beforeAll(async () => {
    const fetchClient = readFileSync(join(__dirname, '../../node_modules/openapi-fetch/dist/index.mjs'));
    page = createServer((req, res) => {
      if (req.url === '/openapi-fetch.mjs')
        return res.writeHead(200, { 'content-type': 'text/javascript' }).end(fetchClient);
      res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>app</title>');
    });
    await new Promise<void>((resolve) => page.listen(0, '127.0.0.1', () => resolve()));
    pageOrigin = `http://127.0.0.1:${(page.address() as AddressInfo).port}`;
    t = await startTestServer({ config: { corsOrigins: [pageOrigin] } });
    ws = await t.createWorkspace();
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await t.close();
    await new Promise<void>((resolve) => page.close(() => resolve()));
  });

  const quotaCount = async () =>
    Number(
      (await t.db('quota_buckets').where({ workspace_id: ws.workspaceId, granularity: 'm' }).sum('hits as n'))[0].n ??
        0,
    );

  it('lets the page call the API with the client and read the quota and request-id headers', async () => {
    const tab = await browser.newPage();
    await tab.goto(pageOrigin);
    const before = await quotaCount();
    // A string, so the page runs it as written (the test's own module transform would rewrite `import()`).
    const result = await tab.evaluate<{
      status: number;
      name: string;
      requestId: string | null;
      rateLimit: string | null;
    }>(`(async () => {
      const { default: createClient } = await import('/openapi-fetch.mjs');
      const client = createClient({ baseUrl: ${JSON.stringify(t.url)}, headers: { 'X-API-Key': ${JSON.stringify(ws.apiKey)} } });
      const created = await client.POST('/v2/campaign/create', { body: { name: 'From the browser' } });
      return {
        status: created.response.status,
        name: created.data && created.data.data.campaign.name,
        requestId: created.response.headers.get('x-request-id'),
        rateLimit: created.response.headers.get('ratelimit'),
      };
    })()`);
    expect(result).toMatchObject({ status: 201, name: 'From the browser' });
    expect(result.requestId).toBeTruthy();
    expect(result.rateLimit).toBeTruthy();
    // The POST counted once; its JSON preflight did not count at all.
    expect((await quotaCount()) - before).toBe(1);
    await tab.close();
  });

  it('answers a preflight without a key, and gives an unlisted origin no CORS headers', async () => {
    const preflight = await fetch(`${t.url}/v2/campaign/create`, {
      method: 'OPTIONS',
      headers: {
        Origin: pageOrigin,
        'Access-Control-Request-Method': 'POST',
        'Access-Control-Request-Headers': 'content-type,x-api-key',
      },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-origin')).toBe(pageOrigin);
    expect(preflight.headers.get('access-control-allow-headers')).toMatch(/X-API-Key/i);
    const other = await fetch(`${t.url}/v1/authenticate`, {
      headers: { Origin: 'http://evil.test', 'X-API-Key': ws.apiKey },
    });
    expect(other.headers.get('access-control-allow-origin')).toBeNull();
  });
});
