/**
 * `npm run bench:app`: the web console's first load, as a browser fetches it from /app: the build of app/ (Vite,
 * into dist/app), then every script and style sheet index.html names, each gzipped at level 9 as a server would
 * send it. Printed beside the baseline in scripts/bench-app-baseline.json (the figures of the build that set it)
 * and the budget (250 KB of JavaScript gzipped); over budget, the run fails. `--write-baseline` records this run
 * as the new baseline.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';

const ROOT = join(__dirname, '..');
const APP = join(ROOT, 'dist', 'app');
const BASELINE = join(__dirname, 'bench-app-baseline.json');
const BUDGET_JS_GZIP = 250 * 1024;

interface FirstLoad {
  jsBytes: number;
  jsGzipBytes: number;
  cssGzipBytes: number;
  files: number;
}

function measure(): FirstLoad {
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

const kb = (bytes: number) => `${(bytes / 1024).toFixed(1)} KB`;

execFileSync(
  process.execPath,
  [
    join(ROOT, 'node_modules/vite/bin/vite.js'),
    'build',
    '--config',
    join(ROOT, 'app/vite.config.ts'),
    '--logLevel',
    'error',
  ],
  { cwd: ROOT, stdio: 'inherit' },
);
const now = measure();
if (process.argv.includes('--write-baseline')) writeFileSync(BASELINE, `${JSON.stringify(now, null, 2)}\n`);
const baseline = JSON.parse(readFileSync(BASELINE, 'utf8')) as FirstLoad;
const rows: [string, number, number][] = [
  ['JavaScript (raw)', now.jsBytes, baseline.jsBytes],
  ['JavaScript (gzip)', now.jsGzipBytes, baseline.jsGzipBytes],
  ['CSS (gzip)', now.cssGzipBytes, baseline.cssGzipBytes],
];
console.log(`first load of /app: ${now.files} files (baseline ${baseline.files})`);
console.log(`${'what'.padEnd(20)}${'now'.padStart(12)}${'baseline'.padStart(12)}`);
for (const [what, value, base] of rows)
  console.log(`${what.padEnd(20)}${kb(value).padStart(12)}${kb(base).padStart(12)}`);
const within = now.jsGzipBytes <= BUDGET_JS_GZIP;
console.log(`budget: ${kb(BUDGET_JS_GZIP)} of JavaScript gzipped: ${within ? 'within' : 'OVER'}`);
if (!within) process.exitCode = 1;
