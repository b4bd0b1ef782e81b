/**
 * The composition root: builds every store and service once from the injected dependencies
 * (config, database, clock, logger), so tests can swap any of them and run the real app.
 */
import type { Config } from './config';
import type { Db } from './db';
import type { Clock } from './clock';
import type { Logger } from './logger';
import { QuotaService } from './http/quota';
import { ContactService } from './modules/contact/service';
import { ContactStore } from './modules/contact/store';
import { CreditService } from './modules/credits/service';
import { WorkspaceService } from './modules/workspace/service';
import { WorkspaceStore } from './modules/workspace/store';

export interface Deps {
  config: Config;
  db: Db;
  clock: Clock;
  logger: Logger;
}

export function createServices(deps: Deps) {
  const { db, clock } = deps;
  const credits = new CreditService(db, clock);
  const workspaces = new WorkspaceService(db, new WorkspaceStore(db), credits, clock);
  const quota = new QuotaService(db, clock);
  const contacts = new ContactService(db, new ContactStore(), clock);
  return { credits, workspaces, quota, contacts };
}

export type Services = ReturnType<typeof createServices>;
