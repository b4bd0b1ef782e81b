/** The events module's face: what other modules may use of it. */
import { EventService } from './service';
export { percent, zeroCounts } from './service';
export type { Event, EventCounts, EventService, EventType, ReplyCounts } from './service';

type EventServiceArgs = ConstructorParameters<typeof EventService>;
/** What EventService is built from, by name: the composition root names each dependency, so two of one type cannot change places. */
export interface EventModuleDeps {
  db: EventServiceArgs[0];
  store: EventServiceArgs[1];
  clock: EventServiceArgs[2];
  retentionDays?: EventServiceArgs[3];
  emailEventRetentionMonths?: EventServiceArgs[4];
}
export const createEventModule = (d: EventModuleDeps) =>
  new EventService(d.db, d.store, d.clock, d.retentionDays, d.emailEventRetentionMonths);
