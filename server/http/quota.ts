/**
 * Per-workspace request quotas over rolling windows, shared by every server process through the
 * database, checked together with the API key in one round trip.
 *
 * Each request adds a hit to its one-second bucket and its one-minute bucket. The minute window
 * sums the last 60 one-second buckets (precise to the second); the hour and day windows sum the
 * last 60 and 1440 one-minute buckets (precise to the minute); the optional per-second window is
 * the current second's bucket. The database function quota_hit (migrations 20261124060000 and
 * 20261125010000) resolves the keys, takes their workspaces' quota locks, counts the hits and returns
 * the buckets in one statement (with the key's scopes, migration 20261216010000), so concurrent requests of one workspace, from any process, are counted
 * one after another and exactly `limit` of them are admitted, while the locks are held only inside the
 * database. Rejected requests count too (the seed's rule); a revoked key is read as revoked on the
 * request after the revocation, and an expired key from its expiry on, in every process.
 */
import { columnsOf, prepared, type Db } from '../db';
import type { Clock } from '../platform/clock';
import type { Admission, AuthContext, QuotaDecision } from './admission';

interface Window {
  name: 'second' | 'minute' | 'hour' | 'day';
  seconds: 1 | 60 | 3600 | 86400;
  granularity: 's' | 'm';
  /** How many buckets of its granularity the window spans. */
  buckets: number;
  message: string;
}

/** Longest first: when several windows are full, the longest one's message is sent. */
const WINDOWS: Window[] = [
  {
    name: 'day',
    seconds: 86400,
    granularity: 'm',
    buckets: 1440,
    message: 'Daily rate limit exceeded. Please try again tomorrow.',
  },
  {
    name: 'hour',
    seconds: 3600,
    granularity: 'm',
    buckets: 60,
    message: 'Hourly rate limit exceeded. Please try again in an hour.',
  },
  {
    name: 'minute',
    seconds: 60,
    granularity: 's',
    buckets: 60,
    message: 'Minute rate limit exceeded. Please try again in a minute.',
  },
  {
    name: 'second',
    seconds: 1,
    granularity: 's',
    buckets: 1,
    message: 'Per-second rate limit exceeded. Please try again in a second.',
  },
];

const BUCKET_MS = { s: 1000, m: 60_000 } as const;

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

interface HitRow {
  key_hash: string;
  key_id: string;
  revoked: boolean;
  expired: boolean;
  key_name: string | null;
  scopes: string[] | null;
  workspace_id: string;
  workspace_name: string;
  whitelabel_enabled: boolean;
  timezone: string;
  per_second: number | null;
  per_min: number;
  per_hour: number;
  per_day: number;
  second_ages: number[] | null;
  second_hits: number[] | null;
  minute_ages: number[] | null;
  minute_hits: number[] | null;
}

const HIT_COLUMNS = columnsOf<HitRow>({
  key_hash: true,
  key_id: true,
  revoked: true,
  expired: true,
  key_name: true,
  scopes: true,
  workspace_id: true,
  workspace_name: true,
  whitelabel_enabled: true,
  timezone: true,
  per_second: true,
  per_min: true,
  per_hour: true,
  per_day: true,
  second_ages: true,
  second_hits: true,
  minute_ages: true,
  minute_hits: true,
}).join(', ');

interface Waiter {
  resolve(admission: Admission): void;
  reject(err: unknown): void;
}

/** What QuotaService is built from, by name. */
interface QuotaServiceDeps {
  db: Db;
  clock: Clock;
}

export class QuotaService {
  /** Requests waiting for the next call, by key hash. */
  private waiting = new Map<string, Waiter[]>();
  /** Whether this process's call loop runs: it makes one call at a time. */
  private draining = false;

  private readonly db: Db;
  private readonly clock: Clock;

  constructor({ db, clock }: QuotaServiceDeps) {
    this.db = db;
    this.clock = clock;
  }

  /**
   * Resolves a key and counts its request. The process makes one call at a time: requests that arrive
   * while it is in flight wait and go together in the next one, whatever their keys, and each key's are
   * counted as that many hits and decided one after another as if they had come in turn. A busy workspace
   * does not queue on its lock, and many workspaces cost one round trip, not one each. Each waiting
   * request arrived before the call that counts it started, so that call sees any revocation committed
   * before the request.
   */
  admit(keyHash: string): Promise<Admission> {
    return new Promise((resolve, reject) => {
      const queue = this.waiting.get(keyHash);
      if (queue) queue.push({ resolve, reject });
      else this.waiting.set(keyHash, [{ resolve, reject }]);
      if (!this.draining) {
        this.draining = true;
        void this.drain();
      }
    });
  }

  private async drain(): Promise<void> {
    do {
      // Each call starts on a later turn of the event loop, after the requests already read have joined:
      // with the embedded database the call runs on this thread, and started at once it would finish
      // before any of them arrived.
      await new Promise((resolve) => setImmediate(resolve));
      const batches = [...this.waiting].map(([keyHash, waiting]) => ({ keyHash, waiting }));
      this.waiting = new Map();
      try {
        const admissions = await this.hit(batches.map((b) => ({ keyHash: b.keyHash, hits: b.waiting.length })));
        batches.forEach((b, k) => b.waiting.forEach((w, i) => w.resolve(admissions[k][i])));
      } catch (err) {
        batches.forEach((b) => b.waiting.forEach((w) => w.reject(err)));
      }
    } while (this.waiting.size);
    this.draining = false;
  }

  /** Counts each key's hits in one call and decides each key's requests in turn. */
  private async hit(batches: { keyHash: string; hits: number }[]): Promise<Admission[][]> {
    const nowMs = this.clock.now().getTime();
    const rows = await prepared<HitRow>(
      this.db,
      this.db.raw(`SELECT ${HIT_COLUMNS} FROM quota_hit(?::text[], ?::integer[], ?)`, [
        batches.map((b) => b.keyHash),
        batches.map((b) => b.hits),
        nowMs,
      ]),
    );
    const byKey = new Map(rows.map((row) => [row.key_hash, row]));
    return batches.map((b) => this.decideAll(byKey.get(b.keyHash), b.hits, nowMs));
  }

  /** The admissions of one key's `hits` requests, counted together by `row`. */
  private decideAll(row: HitRow | undefined, hits: number, nowMs: number): Admission[] {
    if (!row) return Array<Admission>(hits).fill({ key: 'unknown' });
    if (row.revoked) return Array<Admission>(hits).fill({ key: 'revoked' });
    if (row.expired) return Array<Admission>(hits).fill({ key: 'expired' });
    const auth: AuthContext = {
      keyId: row.key_id,
      keyName: row.key_name,
      scopes: row.scopes ?? [],
      workspaceId: row.workspace_id,
      workspaceName: row.workspace_name,
      whitelabelEnabled: row.whitelabel_enabled,
      timezone: row.timezone,
      limits: { perSecond: row.per_second, perMin: row.per_min, perHour: row.per_hour, perDay: row.per_day },
    };
    const current = { s: Math.floor(nowMs / BUCKET_MS.s), m: Math.floor(nowMs / BUCKET_MS.m) };
    const counted = {
      s: (row.second_ages ?? []).map((age, i) => ({ age, hits: row.second_hits![i] })),
      m: (row.minute_ages ?? []).map((age, i) => ({ age, hits: row.minute_hits![i] })),
    };
    // Each window's buckets, oldest first, with all of the batch's hits in the current one; built once per
    // batch, since a busy workspace's day has up to 1,440 of them.
    const windows = WINDOWS.flatMap((window) => {
      const limit = limitOf(window, auth.limits);
      if (limit === null) return [];
      const buckets = counted[window.granularity]
        .filter((b) => b.age < window.buckets)
        .map((b) => ({
          leavesAt: (current[window.granularity] - b.age + window.buckets) * BUCKET_MS[window.granularity],
          hits: b.hits,
          current: b.age === 0,
        }));
      return [{ window, limit, buckets, used: buckets.reduce((n, b) => n + b.hits, 0) }];
    });
    return Array.from({ length: hits }, (_, i) => {
      // The i-th request of the batch sees the hits before it: the later ones leave the current buckets.
      const later = hits - 1 - i;
      const states = windows.map(({ window, limit, buckets, used }) => ({
        window,
        limit,
        used: used - later,
        /** When enough of the oldest hits have left the window for `used - free` to fit under the limit. */
        secondsUntilFree(free: number): number {
          let remaining = used - later;
          for (const b of buckets) {
            if (remaining <= free) break;
            remaining -= b.current ? b.hits - later : b.hits;
            if (remaining <= free) return Math.max(1, Math.ceil((b.leavesAt - nowMs) / 1000));
          }
          return 0;
        },
      }));
      return { key: 'valid' as const, auth, decision: decide(states) };
    });
  }
}

/** The headers of a counted request, and the longest full window when there is one. */
function decide(
  states: { window: Window; limit: number; used: number; secondsUntilFree(free: number): number }[],
): QuotaDecision {
  const headers: Record<string, string> = {
    'RateLimit-Policy': states.map((s) => `"${s.window.name}";q=${s.limit};w=${s.window.seconds}`).join(', '),
  };
  const tightest = states.reduce((a, b) => (b.limit - b.used < a.limit - a.used ? b : a));
  const remaining = Math.max(0, tightest.limit - tightest.used);
  // t: seconds until the oldest counted request of that window leaves it and frees a slot.
  headers.RateLimit = `"${tightest.window.name}";r=${remaining};t=${tightest.secondsUntilFree(Math.min(tightest.used, tightest.limit) - 1)}`;
  const windows = states
    .map((s) => ({
      window: s.window.name,
      seconds: s.window.seconds,
      limit: s.limit,
      used: s.used,
      remaining: Math.max(0, s.limit - s.used),
    }))
    .reverse();
  const full = states.filter((s) => s.used > s.limit);
  if (full.length === 0) return { admitted: true, windows, headers };
  return {
    admitted: false,
    exceeded: full[0].window,
    retryAfterSeconds: Math.max(...full.map((s) => s.secondsUntilFree(s.limit - 1))),
    windows,
    headers,
  };
}
