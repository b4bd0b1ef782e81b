/** The verification module's face: what other modules may use of it. */
import { VerificationService, type VerificationServiceDeps } from './service';
export type { MxCache, VerificationService } from './service';

export const createVerificationModule = (deps: VerificationServiceDeps) => new VerificationService(deps);
