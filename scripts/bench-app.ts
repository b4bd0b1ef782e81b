/**
 * `npm run bench:app`: the web console as a browser meets it, printed beside the baseline in
 * scripts/bench-app-baseline.json (the figures of the run that set it) and each figure's goal.
 *
 * 1. The first load: the build of app/ (Vite, into dist/app), then every script and style sheet index.html names,
 *    each gzipped at level 9 as a server would send it. Budget: 250 KB of JavaScript gzipped; over it, the run fails.
 * 2. The campaign page's time to interactive, over a campaign of 10,000 contacts (3 steps of 2 variants, a linked
 *    account, a subsequence, a schedule): from navigation to the moment the sequence editor holds the saved steps,
 *    editable, and the figures show their numbers and both charts. Each of RUNS loads is a new browser context (no
 *    cache) with the key already in its sessionStorage, so it counts the page, the scripts, the key's check and the
 *    campaign's reads. Goal: under 1 s (the median).
 * 3. The contact table over a campaign of 100,000 contacts: scrolled down page after page until
 *    BENCH_APP_SCROLL_ROWS rows (10,000) are loaded; how many pages it fetched for that and how many rows the
 *    DOM held at most. Goal: one page per 100 rows scrolled, and a DOM that does not grow with the list.
 *
 * The server is this checkout's app in this process, on the embedded PGlite in memory, or on a fresh PostgreSQL
 * database lr_bench_app when BENCH_DATABASE_URL or DATABASE_URL is set; the contacts are written by SQL, as the
 * other benchmarks write bulk rows. Chromium is found as the console's test finds it (CHROMIUM_PATH, or PATH).
 * `--size-only` measures the first load alone. `--write-baseline` records this run as the new baseline.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import type { Browser, Page } from 'playwright-core';
import pino from 'pino';
import { createApp } from '../server/app';
import { migrate, type Database } from '../server/db';
import { loadConfig } from '../server/platform/config';
import { newId } from '../server/platform/ids';
import { createServices } from '../server/services';
import { chromiumPath } from '../test/helpers/binaries';
import { buildConsole, launchChromium } from '../test/helpers/browser';
import { insertHighLimitPlan, openBenchDatabase } from './bench-database';

const ROOT = join(__dirname, '..');
const APP = join(ROOT, 'dist', 'app');
const BASELINE = join(__dirname, 'bench-app-baseline.json');
const BUDGET_JS_GZIP = 250 * 1024;
const GOAL_CAMPAIGN_PAGE_MS = 1000;
const RUNS = 5;
const PAGE_CONTACTS = 10_000;
const TABLE_CONTACTS = 100_000;
const SCROLL_ROWS = Number(process.env.BENCH_APP_SCROLL_ROWS ?? 10_000);
/** The contact list's page size, as the console asks for it. */
const PAGE_SIZE = 100;

interface FirstLoad {
  jsBytes: number;
  jsGzipBytes: number;
  cssGzipBytes: number;
  files: number;
}

interface Figures extends FirstLoad {
  /** Median time to interactive of the campaign page, ms. */
  campaignPageMs?: number;
  /** The contact table scrolled `rowsLoaded` rows down a campaign of `contacts`. */
  contactTable?: { contacts: number; rowsLoaded: number; pagesFetched: number; maxDomRows: number };
}

function measureFirstLoad(): FirstLoad {
  const html = readFileSync(join(APP, 'index.html'), 'utf8');
  const assets = [...html.matchAll(/(?:src|href)="\/app\/(assets\/[^"]+\.(js|css))"/g)];
  const load = { jsBytes: 0, jsGzipBytes: 0, cssGzipBytes: 0, files: assets.length };
  for (const [, path, kind] of assets) {
    const bytes = readFileSync(join(APP, path));
    const gzipped = gzipSync(bytes, { level: 9 }).length;
    if (kind === 'js') {
      load.jsBytes += bytes.length;
      load.jsGzipBytes += gzipped;
    } else load.cssGzipBytes += gzipped;
  }
  return load;
}

/** A workspace with a 10k-contact campaign for the campaign page and a 100k-contact one for the table. */
async function seed(database: Database) {
  const db = database.db;
  const config = loadConfig({ seedDemo: false, validateResponses: false });
  const deps = { config, db, clock: { now: () => new Date() }, logger: pino({ level: 'silent' }) };
  const services = createServices(deps);
  const planId = await insertHighLimitPlan(db, newId);
  const { workspace, apiKey } = await services.workspaces.createWorkspace({ name: 'Bench console', planId });
  const accountId = newId();
  await db('email_accounts').insert({
    id: accountId,
    workspace_id: workspace.id,
    email: 'sender@acme-mail.io',
    provider: 'google',
    status: 'active',
    daily_limit: 50,
    created_at: new Date(),
    updated_at: new Date(),
  });
  const schedule = { timezone: 'UTC', days: [1, 2, 3, 4, 5], from: '09:00', to: '17:00' };
  const campaign = await services.campaigns.create(workspace.id, {
    name: 'Ten thousand',
    accountIds: [accountId],
    schedule,
  });
  await services.campaigns.createSteps(
    workspace.id,
    campaign.id,
    [0, 3, 4].map((delayDays, i) => ({
      delayDays,
      variants: [
        {
          subject: i === 0 ? 'Quick question, {{firstName | there}}' : '',
          body: `Hi {{firstName | there}}, step ${i + 1}.`,
        },
        { subject: i === 0 ? '{{companyName}} and outbound' : '', body: `Hello {{firstName | there}}, step ${i + 1}.` },
      ],
    })),
  );
  await services.subsequences.create(workspace.id, {
    campaignId: campaign.id,
    name: 'Not now',
    trigger: { type: 'replyIntent', intent: 'notInterested' },
    steps: [{ delay: { value: 30, unit: 'days' }, variants: [{ subject: '', body: 'Checking back in.' }] }],
  });
  const big = await services.campaigns.create(workspace.id, { name: 'Hundred thousand', schedule });
  for (const [campaignId, count] of [
    [campaign.id, PAGE_CONTACTS],
    [big.id, TABLE_CONTACTS],
  ] as const)
    await db.raw(
      `INSERT INTO contacts (id, workspace_id, campaign_id, email, first_name, last_name, company_name, job_title,
                             custom_variables, status, created_at, updated_at)
       SELECT gen_random_uuid(), ?, ?, 'lead' || k || '@company' || (k % 997) || '.example', 'First' || k, 'Last' || k,
              'Company ' || (k % 997), 'Head of Sales', '{}', 'active', now() - k * interval '1 second', now()
         FROM generate_series(1, ?) k`,
      [workspace.id, campaignId, count],
    );
  // The planner's statistics, as autovacuum would gather them after such a load.
  await db.raw('ANALYZE contacts');
  return { deps, services, apiKey, campaignId: campaign.id, bigName: 'Hundred thousand' };
}

/** A page in a new browser context (nothing cached), signed in: the key in sessionStorage before any script runs. */
async function signedInPage(browser: Browser, apiKey: string): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  await context.addInitScript((key) => sessionStorage.setItem('outreach-console.apiKey', key), apiKey);
  return context.newPage();
}

/** ms from navigation until the saved first step is editable and the figures show their numbers and charts. */
async function campaignPageTime(browser: Browser, base: string, apiKey: string, campaignId: string): Promise<number> {
  const page = await signedInPage(browser, apiKey);
  await page.goto(`${base}/app/#/campaigns/${campaignId}`, { waitUntil: 'commit' });
  const ready = await page.waitForFunction(
    () => {
      const body = document.querySelector<HTMLTextAreaElement>('#step-0-0-body');
      const usable = body !== null && !body.disabled && body.value !== '';
      const figures =
        document.querySelector('[data-figure="sent"]') && document.querySelectorAll('.chart canvas').length >= 2;
      return usable && figures ? performance.now() : 0;
    },
    undefined,
    { polling: 'raf' },
  );
  const ms = await ready.jsonValue();
  await page.context().close();
  return ms;
}

/** The contact table of the big campaign scrolled down until `SCROLL_ROWS` rows are loaded. */
async function scrollTable(browser: Browser, base: string, apiKey: string, campaignName: string) {
  const page = await signedInPage(browser, apiKey);
  let pagesFetched = 0;
  page.on('request', (request) => {
    if (request.url().includes('/v2/contact/list') && request.url().includes('campaignId=')) pagesFetched++;
  });
  await page.goto(`${base}/app/#/contacts`);
  await page.locator('[data-loaded]').waitFor();
  // The workspace's list stands in until the campaign's first page has come.
  const firstPage = page.waitForResponse((response) => response.url().includes('campaignId='));
  await page.getByLabel('Campaign', { exact: true }).selectOption({ label: campaignName });
  await (await firstPage).finished();
  const loaded = async () => Number(await page.locator('[data-loaded]').getAttribute('data-loaded'));
  let rowsLoaded = await loaded();
  let maxDomRows = 0;
  const started = performance.now();
  while (rowsLoaded < SCROLL_ROWS) {
    // To the end of what is loaded: the table asks for the next page as the last rows come into view.
    await page.locator('.table-wrap.virtual').evaluate((box) => box.scrollTo({ top: box.scrollHeight }));
    await page.waitForFunction(
      (n) => Number(document.querySelector('[data-loaded]')?.getAttribute('data-loaded')) > n,
      rowsLoaded,
    );
    rowsLoaded = await loaded();
    maxDomRows = Math.max(maxDomRows, await page.locator('tbody tr[data-index]').count());
  }
  const seconds = (performance.now() - started) / 1000;
  await page.context().close();
  return { contacts: TABLE_CONTACTS, rowsLoaded, pagesFetched, maxDomRows, seconds };
}

async function measureInBrowser(): Promise<Pick<Figures, 'campaignPageMs' | 'contactTable'> & { label: string }> {
  if (!chromiumPath())
    throw new Error('bench:app needs Chromium (CHROMIUM_PATH, or chromium on PATH); --size-only skips it');
  const { database, label } = await openBenchDatabase('lr_bench_app');
  let server: Server | undefined;
  let browser: Browser | undefined;
  try {
    await migrate(database.db);
    console.log(`seeding ${PAGE_CONTACTS + TABLE_CONTACTS} contacts (${label})…`);
    const { deps, services, apiKey, campaignId, bigName } = await seed(database);
    const app = createApp(deps, services);
    server = await new Promise<Server>((resolve) => {
      const s = app.listen(0, '127.0.0.1', () => resolve(s));
    });
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    browser = await launchChromium();
    // One load first, so the server's first requests (prepared statements, caches) are not in the figures.
    await campaignPageTime(browser, base, apiKey, campaignId);
    const times: number[] = [];
    for (let i = 0; i < RUNS; i++) times.push(await campaignPageTime(browser, base, apiKey, campaignId));
    times.sort((a, b) => a - b);
    console.log(
      `campaign page loads (ms): ${times.map((t) => t.toFixed(0)).join(', ')}; load average ${loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')}`,
    );
    const table = await scrollTable(browser, base, apiKey, bigName);
    console.log(`contact table: ${table.rowsLoaded} rows scrolled in ${table.seconds.toFixed(1)} s`);
    const { seconds: _seconds, ...contactTable } = table;
    return { label, campaignPageMs: Math.round(times[Math.floor(times.length / 2)]), contactTable };
  } finally {
    await browser?.close();
    server?.close();
    await database.close();
  }
}

const kb = (bytes: number) => `${(bytes / 1024).toFixed(1)} KB`;
const row = (what: string, now: string, base: string, goal = '') =>
  console.log(`${what.padEnd(36)}${now.padStart(12)}${base.padStart(12)}  ${goal}`);

async function main(): Promise<void> {
  await buildConsole('inherit');
  const now: Figures = measureFirstLoad();
  let label = '';
  if (!process.argv.includes('--size-only')) {
    const { label: server, ...measured } = await measureInBrowser();
    label = server;
    Object.assign(now, measured);
  }
  if (process.argv.includes('--write-baseline')) writeFileSync(BASELINE, `${JSON.stringify(now, null, 2)}\n`);
  const baseline = JSON.parse(readFileSync(BASELINE, 'utf8')) as Figures;
  console.log(
    `\nfirst load of /app: ${now.files} files (baseline ${baseline.files})${label ? `; server on ${label}` : ''}`,
  );
  row('what', 'now', 'baseline', 'goal');
  row('JavaScript (raw)', kb(now.jsBytes), kb(baseline.jsBytes));
  row('JavaScript (gzip)', kb(now.jsGzipBytes), kb(baseline.jsGzipBytes), `under ${kb(BUDGET_JS_GZIP)}`);
  row('CSS (gzip)', kb(now.cssGzipBytes), kb(baseline.cssGzipBytes));
  const ms = (value: number | undefined) => (value === undefined ? '-' : `${value} ms`);
  const within = now.jsGzipBytes <= BUDGET_JS_GZIP;
  if (now.campaignPageMs !== undefined) {
    row(
      `campaign page, ${PAGE_CONTACTS / 1000}k contacts (median)`,
      ms(now.campaignPageMs),
      ms(baseline.campaignPageMs),
      `under ${GOAL_CAMPAIGN_PAGE_MS} ms: ${now.campaignPageMs < GOAL_CAMPAIGN_PAGE_MS ? 'met' : 'NOT MET'}`,
    );
  }
  if (now.contactTable) {
    const t = now.contactTable;
    const b = baseline.contactTable;
    row(
      `table: pages for ${t.rowsLoaded} rows of ${t.contacts / 1000}k`,
      String(t.pagesFetched),
      b?.rowsLoaded === t.rowsLoaded ? String(b.pagesFetched) : '-',
      `${Math.ceil(t.rowsLoaded / PAGE_SIZE)} pages of ${PAGE_SIZE}: ${t.pagesFetched <= Math.ceil(t.rowsLoaded / PAGE_SIZE) + 1 ? 'met' : 'NOT MET'}`,
    );
    row(
      'table: rows in the DOM at most',
      String(t.maxDomRows),
      b?.rowsLoaded === t.rowsLoaded ? String(b.maxDomRows) : '-',
    );
  }
  console.log(`budget: ${kb(BUDGET_JS_GZIP)} of JavaScript gzipped: ${within ? 'within' : 'OVER'}`);
  if (!within) process.exitCode = 1;
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
