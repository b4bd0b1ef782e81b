/** The source of "now" for everything time-based (quotas, analytics, caches), so tests can move time. */
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };
