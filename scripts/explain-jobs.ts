/**
 * `npm run explain:jobs`: where an import batch's time goes as a campaign fills up (PostgreSQL only). In a fresh
 * database (`lr_explain_jobs` from BENCH_DATABASE_URL or DATABASE_URL) one campaign is filled with EXPLAIN_FILLS
 * contacts (default 0, 100,000, 400,000; inserted directly, then VACUUM ANALYZE), and at each fill a JSON import
 * job of EXPLAIN_BATCHES batches of 1,000 new addresses runs through the worker, one batch at a time. Every
 * statement runs under auto_explain with ANALYZE (loaded per session), so the figures are the server's own
 * execution times, a little above an uninstrumented run. Prints, per statement, the median time across the
 * batches at each fill, then the plan of each statement at the largest fill (EXPLAIN_PLANS=1).
 */
import pino from 'pino';
import { loadConfig } from '../server/platform/config';
import { migrate, openDatabase } from '../server/db';
import { newId } from '../server/platform/ids';
import { createServices, type Deps } from '../server/services';
import { freshBenchDatabase } from './bench-database';

const FILLS = (process.env.EXPLAIN_FILLS ?? '0,100000,400000').split(',').map(Number);
const BATCHES = Number(process.env.EXPLAIN_BATCHES ?? 5);

/** A statement's first line (and the table a LATERAL look-up reads), enough to tell the statements of a batch apart. */
function label(firstLine: string, notice: string): string {
  const lateral = /lateral \(select .*? from (\w+)/.exec(notice);
  return (
    firstLine.replace(/\(\$\d+(, \$\d+)*\)(, \(\$\d+(, \$\d+)*\))*/g, '(...)').slice(0, 80) +
    (lateral ? ` ... lateral ${lateral[1]}` : '')
  ).trim();
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function main(): Promise<void> {
  const fresh = await freshBenchDatabase('lr_explain_jobs', 'explain:jobs');
  const url = new URL(fresh.url);
  url.searchParams.set(
    'options',
    '-c session_preload_libraries=auto_explain -c auto_explain.log_min_duration=0 -c auto_explain.log_analyze=on -c client_min_messages=log',
  );
  const database = await openDatabase({ databaseUrl: url.toString(), dataDir: '' });
  const db = database.db;
  // auto_explain's LOG lines reach the client as notices (client_min_messages=log); kept only while a batch runs.
  let capture: string[] | null = null;
  const pool = (
    db.client as {
      pool: {
        on(
          event: 'createSuccess',
          listener: (id: unknown, conn: { on(event: 'notice', l: (n: { message?: string }) => void): void }) => void,
        ): void;
      };
    }
  ).pool;
  pool.on('createSuccess', (_id, conn) => conn.on('notice', (n) => capture?.push(String(n.message))));
  try {
    await migrate(db);
    const config = loadConfig({
      seedDemo: false,
      validateResponses: false,
      logLevel: 'silent',
      jobConcurrency: 1,
      jobBatchSize: 1000,
    });
    const deps: Deps = { config, db, clock: { now: () => new Date() }, logger: pino({ level: 'silent' }) };
    const services = createServices(deps);
    const { workspace } = await services.workspaces.createWorkspace({ name: 'Explain' });
    const campaignId = newId();
    const now = new Date();
    await db('campaigns').insert({
      id: campaignId,
      workspace_id: workspace.id,
      name: 'Explain',
      status: 'draft',
      created_at: now,
      updated_at: now,
    });

    const times = new Map<string, Map<number, number[]>>();
    const plans = new Map<string, string>();
    const batchMs = new Map<number, number[]>();
    let filled = 0;
    for (const fill of FILLS) {
      if (fill > filled) {
        await db.raw(
          `insert into contacts (id, workspace_id, campaign_id, email, first_name, custom_variables, status, created_at, updated_at)
           select gen_random_uuid(), ?, ?, 'fill' || i || '@company' || (i % 1000) || '.test', 'First' || i, '{"tier":"tier1"}', 'active', now(), now()
           from generate_series(?::int, ?::int) i`,
          [workspace.id, campaignId, filled, fill - 1],
        );
        filled = fill;
      }
      await db.raw('vacuum analyze contacts');
      const contacts = Array.from({ length: BATCHES * 1000 }, (_, i) => ({
        email: `lead${fill}-${i}@company${i % 1000}.test`,
        firstName: `First${i}`,
        lastName: `Last${i}`,
        companyName: `Company ${i % 1000}`,
        customVariables: { tier: `tier${i % 3}` },
      }));
      await services.jobs.importJson(
        workspace.id,
        { campaignId },
        { skipInWorkspace: false, skipInAnyList: false, skipSuppressed: true, verify: false },
        contacts,
      );
      for (let b = 0; b < BATCHES; b++) {
        capture = [];
        const start = performance.now();
        await services.jobs.runOnce();
        batchMs.set(fill, [...(batchMs.get(fill) ?? []), performance.now() - start]);
        for (const line of capture) {
          const m = /duration: ([\d.]+) ms\s+plan:\s*Query Text: ([^\n]*)\n([\s\S]*)/.exec(line);
          if (!m) continue;
          const key = label(m[2], line);
          const byFill = times.get(key) ?? new Map<number, number[]>();
          byFill.set(fill, [...(byFill.get(fill) ?? []), Number(m[1])]);
          times.set(key, byFill);
          plans.set(key, m[3].replace(/'\{[^']{200,}'/g, "'{...}'"));
        }
        capture = null;
      }
    }

    const cell = (xs: number[] | undefined) => (xs ? median(xs).toFixed(1) : '-');
    console.log(
      `| statement (median ms of ${BATCHES} batches of 1,000) | ${FILLS.map((f) => `${f.toLocaleString('en-US')} contacts`).join(' | ')} |`,
    );
    console.log(`|---|${FILLS.map(() => '---:').join('|')}|`);
    const rows = [...times].filter(([, byFill]) => FILLS.some((f) => median(byFill.get(f) ?? [0]) >= 0.5));
    for (const [key, byFill] of rows)
      console.log(`| \`${key}\` | ${FILLS.map((f) => cell(byFill.get(f))).join(' | ')} |`);
    console.log(`| whole batch (worker, wall clock) | ${FILLS.map((f) => cell(batchMs.get(f))).join(' | ')} |`);
    if (process.env.EXPLAIN_PLANS === '1') for (const [key] of rows) console.log(`\n${key}\n${plans.get(key)}`);
  } finally {
    await database.close();
    await fresh.drop();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
