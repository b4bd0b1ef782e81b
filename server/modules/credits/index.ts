/** The credits module's face: what other modules may use of it. */
import { CreditService } from './service';
export type { CreditService } from './service';

type CreditServiceArgs = ConstructorParameters<typeof CreditService>;
/** What CreditService is built from, by name: the composition root names each dependency, so two of one type cannot change places. */
export interface CreditModuleDeps {
  db: CreditServiceArgs[0];
  store: CreditServiceArgs[1];
  clock: CreditServiceArgs[2];
  audit: CreditServiceArgs[3];
}
export const createCreditModule = (d: CreditModuleDeps) => new CreditService(d.db, d.store, d.clock, d.audit);
