/**
 * Per-workspace request quotas over rolling windows, shared by every server process through the
 * database, checked together with the API key in one round trip.
 *
 * Each request adds a hit to its one-second bucket and its one-minute bucket. The minute window
 * sums the last 60 one-second buckets (precise to the second); the hour and day windows sum the
 * last 60 and 1440 one-minute buckets (precise to the minute); the optional per-second window is
 * the current second's bucket. The database function quota_hit (migration 20261124050000) resolves
 * the key, locks its workspace row, counts the hit and sums the windows in one statement, so
 * concurrent requests of one workspace, from any process, are counted one after another and exactly
 * `limit` of them are admitted, while the lock is held only inside the database. Rejected requests
 * count too (the seed's rule); a revoked key is read as revoked on the request after the revocation.
 */
import type { Db } from '../db';
import type { Clock } from '../clock';
import type { AuthContext } from './auth';

interface Window {
  name: 'second' | 'minute' | 'hour' | 'day';
  seconds: number;
  message: string;
}

/**
 * Longest first: when several windows are full, the longest one's message is sent. Their buckets are
 * in quota_hit.
 */
const WINDOWS: Window[] = [
  { name: 'day', seconds: 86400, message: 'Daily rate limit exceeded. Please try again tomorrow.' },
  { name: 'hour', seconds: 3600, message: 'Hourly rate limit exceeded. Please try again in an hour.' },
  { name: 'minute', seconds: 60, message: 'Minute rate limit exceeded. Please try again in a minute.' },
  { name: 'second', seconds: 1, message: 'Per-second rate limit exceeded. Please try again in a second.' },
];

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

/** What a presented key's hash comes to: unknown, revoked, or its workspace with this request counted. */
export type Admission = { key: 'unknown' } | { key: 'revoked' } | { key: 'valid'; auth: AuthContext; decision: QuotaDecision };

interface HitRow {
  key_id: string;
  revoked: boolean;
  workspace_id: string;
  workspace_name: string;
  whitelabel_enabled: boolean;
  timezone: string;
  per_second: number | null;
  per_min: number;
  per_hour: number;
  per_day: number;
  second_used: string | null;
  second_free_in: number | null;
  minute_used: string;
  minute_free_in: number;
  hour_used: string;
  hour_free_in: number;
  day_used: string;
  day_free_in: number;
}

export class QuotaService {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
  ) {}

  async admit(keyHash: string): Promise<Admission> {
    const { rows } = await this.db.raw<{ rows: HitRow[] }>('SELECT * FROM quota_hit(?, ?)', [keyHash, this.clock.now().getTime()]);
    const row = rows[0];
    if (!row) return { key: 'unknown' };
    if (row.revoked) return { key: 'revoked' };
    const auth: AuthContext = {
      keyId: row.key_id,
      workspaceId: row.workspace_id,
      workspaceName: row.workspace_name,
      whitelabelEnabled: row.whitelabel_enabled,
      timezone: row.timezone,
      limits: { perSecond: row.per_second, perMin: row.per_min, perHour: row.per_hour, perDay: row.per_day },
    };
    const used = { second: row.second_used, minute: row.minute_used, hour: row.hour_used, day: row.day_used };
    const freeIn = { second: row.second_free_in, minute: row.minute_free_in, hour: row.hour_free_in, day: row.day_free_in };
    const states = WINDOWS.flatMap((window) => {
      const limit = limitOf(window, auth.limits);
      return limit === null ? [] : [{ window, limit, used: Number(used[window.name]), secondsUntilFree: freeIn[window.name] ?? 0 }];
    });
    return { key: 'valid', auth, decision: decide(states) };
  }
}

/** The headers of a counted request, and the longest full window when there is one. */
function decide(states: { window: Window; limit: number; used: number; secondsUntilFree: number }[]): QuotaDecision {
  const headers: Record<string, string> = {
    'RateLimit-Policy': states.map((s) => `"${s.window.name}";q=${s.limit};w=${s.window.seconds}`).join(', '),
  };
  const tightest = states.reduce((a, b) => (b.limit - b.used < a.limit - a.used ? b : a));
  const remaining = Math.max(0, tightest.limit - tightest.used);
  // t: seconds until the oldest counted request of that window leaves it and frees a slot.
  headers.RateLimit = `"${tightest.window.name}";r=${remaining};t=${tightest.secondsUntilFree}`;
  const full = states.filter((s) => s.used > s.limit);
  if (full.length === 0) return { admitted: true, headers };
  return { admitted: false, exceeded: full[0].window, retryAfterSeconds: Math.max(...full.map((s) => s.secondsUntilFree)), headers };
}
