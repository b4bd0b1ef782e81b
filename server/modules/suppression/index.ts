/** The suppression module's face: what other modules may use of it. */
import { SuppressionService } from './service';
export type { SuppressionService } from './service';

type SuppressionServiceArgs = ConstructorParameters<typeof SuppressionService>;
/** What SuppressionService is built from, by name: the composition root names each dependency, so two of one type cannot change places. */
export interface SuppressionModuleDeps {
  db: SuppressionServiceArgs[0];
  store: SuppressionServiceArgs[1];
  clock: SuppressionServiceArgs[2];
}
export const createSuppressionModule = (d: SuppressionModuleDeps) => new SuppressionService(d.db, d.store, d.clock);
