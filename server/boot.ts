/** What the server and the worker process both start with: config, logger, migrated database, services. */
import { systemClock } from './clock';
import { loadConfig } from './config';
import { migrate, openDatabase, type Database } from './db';
import { createLogger } from './logger';
import { createServices, type Deps, type Services } from './services';
import { startWorker, type Worker } from './worker';

export async function boot(): Promise<{ deps: Deps; services: Services; database: Database }> {
  const config = loadConfig();
  const logger = createLogger(config.logLevel);
  const database = await openDatabase(config);
  const applied = await migrate(database.db);
  if (applied.length) logger.info({ applied }, 'migrations applied');
  const deps: Deps = { config, db: database.db, clock: systemClock, logger };
  return { deps, services: createServices(deps), database };
}

/** The background jobs: campaign sending, mailbox reading, webhook delivery, expired idempotency keys and bulk jobs (import, verify, enrich), warm-up sending and reading, and the event feed's retention. */
export function startJobs({ deps, services }: { deps: Deps; services: Services }): Worker {
  return startWorker(
    { sending: services.sending, inbox: services.inbox, webhooks: services.webhooks, idempotencyKeys: services.idempotency, jobs: services.jobs, warmupSend: services.warmup.sender, warmupRead: services.warmup.reader, eventRetention: services.events.retention },
    { tickSeconds: deps.config.sendingTickSeconds, logger: deps.logger },
  );
}

/** Stops the worker, closes SMTP pools and the database. */
export async function shutdownJobs(worker: Worker | null, services: Services, database: Database): Promise<void> {
  await worker?.stop();
  services.mail.close();
  await database.close();
}
