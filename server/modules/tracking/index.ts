/** The tracking module's face: what other modules may use of it. */
import { TrackingService, type TrackingServiceDeps } from './service';
export type { RemovalRef } from './service';

export const createTrackingModule = (deps: TrackingServiceDeps) => new TrackingService(deps);
