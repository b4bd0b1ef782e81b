/** The usage module's face: what other modules may use of it. */
import { UsageService } from './service';

type UsageServiceArgs = ConstructorParameters<typeof UsageService>;
/** What UsageService is built from, by name: the composition root names each dependency, so two of one type cannot change places. */
export interface UsageModuleDeps {
  db: UsageServiceArgs[0];
  clock: UsageServiceArgs[1];
  credits: UsageServiceArgs[2];
  workspaces: UsageServiceArgs[3];
  accounts: UsageServiceArgs[4];
  contacts: UsageServiceArgs[5];
  lists: UsageServiceArgs[6];
}
export const createUsageModule = (d: UsageModuleDeps) =>
  new UsageService(d.db, d.clock, d.credits, d.workspaces, d.accounts, d.contacts, d.lists);
