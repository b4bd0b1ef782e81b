/**
 * The server process: configuration, database, migrations, first-start demo data, listen, and a
 * graceful shutdown on SIGTERM/SIGINT (stop accepting, finish requests in flight, close the database).
 */
// First: tracing, when configured, must be set up before express and pg are required.
import './observability/preload';
import { createServer } from 'node:http';
import { listen } from './net/listen';
import { createApp } from './app';
import { boot, rolesRunning, shutdownJobs, startJobs } from './boot';
import { WORKER_ROLES } from './platform/config';
import { describeDemoWeek, makeDemoWeek } from './demo';
import { generateLeads } from './modules/leads/generate';
import type { Deps, Services } from './services';

/** The demo lead database: enough people and companies for a first search to return results. */
const DEMO_LEADS = { people: 2000, companies: 200, seed: 1 };

/** On the very first start, a demo workspace, its week of outreach and lead data, so a newcomer sees the API at work. */
async function seedDemo(deps: Deps, services: Services, port: number): Promise<void> {
  if ((await services.workspaces.countWorkspaces()) > 0) return;
  // Leads imported before the first start are kept as they are.
  const hasLeads = await deps.db('people').first<{ id: string } | undefined>('id');
  const loaded = hasLeads
    ? { people: 0, companies: 0 }
    : await generateLeads(deps.db, { ...DEMO_LEADS, now: deps.clock.now() });
  const { workspace, apiKey } = await services.workspaces.createWorkspace({ name: 'Demo workspace', whitelabel: true });
  // Without a key for stored passwords (PostgreSQL and no SECRET_KEY) the demo has no mailboxes, so no week.
  const week = await makeDemoWeek(deps, workspace.id).then(
    describeDemoWeek,
    (err: Error) => `no demo week: ${err.message}`,
  );
  const line = '-'.repeat(72);
  console.log(
    [
      line,
      `First start: created "${workspace.name}" (${workspace.id}) with ${workspace.credit_balance} credits,`,
      `a demo lead database of ${loaded.people} people and ${loaded.companies} companies,`,
      `and ${week}`,
      `API key (shown once, keep it): ${apiKey}`,
      `Try it:  curl -H 'X-API-Key: ${apiKey}' http://localhost:${port}/v1/authenticate`,
      `Docs:    http://localhost:${port}/docs`,
      `MCP:     http://localhost:${port}/mcp (agents: Authorization: Bearer <key>; docs/mcp.md)`,
      line,
    ].join('\n'),
  );
}

async function main(): Promise<void> {
  const { deps, services, database } = await boot();
  const { config, logger } = deps;

  const readiness = { draining: false, jobs: rolesRunning(config) };
  const server = createServer(createApp(deps, services, { readiness }));
  // A client that sends its headers or body slowly cannot hold a connection (or a shutdown) for long.
  server.headersTimeout = 10_000;
  server.requestTimeout = 30_000;
  // The worker runs here unless WORKER_ENABLED=0 (then `npm run worker` runs it apart), with the jobs WORKER_JOBS names.
  // The port is taken before the demo is made, so a busy one fails at once; "listening" is said once it is ready.
  const port = await listen(server, { port: config.port, host: config.host, setting: 'PORT', hostSetting: 'HOST' });
  if (config.seedDemo) await seedDemo(deps, services, port);
  logger.info({ port, database: database.kind }, `listening on http://${config.host ?? 'localhost'}:${port}`);
  const worker = config.workerEnabled ? startJobs({ deps, services }) : null;
  if (!worker) deps.telemetry?.workerRoles([], WORKER_ROLES);

  let stopping = false;
  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    // /readyz answers 503 from now on, to the balancer's checks on connections still open.
    readiness.draining = true;
    logger.info({ signal }, 'shutting down: finishing requests in flight');
    // The jobs start stopping now, beside the requests, so both end within the grace.
    void worker?.stop();
    server.close(() => {
      void shutdownJobs(worker, services, database).then(() => {
        logger.info('stopped');
        process.exit(0);
      });
    });
    // Idle keep-alive connections would hold close() open; in-flight requests still finish, for a while.
    server.closeIdleConnections();
    setTimeout(() => {
      logger.warn(
        { graceSeconds: config.shutdownGraceSeconds },
        'shutdown grace period over: closing the remaining connections',
      );
      server.closeAllConnections();
    }, config.shutdownGraceSeconds * 1000).unref();
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
}

main().catch((err: unknown) => {
  console.error(`Failed to start: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
