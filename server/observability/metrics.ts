/**
 * Prometheus metrics (prom-client), loaded only when METRICS_PORT is set, served on their own listener so the
 * public port never shows them. The one file that imports prom-client: modules report through the Telemetry
 * interface (server/observability/telemetry.ts), so they stay testable without it and a metrics library swap touches one file.
 *
 * Labels are bounded: an HTTP request is labelled by the spec's operationId (`getCampaignV2`) or the Express
 * route template, never its URL; workers by job name; outcomes by their closed lists.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { NextFunction, Request, Response } from 'express';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { Clock } from '../platform/clock';
import type { Db } from '../db';
import type { Backlog, Tally, Telemetry } from './telemetry';
import { listen } from '../net/listen';
import { operationMatcher, type Spec } from './operations';

export interface Metrics extends Telemetry {
  registry: Registry;
  /** Express middleware: one observation per finished request. */
  requests(): (req: Request, res: Response, next: NextFunction) => void;
  /** Answers GET /metrics on its own port (0: a free one), on `host` (default loopback). */
  serve(port: number, host?: string): Promise<Server>;
}

export function createMetrics(options: { spec: Spec; clock: Clock; db: Db; defaults?: boolean }): Metrics {
  const registry = new Registry();
  // Event-loop lag, heap, GC, CPU, file descriptors: prom-client's defaults.
  if (options.defaults !== false) collectDefaultMetrics({ register: registry });
  const registers = [registry];
  const operationOf = operationMatcher(options.spec);

  const requestLabels = ['operation', 'status', 'version'] as const;
  const requests = new Counter({
    name: 'http_requests_total',
    help: 'HTTP requests by operation, status and API version.',
    labelNames: requestLabels,
    registers,
  });
  const duration = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'Time from the request to the end of its response, by operation, status and API version.',
    labelNames: requestLabels,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers,
  });
  const authFailures = new Counter({
    name: 'auth_failures_total',
    help: 'Refused authentications by reason.',
    labelNames: ['reason'],
    registers,
  });
  const quotaRefusals = new Counter({
    name: 'quota_refusals_total',
    help: 'Requests refused with 429 by the quota window that was full.',
    labelNames: ['window'],
    registers,
  });
  const replays = new Counter({
    name: 'idempotent_replays_total',
    help: 'Requests answered from a stored Idempotency-Key answer.',
    registers,
  });
  const jobRuns = new Counter({
    name: 'worker_job_runs_total',
    help: 'Worker job runs.',
    labelNames: ['job'],
    registers,
  });
  const jobErrors = new Counter({
    name: 'worker_job_errors_total',
    help: 'Worker job runs that failed.',
    labelNames: ['job'],
    registers,
  });
  const jobItems = new Counter({
    name: 'worker_job_items_total',
    help: 'Items worker job runs handled (what runOnce returned).',
    labelNames: ['job'],
    registers,
  });
  const jobDuration = new Histogram({
    name: 'worker_job_run_duration_seconds',
    help: 'Duration of a worker job run.',
    labelNames: ['job'],
    buckets: [0.01, 0.05, 0.1, 0.5, 1, 5, 15, 60],
    registers,
  });

  const roles = new Gauge({
    name: 'worker_role_running',
    help: 'Whether this process runs the worker role (WORKER_JOBS): 1 or 0, by role.',
    labelNames: ['role'],
    registers,
  });

  let watched: [string, { backlog?(): Promise<Backlog> }][] = [];
  // Read at scrape time: one query per job, so the numbers are never older than the scrape.
  const readBacklogs = async () => {
    const now = options.clock.now().getTime();
    return Promise.all(
      watched
        .filter(([, job]) => job.backlog !== undefined)
        .map(async ([name, job]) => {
          const b = await job.backlog!();
          return { name, due: b.due, age: b.oldestDueAt ? Math.max(0, (now - b.oldestDueAt.getTime()) / 1000) : 0 };
        }),
    );
  };
  let pending: ReturnType<typeof readBacklogs> | null = null;
  // Both gauges of one scrape share one read.
  const backlogs = () => (pending ??= readBacklogs().finally(() => setImmediate(() => (pending = null))));
  new Gauge({
    name: 'worker_job_backlog',
    help: 'Items due now and not yet handled, by worker job.',
    labelNames: ['job'],
    registers,
    async collect() {
      this.reset();
      for (const b of await backlogs()) this.set({ job: b.name }, b.due);
    },
  });
  new Gauge({
    name: 'worker_job_oldest_due_age_seconds',
    help: 'How long the oldest due item has been waiting (0 when none), by worker job.',
    labelNames: ['job'],
    registers,
    async collect() {
      this.reset();
      for (const b of await backlogs()) this.set({ job: b.name }, b.age);
    },
  });

  // knex pools connections with tarn (PostgreSQL: up to 10; PGlite: exactly one).
  const pool = () =>
    (
      options.db.client as {
        pool?: { numUsed(): number; numFree(): number; numPendingAcquires(): number; max: number };
      }
    ).pool;
  new Gauge({
    name: 'db_pool_connections',
    help: 'Database pool connections by state: inUse, free, waiting (acquires queued), max.',
    labelNames: ['state'],
    registers,
    collect() {
      const p = pool();
      if (!p) return;
      this.set({ state: 'inUse' }, p.numUsed());
      this.set({ state: 'free' }, p.numFree());
      this.set({ state: 'waiting' }, p.numPendingAcquires());
      this.set({ state: 'max' }, p.max);
    },
  });

  return {
    registry,
    tally(name, help, label): Tally {
      const counter = new Counter({ name, help, labelNames: [label], registers });
      return { add: (value) => counter.inc({ [label]: value }) };
    },
    authFailed: (reason) => authFailures.inc({ reason }),
    quotaRefused: (window) => quotaRefusals.inc({ window }),
    idempotentReplay: () => replays.inc(),
    async jobRun(job, run) {
      const end = jobDuration.startTimer({ job });
      jobRuns.inc({ job });
      try {
        const did = await run();
        jobItems.inc({ job }, did);
        return did;
      } catch (err) {
        jobErrors.inc({ job });
        throw err;
      } finally {
        end();
      }
    },
    watchJobs(jobs) {
      watched = Object.entries(jobs);
      for (const [job] of watched) {
        // Every job shows from the first scrape, at 0, so a rate over a quiet job is 0 rather than absent.
        jobRuns.inc({ job }, 0);
        jobErrors.inc({ job }, 0);
      }
    },
    workerRoles(running, known) {
      for (const role of known) roles.set({ role }, running.includes(role) ? 1 : 0);
    },
    requests() {
      return (req, res, next) => {
        const started = performance.now();
        res.once('finish', () => {
          // originalUrl: routers rewrite req.url while they run; the route template is the fallback label.
          const path = req.originalUrl.split('?')[0];
          const route = (req as Omit<Request, 'route'> & { route?: { path?: unknown } }).route?.path;
          const labels = {
            operation: operationOf(req.method.toLowerCase(), path) ?? (typeof route === 'string' ? route : 'unmatched'),
            status: String(res.statusCode),
            version: /^\/v[12]\//.test(path) ? (res.locals.apiVersion as string) : 'none',
          };
          requests.inc(labels);
          duration.observe(labels, (performance.now() - started) / 1000);
        });
        next();
      };
    },
    async serve(port, host = '127.0.0.1') {
      const server = createServer((req, res) => {
        if (req.method !== 'GET' || req.url?.split('?')[0] !== '/metrics') {
          res.writeHead(404).end();
          return;
        }
        registry.metrics().then(
          (text) => res.writeHead(200, { 'Content-Type': registry.contentType }).end(text),
          (err: unknown) =>
            res
              .writeHead(500, { 'Content-Type': 'text/plain' })
              .end(`metrics failed: ${err instanceof Error ? err.message : String(err)}\n`),
        );
      });
      await listen(server, { port, host, setting: 'METRICS_PORT', hostSetting: 'METRICS_HOST' });
      return server;
    },
  };
}

export const metricsAddress = (server: Server) => `http://127.0.0.1:${(server.address() as AddressInfo).port}/metrics`;
