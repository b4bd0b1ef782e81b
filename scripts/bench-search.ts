/**
 * `npm run bench:search`: p50/p95 latency through HTTP of typical people and company searches on
 * 1,000,000 people and 100,000 companies in PostgreSQL, first one request at a time (the baseline),
 * then under load: BENCH_CLIENTS clients (default 8; 0 skips it) each send the searches in a mixed
 * stream for BENCH_SECONDS (default 30), and the run reports per-search p50/p95 side by side with
 * the baseline, the throughput, where the CPU went (this process, the PostgreSQL backends, the rest
 * of the machine) and the load average.
 *
 * The server runs with its configuration from the environment: SEARCH_COUNT_CACHE_SECONDS=0 measures
 * searches that count their matches every time (the default reuses a count for 60 s, and every measured
 * request is a repeated search).
 *
 * BENCH_DATABASE_URL (else DATABASE_URL) names a PostgreSQL server; the benchmark creates its own
 * database there (BENCH_DB_NAME, default lr_bench), loads the data set once and reuses it on later
 * runs. BENCH_PEOPLE / BENCH_COMPANIES / BENCH_ITERATIONS change the sizes.
 */
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { loadavg } from 'node:os';
import { SingleBar, Presets } from 'cli-progress';
import knex, { type Knex } from 'knex';
import pino from 'pino';
import { createApp } from '../server/app';
import { systemClock } from '../server/platform/clock';
import { loadConfig } from '../server/platform/config';
import { migrate, openDatabase } from '../server/db';
import { generateLeads } from '../server/modules/leads/generate';
import { createServices, type Deps } from '../server/services';

const PEOPLE = Number(process.env.BENCH_PEOPLE ?? 1_000_000);
const COMPANIES = Number(process.env.BENCH_COMPANIES ?? 100_000);
const ITERATIONS = Number(process.env.BENCH_ITERATIONS ?? 60);
const CLIENTS = Number(process.env.BENCH_CLIENTS ?? 8);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 30);
const DB_NAME = process.env.BENCH_DB_NAME ?? 'lr_bench';
const BENCH_PLAN_ID = '00000000-0000-7000-8000-0000000be4c4';

const SEARCHES: {
  name: string;
  path: '/v1/mixed_people/search' | '/v1/company/find';
  body: Record<string, unknown>;
}[] = [
  { name: 'people: title words', path: '/v1/mixed_people/search', body: { titles: ['sales director'] } },
  {
    name: 'people: seniority + location',
    path: '/v1/mixed_people/search',
    body: { seniorities: ['vp', 'director'], locations: ['California'] },
  },
  {
    name: 'people: industry + employee range',
    path: '/v1/mixed_people/search',
    body: { industries: ['Computer Software'], employeeRanges: ['51-200', '201-500'] },
  },
  { name: 'people: company domain', path: '/v1/mixed_people/search', body: { companyDomains: ['DOMAIN'] } },
  { name: 'people: keywords', path: '/v1/mixed_people/search', body: { keywords: 'cybersecurity' } },
  {
    name: 'people: combined filters',
    path: '/v1/mixed_people/search',
    body: {
      titles: ['engineering manager', 'head of engineering'],
      locations: ['United States'],
      employeeRanges: ['201-500', '501-1000'],
      emailStatuses: ['verified'],
    },
  },
  {
    name: 'people: department, all reveals',
    path: '/v1/mixed_people/search',
    body: {
      departments: ['marketing'],
      seniorities: ['cSuite'],
      dataOptions: ['workEmailReveal', 'fullContactAndCompany', 'mobilePhoneReveal'],
    },
  },
  {
    name: 'people: deep page (500)',
    path: '/v1/mixed_people/search',
    body: { seniorities: ['entry'], page: 500, perPage: 100, dataOptions: [] },
  },
  { name: 'people: no filter', path: '/v1/mixed_people/search', body: { dataOptions: [] } },
  {
    name: 'companies: industry + size + location',
    path: '/v1/company/find',
    body: {
      industries: ['Financial Services'],
      employeeRanges: ['51-200'],
      locations: ['United States'],
      dataOptions: ['basic'],
    },
  },
  {
    name: 'companies: technologies, full',
    path: '/v1/company/find',
    body: { technologies: ['snowflake', 'datadog'], keywords: 'cloud', dataOptions: ['full'] },
  },
];

type Search = (typeof SEARCHES)[number];
interface Stats {
  p50: number;
  p95: number;
  n: number;
}

function stats(times: number[]): Stats {
  const sorted = [...times].sort((a, b) => a - b);
  const at = (p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
  return { p50: at(50), p95: at(95), n: sorted.length };
}

/** CPU seconds so far of a process, from /proc (utime + stime, in USER_HZ = 100 ticks a second). */
function processCpuSeconds(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return 0; // the process has ended
  }
}

/** Busy and total CPU seconds of the whole machine (all cores), from /proc/stat. */
function machineCpuSeconds(): { busy: number; total: number } {
  const ticks = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
  const total = ticks.reduce((a, b) => a + b, 0);
  return { busy: (total - ticks[3] - ticks[4]) / 100, total: total / 100 };
}

/** Where the CPU goes: this process (server and clients), the benchmark database's backends, the machine. */
async function cpuSnapshot(db: Knex) {
  const backends: { pid: number }[] = await db('pg_stat_activity').where({ datname: DB_NAME }).select('pid');
  return {
    node: process.cpuUsage(),
    postgres: new Map(backends.map(({ pid }) => [pid, processCpuSeconds(pid)])),
    machine: machineCpuSeconds(),
  };
}

const fmtLoad = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(' / ');

async function main() {
  const server = process.env.BENCH_DATABASE_URL || process.env.DATABASE_URL;
  if (!server)
    throw new Error(
      'Set BENCH_DATABASE_URL (or DATABASE_URL) to a PostgreSQL server, e.g. postgres://postgres@127.0.0.1:5432/postgres',
    );
  const admin = knex({ client: 'pg', connection: server });
  try {
    const exists = await admin('pg_database')
      .where({ datname: DB_NAME })
      .first<{ datname: string } | undefined>('datname');
    if (!exists) await admin.raw(`CREATE DATABASE ${DB_NAME}`);
  } finally {
    await admin.destroy();
  }
  const url = new URL(server);
  url.pathname = `/${DB_NAME}`;
  const config = loadConfig({ databaseUrl: url.toString(), validateResponses: false, seedDemo: false });
  const database = await openDatabase(config);
  const { db } = database;
  await migrate(db);

  const count = async (table: string) => Number((await db(table).count<{ n: string }[]>({ n: '*' }).first())?.n);
  if ((await count('people')) !== PEOPLE || (await count('companies')) !== COMPANIES) {
    console.log(
      `Loading ${PEOPLE.toLocaleString()} people and ${COMPANIES.toLocaleString()} companies into ${DB_NAME} (once)...`,
    );
    const bar = new SingleBar({ format: '{phase} [{bar}] {value}/{total}' }, Presets.shades_classic);
    bar.start(PEOPLE, 0, { phase: 'companies' });
    const started = Date.now();
    await generateLeads(db, { people: PEOPLE, companies: COMPANIES, seed: 42, replace: true }, (p) => {
      if (p.phase === 'indexes') bar.update(PEOPLE, { phase: `indexes (${p.done})` });
      else {
        bar.setTotal(p.total);
        bar.update(p.done, { phase: p.phase });
      }
    });
    bar.stop();
    console.log(`Loaded in ${((Date.now() - started) / 1000).toFixed(0)} s`);
  } else {
    // A reused data set may have been loaded by an older loader or changed since: the search plans
    // rely on fresh statistics and on the visibility map (index-only scans). Quick when nothing changed.
    await db.raw('VACUUM (ANALYZE) people, companies');
  }

  const deps: Deps = { config, db, clock: systemClock, logger: pino({ level: 'silent' }) };
  const services = createServices(deps);
  await db('plans')
    .insert({
      id: BENCH_PLAN_ID,
      name: 'Benchmark',
      per_min: 1_000_000,
      per_hour: 10_000_000,
      per_day: 100_000_000,
      credits: 0,
      created_at: new Date(),
    })
    .onConflict('id')
    .ignore();
  // One workspace per client, as separate customers: requests of one workspace take turns on its
  // quota counter by design, which is not what this benchmark measures.
  const apiKeys: string[] = [];
  for (let c = 0; c < Math.max(1, CLIENTS); c++) {
    const { workspace, apiKey } = await services.workspaces.createWorkspace({
      name: `Benchmark ${new Date().toISOString()} #${c + 1}`,
      planId: BENCH_PLAN_ID,
    });
    await db('workspaces').where({ id: workspace.id }).update({ credit_balance: 1_000_000_000 });
    apiKeys.push(apiKey);
  }
  const app = createApp(deps, services);
  const http = await new Promise<import('node:http').Server>((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  const base = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
  const top = await db('companies').orderBy('score', 'desc').first<{ domain: string } | undefined>('domain');
  if (!top) throw new Error('no companies loaded');
  const { domain } = top;
  const bodies = new Map(SEARCHES.map((s) => [s, JSON.stringify(s.body).replace('DOMAIN', domain)]));
  const totals = new Map<Search, number>();

  const run = async (s: Search, apiKey: string): Promise<number> => {
    const t0 = performance.now();
    const res = await fetch(base + s.path, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': apiKey },
      body: bodies.get(s),
    });
    const json = (await res.json()) as { data?: { pagination: { totalEntries: number } }; error?: string };
    if (res.status !== 200) throw new Error(`${s.name}: ${res.status} ${json.error}`);
    totals.set(s, json.data!.pagination.totalEntries);
    return performance.now() - t0;
  };

  console.log(
    `\nThe count of the same filters is ${config.searchCountCacheSeconds ? `reused for ${config.searchCountCacheSeconds} s` : 'counted every time'} (SEARCH_COUNT_CACHE_SECONDS).`,
  );
  console.log(`\nOne at a time: ${ITERATIONS} requests per search (after 3 warm-up requests), through HTTP:\n`);
  console.log('search'.padEnd(42) + 'results'.padStart(10) + 'p50 ms'.padStart(9) + 'p95 ms'.padStart(9));
  const sequential = new Map<Search, Stats>();
  for (const s of SEARCHES) {
    for (let i = 0; i < 3; i++) await run(s, apiKeys[0]);
    const times: number[] = [];
    for (let i = 0; i < ITERATIONS; i++) times.push(await run(s, apiKeys[0]));
    const row = stats(times);
    sequential.set(s, row);
    console.log(
      s.name.padEnd(42) +
        String(totals.get(s)).padStart(10) +
        row.p50.toFixed(1).padStart(9) +
        row.p95.toFixed(1).padStart(9),
    );
  }

  const concurrent = new Map<Search, number[]>(SEARCHES.map((s) => [s, []]));
  let elapsed = 0;
  const poolSamples: { used: number; waiting: number }[] = [];
  let cpu: { node: number; postgres: number; machineBusy: number; machineTotal: number } | undefined;
  const loadBefore = fmtLoad();
  if (CLIENTS > 0) {
    console.log(
      `\n${CLIENTS} clients for ${SECONDS} s, each sending the searches in turn (starting at a different one)...`,
    );
    // A workspace's first request of a search reveals and charges its page once; warm that up so
    // the measured requests do the same work as the baseline's.
    await Promise.all(
      apiKeys.map(async (key) => {
        for (const s of SEARCHES) await run(s, key);
      }),
    );
    const before = await cpuSnapshot(db);
    // Whether the connection pool holds requests back: requests waiting for a connection, sampled.
    const pool = (db.client as { pool: { numUsed(): number; numPendingAcquires(): number } }).pool;
    const sampler = setInterval(
      () => poolSamples.push({ used: pool.numUsed(), waiting: pool.numPendingAcquires() }),
      10,
    );
    const t0 = performance.now();
    const until = t0 + SECONDS * 1000;
    await Promise.all(
      apiKeys.map(async (key, c) => {
        for (let i = c; performance.now() < until; i++) {
          const s = SEARCHES[i % SEARCHES.length];
          concurrent.get(s)!.push(await run(s, key));
        }
      }),
    );
    elapsed = (performance.now() - t0) / 1000;
    clearInterval(sampler);
    const after = await cpuSnapshot(db);
    const node = process.cpuUsage(before.node);
    cpu = {
      node: (node.user + node.system) / 1e6,
      postgres: [...after.postgres].reduce((sum, [pid, seconds]) => sum + seconds - (before.postgres.get(pid) ?? 0), 0),
      machineBusy: after.machine.busy - before.machine.busy,
      machineTotal: after.machine.total - before.machine.total,
    };
  }
  await new Promise<void>((resolve) => http.close(() => resolve()));
  await database.close();

  // The tables as the README shows them.
  const ms = (n: number) => n.toFixed(1);
  console.log(
    '\n| search | results | 1 client p50 ms | 1 client p95 ms |' +
      (CLIENTS ? ` ${CLIENTS} clients p50 ms | ${CLIENTS} clients p95 ms | requests |` : ''),
  );
  console.log('|---|---:|---:|---:|' + (CLIENTS ? '---:|---:|---:|' : ''));
  for (const s of SEARCHES) {
    const seq = sequential.get(s)!;
    let line = `| ${s.name} | ${totals.get(s)!.toLocaleString('en-US')} | ${ms(seq.p50)} | ${ms(seq.p95)} |`;
    if (CLIENTS) {
      const con = stats(concurrent.get(s)!);
      line += ` ${ms(con.p50)} | ${ms(con.p95)} | ${con.n} |`;
    }
    console.log(line);
  }
  const worst = (rows: Stats[]) => Math.max(...rows.map((r) => r.p95));
  console.log(`\nworst p95 one at a time: ${ms(worst([...sequential.values()]))} ms (target < 50 ms)`);
  if (CLIENTS && cpu) {
    const all = [...concurrent.values()].flat();
    const overall = stats(all);
    console.log(
      `worst p95 with ${CLIENTS} clients: ${ms(worst([...concurrent.values()].map(stats)))} ms; all searches p50 ${ms(overall.p50)} / p95 ${ms(overall.p95)} ms (target < 50 ms)`,
    );
    console.log(
      `throughput: ${(all.length / elapsed).toFixed(0)} searches/s (${all.length} in ${elapsed.toFixed(1)} s)`,
    );
    const cores = (seconds: number) => `${(seconds / elapsed).toFixed(2)} cores`;
    const cpus = cpu.machineTotal / elapsed;
    console.log(
      `CPU during the run (${cpus.toFixed(0)} cores): this process (server and clients) ${cores(cpu.node)}, PostgreSQL backends ${cores(cpu.postgres)}, ` +
        `everything else ${cores(Math.max(0, cpu.machineBusy - cpu.node - cpu.postgres))}, idle ${cores(Math.max(0, cpu.machineTotal - cpu.machineBusy))}`,
    );
    const perSearch = (seconds: number) => `${((seconds / all.length) * 1000).toFixed(1)} ms`;
    console.log(`CPU per search: this process ${perSearch(cpu.node)}, PostgreSQL ${perSearch(cpu.postgres)}`);
    const mean = (values: number[]) => (values.reduce((a, b) => a + b, 0) / values.length).toFixed(1);
    console.log(
      `connection pool (max ${((db.client as Knex.Client).config.pool as { max: number }).max}): in use ${mean(poolSamples.map((p) => p.used))} on average, ` +
        `requests waiting for one ${mean(poolSamples.map((p) => p.waiting))} on average, at most ${Math.max(...poolSamples.map((p) => p.waiting))}`,
    );
    console.log(`load average (1 / 5 / 15 min): before ${loadBefore}, after ${fmtLoad()}`);
  }
}

main().catch((err) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
