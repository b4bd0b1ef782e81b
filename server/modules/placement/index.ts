/** The placement module's face: what other modules may use of it. */
import { PlacementService } from './service';

type PlacementServiceArgs = ConstructorParameters<typeof PlacementService>;
/** What PlacementService is built from, by name: the composition root names each dependency, so two of one type cannot change places. */
export interface PlacementModuleDeps {
  db: PlacementServiceArgs[0];
  store: PlacementServiceArgs[1];
  accounts: PlacementServiceArgs[2];
  mailAccess: PlacementServiceArgs[3];
  mail: PlacementServiceArgs[4];
  pool: PlacementServiceArgs[5];
  workspaces: PlacementServiceArgs[6];
  events: PlacementServiceArgs[7];
  clock: PlacementServiceArgs[8];
  logger: PlacementServiceArgs[9];
}
export const createPlacementModule = (d: PlacementModuleDeps) =>
  new PlacementService(
    d.db,
    d.store,
    d.accounts,
    d.mailAccess,
    d.mail,
    d.pool,
    d.workspaces,
    d.events,
    d.clock,
    d.logger,
  );
