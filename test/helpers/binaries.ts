/**
 * Where the programs some tests drive are on this machine: found on PATH (or by `pg_config --bindir`), never at a
 * fixed path, so a test runs wherever they are installed and says what is missing where they are not.
 */
import { execFileSync } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';

const executable = (path: string): boolean => {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
};

/** The first of `names` found in a directory of PATH. */
export function onPath(...names: string[]): string | undefined {
  const dirs = (process.env.PATH ?? '').split(delimiter).filter(Boolean);
  for (const name of names) for (const dir of dirs) if (executable(join(dir, name))) return join(dir, name);
  return undefined;
}

/** The directory of PostgreSQL's server programs (`initdb`, `pg_ctl`, `postgres`): `pg_config --bindir`, else PATH. */
export function postgresBinDir(): string | undefined {
  const pgConfig = onPath('pg_config');
  if (pgConfig) {
    try {
      const dir = execFileSync(pgConfig, ['--bindir'], { encoding: 'utf8' }).trim();
      if (executable(join(dir, 'initdb')) && executable(join(dir, 'pg_ctl'))) return dir;
    } catch {
      // pg_config without the server programs beside it: PATH below.
    }
  }
  const initdb = onPath('initdb');
  return initdb && executable(join(initdb, '..', 'pg_ctl')) ? join(initdb, '..') : undefined;
}

/** Chromium for the browser tests: CHROMIUM_PATH, else a Chromium or Chrome on PATH. */
export function chromiumPath(): string | undefined {
  const set = process.env.CHROMIUM_PATH;
  if (set) return executable(set) ? set : undefined;
  return onPath('chromium', 'chromium-browser', 'google-chrome', 'google-chrome-stable');
}

/** `describe`, or `describe.skip` with one line saying what is missing and how to install it. */
export function describeIf(found: unknown, what: string, install: string): jest.Describe {
  if (found) return describe;
  console.warn(`skipped: needs ${what} (${install})`);
  return describe.skip;
}

/**
 * `describe` on the embedded database only: for a suite that proves nothing about storage (a browser driving a
 * page, an agent over MCP, the client as a package, the mock server) or that runs processes on an embedded
 * database of their own whatever the run's database is (the server as `npm start` runs it, the admin CLI), so CI,
 * which runs the tests on both databases, runs it once.
 */
export function describeOnEmbeddedDatabase(): jest.Describe {
  return process.env.TEST_DATABASE_URL ? describe.skip : describe;
}
