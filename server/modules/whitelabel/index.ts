/** The whitelabel module's face: what other modules may use of it. */
import { WhitelabelService } from './service';

type WhitelabelServiceArgs = ConstructorParameters<typeof WhitelabelService>;
/** What WhitelabelService is built from, by name: the composition root names each dependency, so two of one type cannot change places. */
export interface WhitelabelModuleDeps {
  db: WhitelabelServiceArgs[0];
  workspaces: WhitelabelServiceArgs[1];
  credits: WhitelabelServiceArgs[2];
  clock: WhitelabelServiceArgs[3];
  audit: WhitelabelServiceArgs[4];
}
export const createWhitelabelModule = (d: WhitelabelModuleDeps) =>
  new WhitelabelService(d.db, d.workspaces, d.credits, d.clock, d.audit);
