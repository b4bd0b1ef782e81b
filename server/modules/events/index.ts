/** The events module's face: what other modules may use of it. */
import { EventService, type EventServiceDeps } from './service';
export { percent, zeroCounts } from './service';
export type { Event, EventCounts, EventService, EventType, ReplyCounts } from './service';

export const createEventModule = (deps: EventServiceDeps) => new EventService(deps);
