/**
 * What the browser tests and `npm run bench:app` share: the system's Chromium through playwright-core, the console's
 * build (made once per test run however many files ask, so no file empties dist/app under another's server), signing
 * in, and axe-core's WCAG 2.1 A and AA check of the page as it is.
 *
 *   const suite = browserSuite();                  // describe on the embedded database with Chromium, else a skip
 *   await buildConsole();                          // in beforeAll
 *   const browser = await launchChromium();
 *   await signIn(page, t.url, ws.apiKey);
 *   expect(await accessibilityViolations(page)).toEqual([]);
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { lock } from 'proper-lockfile';
import { chromium, type Browser, type Page } from 'playwright-core';
import { chromiumPath, describeIf, describeOnEmbeddedDatabase } from './binaries';
import { PROJECT_ROOT } from '../../server/platform/project-root';

const CHROMIUM = chromiumPath();
const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];
const AXE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

/** `describe` where Chromium is found, else a skip saying how to install it. */
export const chromiumSuite = (): jest.Describe =>
  describeIf(CHROMIUM, 'Chromium (CHROMIUM_PATH, or chromium on PATH)', 'apt-get install -y chromium');

/** The same, on the embedded database only (a browser driving a page proves nothing about storage). */
export const browserSuite = (): jest.Describe => (CHROMIUM ? describeOnEmbeddedDatabase() : chromiumSuite());

/**
 * Headless Chromium, quiet (no GPU, no sandbox: root in CI; no calls home), with `args` beside the usual ones (a
 * host resolver rule, say).
 */
export const launchChromium = (args: string[] = []): Promise<Browser> =>
  chromium.launch({ executablePath: CHROMIUM, args: [...ARGS, ...args] });

/**
 * The build `npm run build` makes of app/ (dist/app), made by the first file of a test run that asks (Jest's
 * workers share their parent process) while the others wait on a lock and then use it. `npm run bench:app` has
 * another parent process, so it builds anew, and shows Vite's output (`stdio: 'inherit'`).
 */
export async function buildConsole(stdio: 'pipe' | 'inherit' = 'pipe'): Promise<void> {
  const dist = join(PROJECT_ROOT, 'dist');
  mkdirSync(dist, { recursive: true });
  const release = await lock(dist, {
    lockfilePath: join(dist, '.console-build.lock'),
    retries: { retries: 1000, minTimeout: 100, maxTimeout: 500 },
  });
  try {
    const stamp = join(dist, '.console-build-run');
    const run = String(process.ppid);
    if (existsSync(join(dist, 'app', 'index.html')) && existsSync(stamp) && readFileSync(stamp, 'utf8') === run) return;
    execFileSync(
      process.execPath,
      [
        join(PROJECT_ROOT, 'node_modules/vite/bin/vite.js'),
        'build',
        '--config',
        'app/vite.config.ts',
        '--logLevel',
        'error',
      ],
      { cwd: PROJECT_ROOT, stdio },
    );
    writeFileSync(stamp, run);
  } finally {
    await release();
  }
}

export async function signIn(page: Page, url: string, apiKey: string): Promise<void> {
  await page.goto(`${url}/app/`);
  await page.getByLabel('API key').fill(apiKey);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('navigation', { name: 'Screens' }).waitFor();
}

/** WCAG 2 A and AA violations on the page as it is, by axe-core (evaluated by the browser tools, beside the CSP). */
export async function accessibilityViolations(page: Page): Promise<string[]> {
  await page.evaluate(AXE);
  return page.evaluate(async () => {
    const axe = (
      window as unknown as {
        axe: { run: (o: object) => Promise<{ violations: { id: string; nodes: { target: string[] }[] }[] }> };
      }
    ).axe;
    const result = await axe.run({ runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] } });
    return result.violations.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
  });
}
