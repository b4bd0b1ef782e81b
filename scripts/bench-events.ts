/**
 * `npm run bench:events` (PostgreSQL: BENCH_DATABASE_URL or DATABASE_URL): what the event feed costs on
 * the event write path. Transactions that record one mail event each, 8 at a time, at 100, 1,000 and
 * 10,000 transactions, into one workspace (every transaction takes the same stream row) and spread over 8:
 *   - baseline: the analytics row alone (what recording an event wrote before the feed);
 *   - feed row: plus the feed row, without a position (the cost of storing the payload);
 *   - feed (shipped): plus the feed row as EventService.record writes it (EventStore.insertFeedEvent),
 *     positioned by the trigger deferred to commit;
 *   - immediate lock: the position taken at insert under the same row lock, held to commit (the
 *     alternative the deferred trigger avoids).
 * Then the same at 1,000 transactions with BENCH_WORK_MS (2) of other work after the event, where holding
 * the lock through the work shows. Prints events/s, p50 and p99 transaction time and the ratio to the
 * baseline of the same row. Creates and drops its own database (lr_bench_events).
 */
import pino from 'pino';
import { loadConfig } from '../server/platform/config';
import { freshBenchDatabase } from './bench-database';
import { migrate, openDatabase, type Db, type RawResult } from '../server/db';
import { newId } from '../server/platform/ids';
import { createServices, type Deps } from '../server/services';
import { EventStore } from '../server/modules/events/store';

const SIZES = (process.env.BENCH_SIZES ?? '100,1000,10000').split(',').map(Number);
const CONCURRENCY = 8;
const WORK_MS = Number(process.env.BENCH_WORK_MS ?? 2);
type Variant = 'baseline' | 'feed row' | 'feed (shipped)' | 'immediate lock';
const VARIANTS: Variant[] = ['baseline', 'feed row', 'feed (shipped)', 'immediate lock'];

async function main(): Promise<void> {
  const bench = await freshBenchDatabase('lr_bench_events', 'bench:events');
  const config = loadConfig({ databaseUrl: bench.url, seedDemo: false });
  const database = await openDatabase(config);
  await migrate(database.db);
  const db = database.db;
  const deps: Deps = { config, db, clock: { now: () => new Date() }, logger: pino({ level: 'silent' }) };
  const services = createServices(deps);
  const store = new EventStore();
  // The same columns as `events`, without the trigger.
  await db.raw('CREATE TABLE events_plain (LIKE events INCLUDING DEFAULTS)');
  await db.raw('CREATE UNIQUE INDEX ON events_plain (workspace_id, position)');
  const workspaces: string[] = [];
  for (let i = 0; i < 8; i += 1)
    workspaces.push((await services.workspaces.createWorkspace({ name: `Bench ${i}` })).workspace.id);

  const one = async (trx: Db, variant: Variant, workspaceId: string, workMs: number) => {
    const now = new Date();
    const id = newId();
    const data = { email: 'a@b.test', campaignId: null };
    const analytics = {
      id,
      workspace_id: workspaceId,
      campaign_id: null,
      step_id: null,
      variant_id: null,
      account_id: null,
      contact_id: null,
      message_id: null,
      type: 'sent',
      is_warmup: false,
      flagged: false,
      occurred_at: now,
    };
    const feedRow = {
      id,
      workspace_id: workspaceId,
      type: 'email.sent',
      campaign_id: null,
      occurred_at: now,
      recorded_at: now,
      payload: JSON.stringify({ id, type: 'email.sent', occurredAt: now.toISOString(), workspaceId, data }),
    };
    await store.insertEmailEvent(trx, analytics);
    if (variant === 'feed (shipped)') await store.insertFeedEvent(trx, feedRow);
    if (variant === 'feed row') await trx('events_plain').insert(feedRow);
    if (variant === 'immediate lock') {
      const [row] = await trx
        .raw(
          'INSERT INTO event_streams AS s (workspace_id, last_position) VALUES (?, 1) ON CONFLICT (workspace_id) DO UPDATE SET last_position = s.last_position + 1 RETURNING last_position',
          [workspaceId],
        )
        .then((r: { rows: { last_position: string }[] }) => r.rows);
      await trx('events_plain').insert({ ...feedRow, position: row.last_position });
    }
    if (workMs > 0) await trx.raw('SELECT pg_sleep(?)', [workMs / 1000]);
  };

  const run = async (variant: Variant, size: number, spread: number, workMs: number) => {
    const times: number[] = [];
    let next = 0;
    const start = performance.now();
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < size) {
          const i = next++;
          const t0 = performance.now();
          await db.transaction((trx) => one(trx, variant, workspaces[i % spread], workMs));
          times.push(performance.now() - t0);
        }
      }),
    );
    const seconds = (performance.now() - start) / 1000;
    times.sort((a, b) => a - b);
    return {
      rate: size / seconds,
      p50: times[Math.floor(times.length * 0.5)],
      p99: times[Math.min(times.length - 1, Math.floor(times.length * 0.99))],
    };
  };

  const rows: string[] = [
    '| work per transaction | transactions | workspaces | variant | events/s | p50 ms | p99 ms | of baseline |',
    '|---|---:|---:|---|---:|---:|---:|---:|',
  ];
  const cases: [number, number][] = [...SIZES.map((s) => [s, 0] as [number, number]), [1000, WORK_MS]];
  for (const [size, workMs] of cases) {
    for (const spread of [1, 8]) {
      let base = 0;
      for (const variant of VARIANTS) {
        const r = await run(variant, size, spread, workMs);
        if (variant === 'baseline') base = r.rate;
        const line = `| ${workMs} ms | ${size.toLocaleString('en')} | ${spread} | ${variant} | ${Math.round(r.rate).toLocaleString('en')} | ${r.p50.toFixed(2)} | ${r.p99.toFixed(2)} | ${Math.round((r.rate / base) * 100)}% |`;
        rows.push(line);
        console.log(line);
      }
    }
  }
  // Every positioned event: positions 1..n per workspace with no gap or repeat.
  const check = await db.raw<RawResult<{ n: number; d: number; unpositioned: number }>>(
    'SELECT count(*)::int AS n, count(DISTINCT (workspace_id, position))::int AS d, sum(CASE WHEN position IS NULL THEN 1 ELSE 0 END)::int AS unpositioned FROM events',
  );
  console.log(
    `\nfeed rows: ${check.rows[0].n}, distinct positions: ${check.rows[0].d}, without a position: ${check.rows[0].unpositioned}\n`,
  );
  console.log(rows.join('\n'));
  await database.close();
  await bench.drop();
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
