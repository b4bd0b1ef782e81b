/** The events module's face: what other modules may use of it. */
export { percent, zeroCounts } from './service';
export type { Event, EventCounts, EventService, EventType, ReplyCounts } from './service';
