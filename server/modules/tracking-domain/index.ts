/** The tracking-domain module's face: what other modules may use of it. */
import { TrackingDomainService, type TrackingDomainServiceDeps } from './service';
export type { TrackingDomainService } from './service';

export const createTrackingDomainModule = (deps: TrackingDomainServiceDeps) => new TrackingDomainService(deps);
