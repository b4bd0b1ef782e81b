/** The tracking-domain module's face: what other modules may use of it. */
export type { TrackingDomainService } from './service';
