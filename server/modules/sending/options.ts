import { randomInt } from 'node:crypto';

export const MINUTE = 60_000;

/** Tuning that tests and the benchmark change; the defaults are the documented behaviour. */
export interface EngineOptions {
  /** Contacts claimed per campaign per run. */
  batchSize: number;
  /** Campaigns looked at per run. */
  campaignsPerRun: number;
  /** SMTP sends in flight at once. */
  concurrency: number;
  /** A claim handed to SMTP this long ago without an outcome is `unknown`. */
  claimLeaseMs: number;
  /** A claim never handed to SMTP this long after it was made goes back to the queue (its worker is gone). */
  unhandedLeaseMs: number;
  /**
   * Bounce protection's defaults: more than `bounceRatePercent` hard bounces among the last `bounceWindow`
   * sends pauses the account; a campaign's rule, when a workspace turns it on, counts its last
   * `campaignBounceWindow` sends. A workspace's sending settings and an account's own rule win.
   */
  bounceWindow: number;
  bounceRatePercent: number;
  campaignBounceWindow: number;
  /** Random wait in [0, max] minutes; injectable so tests are exact. */
  random: (maxInclusive: number) => number;
}

export const DEFAULT_ENGINE_OPTIONS: EngineOptions = {
  batchSize: 200,
  campaignsPerRun: 20,
  concurrency: 32,
  claimLeaseMs: 10 * 60_000,
  unhandedLeaseMs: 60_000,
  bounceWindow: 40,
  bounceRatePercent: 5,
  campaignBounceWindow: 100,
  random: (max) => (max > 0 ? randomInt(max + 1) : 0),
};
