/**
 * What every admin command works with: the same configuration and database as the server
 * (DATABASE_URL or the embedded database in DATA_DIR), migrated, and the services built on it.
 */
import { systemClock } from '../platform/clock';
import { loadConfig } from '../platform/config';
import { migrate, openDatabase } from '../db';
import { createLogger } from '../platform/logger';
import { createServices, type Deps, type Services } from '../services';

export interface CliContext {
  deps: Deps;
  /** The migrations of this build, and those this command applied as it opened the database. */
  migrations: { total: number; applied: string[] };
  services: Services;
  close(): Promise<void>;
}

export async function openCliContext(): Promise<CliContext> {
  const config = loadConfig();
  const database = await openDatabase(config);
  let migrations: CliContext['migrations'];
  try {
    migrations = await migrate(database.db);
  } catch (err) {
    await database.close();
    throw err;
  }
  const deps: Deps = {
    config,
    db: database.db,
    clock: systemClock,
    logger: createLogger(process.env.LOG_LEVEL ?? 'warn'),
  };
  return { deps, migrations, services: createServices(deps), close: database.close };
}
