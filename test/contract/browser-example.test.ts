/**
 * The client in a browser: the example page (examples/browser/, bundled by esbuild) is served at /examples/
 * with SERVE_EXAMPLES=1 and loaded by headless Chromium from one origin (http://app.test:port) while it calls
 * the API on another (http://127.0.0.1:port), which CORS_ORIGINS allows: the page lists the workspace's campaigns and its inbox.
 */
import { browserSuite, launchChromium } from '../helpers/browser';
import type { Browser } from 'playwright-core';
import { buildExamples } from '../../scripts/build-examples';
import { startTestServer, type TestServer } from '../helpers/server';

const suite = browserSuite();

suite('the example page in Chromium', () => {
  let t: TestServer;
  let browser: Browser;
  let pageOrigin: string;

  beforeAll(async () => {
    buildExamples();
    // CORS is set up when the list is not empty; the page's origin (its port) is added once the server listens.
    t = await startTestServer({ config: { serveExamples: true, corsOrigins: ['https://other.example'] } });
    pageOrigin = t.url.replace('127.0.0.1', 'app.test');
    t.deps.config.corsOrigins.push(pageOrigin);
    // app.test is the page's own host name, resolved to the loopback server: a second origin without a second server.
    browser = await launchChromium(['--host-resolver-rules=MAP app.test 127.0.0.1']);
  }, 90_000);

  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  it('is served only with SERVE_EXAMPLES=1', async () => {
    expect((await t.fetch('/examples/')).status).toBe(200);
    const off = await startTestServer();
    try {
      expect((await off.fetch('/examples/')).status).toBe(404);
    } finally {
      await off.close();
    }
  });

  it('lists the campaigns and the inbox through the client, across origins', async () => {
    const ws = await t.createWorkspace();
    for (const name of ['Spring launch', 'Follow-ups']) await ws.client.POST('/v2/campaign/create', { body: { name } });
    const page = await browser.newPage();
    const apiCalls: string[] = [];
    page.on('request', (r) => {
      if (r.url().startsWith(t.url)) apiCalls.push(`${r.method()} ${new URL(r.url()).pathname}`);
    });
    await page.goto(`${pageOrigin}/examples/#apiKey=${ws.apiKey}&baseUrl=${encodeURIComponent(t.url)}`);
    await page.locator('#status', { hasText: /campaigns|Failed/ }).waitFor({ timeout: 20_000 });
    expect(await page.textContent('#status')).toBe('2 campaigns, 0 messages shown.');
    expect((await page.locator('#campaigns li').allTextContents()).sort()).toEqual([
      'Follow-ups (draft)',
      'Spring launch (draft)',
    ]);
    expect(await page.locator('#inbox li').allTextContents()).toEqual(['No messages yet.']);
    expect(apiCalls).toEqual(expect.arrayContaining(['GET /v1/campaign/list', 'GET /v2/email/list']));
    await page.close();
  });

  it("fails, and says so, when CORS_ORIGINS does not name the page's origin", async () => {
    const ws = await t.createWorkspace();
    t.deps.config.corsOrigins.pop();
    const page = await browser.newPage();
    try {
      await page.goto(`${pageOrigin}/examples/#apiKey=${ws.apiKey}&baseUrl=${encodeURIComponent(t.url)}`);
      await page.locator('#status.error').waitFor({ timeout: 20_000 });
      expect(await page.textContent('#status')).toMatch(/^Failed: /);
      expect(await page.locator('#campaigns li').count()).toBe(0);
    } finally {
      t.deps.config.corsOrigins.push(pageOrigin);
      await page.close();
    }
  });
});
