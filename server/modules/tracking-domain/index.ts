/** The tracking-domain module's face: what other modules may use of it. */
import { TrackingDomainService } from './service';
export type { TrackingDomainService } from './service';

type TrackingDomainServiceArgs = ConstructorParameters<typeof TrackingDomainService>;
/** What TrackingDomainService is built from, by name: the composition root names each dependency, so two of one type cannot change places. */
export interface TrackingDomainModuleDeps {
  db: TrackingDomainServiceArgs[0];
  store: TrackingDomainServiceArgs[1];
  dns: TrackingDomainServiceArgs[2];
  events: TrackingDomainServiceArgs[3];
  clock: TrackingDomainServiceArgs[4];
  cnameTarget: TrackingDomainServiceArgs[5];
}
export const createTrackingDomainModule = (d: TrackingDomainModuleDeps) =>
  new TrackingDomainService(d.db, d.store, d.dns, d.events, d.clock, d.cnameTarget);
