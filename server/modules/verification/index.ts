/** The verification module's face: what other modules may use of it. */
import { VerificationService } from './service';
export type { MxCache, VerificationService } from './service';

type VerificationServiceArgs = ConstructorParameters<typeof VerificationService>;
/** What VerificationService is built from, by name: the composition root names each dependency, so two of one type cannot change places. */
export interface VerificationModuleDeps {
  db: VerificationServiceArgs[0];
  store: VerificationServiceArgs[1];
  dns: VerificationServiceArgs[2];
  clock: VerificationServiceArgs[3];
  config: VerificationServiceArgs[4];
}
export const createVerificationModule = (d: VerificationModuleDeps) =>
  new VerificationService(d.db, d.store, d.dns, d.clock, d.config);
