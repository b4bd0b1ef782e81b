/**
 * `npm run worker`: the background jobs (those WORKER_JOBS names) without the API, for running workers apart from
 * API processes (PostgreSQL; the embedded database allows one process, which `npm start` already is). With
 * WORKER_HEALTH_PORT it answers /healthz and /readyz there, naming its jobs, for a container's health check.
 */
// First: tracing, when configured, must be set up before express and pg are required.
import './observability/preload';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { boot, migrationsMissing, shutdownJobs, startJobs, untilMigrated } from './boot';
import { healthRoutes } from './http/health';

async function main(): Promise<void> {
  const { deps, services, database } = await boot();
  const readiness = { draining: false, jobs: deps.config.workerJobs };
  const port = deps.config.workerHealthPort;
  if (port !== undefined) {
    const health = express().use(healthRoutes(deps.db, readiness));
    const listening = await new Promise<Server>((resolve) => {
      const server = health.listen(port, () => resolve(server));
    });
    listening.unref();
    deps.logger.info({ healthPort: (listening.address() as AddressInfo).port }, 'health at /healthz and /readyz');
  }
  // On a database that lacks migrations (MIGRATE_ON_START=off), no job runs before `npm run migrate` has.
  if (await migrationsMissing(deps)) await untilMigrated(deps);
  const worker = startJobs({ deps, services });
  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    readiness.draining = true;
    deps.logger.info({ signal }, 'worker stopping: finishing the runs in progress');
    await shutdownJobs(worker, services, database);
    process.exit(0);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
}

main().catch((err: unknown) => {
  console.error(`Worker failed to start: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
