/**
 * `npm run worker`: the sending and inbox jobs without the HTTP server, for running workers apart from
 * API processes (PostgreSQL; the embedded database allows one process, which `npm start` already is).
 */
// First: tracing, when configured, must be set up before express and pg are required.
import './observability/preload';
import { boot, shutdownJobs, startJobs } from './boot';

async function main(): Promise<void> {
  const { deps, services, database } = await boot();
  const worker = startJobs({ deps, services });
  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
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
