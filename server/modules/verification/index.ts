/** The verification module's face: what other modules may use of it. */
export type { MxCache, VerificationService } from './service';
