/**
 * The real app on a real port, on a fresh database for the calling test file:
 *
 *   const t = await startTestServer();            // in beforeAll
 *   const ws = await t.createWorkspace();         // { workspaceId, apiKey, client }
 *   const { data, response } = await ws.client.GET('/v1/campaign/list', { params: { query: { limit: 5 } } });
 *   await t.close();                              // in afterAll
 *
 * Responses are validated against the spec (VALIDATE_RESPONSES on), so a handler that answers
 * outside its contract fails the test with a 500 whose message says why.
 */
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import knex from 'knex';
import createClient from 'openapi-fetch';
import pino from 'pino';
import type { paths } from '../../generated/api';
import { createApp, type AppOptions } from '../../server/app';
import { createMetrics, type Metrics } from '../../server/observability/metrics';
import { readBundledSpec } from '../../server/platform/project-root';
import { loadConfig, type Config } from '../../server/platform/config';
import { migrate, openDatabase, pendingMigrations, type Database } from '../../server/db';
import { createServices, type Deps, type Services } from '../../server/services';
import { newId } from '../../server/platform/ids';
import { TestClock } from './clock';

export type ApiClient = ReturnType<typeof createClient<paths>>;

export interface TestWorkspace {
  workspaceId: string;
  apiKey: string;
  keyId: string;
  client: ApiClient;
}

export interface WorkspaceOptions {
  name?: string;
  /** Use the seed's default plan (20/50/100, 100 credits) instead of the roomy test plan. */
  defaultPlan?: boolean;
  whitelabel?: boolean;
  /** Set the credit balance after creation. */
  credits?: number;
}

export interface TestServer {
  url: string;
  /** The file's own PostgreSQL database, when the tests run on PostgreSQL (for a second server process). */
  databaseUrl: string | undefined;
  db: Database['db'];
  clock: TestClock;
  deps: Deps;
  /** The metrics, when the server was started with `metrics: true`. */
  metrics: Metrics | undefined;
  services: Services;
  createWorkspace(options?: WorkspaceOptions): Promise<TestWorkspace>;
  /** A typed client with this key (or none). */
  client(apiKey?: string): ApiClient;
  /** Raw fetch against the server, for what the typed client cannot send (bad JSON, wrong types). */
  fetch(path: string, init?: RequestInit & { apiKey?: string }): Promise<Response>;
  close(): Promise<void>;
}

const TEST_PLAN_ID = '00000000-0000-7000-8000-00000000feed';

/**
 * A database of the caller's own, dropped on close: an empty PGlite in memory, or under TEST_DATABASE_URL a new
 * PostgreSQL database (a copy of `template` when one is named) that the run's teardown drops too.
 */
export async function scratchDatabase(
  template?: string,
  preparedStatements = loadConfig().preparedStatements,
): Promise<Database & { url?: string }> {
  const url = process.env.TEST_DATABASE_URL;
  if (!url) return openDatabase({ databaseUrl: undefined, dataDir: '' }, { inMemory: true });
  const name = `${process.env.TEST_RUN_ID ?? 'lr_test'}_${newId().replace(/-/g, '').slice(-12)}`;
  // Behind the run's pooler (TEST_PGBOUNCER), databases are made and dropped on the server itself.
  const server = process.env.TEST_DATABASE_ADMIN_URL ?? url;
  const admin = knex({ client: 'pg', connection: server });
  try {
    await admin.raw(`CREATE DATABASE ${name}${template ? ` TEMPLATE ${template}` : ''}`);
  } finally {
    await admin.destroy();
  }
  const target = new URL(url);
  target.pathname = `/${name}`;
  const database = await openDatabase({ databaseUrl: target.toString(), dataDir: '', preparedStatements });
  return {
    ...database,
    url: target.toString(),
    close: async () => {
      await database.close();
      const dropper = knex({ client: 'pg', connection: server });
      try {
        await dropper.raw(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await dropper.destroy();
      }
    },
  };
}

/** A scratch database migrated up to, not including, `migration`: the schema that data "written the old way" meets. */
export async function databaseBefore(migration: string): Promise<Database> {
  const database = await scratchDatabase();
  const names = await pendingMigrations(database.db);
  for (const name of names.slice(0, names.indexOf(migration))) await database.db.migrate.up({ name });
  return database;
}

/** The test server's database (`preparedStatements` as DATABASE_PREPARED_STATEMENTS says, unless the test says). */
async function openTestDatabase(
  own: string | undefined,
  preparedStatements: boolean,
): Promise<Database & { url?: string }> {
  if (!own) return migratedDatabase(preparedStatements);
  const database = await openDatabase({ databaseUrl: own, dataDir: '', preparedStatements });
  await migrate(database.db);
  return { ...database, url: own };
}

/** The embedded snapshot's file, read once per test file. */
let embeddedSnapshot: Blob | undefined;

/**
 * A scratch database at the latest migration, dropped on close: a copy of the run's migrated template database
 * or embedded snapshot (global-setup.ts), or, in a run without one, a new database migrated here.
 */
export async function migratedDatabase(
  preparedStatements = loadConfig().preparedStatements,
): Promise<Database & { url?: string }> {
  const runId = process.env.TEST_RUN_ID;
  if (process.env.TEST_DATABASE_URL && runId) return scratchDatabase(`${runId}_tpl`, preparedStatements);
  const snapshot = process.env.TEST_PGLITE_SNAPSHOT;
  if (!process.env.TEST_DATABASE_URL && snapshot) {
    embeddedSnapshot ??= new Blob([readFileSync(snapshot)]);
    return openDatabase({ databaseUrl: undefined, dataDir: '' }, { inMemory: true, startingFrom: embeddedSnapshot });
  }
  const database = await scratchDatabase(undefined, preparedStatements);
  await migrate(database.db);
  return database;
}

export async function startTestServer(
  /**
   * `databaseUrl`: a PostgreSQL database of the test's own (test/helpers/own-postgres.ts) instead of the file's;
   * `database`: one the test opened and filled (a migration test), migrated to the latest here and closed with the server.
   */
  options: {
    config?: Partial<Config>;
    clock?: TestClock;
    logger?: Deps['logger'];
    app?: AppOptions;
    metrics?: boolean;
    /** A read replica of the database (DATABASE_READ_URL), for the reads the server sends there. */
    readDatabaseUrl?: string;
    databaseUrl?: string;
    database?: Database;
  } = {},
): Promise<TestServer> {
  const database: Database & { url?: string } =
    options.database ??
    (await openTestDatabase(
      options.databaseUrl,
      options.config?.preparedStatements ?? loadConfig().preparedStatements,
    ));
  if (options.database) await migrate(options.database.db);
  const clock = options.clock ?? new TestClock();
  // Account connect logs in to SMTP/IMAP only where a test asks (VERIFY_MAIL_LOGINS is on in production).
  const config = loadConfig({ validateResponses: true, seedDemo: false, verifyMailLogins: false, ...options.config });
  const logger = options.logger ?? pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' });
  const replica = options.readDatabaseUrl
    ? await openDatabase({ databaseUrl: options.readDatabaseUrl, dataDir: '' }, { readOnly: true })
    : undefined;
  const deps: Deps = { config, db: database.db, readDb: replica?.db, clock, logger };
  // Metrics on the test clock (backlog ages move with it).
  const metrics = options.metrics ? createMetrics({ spec: readBundledSpec(), clock, db: database.db }) : undefined;
  deps.telemetry = metrics;
  const services = createServices(deps);
  const app = createApp(deps, services, options.app);
  const server: Server = await new Promise((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  // Past the longest set-up between two requests of a test (records written one by one on a busy machine):
  // with Node's 5 s, the server closed idle keep-alive sockets that fetch's pool, whose coarser timers run
  // later, still reused (ECONNRESET).
  server.keepAliveTimeout = 60_000;
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  await database
    .db('plans')
    .insert({
      id: TEST_PLAN_ID,
      name: 'Test (roomy)',
      per_min: 100000,
      per_hour: 100000,
      per_day: 100000,
      credits: 1000,
      created_at: clock.now(),
    })
    .onConflict('id')
    .ignore();

  const client = (apiKey?: string): ApiClient =>
    createClient<paths>({ baseUrl: url, headers: apiKey ? { 'X-API-Key': apiKey } : {} });

  let counter = 0;
  return {
    url,
    databaseUrl: database.url,
    db: database.db,
    clock,
    deps,
    metrics,
    services,
    client,
    async createWorkspace(opts: WorkspaceOptions = {}) {
      counter += 1;
      const created = await services.workspaces.createWorkspace({
        name: opts.name ?? `Workspace ${counter}`,
        whitelabel: opts.whitelabel,
        planId: opts.defaultPlan ? undefined : TEST_PLAN_ID,
      });
      if (opts.credits !== undefined) {
        await database.db('workspaces').where({ id: created.workspace.id }).update({ credit_balance: opts.credits });
      }
      return {
        workspaceId: created.workspace.id,
        apiKey: created.apiKey,
        keyId: created.keyId,
        client: client(created.apiKey),
      };
    },
    fetch(path, init = {}) {
      const { apiKey, headers, ...rest } = init;
      return fetch(url + path, {
        ...rest,
        headers: { ...(apiKey ? { 'X-API-Key': apiKey } : {}), ...(headers as Record<string, string>) },
      });
    },
    async close() {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await replica?.close();
      await database.close();
    },
  };
}
