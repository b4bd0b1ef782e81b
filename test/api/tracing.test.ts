/**
 * Traces: `npm start`'s process with OTEL_EXPORTER_OTLP_ENDPOINT set sends OTLP/HTTP JSON to a loopback
 * receiver: a server span per request with the workspace id and the operation, pg spans inside it, and a
 * trace per worker run. Without the variable, neither OpenTelemetry nor prom-client is loaded at all.
 */
import { readJson, type Success } from '../helpers/bodies';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { promisify } from 'node:util';
import { join } from 'node:path';
import knex from 'knex';

jest.setTimeout(180_000);

interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes: { key: string; value: { stringValue?: string; intValue?: string | number } }[];
}

const spans: OtlpSpan[] = [];
const paths: string[] = [];
let receiver: Server;
let child: ChildProcess | undefined;
let dataDir: string;
/** On PostgreSQL runs, the process uses a database of its own, so its pg calls show as spans. */
const adminUrl = process.env.TEST_DATABASE_URL;
const dbName = `tracing_${process.pid}_${Date.now()}`;
let databaseUrl = '';
/** The traced process's address and key (started by the first test), and all it printed. */
let base = '';
let out = '';
let apiKey = '';

beforeAll(async () => {
  receiver = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      if (req.url?.startsWith('/hook')) return void res.writeHead(204).end();
      paths.push(`${req.method} ${req.url} ${req.headers['content-type']}`);
      // The SDK may also export metrics or logs here (as protobuf): only traces are read.
      if (req.url !== '/v1/traces') return void res.writeHead(200).end();
      const payload = JSON.parse(body) as { resourceSpans: { scopeSpans: { spans: OtlpSpan[] }[] }[] };
      for (const r of payload.resourceSpans) for (const s of r.scopeSpans) spans.push(...s.spans);
      res.writeHead(200, { 'Content-Type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  dataDir = mkdtempSync(join(tmpdir(), 'tracing-'));
  if (adminUrl) {
    const admin = knex({ client: 'pg', connection: adminUrl });
    try {
      await admin.raw(`CREATE DATABASE ${dbName}`);
    } finally {
      await admin.destroy();
    }
    const url = new URL(adminUrl);
    url.pathname = `/${dbName}`;
    databaseUrl = url.toString();
  }
});
afterAll(async () => {
  child?.kill('SIGKILL');
  await new Promise((r) => receiver.close(r));
  rmSync(dataDir, { recursive: true, force: true });
  if (adminUrl) {
    const admin = knex({ client: 'pg', connection: adminUrl });
    try {
      await admin.raw(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
    } finally {
      await admin.destroy();
    }
  }
});

const attr = (span: OtlpSpan, key: string) => {
  const v = span.attributes.find((a) => a.key === key)?.value;
  return v?.stringValue ?? (v?.intValue !== undefined ? Number(v.intValue) : undefined);
};

it('sends a trace per request with the workspace and operation, and a trace per worker run', async () => {
  const endpoint = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  child = spawn(process.execPath, ['--import', 'tsx', join(__dirname, '../../server/main.ts')], {
    env: {
      ...process.env,
      NODE_OPTIONS: '',
      DATABASE_URL: databaseUrl,
      DATA_DIR: dataDir,
      PORT: '0',
      LOG_LEVEL: 'info',
      OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
      OTEL_BSP_SCHEDULE_DELAY: '100',
      // The webhook receiver is this test's, on loopback; a webhook's signing secret needs the key on PostgreSQL.
      ALLOW_PRIVATE_WEBHOOKS: '1',
      SECRET_KEY: '5a'.repeat(32),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (out += c.toString()));
  for (let i = 0; i < 1200 && !/"port":(\d+)/.test(out); i += 1) await new Promise((r) => setTimeout(r, 100));
  base = `http://127.0.0.1:${/"port":(\d+)/.exec(out)![1]}`;
  apiKey = /API key \(shown once, keep it\): (lr_\S+)/.exec(out)![1];
  const auth = await fetch(`${base}/v2/authenticate`, { headers: { 'X-API-Key': apiKey } });
  const workspaceId = (await readJson<Success<'/v2/authenticate', 'get'>>(auth)).data.workspace.id;

  const requestSpan = () => spans.find((s) => s.kind === 2 && attr(s, 'operation') === 'authenticateV2');
  // The worker's first runs end (and are exported) at their own pace: wait for each job this test names.
  const JOBS = ['sending', 'inbox', 'webhooks'];
  const jobsSeen = () =>
    JOBS.every((job) => spans.some((s) => s.name.startsWith('worker ') && attr(s, 'worker.job') === job));
  for (let i = 0; i < 200 && !(requestSpan() && jobsSeen()); i += 1) await new Promise((r) => setTimeout(r, 100));
  expect(paths[0]).toBe('POST /v1/traces application/json');

  const server = requestSpan()!;
  expect(server).toBeDefined();
  expect(attr(server, 'workspace.id')).toBe(workspaceId);
  // Express's spans are in the request's trace; on PostgreSQL its database calls are too (PGlite has no driver to trace).
  expect(spans.some((s) => s.traceId === server.traceId && attr(s, 'express.type') !== undefined)).toBe(true);
  if (adminUrl) expect(spans.some((s) => s.traceId === server.traceId && s.name.startsWith('pg'))).toBe(true);

  const runs = spans.filter((s) => s.name.startsWith('worker '));
  expect(runs.map((s) => attr(s, 'worker.job'))).toEqual(expect.arrayContaining(JOBS));
  // Each run is the root of its own trace.
  for (const run of runs) expect(run.parentSpanId ?? '').toBe('');
  expect(new Set(runs.map((s) => s.traceId)).size).toBe(runs.length);
});

it('records route templates and redacted queries: no address, search term or token reaches the collector', async () => {
  expect(base).not.toBe('');
  const secrets = ['hidden.person', 'needle-term', 'clicktoken0secret', 'unsubtoken0secret', 'opentoken0secret'];
  const requests: [string, string][] = [
    ['/v2/suppression/list?search=hidden.person%40contact.com&limit=5', '/v2/suppression/list'],
    ['/v2/email/list?limit=5&search=needle-term', '/v2/email/list'],
    ['/v2/whitelabel/user/hidden.person%40contact.com', '/v2/whitelabel/user/{email}'],
    ['/c/clicktoken0secret', '/c/:token'],
    ['/u/unsubtoken0secret', '/u/:token'],
    ['/o/opentoken0secret.gif', '/o/:token.gif'],
    ['/no/such/hidden.person@contact.com', '/no/…'],
  ];
  for (const [path] of requests) {
    const res = await fetch(base + path, { headers: { 'X-API-Key': apiKey }, redirect: 'manual' });
    await res.body?.cancel();
  }
  const serverSpan = (route: string) => spans.find((s) => s.kind === 2 && attr(s, 'url.path') === route);
  for (let i = 0; i < 200 && !requests.every(([, route]) => serverSpan(route)); i += 1)
    await new Promise((r) => setTimeout(r, 100));
  for (const [, route] of requests) {
    const span = serverSpan(route)!;
    expect([route, span && attr(span, 'http.route')]).toEqual([route, route]);
    expect(span.name).toMatch(new RegExp(` ${route.replace(/[.*+?^$()|[\]\\{}]/g, '\\$&')}$`));
  }
  expect(attr(serverSpan('/v2/suppression/list')!, 'url.query')).toBe('search=REDACTED&limit=REDACTED');
  // Nothing exported, by any span of any instrumentation, holds what the URLs carried.
  const exported = JSON.stringify(spans);
  for (const secret of secrets) expect([secret, exported.includes(secret)]).toEqual([secret, false]);
});

it('loads neither OpenTelemetry nor prom-client when neither is configured', async () => {
  const script = `require('./server/observability/preload'); require('./server/boot'); require('./server/app');
    console.log(JSON.stringify(Object.keys(require.cache).filter((k) => k.includes('@opentelemetry') || k.includes('prom-client')).length));`;
  const env: NodeJS.ProcessEnv = { ...process.env, NODE_OPTIONS: '' };
  delete env.OTEL_EXPORTER_OTLP_ENDPOINT;
  delete env.METRICS_PORT;
  // Not spawnSync: blocking this process for the seconds the child takes lets the server close its idle
  // keep-alive sockets unseen by the fetch client, whose next request may then go out on a closed one.
  const result = await promisify(execFile)(process.execPath, ['--import', 'tsx', '-e', script], {
    cwd: join(__dirname, '../..'),
    encoding: 'utf8',
    env,
  });
  expect(result.stderr).toBe('');
  expect(result.stdout.trim()).toBe('0');
});

it('redacts URL queries and user info in every exported span and log line, the outgoing calls included', async () => {
  expect(base).not.toBe('');
  const secret = 'hooksecret0value';
  const receiverPort = (receiver.address() as AddressInfo).port;
  const headers = { 'X-API-Key': apiKey, 'Content-Type': 'application/json' };
  const created = await fetch(`${base}/v2/webhook/create`, {
    method: 'POST',
    headers,
    body: JSON.stringify({
      url: `http://127.0.0.1:${receiverPort}/hook?hooksecret=${secret}`,
      eventTypes: ['email.sent'],
    }),
  });
  expect(created.status).toBe(201);
  const { id } = (await readJson<Success<'/v2/webhook/create', 'post'>>(created)).data.subscription;
  const tested = await fetch(`${base}/v2/webhook/test`, { method: 'POST', headers, body: JSON.stringify({ id }) });
  expect(tested.status).toBe(200);
  const clientSpan = () => spans.find((s) => s.kind === 3 && JSON.stringify(s).includes('/hook'));
  for (let i = 0; i < 200 && !clientSpan(); i += 1) await new Promise((r) => setTimeout(r, 100));
  expect(JSON.stringify(clientSpan())).toContain('hooksecret=REDACTED');
  expect(JSON.stringify(spans)).not.toContain(secret);
  expect(out).not.toContain(secret);
});
