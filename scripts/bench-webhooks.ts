/**
 * `npm run bench:webhooks` (PostgreSQL: BENCH_DATABASE_URL or DATABASE_URL): 10,000 events to one
 * subscription on a loopback receiver, delivered by one worker: deliveries per second beside a baseline
 * in the same run (the same number of signed POSTs straight from a loop, 32 at a time, no outbox), and
 * the worker's heap. Creates and drops its own database (lr_bench_webhooks). BENCH_EVENTS changes the size.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { loadConfig } from '../server/platform/config';
import { freshBenchDatabase } from './bench-database';
import { migrate, openDatabase } from '../server/db';
import { newId } from '../server/platform/ids';
import { postSigned } from '../server/modules/webhooks/deliver';
import { createServices, type Deps } from '../server/services';

const EVENTS = Number(process.env.BENCH_EVENTS ?? 10_000);
const DB_NAME = 'lr_bench_webhooks';
const heapMb = () => (process.memoryUsage().heapUsed / 1024 / 1024).toFixed(1);

async function main(): Promise<void> {
  const bench = await freshBenchDatabase(DB_NAME, 'bench:webhooks');
  let received = 0;
  const receiver = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      received += 1;
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', () => resolve()));
  const hookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;

  const config = loadConfig({
    databaseUrl: bench.url,
    secretKey: 'aa'.repeat(32),
    allowPrivateWebhooks: true,
    seedDemo: false,
  });
  const database = await openDatabase(config);
  await migrate(database.db);
  const deps: Deps = { config, db: database.db, clock: { now: () => new Date() }, logger: pino({ level: 'silent' }) };
  const services = createServices(deps);
  try {
    const payload = JSON.stringify({
      id: newId(),
      type: 'email.sent',
      occurredAt: new Date().toISOString(),
      workspaceId: newId(),
      data: { email: 'a@b.test' },
    });
    const secret = `whsec_${Buffer.alloc(24, 7).toString('base64')}`;
    let next = 0;
    const baseStart = performance.now();
    await Promise.all(
      Array.from({ length: 32 }, async () => {
        while (next < EVENTS) {
          next += 1;
          await postSigned(hookUrl, secret, newId(), new Date(), payload, true);
        }
      }),
    );
    const baseRate = EVENTS / ((performance.now() - baseStart) / 1000);
    if (received !== EVENTS) throw new Error(`baseline: the receiver got ${received} of ${EVENTS}`);
    received = 0;

    const { workspace } = await services.workspaces.createWorkspace({ name: 'Bench' });
    await services.webhooks.create(workspace.id, { url: hookUrl, eventTypes: ['email.sent'] });
    const recordStart = performance.now();
    for (let i = 0; i < EVENTS; i += 500) {
      await database.db.transaction(async (trx) => {
        for (let k = i; k < Math.min(EVENTS, i + 500); k += 1)
          await services.events.record(trx, {
            workspaceId: workspace.id,
            type: 'email.sent',
            data: { email: `c${k}@x.test` },
            mail: {},
          });
      });
    }
    const recordSeconds = (performance.now() - recordStart) / 1000;
    const start = performance.now();
    let runs = 0;
    while (received < EVENTS && runs < 10_000) {
      await services.webhooks.runOnce();
      runs += 1;
    }
    const rate = EVENTS / ((performance.now() - start) / 1000);
    console.log('\n| measure | result |\n|---|---|');
    console.log(`| baseline: signed POSTs from a loop, 32 at a time | ${baseRate.toFixed(0)} /s |`);
    console.log(
      `| events recorded with their outbox rows (500 a transaction) | ${(EVENTS / recordSeconds).toFixed(0)} /s |`,
    );
    console.log(
      `| worker: ${EVENTS} deliveries from the outbox (${runs} runs) | ${rate.toFixed(0)} /s, heap ${heapMb()} MB |`,
    );
  } finally {
    await database.close();
    await bench.drop();
    receiver.close();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
