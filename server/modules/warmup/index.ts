/** The warmup module's face: what other modules may use of it. */
import { WarmupService } from './service';
export type { NewPoolMailbox, PoolMember } from './pool';

type WarmupServiceArgs = ConstructorParameters<typeof WarmupService>;
/** What WarmupService is built from, by name: the composition root names each dependency, so two of one type cannot change places. */
export interface WarmupModuleDeps {
  db: WarmupServiceArgs[0];
  store: WarmupServiceArgs[1];
  accounts: WarmupServiceArgs[2];
  mailAccess: WarmupServiceArgs[3];
  mail: WarmupServiceArgs[4];
  workspaces: WarmupServiceArgs[5];
  secrets: WarmupServiceArgs[6];
  clock: WarmupServiceArgs[7];
  logger: WarmupServiceArgs[8];
  settings?: WarmupServiceArgs[9];
}
export const createWarmupModule = (d: WarmupModuleDeps) =>
  new WarmupService(
    d.db,
    d.store,
    d.accounts,
    d.mailAccess,
    d.mail,
    d.workspaces,
    d.secrets,
    d.clock,
    d.logger,
    d.settings,
  );
