/**
 * The web console as a browser gets it: the build of app/ (`vite build` into dist/app, which the server serves at
 * /app), and the headless Chromium that the browser tests and `npm run bench:app` drive.
 */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { PROJECT_ROOT } from '../../server/platform/project-root';

/** Builds app/ into dist/app, as `npm run build` does. */
export function buildConsole(stdio: 'pipe' | 'inherit' = 'pipe'): void {
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
}

/** Headless Chromium at `executablePath`, quiet: no GPU, no sandbox (root in CI), no calls home; `extra` flags. */
export function launchChromium(executablePath: string, ...extra: string[]): Promise<Browser> {
  return chromium.launch({
    executablePath,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      ...extra,
    ],
  });
}
