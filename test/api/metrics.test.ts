/**
 * Prometheus metrics on their own listener: after a handful of requests and a worker run, a scrape shows each
 * family with the right counts, labelled by operation (never a raw URL or id); the public port has no /metrics.
 */
import { readJson, type Success } from '../helpers/bodies';
import { readFileSync } from 'node:fs';
import type { Server } from 'node:http';
import { join } from 'node:path';
import { metricsAddress } from '../../server/observability/metrics';
import { startWorker } from '../../server/platform/worker';
import { startTestServer, type TestServer } from '../helpers/server';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver';

let t: TestServer;
let metricsServer: Server;
let receiver: WebhookReceiver;
beforeAll(async () => {
  receiver = await startWebhookReceiver();
  t = await startTestServer({ metrics: true, config: { secretKey: '77'.repeat(32), allowPrivateWebhooks: true } });
  metricsServer = await t.metrics!.serve(0);
});
afterAll(async () => {
  await new Promise((r) => metricsServer.close(r));
  await t.close();
  await receiver.close();
});

const scrape = async () => {
  const res = await fetch(metricsAddress(metricsServer));
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toContain('text/plain');
  return res.text();
};
/** The value of one sample, `name{labels}`, exactly as the text format writes it (0 when absent). */
const sample = (text: string, series: string) => {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line ? Number(line.slice(series.length + 1)) : 0;
};

it('is not served on the public port', async () => {
  expect((await t.fetch('/metrics')).status).toBe(404);
});

it('counts requests by operation, status and version, auth failures, quota refusals and replays', async () => {
  const ws = await t.createWorkspace({ defaultPlan: true });
  for (let i = 0; i < 3; i += 1) await t.fetch('/v1/authenticate', { apiKey: ws.apiKey });
  await t.fetch('/v2/authenticate', { apiKey: ws.apiKey });
  await t.fetch('/v1/authenticate');
  await t.fetch('/v1/authenticate', { apiKey: 'lr_not_a_key' });
  const created = await t.fetch('/v2/campaign/create', {
    method: 'POST',
    apiKey: ws.apiKey,
    headers: { 'content-type': 'application/json', 'Idempotency-Key': 'k1' },
    body: '{"name":"m"}',
  });
  const campaignId = (await readJson<Success<'/v2/campaign/create', 'post'>>(created)).data.campaign.id;
  const replay = await t.fetch('/v2/campaign/create', {
    method: 'POST',
    apiKey: ws.apiKey,
    headers: { 'content-type': 'application/json', 'Idempotency-Key': 'k1' },
    body: '{"name":"m"}',
  });
  expect(replay.headers.get('idempotent-replayed')).toBe('true');
  await t.fetch(`/v1/campaign/get/${campaignId}`, { apiKey: ws.apiKey });
  // The default plan allows 20 a minute: 7 counted so far, so 13 more pass and the 14th is refused.
  for (let i = 0; i < 14; i += 1) await t.fetch('/v1/ratelimit/limits', { apiKey: ws.apiKey });

  const text = await scrape();
  expect(sample(text, 'http_requests_total{operation="authenticate",status="200",version="v1"}')).toBe(3);
  expect(sample(text, 'http_requests_total{operation="authenticateV2",status="200",version="v2"}')).toBe(1);
  expect(sample(text, 'http_requests_total{operation="authenticate",status="401",version="v1"}')).toBe(2);
  expect(sample(text, 'http_request_duration_seconds_count{operation="authenticate",status="200",version="v1"}')).toBe(
    3,
  );
  expect(sample(text, 'http_requests_total{operation="getRateLimits",status="429",version="v1"}')).toBe(1);
  expect(sample(text, 'auth_failures_total{reason="missing"}')).toBe(1);
  expect(sample(text, 'auth_failures_total{reason="unknown"}')).toBe(1);
  expect(sample(text, 'quota_refusals_total{window="minute"}')).toBe(1);
  expect(sample(text, 'idempotent_replays_total')).toBe(1);
  // Labels are operations: the campaign's id appears nowhere.
  expect(text).not.toContain(campaignId);
  expect(text).toMatch(/http_requests_total\{operation="[a-zA-Z0-9]+",status="200",version="v1"\} 1/);
  // The database pool and the runtime defaults.
  expect(text).toMatch(/^db_pool_connections\{state="inUse"\} \d+$/m);
  expect(text).toMatch(/^db_pool_connections\{state="waiting"\} 0$/m);
  expect(text).toMatch(/^nodejs_eventloop_lag_seconds \d/m);
  expect(text).toMatch(/^nodejs_heap_size_used_bytes \d/m);
  expect(text).toContain('# TYPE nodejs_gc_duration_seconds histogram');
  expect(text).toContain('# HELP messages_total ');
});

it('shows a worker job backlog and the age of its oldest due item, then its run and the delivery outcome', async () => {
  const ws = await t.createWorkspace();
  await ws.client.POST('/v2/webhook/create', { body: { url: receiver.url, eventTypes: ['email.sent'] } });
  await t.db.transaction((trx) =>
    t.services.events.record(trx, {
      workspaceId: ws.workspaceId,
      type: 'email.sent',
      data: { email: 'c@x.test' },
      mail: {},
    }),
  );
  t.clock.advance(30_000);
  t.metrics!.watchJobs({ webhooks: t.services.webhooks, idempotencyKeys: t.services.idempotency });
  let text = await scrape();
  expect(sample(text, 'worker_job_backlog{job="webhooks"}')).toBe(1);
  expect(sample(text, 'worker_job_oldest_due_age_seconds{job="webhooks"}')).toBe(30);
  expect(sample(text, 'worker_job_runs_total{job="webhooks"}')).toBe(0);

  const worker = startWorker(
    { webhooks: t.services.webhooks },
    { tickSeconds: 3600, logger: t.deps.logger, telemetry: t.metrics },
  );
  for (let i = 0; i < 100 && receiver.received.length === 0; i += 1) await new Promise((r) => setTimeout(r, 50));
  await worker.stop();
  text = await scrape();
  expect(receiver.received).toHaveLength(1);
  expect(sample(text, 'worker_job_runs_total{job="webhooks"}')).toBeGreaterThanOrEqual(1);
  expect(sample(text, 'worker_job_errors_total{job="webhooks"}')).toBe(0);
  expect(sample(text, 'worker_job_items_total{job="webhooks"}')).toBe(1);
  expect(sample(text, 'webhook_deliveries_total{outcome="delivered"}')).toBe(1);
  expect(sample(text, 'worker_job_backlog{job="webhooks"}')).toBe(0);
  expect(sample(text, 'worker_job_oldest_due_age_seconds{job="webhooks"}')).toBe(0);
});

it('has a Grafana dashboard whose every query names a metric family the scrape shows', async () => {
  const dashboard = JSON.parse(readFileSync(join(__dirname, '../../ops/grafana-dashboard.json'), 'utf8')) as {
    panels: { targets: { expr: string }[] }[];
  };
  const text = await scrape();
  const families = new Set(
    [...text.matchAll(/^# TYPE (\S+) (\w+)$/gm)].flatMap(([, name, type]) =>
      type === 'histogram' ? [`${name}_bucket`, `${name}_sum`, `${name}_count`] : [name],
    ),
  );
  const used = dashboard.panels.flatMap((p) =>
    p.targets.flatMap((tg) =>
      [...tg.expr.matchAll(/\b([a-z_]+_(?:total|seconds|bytes|connections|backlog|bucket|sum|count))\b/g)].map(
        (m) => m[1],
      ),
    ),
  );
  expect(used.length).toBeGreaterThan(15);
  expect(used.filter((name) => !families.has(name))).toEqual([]);
});
