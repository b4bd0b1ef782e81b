/** What the server and the worker process both start with: config, logger, migrated database, services. */
import type { AddressInfo } from 'node:net';
import { systemClock } from './clock';
import { tracing } from './observability/preload';
import { noTelemetry } from './telemetry';
import { readBundledSpec } from './project-root';
import { deprecatedSettings, loadConfig } from './config';
import { migrate, openDatabase, type Database } from './db';
import { createLogger } from './logger';
import { missingSecretKeyWarning } from './secrets';
import { createServices, type Deps, type Services } from './services';
import { startWorker, type Worker } from './worker';

export async function boot(): Promise<{ deps: Deps; services: Services; database: Database }> {
  const config = loadConfig();
  const logger = createLogger(config.logLevel);
  for (const line of deprecatedSettings()) logger.warn(line);
  const noKey = missingSecretKeyWarning(config);
  if (noKey) logger.warn(noKey);
  const database = await openDatabase(config);
  const applied = await migrate(database.db);
  if (applied.length) logger.info({ applied }, 'migrations applied');
  const deps: Deps = { config, db: database.db, clock: systemClock, logger };
  if (config.metricsPort !== undefined) {
    // Loaded only when asked for: without METRICS_PORT, prom-client never loads.
    const { createMetrics } = await import('./observability/metrics');
    const metrics = createMetrics({ spec: readBundledSpec(), clock: systemClock, db: database.db });
    const server = await metrics.serve(config.metricsPort);
    server.unref();
    logger.info({ metricsPort: (server.address() as AddressInfo).port }, 'metrics at /metrics');
    deps.telemetry = metrics;
  }
  if (tracing) {
    // Each worker run in a trace of its own, counted in metrics too when they are on.
    const base = deps.telemetry ?? noTelemetry;
    deps.telemetry = { ...base, jobRun: (job, run) => tracing!.jobRun(job, () => base.jobRun(job, run)) };
  }
  return { deps, services: createServices(deps), database };
}

/** The background jobs: campaign sending, mailbox reading, webhook delivery, expired idempotency keys and bulk jobs (import, verify, enrich), warm-up sending and reading, placement tests, the event feed's retention, the raw mail events' month partitions, and tracking domains' DNS checks. */
export function startJobs({ deps, services }: { deps: Deps; services: Services }): Worker {
  return startWorker(
    {
      sending: services.sending,
      inbox: services.inbox,
      webhooks: services.webhooks,
      idempotencyKeys: services.idempotency,
      jobs: services.jobs,
      warmupSend: services.warmup.sender,
      warmupRead: services.warmup.reader,
      placement: services.placement,
      eventRetention: services.events.retention,
      eventPartitions: services.events.partitions,
      trackingDomains: services.trackingDomains,
    },
    { tickSeconds: deps.config.workerTickSeconds, logger: deps.logger, telemetry: deps.telemetry },
  );
}

/** Stops the worker, closes SMTP pools and the database. */
export async function shutdownJobs(worker: Worker | null, services: Services, database: Database): Promise<void> {
  await worker?.stop();
  // The last spans are sent before the process ends.
  await tracing?.shutdown();
  services.mail.close();
  await database.close();
}
