/**
 * Per-workspace request quotas over rolling windows, shared by every server process through the
 * database.
 *
 * Each request adds a hit to its one-second bucket and its one-minute bucket. The minute window
 * sums the last 60 one-second buckets (precise to the second); the hour and day windows sum the
 * last 60 and 1440 one-minute buckets (precise to the minute); the optional per-second window is
 * the current second's bucket. Each check runs in a transaction that first locks the workspace
 * row, so concurrent requests of one workspace, from any process, are counted one after another
 * and exactly `limit` of them are admitted. Rejected requests count too (the seed's rule).
 */
import type { NextFunction, Request, Response } from 'express';
import type { Db } from '../db';
import type { Clock } from '../clock';
import type { AuthContext } from './auth';
import { ApiError } from './errors';

interface Window {
  name: 'second' | 'minute' | 'hour' | 'day';
  seconds: number;
  granularity: 's' | 'm';
  /** How many buckets of its granularity the window spans. */
  buckets: number;
  message: string;
}

/** Longest first: when several windows are full, the longest one's message is sent. */
const WINDOWS: Window[] = [
  { name: 'day', seconds: 86400, granularity: 'm', buckets: 1440, message: 'Daily rate limit exceeded. Please try again tomorrow.' },
  { name: 'hour', seconds: 3600, granularity: 'm', buckets: 60, message: 'Hourly rate limit exceeded. Please try again in an hour.' },
  { name: 'minute', seconds: 60, granularity: 's', buckets: 60, message: 'Minute rate limit exceeded. Please try again in a minute.' },
  { name: 'second', seconds: 1, granularity: 's', buckets: 1, message: 'Per-second rate limit exceeded. Please try again in a second.' },
];

const BUCKET_MS = { s: 1000, m: 60_000 } as const;

export interface QuotaDecision {
  admitted: boolean;
  /** The longest full window, when not admitted. */
  exceeded?: Window;
  retryAfterSeconds?: number;
  headers: Record<string, string>;
}

function limitOf(window: Window, limits: AuthContext['limits']): number | null {
  switch (window.name) {
    case 'second':
      return limits.perSecond;
    case 'minute':
      return limits.perMin;
    case 'hour':
      return limits.perHour;
    case 'day':
      return limits.perDay;
  }
}

export class QuotaService {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
  ) {}

  async hit(workspaceId: string, limits: AuthContext['limits']): Promise<QuotaDecision> {
    const nowMs = this.clock.now().getTime();
    const current = { s: Math.floor(nowMs / BUCKET_MS.s), m: Math.floor(nowMs / BUCKET_MS.m) };
    const oldest = { s: current.s - 59, m: current.m - 1439 };

    const rows = await this.db.transaction(async (trx) => {
      await trx('workspaces').where({ id: workspaceId }).forUpdate().first('id');
      // One round trip after the lock: drop buckets older than the day window, add this hit to its
      // second and minute buckets, and read the rest. The statement's snapshot does not show its own
      // upsert, so the upserted rows come from RETURNING and the others from the table.
      const result = await trx.raw<{ rows: { granularity: 's' | 'm'; bucket: string | number; hits: number }[] }>(
        `WITH removed AS (
           DELETE FROM quota_buckets
           WHERE workspace_id = :ws AND ((granularity = 's' AND bucket < :oldestS) OR (granularity = 'm' AND bucket < :oldestM))
         ), hit AS (
           INSERT INTO quota_buckets (workspace_id, granularity, bucket, hits) VALUES (:ws, 's', :s, 1), (:ws, 'm', :m, 1)
           ON CONFLICT (workspace_id, granularity, bucket) DO UPDATE SET hits = quota_buckets.hits + 1
           RETURNING granularity, bucket, hits
         )
         SELECT granularity, bucket, hits FROM hit
         UNION ALL
         SELECT granularity, bucket, hits FROM quota_buckets
         WHERE workspace_id = :ws AND NOT ((granularity = 's' AND bucket = :s) OR (granularity = 'm' AND bucket = :m))
         ORDER BY bucket`,
        { ws: workspaceId, s: current.s, m: current.m, oldestS: oldest.s, oldestM: oldest.m },
      );
      return result.rows;
    });

    const hitsIn = (window: Window) =>
      rows
        .filter((r) => r.granularity === window.granularity && Number(r.bucket) > current[window.granularity] - window.buckets)
        .map((r) => ({ bucket: Number(r.bucket), hits: r.hits }));

    const states = WINDOWS.flatMap((window) => {
      const limit = limitOf(window, limits);
      if (limit === null) return [];
      const buckets = hitsIn(window);
      const used = buckets.reduce((n, b) => n + b.hits, 0);
      /** When enough of the oldest hits have left the window for `used - free` to fit under the limit. */
      const secondsUntilFree = (free: number): number => {
        let remaining = used;
        for (const b of buckets) {
          if (remaining <= free) break;
          remaining -= b.hits;
          const leavesAt = (b.bucket + window.buckets) * BUCKET_MS[window.granularity];
          if (remaining <= free) return Math.max(1, Math.ceil((leavesAt - nowMs) / 1000));
        }
        return 0;
      };
      return [{ window, limit, used, secondsUntilFree }];
    });

    const headers: Record<string, string> = {
      'RateLimit-Policy': states.map((s) => `"${s.window.name}";q=${s.limit};w=${s.window.seconds}`).join(', '),
    };
    const tightest = states.reduce((a, b) => (b.limit - b.used < a.limit - a.used ? b : a));
    const remaining = Math.max(0, tightest.limit - tightest.used);
    // t: seconds until the oldest counted request of that window leaves it and frees a slot.
    headers.RateLimit = `"${tightest.window.name}";r=${remaining};t=${tightest.secondsUntilFree(Math.min(tightest.used, tightest.limit) - 1)}`;

    const full = states.filter((s) => s.used > s.limit);
    if (full.length === 0) return { admitted: true, headers };
    const retryAfterSeconds = Math.max(...full.map((s) => s.secondsUntilFree(s.limit - 1)));
    return { admitted: false, exceeded: full[0].window, retryAfterSeconds, headers };
  }
}

/** Counts every authenticated request; over any window, 429 with the seed's message. */
export function enforceQuota(quota: QuotaService) {
  return async (_req: Request, res: Response, next: NextFunction): Promise<void> => {
    const auth = res.locals.auth as AuthContext;
    const decision = await quota.hit(auth.workspaceId, auth.limits);
    res.set(decision.headers);
    if (!decision.admitted) {
      throw new ApiError(429, 'rate_limited', decision.exceeded!.message, [], {
        'Retry-After': String(decision.retryAfterSeconds),
      });
    }
    next();
  };
}
