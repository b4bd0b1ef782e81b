/**
 * A process started from the build leaves its pid in dist/.running while it runs, so `npm start` and
 * `npm run worker` (scripts/build.mjs) never rewrite the build under it. From the sources (tsx, tests) it does
 * nothing. A pid left by a process that died is ignored by the builder.
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { PROJECT_ROOT } from './project-root';

export function markRunningBuild(): void {
  const dist = join(PROJECT_ROOT, 'dist');
  if (relative(dist, __dirname).startsWith(`..${sep}`) || relative(dist, __dirname) === '..') return;
  const file = join(dist, '.running', String(process.pid));
  mkdirSync(join(dist, '.running'), { recursive: true });
  writeFileSync(file, '');
  process.on('exit', () => rmSync(file, { force: true }));
}
