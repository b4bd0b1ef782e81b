/**
 * `npm run bench:campaign-get`: the latency of `GET /v2/campaign/get` on a campaign of 20 steps of 5 variants each
 * (with 2 linked accounts and 2 subsequences), beside `GET /v1/campaign/list` (a page of 20 campaigns) as the
 * baseline, measured in the same run: the two are called in turn, one request at a time, over one keep-alive
 * connection, so both meet the same machine load. The target is a p95 under 20 ms.
 *
 * The server is this checkout's app in this process, on the embedded PGlite in memory, or on a fresh PostgreSQL
 * database lr_bench_campaign_get when BENCH_DATABASE_URL or DATABASE_URL is set. BENCH_CALLS (500) measured calls
 * per case after 50 of warm-up.
 */
import type { AddressInfo } from 'node:net';
import { loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import pino from 'pino';
import { createApp } from '../server/app';
import { migrate } from '../server/db';
import { loadConfig } from '../server/platform/config';
import { newId } from '../server/platform/ids';
import { createServices } from '../server/services';
import { insertHighLimitPlan, openBenchDatabase } from './bench-database';

const CALLS = Number(process.env.BENCH_CALLS ?? 500);
const WARM_UP = 50;
const TARGET_P95_MS = 20;
const STEPS = 20;
const VARIANTS = 5;

const quantile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];

async function main(): Promise<void> {
  const { database, label } = await openBenchDatabase('lr_bench_campaign_get');
  await migrate(database.db);
  const config = loadConfig({ seedDemo: false, validateResponses: false });
  const deps = { config, db: database.db, clock: { now: () => new Date() }, logger: pino({ level: 'silent' }) };
  const services = createServices(deps);
  const planId = await insertHighLimitPlan(database.db, newId);
  const { workspace, apiKey } = await services.workspaces.createWorkspace({ name: 'Bench campaign get', planId });
  const accountIds = [newId(), newId()];
  await database.db('email_accounts').insert(
    accountIds.map((id, i) => ({
      id,
      workspace_id: workspace.id,
      email: `sender${i}@acme-mail.io`,
      provider: 'google',
      status: 'active',
      daily_limit: 50,
      created_at: new Date(),
      updated_at: new Date(),
    })),
  );
  for (let i = 0; i < 19; i++) await services.campaigns.create(workspace.id, { name: `Campaign ${i + 1}` });
  const campaign = await services.campaigns.create(workspace.id, { name: 'Twenty steps', accountIds });
  const variants = Array.from({ length: VARIANTS }, (_, v) => ({
    subject: v === 0 ? 'Quick question, {{firstName | there}}' : `Variant ${v}: {{companyName}}`,
    body: `Hi {{firstName | there}}, {I saw|I noticed} {{companyName}} is hiring. ${'Some more text. '.repeat(20)}`,
  }));
  await services.campaigns.createSteps(
    workspace.id,
    campaign.id,
    Array.from({ length: STEPS }, (_, i) => ({ delayDays: i === 0 ? 0 : 2, variants })),
  );
  for (const [name, intent] of [
    ['Not now', 'notInterested'],
    ['Questions', 'question'],
  ] as const)
    await services.subsequences.create(workspace.id, {
      campaignId: campaign.id,
      name,
      trigger: { type: 'replyIntent', intent },
      steps: [{ delay: { value: 1, unit: 'days' }, variants: [{ subject: '', body: 'Following up.' }] }],
    });

  const app = createApp(deps, services);
  const server = await new Promise<import('node:http').Server>((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const cases = [
    {
      name: `GET /v2/campaign/get (${STEPS} steps x ${VARIANTS} variants)`,
      path: `/v2/campaign/get?campaignId=${campaign.id}`,
    },
    { name: 'GET /v1/campaign/list (20 campaigns, baseline)', path: '/v1/campaign/list?limit=20' },
  ];
  const times = cases.map(() => [] as number[]);
  let bytes = 0;
  for (let i = 0; i < WARM_UP + CALLS; i++) {
    for (const [c, { path }] of cases.entries()) {
      const start = performance.now();
      const res = await fetch(base + path, { headers: { 'X-API-Key': apiKey } });
      const body = await res.arrayBuffer();
      const ms = performance.now() - start;
      if (res.status !== 200) throw new Error(`${path}: ${res.status} ${Buffer.from(body).toString()}`);
      if (c === 0) bytes = body.byteLength;
      if (i >= WARM_UP) times[c].push(ms);
    }
  }
  server.close();
  await database.close();

  console.log(
    `\n${label}: ${CALLS} calls per case after ${WARM_UP} of warm-up, one at a time, load average ${loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}; campaign/get answers ${(bytes / 1024).toFixed(0)} KiB`,
  );
  console.log('| case | p50 ms | p95 ms | p99 ms | max ms |');
  console.log('|---|---:|---:|---:|---:|');
  for (const [c, { name }] of cases.entries()) {
    const sorted = [...times[c]].sort((a, b) => a - b);
    const f = (q: number) => quantile(sorted, q).toFixed(1);
    console.log(`| ${name} | ${f(0.5)} | ${f(0.95)} | ${f(0.99)} | ${sorted[sorted.length - 1].toFixed(1)} |`);
  }
  const p95 = quantile(
    [...times[0]].sort((a, b) => a - b),
    0.95,
  );
  console.log(
    `\ncampaign/get p95 ${p95.toFixed(1)} ms: ${p95 < TARGET_P95_MS ? 'under' : 'OVER'} the ${TARGET_P95_MS} ms target`,
  );
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
