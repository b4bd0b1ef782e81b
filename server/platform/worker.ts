/**
 * The background worker: runs each registered job over and over, one run at a time per lane of the job. A run that
 * did work is followed at once by the next; an idle one waits the tick. Jobs claim their rows in the
 * database (FOR UPDATE SKIP LOCKED), so any number of workers on one PostgreSQL share the work.
 */
import type { Logger } from './logger';
import { noTelemetry, type Backlog, type Telemetry } from '../observability/telemetry';
import { causeOutsideRequests, causing } from './cause';

export interface Job {
  /** One pass; returns how much it did (0 when idle). */
  runOnce(): Promise<number>;
  /** Told at shutdown, so a pass in progress starts no more work and ends within the shutdown grace. */
  stop?(): void;
  /** Passes of this job run side by side (default 1), so one long pass does not hold up the next. */
  lanes?: number;
  /** How much is due now and since when, for metrics (read at each scrape: the README's "Metrics"). */
  backlog?(): Promise<Backlog>;
}

export interface Worker {
  /** Stops starting new runs and waits for the runs in progress. */
  stop(): Promise<void>;
}

export function startWorker(
  jobs: Record<string, Job>,
  options: { tickSeconds: number; logger: Logger; telemetry?: Telemetry },
): Worker {
  const telemetry = options.telemetry ?? noTelemetry;
  telemetry.watchJobs(jobs);
  let stopping = false;
  const wakers = new Set<() => void>();
  const pause = (ms: number) =>
    new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        wakers.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      wakers.add(done);
    });

  const loop = async ([name, job]: [string, Job]) => {
    while (!stopping) {
      let did = 0;
      try {
        // What a pass changes is the worker's doing, named by its job (the audit log, the credit ledger).
        did = await telemetry.jobRun(name, () => causing(causeOutsideRequests('worker', name), () => job.runOnce()));
      } catch (err) {
        options.logger.error({ err, job: name }, 'worker job failed; retrying at the next tick');
      }
      if (!stopping && did === 0) await pause(options.tickSeconds * 1000);
    }
  };
  const running = Object.entries(jobs).flatMap((entry) =>
    Array.from({ length: entry[1].lanes ?? 1 }, () => loop(entry)),
  );
  options.logger.info({ jobs: Object.keys(jobs), tickSeconds: options.tickSeconds }, 'worker started');
  return {
    async stop() {
      stopping = true;
      for (const job of Object.values(jobs)) job.stop?.();
      for (const wake of [...wakers]) wake();
      await Promise.all(running);
    },
  };
}
