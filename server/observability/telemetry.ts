import type { RequestHandler } from 'express';
import type { Knex } from 'knex';

/**
 * What the application reports for operators, as an interface that knows no metrics library and no domain:
 * platform code (http/, the worker) calls it, modules report their outcomes through named tallies that the
 * composition root declares, and server/observability/metrics.ts implements it with prom-client when
 * METRICS_PORT is set. Without it, the no-op below: nothing is counted and prom-client is never loaded.
 */

/** Counts occurrences by one label value (an outcome, a reason): never an id or a raw URL. */
export interface Tally {
  add(value: string): void;
}

/** How a worker job tells how much work is waiting (optional on a Job; read at each scrape). */
export interface Backlog {
  due: number;
  oldestDueAt: Date | null;
}

export interface Telemetry {
  /** A counter family `name` with one label `label` (declared once, by the composition root). */
  tally(name: string, help: string, label: string): Tally;
  authFailed(reason: 'missing' | 'unknown' | 'revoked' | 'expired' | 'throttled'): void;
  quotaRefused(window: string): void;
  idempotentReplay(): void;
  /** Wraps one run of a worker job (runs, errors, duration; a trace when tracing is on). */
  jobRun(job: string, run: () => Promise<number>): Promise<number>;
  /** Express middleware observing every request, or null when nothing is observed. */
  requests(): RequestHandler | null;
  /** The jobs whose backlog is read at each scrape. */
  watchJobs(jobs: Record<string, { backlog?(): Promise<Backlog> }>): void;
  /** The worker roles this process runs, out of every role there is (a gauge of 1 or 0 per role). */
  workerRoles(running: readonly string[], known: readonly string[]): void;
}

const nothing: Tally = { add: () => undefined };

export const noTelemetry: Telemetry = {
  tally: () => nothing,
  authFailed: () => undefined,
  quotaRefused: () => undefined,
  idempotentReplay: () => undefined,
  jobRun: (_job, run) => run(),
  watchJobs: () => undefined,
  workerRoles: () => undefined,
  requests: () => null,
};

/** The row a backlog query selects: how many are due, and the earliest due time. */
export type BacklogRow = { due: number; oldest: Date | string | null } | undefined;

/** A backlog from a query of the due rows: how many, and the earliest `column` (a store's backlog() uses it). */
export async function backlogOf(query: Knex.QueryBuilder, column: string | Knex.Raw): Promise<Backlog> {
  const raw = query.client.raw.bind(query.client) as Knex.RawBuilder;
  const row = await query.first<BacklogRow>(
    raw('count(*)::int as due'),
    raw(typeof column === 'string' ? 'min(??) as oldest' : 'min(?) as oldest', [column]),
  );
  return { due: row?.due ?? 0, oldestDueAt: row?.oldest ? new Date(row.oldest) : null };
}
