/** What the server and the worker process both start with: config, logger, migrated database, services. */
import type { AddressInfo } from 'node:net';
import { systemClock } from './platform/clock';
import { tracing } from './observability/preload';
import { noTelemetry } from './observability/telemetry';
import { readBundledSpec } from './platform/project-root';
import { WORKER_ROLES, deprecatedSettings, loadConfig, type Config, type WorkerRole } from './platform/config';
import { isStorageDown, migrate, openDatabase, pendingMigrations, type Database } from './db';
import { createLogger } from './platform/logger';
import { markRunningBuild } from './platform/running-build';
import { missingSecretKeyWarning } from './platform/secrets';
import { createServices, type Deps, type Services } from './services';
import { startWorker, type Job, type Worker } from './platform/worker';

export async function boot(): Promise<{ deps: Deps; services: Services; database: Database }> {
  markRunningBuild();
  const config = loadConfig();
  const logger = createLogger(config.logLevel);
  for (const line of deprecatedSettings()) logger.warn(line);
  const noKey = missingSecretKeyWarning(config);
  if (noKey) logger.warn(noKey);
  const primary = await openDatabase(config);
  // The replica's pool, opened lazily like the primary's: an unreachable replica fails no start.
  const replica = config.databaseReadUrl
    ? await openDatabase({ ...config, databaseUrl: config.databaseReadUrl }, { readOnly: true })
    : null;
  const database: Database = {
    ...primary,
    close: async () => {
      await replica?.close();
      await primary.close();
    },
  };
  if (config.migrateOnStart) {
    const { total, applied } = await migrate(database.db).catch((err: unknown) => {
      throw notConnected(err, config);
    });
    logger.info(
      { migrations: total, applied: applied.length },
      `database ready: ${total} migrations, ${applied.length} applied`,
    );
  }
  const deps: Deps = { config, db: database.db, readDb: replica?.db, clock: systemClock, logger };
  if (config.metricsPort !== undefined) {
    // Loaded only when asked for: without METRICS_PORT, prom-client never loads.
    const { createMetrics } = await import('./observability/metrics');
    const metrics = createMetrics({ spec: readBundledSpec(), clock: systemClock, db: database.db });
    const server = await metrics.serve(config.metricsPort, config.metricsHost);
    server.unref();
    const metricsPort = (server.address() as AddressInfo).port;
    logger.info({ metricsPort }, `metrics at http://${config.metricsHost}:${metricsPort}/metrics`);
    deps.telemetry = metrics;
  }
  if (tracing) {
    // Each worker run in a trace of its own, counted in metrics too when they are on.
    const base = deps.telemetry ?? noTelemetry;
    deps.telemetry = { ...base, jobRun: (job, run) => tracing!.jobRun(job, () => base.jobRun(job, run)) };
  }
  return { deps, services: createServices(deps), database };
}

/**
 * A failure to connect to DATABASE_URL (unreachable, refused login, no such database) as one line naming the setting
 * and the server (never the password); any other error as it is.
 */
function notConnected(err: unknown, config: Config): unknown {
  const code = (err as { code?: string } | null)?.code ?? '';
  if (!config.databaseUrl || !(isStorageDown(err) || code.startsWith('28') || code === '3D000')) return err;
  const { hostname, port, pathname } = new URL(config.databaseUrl);
  return new Error(
    `cannot connect to the database of DATABASE_URL (${hostname}:${port || 5432}${pathname}): ${(err as Error).message}`,
  );
}

/**
 * Whether the database lacks migrations of this build at start (never with MIGRATE_ON_START on, which applied them),
 * said in one line: /readyz answers 503 and what needs the tables (the demo data, the worker's jobs) waits for
 * `untilMigrated`.
 */
export async function migrationsMissing({ config, db, logger }: Deps): Promise<boolean> {
  if (config.migrateOnStart) return false;
  const pending = await pendingMigrations(db).catch((err: unknown) => {
    throw notConnected(err, config);
  });
  if (pending.length)
    logger.warn(
      { pending: pending.length },
      `database not migrated: ${pending.length} migrations pending and MIGRATE_ON_START is off; /readyz answers 503 and the worker waits until \`npm run migrate\` has run, then this process goes on by itself`,
    );
  return pending.length > 0;
}

/** How often a process waiting for `npm run migrate` looks at the database again. */
const MIGRATIONS_WAIT_MS = 2000;

/** Resolves once every migration of this build is applied, looking every 2 s (a failed look is one more wait). */
export async function untilMigrated({ db, logger }: Deps): Promise<void> {
  const stillPending = () =>
    pendingMigrations(db).then(
      (pending) => pending.length > 0,
      () => true,
    );
  while (await stillPending()) await new Promise((resolve) => setTimeout(resolve, MIGRATIONS_WAIT_MS));
  logger.info('database migrated: going on');
}

/**
 * The background jobs by the role names WORKER_JOBS takes: campaign sending; mailbox reading; warm-up sending and
 * reading; webhook delivery; bulk jobs (import, verify, enrich); placement tests; and maintenance (expired
 * idempotency keys, the event feed's retention, the raw mail events' month partitions, the audit log's retention, tracking domains' DNS checks).
 */
export function jobsOfRoles(services: Services, roles: readonly WorkerRole[]): Record<string, Job> {
  const byRole: Record<WorkerRole, Record<string, Job>> = {
    sending: { sending: services.sending },
    inbox: { inbox: services.inbox },
    warmup: { warmupSend: services.warmup.sender, warmupRead: services.warmup.reader },
    webhooks: { webhooks: services.webhooks },
    jobs: { jobs: services.jobs },
    placement: { placement: services.placement },
    maintenance: {
      idempotencyKeys: services.idempotency,
      eventRetention: services.events.retention,
      eventPartitions: services.events.partitions,
      auditRetention: services.audit.retention,
      trackingDomains: services.trackingDomains,
    },
  };
  return Object.assign({}, ...roles.map((role) => byRole[role])) as Record<string, Job>;
}

/** The roles whose jobs this process runs: none without a worker. */
export const rolesRunning = (config: Config): WorkerRole[] => (config.workerEnabled ? config.workerJobs : []);

/** The worker of this process: the jobs of the roles WORKER_JOBS names (every one by default). */
export function startJobs({ deps, services }: { deps: Deps; services: Services }): Worker {
  deps.telemetry?.workerRoles(deps.config.workerJobs, WORKER_ROLES);
  // The setting may differ between the API that accepted an account and this worker: such an account is
  // retried (its status API says why), never marked broken.
  if (!deps.config.allowPrivateMailHosts)
    deps.logger.info(
      { allowPrivateMailHosts: false },
      'worker: ALLOW_PRIVATE_MAIL_HOSTS is off: mail servers at loopback, private or link-local addresses are not contacted; accounts there keep their status and are retried later',
    );
  return startWorker(jobsOfRoles(services, deps.config.workerJobs), {
    tickSeconds: deps.config.workerTickSeconds,
    logger: deps.logger,
    telemetry: deps.telemetry,
  });
}

/** Stops the worker, closes SMTP pools and the database. */
export async function shutdownJobs(worker: Worker | null, services: Services, database: Database): Promise<void> {
  await worker?.stop();
  // The last spans are sent before the process ends.
  await tracing?.shutdown();
  services.mail.close();
  await database.close();
}
