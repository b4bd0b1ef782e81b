/**
 * What every admin command works with: the same configuration and database as the server
 * (DATABASE_URL or the embedded database in DATA_DIR), migrated, and the services built on it.
 */
import { systemClock } from '../clock';
import { loadConfig } from '../config';
import { migrate, openDatabase } from '../db';
import { createLogger } from '../logger';
import { createServices, type Deps, type Services } from '../services';

export interface CliContext {
  deps: Deps;
  services: Services;
  /** The migrations this command applied as it opened the database. */
  applied: string[];
  close(): Promise<void>;
}

export async function openCliContext(): Promise<CliContext> {
  const config = loadConfig();
  const database = await openDatabase(config);
  let applied: string[];
  try {
    applied = await migrate(database.db);
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
  return { deps, services: createServices(deps), applied, close: database.close };
}
