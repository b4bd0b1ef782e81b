/**
 * `npm start`, `npm run worker` and `npm run build`: builds the parts of dist/ whose sources changed since they were
 * built (the server, the docs portal, the browser example, the web console), each judged by a fingerprint of its inputs' sizes and
 * times, and never rewrites dist/ while a process runs from it. Plain Node, so a start from a current build costs a
 * directory walk, not a TypeScript toolchain.
 *
 *   node scripts/build.mjs          build what changed; with a process running from dist/, start from it as it is
 *   node scripts/build.mjs --all    build every part (npm run build); refused while a process runs from dist/
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';

const ROOT = join(import.meta.dirname, '..');
const DIST = join(ROOT, 'dist');
const STAMPS = join(DIST, '.stamps');
const RUNNING = join(DIST, '.running');
const tsx = (script) => [process.execPath, ['--import', 'tsx', join(ROOT, script)]];

const PARTS = [
  {
    name: 'server',
    inputs: ['server', 'client', 'generated', 'tsconfig.json', 'tsconfig.build.json', 'package-lock.json'],
    run: [process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', join(ROOT, 'tsconfig.build.json')]],
  },
  {
    name: 'docs',
    inputs: ['generated/openapi.json', 'scripts/docs.ts', 'package-lock.json'],
    run: tsx('scripts/docs.ts'),
  },
  {
    name: 'examples',
    inputs: ['examples', 'client', 'generated/api.d.ts', 'scripts/build-examples.ts', 'package-lock.json'],
    run: tsx('scripts/build-examples.ts'),
  },
  {
    name: 'app',
    inputs: ['app', 'client', 'generated/api.d.ts', 'server/platform/scopes.ts', 'package-lock.json'],
    run: [
      process.execPath,
      [join(ROOT, 'node_modules/vite/bin/vite.js'), 'build', '--config', join(ROOT, 'app/vite.config.ts')],
    ],
  },
];

/** Every file under the inputs with its size and time: a change to any of them changes the fingerprint. */
function fingerprint(inputs) {
  const hash = createHash('sha256');
  const visit = (path) => {
    if (!existsSync(path)) return;
    const stat = statSync(path);
    if (stat.isDirectory()) for (const entry of readdirSync(path).sort()) visit(join(path, entry));
    else hash.update(`${relative(ROOT, path)} ${stat.size} ${stat.mtimeMs}\n`);
  };
  for (const input of inputs) visit(join(ROOT, input));
  return hash.digest('hex');
}

/** Processes running from dist/ (each leaves its pid in dist/.running while it runs; a dead one's file is ignored). */
function runningFromDist() {
  if (!existsSync(RUNNING)) return [];
  return readdirSync(RUNNING)
    .map(Number)
    .filter((pid) => {
      try {
        process.kill(pid, 0);
        return pid !== process.pid;
      } catch (err) {
        return err.code === 'EPERM';
      }
    });
}

const all = process.argv.includes('--all');
const stale = PARTS.map((part) => ({ part, print: fingerprint(part.inputs) })).filter(
  ({ part, print }) =>
    all || !existsSync(join(STAMPS, part.name)) || readFileSync(join(STAMPS, part.name), 'utf8') !== print,
);
if (stale.length) {
  const running = runningFromDist();
  if (running.length) {
    const parts = stale.map(({ part }) => part.name).join(', ');
    if (all || !existsSync(join(DIST, 'server', 'main.js'))) {
      console.error(`dist/ is in use by process ${running.join(', ')}: stop it to build (${parts})`);
      process.exit(1);
    }
    console.error(
      `starting from the build in dist/ as it is (${parts} changed since): process ${running.join(', ')} runs from it; stop it and start again to build`,
    );
  } else {
    mkdirSync(STAMPS, { recursive: true });
    for (const { part, print } of stale) {
      const [command, args] = part.run;
      try {
        execFileSync(command, args, { cwd: ROOT, stdio: 'inherit' });
      } catch {
        console.error(`building ${part.name} failed (above)`);
        process.exit(1);
      }
      writeFileSync(join(STAMPS, part.name), print);
    }
  }
}
