/**
 * `npm run bench:search`: p50/p95 latency through HTTP of typical people and company searches on
 * 1,000,000 people and 100,000 companies in PostgreSQL.
 *
 * BENCH_DATABASE_URL (else DATABASE_URL) names a PostgreSQL server; the benchmark creates its own
 * database there (BENCH_DB_NAME, default lr_bench), loads the data set once and reuses it on later
 * runs. BENCH_PEOPLE / BENCH_COMPANIES / BENCH_ITERATIONS change the sizes.
 */
import type { AddressInfo } from 'node:net';
import { SingleBar, Presets } from 'cli-progress';
import knex from 'knex';
import pino from 'pino';
import { createApp } from '../server/app';
import { systemClock } from '../server/clock';
import { loadConfig } from '../server/config';
import { migrate, openDatabase } from '../server/db';
import { generateLeads } from '../server/modules/leads/generate';
import { createServices, type Deps } from '../server/services';

const PEOPLE = Number(process.env.BENCH_PEOPLE ?? 1_000_000);
const COMPANIES = Number(process.env.BENCH_COMPANIES ?? 100_000);
const ITERATIONS = Number(process.env.BENCH_ITERATIONS ?? 60);
const DB_NAME = process.env.BENCH_DB_NAME ?? 'lr_bench';
const BENCH_PLAN_ID = '00000000-0000-7000-8000-0000000be4c4';

const SEARCHES: { name: string; path: '/v1/mixed_people/search' | '/v1/company/find'; body: Record<string, unknown> }[] = [
  { name: 'people: title words', path: '/v1/mixed_people/search', body: { titles: ['sales director'] } },
  { name: 'people: seniority + location', path: '/v1/mixed_people/search', body: { seniorities: ['vp', 'director'], locations: ['California'] } },
  { name: 'people: industry + employee range', path: '/v1/mixed_people/search', body: { industries: ['Computer Software'], employeeRanges: ['51-200', '201-500'] } },
  { name: 'people: company domain', path: '/v1/mixed_people/search', body: { companyDomains: ['DOMAIN'] } },
  { name: 'people: keywords', path: '/v1/mixed_people/search', body: { keywords: 'cybersecurity' } },
  { name: 'people: combined filters', path: '/v1/mixed_people/search', body: { titles: ['engineering manager', 'head of engineering'], locations: ['United States'], employeeRanges: ['201-500', '501-1000'], emailStatuses: ['verified'] } },
  { name: 'people: department, all reveals', path: '/v1/mixed_people/search', body: { departments: ['marketing'], seniorities: ['cSuite'], dataOptions: ['workEmailReveal', 'fullContactAndCompany', 'mobilePhoneReveal'] } },
  { name: 'people: deep page (500)', path: '/v1/mixed_people/search', body: { seniorities: ['entry'], page: 500, perPage: 100, dataOptions: [] } },
  { name: 'people: no filter', path: '/v1/mixed_people/search', body: { dataOptions: [] } },
  { name: 'companies: industry + size + location', path: '/v1/company/find', body: { industries: ['Financial Services'], employeeRanges: ['51-200'], locations: ['United States'], dataOptions: ['basic'] } },
  { name: 'companies: technologies, full', path: '/v1/company/find', body: { technologies: ['snowflake', 'datadog'], keywords: 'cloud', dataOptions: ['full'] } },
];

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

async function main() {
  const server = process.env.BENCH_DATABASE_URL || process.env.DATABASE_URL;
  if (!server) throw new Error('Set BENCH_DATABASE_URL (or DATABASE_URL) to a PostgreSQL server, e.g. postgres://postgres@127.0.0.1:5432/postgres');
  const admin = knex({ client: 'pg', connection: server });
  try {
    const exists = await admin('pg_database').where({ datname: DB_NAME }).first();
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
    console.log(`Loading ${PEOPLE.toLocaleString()} people and ${COMPANIES.toLocaleString()} companies into ${DB_NAME} (once)...`);
    const bar = new SingleBar({ format: '{phase} [{bar}] {value}/{total}' }, Presets.shades_classic);
    bar.start(PEOPLE, 0, { phase: 'companies' });
    const started = Date.now();
    await generateLeads(db, { people: PEOPLE, companies: COMPANIES, seed: 42, replace: true }, (p) => {
      if (p.phase === 'indexes') bar.update(PEOPLE, { phase: `indexes (${p.done})` });
      else bar.setTotal(p.total), bar.update(p.done, { phase: p.phase });
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
    .insert({ id: BENCH_PLAN_ID, name: 'Benchmark', per_min: 1_000_000, per_hour: 10_000_000, per_day: 100_000_000, credits: 0, created_at: new Date() })
    .onConflict('id')
    .ignore();
  const { workspace, apiKey } = await services.workspaces.createWorkspace({ name: `Benchmark ${new Date().toISOString()}`, planId: BENCH_PLAN_ID });
  await db('workspaces').where({ id: workspace.id }).update({ credit_balance: 1_000_000_000 });
  const app = createApp(deps, services);
  const http = await new Promise<import('node:http').Server>((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  const base = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
  const domain = (await db('companies').orderBy('score', 'desc').first('domain')).domain as string;

  console.log(`\n${ITERATIONS} requests per search (after 3 warm-up requests), one at a time, through HTTP:\n`);
  console.log('search'.padEnd(42) + 'results'.padStart(10) + 'p50 ms'.padStart(9) + 'p95 ms'.padStart(9));
  const results = [];
  for (const s of SEARCHES) {
    const body = JSON.stringify(s.body).replace('DOMAIN', domain);
    const run = async () => {
      const t0 = performance.now();
      const res = await fetch(base + s.path, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': apiKey }, body });
      const json = (await res.json()) as { data?: { pagination: { totalEntries: number } }; error?: string };
      if (res.status !== 200) throw new Error(`${s.name}: ${res.status} ${json.error}`);
      return { ms: performance.now() - t0, total: json.data!.pagination.totalEntries };
    };
    for (let i = 0; i < 3; i++) await run();
    const times: number[] = [];
    let total = 0;
    for (let i = 0; i < ITERATIONS; i++) {
      const r = await run();
      times.push(r.ms);
      total = r.total;
    }
    times.sort((a, b) => a - b);
    const row = { search: s.name, results: total, p50: percentile(times, 50), p95: percentile(times, 95) };
    results.push(row);
    console.log(row.search.padEnd(42) + String(row.results).padStart(10) + row.p50.toFixed(1).padStart(9) + row.p95.toFixed(1).padStart(9));
  }
  await new Promise<void>((resolve) => http.close(() => resolve()));
  await database.close();
  const worst = Math.max(...results.map((r) => r.p95));
  console.log(`\nworst p95: ${worst.toFixed(1)} ms (target < 50 ms)`);
}

main().catch((err) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
