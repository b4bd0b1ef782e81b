/**
 * `npm run bench:jobs`: background jobs through the real HTTP stack, on PostgreSQL (BENCH_DATABASE_URL or
 * DATABASE_URL; a fresh lr_bench_jobs database) and on the embedded database (PGlite in memory), at growing
 * sizes (10x steps):
 *
 *   - a CSV contact import into one campaign (`POST /v2/job/contact-import`, the file streamed from a
 *     generator, never held whole), then the worker (runOnce in this process) until the job completes;
 *   - a verification job of addresses over 1,000 domains answered by a loopback DNS server.
 *
 * For each: rows/s of the upload, of the worker and end to end, time to first progress (request start to the
 * first batch applied), and the process's peak heap and RSS, beside a baseline in the same run: the same rows
 * loaded into a scratch table with COPY (PostgreSQL; PGlite has no COPY FROM STDIN, so batched multi-row
 * INSERTs there), the queries the DNS server answered during a verification, and the machine's 1-minute load
 * average as each job ended. BENCH_IMPORT_SIZES /
 * BENCH_VERIFY_SIZES (comma-separated; empty runs none) and BENCH_DATABASES (`postgres,pglite`) change the run.
 */
import { request } from 'node:http';
import { loadavg } from 'node:os';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { Readable } from 'node:stream';
import pino from 'pino';
import { createApp } from '../server/app';
import { loadConfig } from '../server/platform/config';
import { migrate, openDatabase, type Database } from '../server/db';
import { newId } from '../server/platform/ids';
import { loadRows } from '../server/modules/leads/bulk';
import { createServices, type Deps, type Services } from '../server/services';
import { startDnsServer, type Zone } from '../test/helpers/dns-server';
import { freshBenchDatabase } from './bench-database';

/** A comma-separated list of sizes; an empty one runs none. */
const sizes = (name: string, fallback: number[]) =>
  process.env[name] === undefined ? fallback : process.env[name].split(',').filter(Boolean).map(Number);
const IMPORT_SIZES = sizes('BENCH_IMPORT_SIZES', [5_000, 50_000, 500_000]);
const VERIFY_SIZES = sizes('BENCH_VERIFY_SIZES', [1_000, 10_000, 100_000]);
const DATABASES = (process.env.BENCH_DATABASES ?? 'postgres,pglite').split(',');
const DOMAINS = 1000;
const MB = 1024 * 1024;

/**
 * Peak live heap and peak RSS between start and stop: every 500 ms a full collection (node --expose-gc, as
 * `npm run bench:jobs` runs it) and then the heap in use, so the figure is what is kept, not garbage.
 */
function memoryPeaks() {
  let heap = 0;
  let rss = 0;
  const sample = () => {
    global.gc?.();
    const m = process.memoryUsage();
    heap = Math.max(heap, m.heapUsed);
    rss = Math.max(rss, m.rss);
  };
  sample();
  const timer = setInterval(sample, 500);
  return {
    stop() {
      clearInterval(timer);
      sample();
      return { heapMb: heap / MB, rssMb: rss / MB };
    },
  };
}

const contactLine = (i: number) =>
  `lead${i}@company${i % DOMAINS}.test,First${i},Last${i},Company ${i % DOMAINS},City ${i % 50},tier${i % 3}\n`;
const addressLine = (i: number) => `person${i}@domain${i % DOMAINS}.test\n`;

/** The CSV, generated as it is sent (64 KB chunks). */
function* csvChunks(header: string, rows: number, line: (i: number) => string): Generator<string> {
  let chunk = header;
  for (let i = 0; i < rows; i++) {
    chunk += line(i);
    if (chunk.length > 65536) {
      yield chunk;
      chunk = '';
    }
  }
  if (chunk) yield chunk;
}

function post(
  url: string,
  apiKey: string,
  body: Readable,
  contentType: string,
): Promise<{ status: number; body: unknown }> {
  return new Promise((resolve, reject) => {
    // A fresh connection each time: a kept-alive one may be closed by the server as it is reused.
    const req = request(
      url,
      { method: 'POST', agent: false, headers: { 'X-API-Key': apiKey, 'Content-Type': contentType } },
      (res) => {
        let text = '';
        res.on('data', (c) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(text) as unknown }));
      },
    );
    req.on('error', reject);
    body.pipe(req);
  });
}

interface Measure {
  rows: number;
  uploadS: number;
  firstProgressS: number;
  totalS: number;
  workerS: number;
  heapMb: number;
  rssMb: number;
}

async function runJob(
  base: string,
  apiKey: string,
  services: Services,
  path: string,
  header: string,
  rows: number,
  line: (i: number) => string,
): Promise<Measure> {
  global.gc?.();
  const peaks = memoryPeaks();
  const start = performance.now();
  const res = await post(`${base}${path}`, apiKey, Readable.from(csvChunks(header, rows, line)), 'text/csv');
  if (res.status !== 202) throw new Error(`${path}: ${res.status} ${JSON.stringify(res.body)}`);
  const uploaded = performance.now();
  let first = 0;
  for (;;) {
    const n = await services.jobs.runOnce();
    if (n && !first) first = performance.now();
    if (!n) break;
  }
  const end = performance.now();
  const { heapMb, rssMb } = peaks.stop();
  return {
    rows,
    uploadS: (uploaded - start) / 1000,
    firstProgressS: (first - start) / 1000,
    workerS: (end - uploaded) / 1000,
    totalS: (end - start) / 1000,
    heapMb,
    rssMb,
  };
}

/** The same rows into a scratch table: COPY on PostgreSQL, multi-row INSERTs on PGlite. */
async function baseline(
  db: Database['db'],
  rows: number,
  line: (i: number) => string,
  columns: string[],
): Promise<number> {
  await db.raw(`DROP TABLE IF EXISTS bench_scratch`);
  await db.raw(`CREATE TABLE bench_scratch (${columns.map((c) => `${c} text`).join(', ')})`);
  function* batches() {
    for (let i = 0; i < rows; i += 5000) {
      yield Array.from({ length: Math.min(5000, rows - i) }, (_, k) => {
        const cells = line(i + k)
          .trimEnd()
          .split(',');
        return Object.fromEntries(columns.map((c, j) => [c, cells[j]]));
      });
    }
  }
  const start = performance.now();
  await loadRows(db, 'bench_scratch', columns, batches());
  const seconds = (performance.now() - start) / 1000;
  await db.raw('DROP TABLE bench_scratch');
  return seconds;
}

async function openBench(kind: string): Promise<{ database: Database; label: string; drop: () => Promise<void> }> {
  if (kind === 'pglite') {
    const database = await openDatabase({ databaseUrl: undefined, dataDir: '' }, { inMemory: true });
    return { database, label: 'PGlite (in memory)', drop: async () => {} };
  }
  const bench = await freshBenchDatabase('lr_bench_jobs', 'bench:jobs');
  return {
    database: await openDatabase({ databaseUrl: bench.url, dataDir: '' }),
    label: 'PostgreSQL',
    drop: () => bench.drop(),
  };
}

const rate = (rows: number, s: number) => Math.round(rows / s).toLocaleString('en-US');
const fmt = (n: number, d = 1) => n.toFixed(d);

async function main(): Promise<void> {
  const zone: Zone = {};
  for (let d = 0; d < DOMAINS; d++)
    zone[`domain${d}.test`] = { MX: [{ exchange: `mx.domain${d}.test`, priority: 10 }] };
  const dns = await startDnsServer(zone);
  const table: string[] = [];
  /** One line of the table; the load average beside the rates, since the machine may be shared. */
  const report = (label: string, job: string, m: Measure, baselineS: number, dnsQueries: number) => {
    const line = `| ${label} | ${job} | ${m.rows.toLocaleString('en-US')} | ${rate(m.rows, m.uploadS)} | ${rate(m.rows, m.workerS)} | ${rate(m.rows, m.totalS)} | ${fmt(m.firstProgressS, 2)} s | ${fmt(m.heapMb, 0)} / ${fmt(m.rssMb, 0)} MB | ${rate(m.rows, baselineS)} | ${dnsQueries.toLocaleString('en-US')} | ${fmt(loadavg()[0])} |`;
    table.push(line);
    console.log(line);
  };
  try {
    for (const kind of DATABASES) {
      const { database, label, drop } = await openBench(kind);
      let server: Server | undefined;
      try {
        await migrate(database.db);
        const config = loadConfig({
          dnsServers: [dns.address],
          dnsTimeoutMs: 2000,
          seedDemo: false,
          validateResponses: false,
          logLevel: 'silent',
        });
        const deps: Deps = {
          config,
          db: database.db,
          clock: { now: () => new Date() },
          logger: pino({ level: 'silent' }),
        };
        const services = createServices(deps);
        server = createApp(deps, services).listen(0, '127.0.0.1');
        await new Promise((r) => server!.once('listening', r));
        const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
        const { workspace, apiKey } = await services.workspaces.createWorkspace({ name: 'Bench' });

        for (const rows of IMPORT_SIZES) {
          const campaignId = newId();
          const now = new Date();
          await database.db('campaigns').insert({
            id: campaignId,
            workspace_id: workspace.id,
            name: `Bench ${rows}`,
            status: 'draft',
            created_at: now,
            updated_at: now,
          });
          const m = await runJob(
            base,
            apiKey,
            services,
            `/v2/job/contact-import?campaignId=${campaignId}`,
            'email,firstName,lastName,companyName,city,tier\n',
            rows,
            contactLine,
          );
          const b = await baseline(database.db, rows, contactLine, [
            'email',
            'first_name',
            'last_name',
            'company_name',
            'city',
            'tier',
          ]);
          const created = Number(
            (await database.db('contacts').where({ campaign_id: campaignId }).count({ n: '*' }).first())!.n,
          );
          if (created !== rows) throw new Error(`import of ${rows}: ${created} contacts created`);
          report(label, 'import', m, b, 0);
        }
        for (const rows of VERIFY_SIZES) {
          const asked = dns.queries.length;
          const m = await runJob(base, apiKey, services, '/v2/job/verify', 'email\n', rows, addressLine);
          const dnsQueries = dns.queries.length - asked;
          const b = await baseline(database.db, rows, addressLine, ['email']);
          report(label, 'verify', m, b, dnsQueries);
        }
      } finally {
        server?.close();
        await database.close();
        await drop();
      }
    }
  } finally {
    await dns.close();
  }
  console.log(
    '\n| database | job | rows | upload rows/s | worker rows/s | end to end rows/s | first progress | peak live heap / RSS | baseline rows/s | DNS queries | load average |',
  );
  console.log('|---|---|---:|---:|---:|---:|---:|---|---:|---:|---:|');
  for (const line of table) console.log(line);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
