/**
 * `npm run bench:http`: the request path against a bare Express 5 hello, in the same run.
 *
 * Starts a hello server (Express 5, one JSON route) and the real server (`server/main.ts`, production
 * settings: LOG_LEVEL=info to a file, no response validation, the worker off) as child processes, and
 * runs `wrk` (apt-get install wrk) at BENCH_CONNECTIONS (32) on loopback against: the hello,
 * `/healthz`, `GET /v1/authenticate`, `GET /v1/ratelimit/limits`, and the list operations `GET /v1/campaign/list`,
 * `GET /v2/list/all`, `GET /v2/list/leads` (a list of 20 people) and `GET /v2/email/list` for one
 * workspace on a high-limit plan, with `GET /v1/authenticate` spread over 8 workspaces right after the
 * one-workspace case (the two are compared, so they run under the same conditions); then the hello
 * again. Prints req/s, p50, p99 and the serving process's CPU time per request of each, with the ratio
 * to the hello (the mean of its two runs), on PostgreSQL (BENCH_DATABASE_URL or DATABASE_URL; a fresh
 * database lr_bench_http_<pid>, dropped afterwards) and on the embedded database (a temporary DATA_DIR).
 *
 * With `-- --baseline REF` a server of git revision REF (its sources extracted to a temporary folder, this
 * checkout's node_modules linked) runs every case too, on a database of its own prepared by its own code, right
 * before this checkout's server on each database, and a last table gives this checkout's req/s and CPU per
 * request as a share of the baseline's: how much a change of the request path costs, measured in one run. With
 * `-- --rounds N` both run N times, which first alternating, and a last table gives each case's medians and the
 * range of the rounds' ratios: on a shared machine one pair of runs can differ by 10-15% on its own. One of
 * the cases changes state (`POST /v1/campaign/set/name`, the same name each time), so the audit entry every
 * state-changing request writes is in the figures.
 *
 * BENCH_SECONDS (10) per case after a 2 s warm-up; BENCH_TARGETS (postgres,pglite); BENCH_CASES keeps only
 * the cases whose name contains one of its comma-separated words (the hello always runs), so that a profile
 * covers one case; BENCH_NODE_ARGS are passed to the server process (e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`).
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync, closeSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { freshBenchDatabase, insertHighLimitPlan } from './bench-database';
import { argument, checkoutRevision, freePort, median, stop, waitReady } from './bench-process';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);
const TARGETS = (process.env.BENCH_TARGETS ?? 'postgres,pglite')
  .split(',')
  .map((s) => s.trim())
  .filter(Boolean);
const CASES = (process.env.BENCH_CASES ?? '')
  .split(',')
  .map((s) => s.trim())
  .filter(Boolean);
const NODE_ARGS = (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean);
/** With a baseline: how many times both revisions run, each on a fresh database (`-- --rounds N`). */
const ROUNDS = Number(argument('--rounds') ?? 1);
const ROOT = join(__dirname, '..');
const PARALLEL_WORKSPACES = 8;

const HELLO = `
const express = require('express');
const app = express();
app.disable('x-powered-by');
app.get('/', (_req, res) => { res.json({ hello: 'world' }); });
// The same body as a case of the real server (set once by PUT), serialized on every request as the server does.
let body = null;
app.put('/body', express.json({ limit: '1mb' }), (req, res) => { body = req.body; res.end(); });
app.get('/body', (_req, res) => { res.json(body); });
const server = app.listen(Number(process.env.PORT), '127.0.0.1');
process.on('SIGTERM', () => { server.close(); server.closeAllConnections(); });
`;

interface Result {
  name: string;
  rps: number;
  p50Ms: number;
  p99Ms: number;
  /** CPU time of the serving process per request (its database included on the embedded one), in µs. */
  cpuUs: number;
  non2xx: number;
  errors: string;
  /** For the hello answering a case's body: that case's name. */
  bodyOf?: string;
}

const UNIT_MS: Record<string, number> = { us: 0.001, ms: 1, s: 1000, m: 60_000 };

/** CPU time a process has used so far (user and system), in ms, from /proc (Linux). */
function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  // utime and stime are fields 14 and 15 of the line, counted from the state field (3) here.
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS;
}
const CLOCK_TICKS = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim()) || 100;

/** Runs wrk and reads req/s, p50, p99, requests, non-2xx count and socket errors from its report. */
function wrk(name: string, url: string, args: string[], seconds: number): Omit<Result, 'cpuUs'> & { requests: number } {
  const run = spawnSync('wrk', ['-t2', `-c${CONNECTIONS}`, `-d${seconds}s`, '--latency', ...args, url], {
    encoding: 'utf8',
  });
  if (run.error) throw new Error(`wrk: ${run.error.message} (install it: apt-get install -y wrk)`);
  const out = run.stdout;
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1] ?? NaN);
  const percentile = (p: number) => {
    const m = new RegExp(`\\s${p}%\\s+([\\d.]+)(us|ms|s|m)\\b`).exec(out);
    return m ? Number(m[1]) * UNIT_MS[m[2]] : NaN;
  };
  const [p50, p99] = [percentile(50), percentile(99)];
  const requests = Number(/(\d+) requests in/.exec(out)?.[1] ?? NaN);
  const non2xx = Number(/Non-2xx or 3xx responses:\s+(\d+)/.exec(out)?.[1] ?? 0);
  const errors = /Socket errors:[^\n]*/.exec(out)?.[0] ?? '';
  if (![rps, p50, p99].every(Number.isFinite))
    throw new Error(`wrk gave no result for ${name}:\n${out}\n${run.stderr}`);
  return { name, rps, p50Ms: p50, p99Ms: p99, requests, non2xx, errors };
}

/** One case against the process `pid` serves: a warm-up, then the measured run. */
function measure(pid: number, name: string, url: string, args: string[] = []): Result | undefined {
  if (CASES.length && !name.startsWith('hello') && !CASES.some((c) => name.includes(c))) return undefined;
  wrk(name, url, args, 2); // warm-up
  const cpuBefore = cpuMs(pid);
  const run = wrk(name, url, args, SECONDS);
  const r = { ...run, cpuUs: ((cpuMs(pid) - cpuBefore) * 1000) / run.requests };
  const note = [r.non2xx ? `${r.non2xx} non-2xx` : '', r.errors].filter(Boolean).join('; ');
  console.log(
    `  ${name.padEnd(44)} ${r.rps.toFixed(0).padStart(8)} req/s   p50 ${r.p50Ms.toFixed(2).padStart(6)} ms   p99 ${r.p99Ms.toFixed(2).padStart(8)} ms   CPU ${r.cpuUs.toFixed(0).padStart(4)} µs/req ${note ? `  (${note})` : ''}`,
  );
  return r;
}

interface Prepared {
  mainKey: string;
  parallelKeys: string[];
  listId: string;
  renameKey: string;
  renameCampaignIds: string[];
}

/**
 * The benchmark's data: a high-limit plan, one workspace with five campaigns and a people list of 20 (from a
 * small generated lead database), and eight more workspaces.
 */
async function prepare(
  root: string,
  settings: { databaseUrl: string | undefined; dataDir: string },
): Promise<Prepared> {
  // The revision's own code prepares its database (its migrations, its services).
  // Platform files moved under server/platform/: an older revision has them directly in server/.
  const code = (file: string) =>
    import(join(root, existsSync(join(root, `${file}.ts`)) ? file : file.replace('platform/', '')));
  const { loadConfig } = (await code('server/platform/config')) as typeof import('../server/platform/config');
  const { migrate, openDatabase } = (await code('server/db')) as typeof import('../server/db');
  const { newId } = (await code('server/platform/ids')) as typeof import('../server/platform/ids');
  const { createServices } = (await code('server/services')) as typeof import('../server/services');
  const { generateLeads } = (await code(
    'server/modules/leads/generate',
  )) as typeof import('../server/modules/leads/generate');
  const config = loadConfig(settings);
  const database = await openDatabase(config);
  try {
    await migrate(database.db);
    const deps = { config, db: database.db, clock: { now: () => new Date() }, logger: pino({ level: 'silent' }) };
    const services = createServices(deps);
    const planId = await insertHighLimitPlan(database.db, newId);
    const main = await services.workspaces.createWorkspace({ name: 'Bench main', planId });
    for (let i = 0; i < 5; i++) await services.campaigns.create(main.workspace.id, { name: `Campaign ${i + 1}` });
    await generateLeads(database.db, { people: 100, companies: 10, seed: 1 });
    const list = await services.lists.create(main.workspace.id, 'people', 'Bench list');
    const people: { id: string }[] = await database.db('people').orderBy('id').limit(20).select('id');
    await services.lists.addMembers(
      main.workspace.id,
      'people',
      list.id,
      people.map((p) => p.id),
    );
    const parallelKeys: string[] = [];
    for (let i = 0; i < PARALLEL_WORKSPACES; i++) {
      parallelKeys.push((await services.workspaces.createWorkspace({ name: `Bench ${i + 1}`, planId })).apiKey);
    }
    // The renames' own workspace, a campaign per connection, so that no rename waits for another's row lock.
    const renames = await services.workspaces.createWorkspace({ name: 'Bench renames', planId });
    const renameCampaignIds: string[] = [];
    for (let i = 0; i < CONNECTIONS; i++) {
      renameCampaignIds.push((await services.campaigns.create(renames.workspace.id, { name: `Renamed ${i}` })).id);
    }
    return { mainKey: main.apiKey, parallelKeys, listId: list.id, renameKey: renames.apiKey, renameCampaignIds };
  } finally {
    await database.close();
  }
}

/** Every case against a server of the checkout at `root` (`revision` names it in the report) on `target`. */
async function runTarget(
  target: string,
  hello: { url: string; pid: number },
  root: string,
  revision: string,
): Promise<Result[]> {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    NODE_OPTIONS: '',
    SEED_DEMO: '0',
    LOG_LEVEL: 'info',
    VALIDATE_RESPONSES: '0',
    WORKER_ENABLED: '0',
  };
  let cleanup: () => Promise<void>;
  let settings: { databaseUrl: string | undefined; dataDir: string };
  if (target === 'postgres') {
    // Named per run and revision: two runs at once would otherwise drop each other's database.
    const bench = await freshBenchDatabase(
      `lr_bench_http_${process.pid}_${root === ROOT ? 'this' : 'baseline'}`,
      'bench:http',
    );
    env.DATABASE_URL = bench.url;
    settings = { databaseUrl: bench.url, dataDir: '' };
    cleanup = () => bench.drop();
  } else if (target === 'pglite') {
    const dataDir = mkdtempSync(join(tmpdir(), 'bench-http-'));
    env.DATABASE_URL = '';
    env.DATA_DIR = dataDir;
    settings = { databaseUrl: undefined, dataDir };
    cleanup = () => rm(dataDir, { recursive: true, force: true });
  } else {
    throw new Error(`unknown BENCH_TARGETS entry "${target}" (postgres, pglite)`);
  }

  const { mainKey, parallelKeys, listId, renameKey, renameCampaignIds } = await prepare(root, settings);
  const port = await freePort();
  const logFile = join(tmpdir(), `bench-http-${target}-${process.pid}.log`);
  const logFd = openSync(logFile, 'w');
  const server = spawn(process.execPath, [...NODE_ARGS, '--import', 'tsx', join(root, 'server/main.ts')], {
    cwd: root,
    env: { ...env, PORT: String(port) },
    stdio: ['ignore', logFd, logFd],
  });
  closeSync(logFd);
  const base = `http://127.0.0.1:${port}`;
  // GET /v1/authenticate with one key or with keys in turn: the same wrk script for both, so that the
  // 8-workspace case is compared with one workspace at the same cost to wrk.
  const scripts = [[mainKey], parallelKeys].map((keys, i) => {
    const file = join(tmpdir(), `bench-http-${process.pid}-${i}.lua`);
    writeFileSync(
      file,
      `local keys = { ${keys.map((k) => `"${k}"`).join(', ')} }
local i = 0
request = function()
  i = i + 1
  return wrk.format("GET", "/v1/authenticate", { ["X-API-Key"] = keys[(i % #keys) + 1] })
end
`,
    );
    return file;
  });
  // A state-changing call (its audit entry is written on every call), spread over a campaign per connection.
  const renameScript = join(tmpdir(), `bench-http-${process.pid}-rename.lua`);
  writeFileSync(
    renameScript,
    `local ids = { ${renameCampaignIds.map((id) => `"${id}"`).join(', ')} }
local threads = 0
setup = function(thread)
  thread:set("offset", threads)
  threads = threads + 1
end
local n = 0
-- Each of wrk's two threads takes every other campaign in turn, so renames rarely wait for another's row lock.
request = function()
  local id = ids[((offset + 2 * n) % #ids) + 1]
  n = n + 1
  return wrk.format("POST", "/v1/campaign/set/name", {
    ["Content-Type"] = "application/json",
    ["X-API-Key"] = "${renameKey}",
  }, '{"campaignId":"' .. id .. '","name":"Renamed"}')
end
`,
  );
  scripts.push(renameScript);
  try {
    await waitReady(`${base}/healthz`, server, logFile);
    const key = ['-H', `X-API-Key: ${mainKey}`];
    console.log(
      `\n${target === 'postgres' ? 'PostgreSQL' : 'Embedded database (PGlite)'}, ${revision}: ${CONNECTIONS} connections, ${SECONDS} s per case, load average ${loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}`,
    );
    const results: Result[] = [
      measure(hello.pid, 'hello (Express 5, no middleware)', hello.url),
      measure(server.pid!, '/healthz', `${base}/healthz`),
      measure(server.pid!, 'GET /v1/authenticate', `${base}/v1/authenticate`, ['-s', scripts[0]]),
      measure(server.pid!, `GET /v1/authenticate, ${PARALLEL_WORKSPACES} workspaces`, `${base}/v1/authenticate`, [
        '-s',
        scripts[1],
      ]),
      measure(server.pid!, 'POST /v1/campaign/set/name', `${base}/v1/campaign/set/name`, ['-s', renameScript]),
      measure(server.pid!, 'GET /v1/ratelimit/limits', `${base}/v1/ratelimit/limits`, key),
      measure(server.pid!, 'GET /v1/campaign/list', `${base}/v1/campaign/list`, key),
      measure(server.pid!, 'GET /v2/list/all', `${base}/v2/list/all`, key),
      measure(server.pid!, 'GET /v2/list/leads', `${base}/v2/list/leads?listId=${listId}`, key),
      await helloWithBodyOf(hello, 'GET /v2/list/leads', `${base}/v2/list/leads?listId=${listId}`, mainKey),
      measure(server.pid!, 'GET /v2/email/list', `${base}/v2/email/list`, key),
      measure(hello.pid, 'hello again', hello.url),
    ].filter((r) => r !== undefined);
    return results;
  } finally {
    await stop(server);
    for (const file of scripts) rmSync(file, { force: true });
    await cleanup();
  }
}

/**
 * The hello answering with the body `url` answers (list/leads' page of 20 people is 12.3 KB, the hello's 17 bytes):
 * what a bare Express process does to serialize and send that body, next to the case that also finds it.
 */
async function helloWithBodyOf(
  hello: { url: string; pid: number },
  name: string,
  url: string,
  apiKey: string,
): Promise<Result | undefined> {
  if (CASES.length && !CASES.some((c) => name.includes(c))) return undefined;
  const answer = await fetch(url, { headers: { 'X-API-Key': apiKey } });
  const body = await answer.text();
  if (!answer.ok) throw new Error(`${url}: ${answer.status} ${body}`);
  const put = await fetch(`${hello.url}body`, { method: 'PUT', headers: { 'Content-Type': 'application/json' }, body });
  if (!put.ok) throw new Error(`the hello refused the body: ${put.status}`);
  const result = measure(
    hello.pid,
    `hello with the body of ${name} (${(Buffer.byteLength(body) / 1024).toFixed(1)} KB)`,
    `${hello.url}body`,
  );
  return result && { ...result, bodyOf: name };
}

function table(target: string, results: Result[]): string {
  const hello = (results[0].rps + results[results.length - 1].rps) / 2;
  const rows = results
    .slice(1, -1)
    .map(
      (r) =>
        `| ${r.name} | ${r.rps.toFixed(0)} | ${r.p50Ms.toFixed(1)} | ${r.p99Ms.toFixed(1)} | ${r.cpuUs.toFixed(0)} | ${((100 * r.rps) / hello).toFixed(0)}% |${r.non2xx ? ` ${r.non2xx} non-2xx` : ''}`,
    );
  return [
    `${target}: hello ${results[0].rps.toFixed(0)} and ${results[results.length - 1].rps.toFixed(0)} req/s (mean ${hello.toFixed(0)})`,
    '| case | req/s | p50 ms | p99 ms | CPU µs/req | of hello |',
    '|---|---:|---:|---:|---:|---:|',
    ...rows,
    ...results.flatMap((withBody) => {
      const r = results.find((c) => c.name === withBody.bodyOf);
      return r ? [`${r.name}: ${((100 * r.rps) / withBody.rps).toFixed(0)}% of the hello with its body`] : [];
    }),
  ].join('\n');
}

/** This checkout's figures as a share of the baseline's, case by case (CPU: the baseline's µs over this one's). */
function comparison(target: string, baseline: Result[], current: Result[]): string {
  const rows = current.slice(1, -1).flatMap((r) => {
    const b = baseline.find((c) => c.name === r.name);
    if (!b) return [];
    return [
      `| ${r.name} | ${b.rps.toFixed(0)} | ${r.rps.toFixed(0)} | ${((100 * r.rps) / b.rps).toFixed(0)}% | ${b.cpuUs.toFixed(0)} | ${r.cpuUs.toFixed(0)} |`,
    ];
  });
  return [
    `${target}: this checkout against the baseline`,
    '| case | baseline req/s | req/s | of baseline | baseline CPU µs/req | CPU µs/req |',
    '|---|---:|---:|---:|---:|---:|',
    ...rows,
  ].join('\n');
}

/** Over the rounds, case by case: the median req/s of each revision and the median and range of the rounds' ratios. */
function summary(target: string, rounds: { baseline: Result[]; current: Result[] }[]): string {
  const rows = rounds[0].current.slice(1, -1).flatMap((first) => {
    const pairs = rounds.flatMap(({ baseline, current }) => {
      const b = baseline.find((c) => c.name === first.name);
      const r = current.find((c) => c.name === first.name);
      return b && r ? [{ b, r, ratio: (100 * r.rps) / b.rps }] : [];
    });
    if (!pairs.length) return [];
    const ratios = pairs.map((p) => p.ratio);
    return [
      `| ${first.name} | ${median(pairs.map((p) => p.b.rps)).toFixed(0)} | ${median(pairs.map((p) => p.r.rps)).toFixed(0)} | ${median(ratios).toFixed(0)}% | ${Math.min(...ratios).toFixed(0)}-${Math.max(...ratios).toFixed(0)}% | ${median(pairs.map((p) => p.b.cpuUs)).toFixed(0)} | ${median(pairs.map((p) => p.r.cpuUs)).toFixed(0)} |`,
    ];
  });
  return [
    `${target}: this checkout against the baseline over ${rounds.length} rounds (medians)`,
    '| case | baseline req/s | req/s | of baseline | rounds | baseline CPU µs/req | CPU µs/req |',
    '|---|---:|---:|---:|---:|---:|---:|',
    ...rows,
  ].join('\n');
}

async function main(): Promise<void> {
  const baselineRef = argument('--baseline');
  if (!Number.isInteger(ROUNDS) || ROUNDS < 1)
    throw new Error(`--rounds must be a whole number from 1, not ${argument('--rounds')}`);
  if (spawnSync('wrk', ['--version']).error) throw new Error('bench:http needs wrk: apt-get install -y wrk');
  const helloPort = await freePort();
  const hello = spawn(process.execPath, ['-e', HELLO], {
    cwd: ROOT,
    env: { ...process.env, NODE_OPTIONS: '', PORT: String(helloPort) },
    stdio: 'inherit',
  });
  const helloUrl = `http://127.0.0.1:${helloPort}/`;
  const tables: string[] = [];
  const baselineDir = baselineRef ? checkoutRevision(ROOT, baselineRef) : undefined;
  try {
    await waitReady(helloUrl, hello, 'hello');
    for (const target of TARGETS) {
      if (target === 'postgres' && !(process.env.BENCH_DATABASE_URL || process.env.DATABASE_URL)) {
        console.log('\nPostgreSQL: skipped (set BENCH_DATABASE_URL or DATABASE_URL)');
        continue;
      }
      const helloProcess = { url: helloUrl, pid: hello.pid! };
      if (!baselineDir) {
        tables.push(table(`${target}, this checkout`, await runTarget(target, helloProcess, ROOT, 'this checkout')));
        continue;
      }
      const rounds: { baseline: Result[]; current: Result[] }[] = [];
      for (let round = 1; round <= ROUNDS; round++) {
        // Which revision goes first alternates, so that a drift of the machine during a round favours neither.
        const runBaseline = () =>
          runTarget(target, helloProcess, baselineDir, `baseline ${baselineRef}, round ${round}`);
        const runCurrent = () => runTarget(target, helloProcess, ROOT, `this checkout, round ${round}`);
        const [baseline, current] =
          round % 2 === 1
            ? [await runBaseline(), await runCurrent()]
            : await runCurrent().then(async (c) => [await runBaseline(), c]);
        rounds.push({ baseline, current });
        tables.push(table(`${target}, baseline ${baselineRef}, round ${round}`, baseline));
        tables.push(table(`${target}, this checkout, round ${round}`, current));
        tables.push(comparison(`${target}, round ${round}`, baseline, current));
      }
      if (ROUNDS > 1) tables.push(summary(target, rounds));
    }
  } finally {
    await stop(hello);
    if (baselineDir) rmSync(baselineDir, { recursive: true, force: true });
  }
  console.log(
    `\nload average at the end: ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}\n`,
  );
  console.log(tables.join('\n\n'));
}

main().catch((err) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
