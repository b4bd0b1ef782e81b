/** The tracking module's face: what other modules may use of it. */
import { TrackingService } from './service';
export type { RemovalRef } from './service';

type TrackingServiceArgs = ConstructorParameters<typeof TrackingService>;
/** What TrackingService is built from, by name: the composition root names each dependency, so two of one type cannot change places. */
export interface TrackingModuleDeps {
  db: TrackingServiceArgs[0];
  signer: TrackingServiceArgs[1];
  publicUrl: TrackingServiceArgs[2];
  contacts: TrackingServiceArgs[3];
  suppression: TrackingServiceArgs[4];
  events: TrackingServiceArgs[5];
  clock: TrackingServiceArgs[6];
  hostOwner: TrackingServiceArgs[7];
  triggers: TrackingServiceArgs[8];
}
export const createTrackingModule = (d: TrackingModuleDeps) =>
  new TrackingService(
    d.db,
    d.signer,
    d.publicUrl,
    d.contacts,
    d.suppression,
    d.events,
    d.clock,
    d.hostOwner,
    d.triggers,
  );
