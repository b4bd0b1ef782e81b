/**
 * The documentation portal in a real browser: `npm run docs` builds dist/docs, the server serves it
 * at /docs, and headless Chromium (Debian's package, driven by playwright-core) opens it with every
 * request to another host blocked. Every operation of the bundle must be listed in the sidebar and
 * every guide (the `##` sections of info.description) must be reachable; a `/v2` alias is named in its `/v1`
 * operation's entry (a badge that keeps the path's case), so no two entries share a title. The servers box names
 * the origin the page is served from.
 */
import { get } from 'node:http';
import { browserSuite, launchChromium } from '../helpers/browser';
import type { Browser, Page } from 'playwright-core';
import spec from '../../generated/openapi.json';
import { buildDocs } from '../../scripts/docs';
import { startTestServer, type TestServer } from '../helpers/server';

const METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const;

const paths = spec.paths as Record<string, Record<string, { operationId?: string }>>;
// A /v2 alias of a /v1 path is named in its /v1 operation's entry, not listed again.
const operationIds = Object.entries(paths)
  .filter(([path]) => !(path.startsWith('/v2/') && paths[`/v1${path.slice(3)}`]))
  .flatMap(([, item]) => METHODS.filter((m) => item[m]).map((m) => item[m].operationId!));
const guides = [...spec.info.description.matchAll(/^## (.+)$/gm)].map((m) => m[1].trim());
const slug = (s: string) =>
  s
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '');

const suite = browserSuite();

suite('documentation portal at /docs (headless Chromium, offline)', () => {
  let t: TestServer;
  let browser: Browser;
  let page: Page;
  const external: string[] = [];

  beforeAll(async () => {
    buildDocs();
    t = await startTestServer();
    browser = await launchChromium();
    page = await browser.newPage();
    const origin = new URL(t.url).origin;
    // Offline: only the server itself and inline data may be loaded.
    await page.route('**/*', (route) => {
      const url = route.request().url();
      if (url.startsWith(origin) || url.startsWith('data:')) return route.continue();
      external.push(url);
      return route.abort();
    });
    const response = await page.goto(`${t.url}/docs/`);
    expect(response?.status()).toBe(200);
    await page.locator('[data-testid=menu-item-label]').first().waitFor({ timeout: 20_000 });
  }, 90_000);

  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  // A tag's or guide's own entry: a label inside a link (an open tag may add a separator of the same text).
  const sidebarEntry = (name: string) =>
    page.locator('a > [data-testid=menu-item-label]', { hasText: new RegExp(`^${name}$`) });
  /**
   * Opens a sidebar entry and waits for the page to show its hash. On a loaded machine a click can land while the
   * portal is still laying out the sidebar and do nothing: it is clicked again, up to three times.
   */
  async function open(name: string, hash: RegExp) {
    for (let attempt = 1; ; attempt++) {
      await sidebarEntry(name).click();
      try {
        await page.waitForURL(hash, { timeout: 10_000, waitUntil: 'commit' });
        return;
      } catch (err) {
        if (attempt === 3) throw err;
      }
    }
  }
  const sidebarLinks = () =>
    page.$$eval('[data-testid=menu-item-label]', (els) =>
      els.map((e) => ({ text: e.textContent ?? '', href: e.closest('a')?.getAttribute('href') ?? '' })),
    );

  it('lists every operation of the bundle under its tag', async () => {
    expect(guides.length).toBeGreaterThanOrEqual(6);
    // Opening a tag lists its operations (and may close the one before).
    const listed = new Set<string | undefined>();
    for (const tag of spec.tags.map((x) => x.name)) {
      await open(tag, new RegExp(`#/${slug(tag)}$`));
      for (const link of await sidebarLinks()) listed.add(link.href.split('/').pop());
    }
    const missing = operationIds.filter((id) => !listed.has(id.toLowerCase()));
    expect(missing).toEqual([]);
    expect(operationIds.length).toBeGreaterThanOrEqual(92);
  });

  it('lists each operation once: no two sidebar entries of a tag share a title', async () => {
    for (const tag of spec.tags.map((x) => x.name)) {
      await open(tag, new RegExp(`#/${slug(tag)}$`));
      const titles = (await sidebarLinks()).filter((l) => l.href.includes(`/${slug(tag)}/`)).map((l) => l.text);
      expect(titles.filter((title, i) => titles.indexOf(title) !== i)).toEqual([]);
    }
  });

  it('reaches every guide from the sidebar', async () => {
    for (const guide of guides) {
      await open(guide, new RegExp(`#/section/${slug(guide)}$`));
      await expect(page.locator(`[id="section/${slug(guide)}"]`).isVisible()).resolves.toBe(true);
    }
    await expect(page.getByText('20 per minute').first().isVisible()).resolves.toBe(true);
  });

  it('shows an operation with its path and its example', async () => {
    await page.goto(`${t.url}/docs/#/platform/getratelimits`);
    await page.getByText('/v1/ratelimit/limits').first().waitFor({ timeout: 10_000 });
    await expect(page.getByText('Rate limits retrieved').first().isVisible()).resolves.toBe(true);
    await expect(page.getByText('GET /v2/ratelimit/limits').first().isVisible()).resolves.toBe(true);
    // The badge naming the alias shows the path as written (Redoc's tags capitalize their words).
    const badge = page.locator('[data-component-name="Tag/Tag"]', { hasText: 'also /v2/ratelimit/limits' }).first();
    await expect(badge.innerText()).resolves.toBe('also /v2/ratelimit/limits');
  });

  it('names the server it is served from in its servers box', async () => {
    await page.goto(`${t.url}/docs/`);
    await page.getByText(t.url, { exact: true }).first().waitFor({ timeout: 10_000 });
    await expect(page.getByText('https://api.leadreach.io', { exact: true }).first().isVisible()).resolves.toBe(true);
    await expect(page.getByText('http://localhost:3000').count()).resolves.toBe(0);
  });

  it('writes no origin into the page but one of plain host characters', async () => {
    const served = (host: string) =>
      new Promise<string>((resolve, reject) => {
        const { port } = new URL(t.url);
        get({ host: '127.0.0.1', port, path: '/docs/', headers: { Host: host } }, (res) => {
          let text = '';
          res.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
          res.on('end', () => resolve(text)).on('error', reject);
        }).on('error', reject);
      });
    const hostile = await served('evil.test"></div><script>alert(1)</script>');
    expect([hostile.includes('http://localhost:3000'), hostile.includes('<script>alert(1)')]).toEqual([true, false]);
    expect(await served('docs.acme.test:8443')).toContain('"url":"http://docs.acme.test:8443"');
  });

  it('loaded nothing from another host', () => {
    expect(external).toEqual([]);
  });
});
