/**
 * `npm run bench:export [-- --baseline REF]` (PostgreSQL only: BENCH_DATABASE_URL or DATABASE_URL, a fresh
 * database lr_bench_export, dropped afterwards unless BENCH_EXPORT_KEEP=1): the CSV export of one people list
 * (`GET /v2/list/export`) at 10k, 100k and 1M members (BENCH_EXPORT_MAX, default 1,000,000), its time and the
 * server's RSS.
 *
 * The list's people and memberships are written by SQL as bench:scale writes them (bench-rows.ts); the
 * workspace and the list through the services. The server is `server/main.ts` in a child process (as
 * bench:scale starts it: worker off, responses not validated); with `--baseline REF` a second server runs the
 * sources of git revision REF (extracted to a temporary folder, this checkout's node_modules linked) against
 * the same database, and each size is measured on both, one after the other, so that both meet the same data
 * and machine load. Per server and size: one warm-up call, then 3 measured calls (p50 is the middle one, the
 * best the fastest; a warm-up over 30 s is the one measured call), with the server's RSS before the warm-up,
 * at its peak (sampled every 100 ms) and 2 s (BENCH_EXPORT_SETTLE_MS) after the last call. Every body is
 * hashed: the two servers' CSVs must be the same bytes, with a line per member.
 */
import { createHash } from 'node:crypto';
import { rmSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import pino from 'pino';
import { loadConfig } from '../server/platform/config';
import { migrate, openDatabase } from '../server/db';
import { createServices } from '../server/services';
import { freshBenchDatabase } from './bench-database';
import { argument, checkoutRevision, startServer, stop, withRss } from './bench-process';
import { addListPeople, BENCH_UUID_SQL } from './bench-rows';

const MAX = Number(process.env.BENCH_EXPORT_MAX ?? 1_000_000);
const KEEP = process.env.BENCH_EXPORT_KEEP === '1';
const DB_NAME = 'lr_bench_export';
const ROOT = join(__dirname, '..');
const SECRET_KEY = '5c'.repeat(32);
const CALLS = 3;
const SLOW_MS = 30_000;
/** How long after the last call the RSS is read again (bench:scale's 2 s by default). */
const SETTLE_MS = Number(process.env.BENCH_EXPORT_SETTLE_MS ?? 2000);

const fmt = (n: number) =>
  n >= 1e6 && n % 1e6 === 0 ? `${n / 1e6}M` : n >= 1e3 && n % 1e3 === 0 ? `${n / 1e3}k` : String(n);
const load = () =>
  loadavg()
    .map((l) => l.toFixed(1))
    .join(' ');

interface Row {
  server: string;
  size: number;
  p50Ms: number;
  bestMs: number;
  mb: number;
  rssBeforeMb: number;
  rssPeakMb: number;
  rssAfterMb: number;
  load: string;
}

async function main(): Promise<void> {
  const baselineRef = argument('--baseline');
  const bench = await freshBenchDatabase(DB_NAME, 'bench:export');
  const config = loadConfig({
    databaseUrl: bench.url,
    dataDir: '',
    secretKey: SECRET_KEY,
    seedDemo: false,
    validateResponses: false,
  });
  const database = await openDatabase(config);
  await migrate(database.db);
  const services = createServices({
    config,
    db: database.db,
    clock: { now: () => new Date() },
    logger: pino({ level: 'silent' }),
  });
  const pg = new Client({ connectionString: bench.url });
  await pg.connect();
  await pg.query("SET synchronous_commit = off; SET maintenance_work_mem = '256MB'");
  await pg.query(BENCH_UUID_SQL);
  const baselineDir = baselineRef ? checkoutRevision(ROOT, baselineRef) : undefined;
  const servers: { name: string; child: Awaited<ReturnType<typeof startServer>>['child']; base: string }[] = [];
  const rows: Row[] = [];
  try {
    const { apiKey, workspace } = await services.workspaces.createWorkspace({ name: 'Bench export' });
    const list = await services.lists.create(workspace.id, 'people', 'Big list');
    const env = { DATABASE_URL: bench.url, SECRET_KEY };
    if (baselineDir) servers.push({ name: `baseline ${baselineRef}`, ...(await startServer(baselineDir, env)) });
    servers.push({ name: 'this checkout', ...(await startServer(ROOT, env)) });

    /** One export, read to the end: its time, size and hash. */
    const exportOnce = async (base: string) => {
      const t0 = performance.now();
      const res = await fetch(`${base}/v2/list/export?listId=${list.id}&format=csv`, {
        headers: { 'X-API-Key': apiKey },
      });
      if (!res.ok || !res.body) throw new Error(`export: ${res.status} ${await res.text()}`);
      const hash = createHash('sha256');
      let bytes = 0;
      let lines = 0;
      const reader = res.body.getReader();
      for (let next = await reader.read(); !next.done; next = await reader.read()) {
        const chunk = next.value;
        hash.update(chunk);
        bytes += chunk.length;
        for (let i = chunk.indexOf(10); i >= 0; i = chunk.indexOf(10, i + 1)) lines += 1;
      }
      return { ms: performance.now() - t0, bytes, lines, hash: hash.digest('hex') };
    };

    let done = 0;
    for (let size = 10_000; size <= MAX; size *= 10) {
      const t0 = performance.now();
      const run = (_table: string, sql: string, params?: unknown[]) => pg.query(sql, params);
      await addListPeople(run, database.db, list.id, done, size, new Date());
      await pg.query('VACUUM ANALYZE people, list_people, lists');
      done = size;
      console.log(
        `\n${fmt(size)} members (built in ${((performance.now() - t0) / 1000).toFixed(0)} s; load average ${load()})`,
      );
      const hashes = new Set<string>();
      for (const server of servers) {
        const { result: calls, ...rss } = await withRss(
          server.child.pid!,
          async () => {
            const first = await exportOnce(server.base);
            // A call over 30 s is its own measurement (warming up changes nothing there).
            if (first.ms > SLOW_MS) return [first];
            const measured = [];
            for (let i = 0; i < CALLS; i += 1) measured.push(await exportOnce(server.base));
            return measured;
          },
          SETTLE_MS,
        );
        for (const call of calls) {
          // Header plus one line per member (no field of these rows holds a line break).
          if (call.lines !== size + 1) throw new Error(`${server.name}: ${call.lines} lines for ${size} members`);
          hashes.add(call.hash);
        }
        const times = calls.map((c) => c.ms).sort((a, b) => a - b);
        const row: Row = {
          server: server.name,
          size,
          p50Ms: times[Math.floor(times.length / 2)],
          bestMs: times[0],
          mb: calls[0].bytes / 1e6,
          ...rss,
          load: load(),
        };
        rows.push(row);
        console.log(
          `  ${server.name.padEnd(24)} p50 ${(row.p50Ms / 1000).toFixed(2).padStart(7)} s  best ${(row.bestMs / 1000).toFixed(2).padStart(7)} s  ${row.mb.toFixed(1)} MB` +
            `  RSS ${row.rssBeforeMb} -> ${row.rssPeakMb} -> ${row.rssAfterMb} MB  (load ${row.load})`,
        );
      }
      if (hashes.size !== 1) throw new Error(`the servers' CSVs differ at ${fmt(size)} members`);
    }

    console.log(
      '\n| members | server | p50 s | best s | rows/s (p50) | RSS before -> peak -> after, MB | after / before | load average (1, 5, 15 min) |',
    );
    console.log('|---:|---|---:|---:|---:|---|---:|---|');
    for (const r of rows) {
      console.log(
        `| ${fmt(r.size)} | ${r.server} | ${(r.p50Ms / 1000).toFixed(2)} | ${(r.bestMs / 1000).toFixed(2)} | ${Math.round(r.size / (r.p50Ms / 1000)).toLocaleString('en')} | ` +
          `${r.rssBeforeMb} -> ${r.rssPeakMb} -> ${r.rssAfterMb} | ${(r.rssAfterMb / r.rssBeforeMb).toFixed(2)} | ${r.load} |`,
      );
    }
  } finally {
    for (const server of servers) await stop(server.child);
    services.mail.close();
    await pg.end();
    await database.close();
    if (baselineDir) rmSync(baselineDir, { recursive: true, force: true });
    if (KEEP) await bench.release();
    else await bench.drop();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
