/**
 * Failed authentications per client address over the last minute, in the database so every server process
 * counts the same. Only failures are counted and only failures are refused: a valid key is never throttled
 * by other people's guesses from the same address (an office behind one NAT).
 */
import type { Clock } from '../platform/clock';
import type { Db } from '../db';

const WINDOW_MS = 60_000;

/** What AuthFailureLimiter is built from, by name. */
interface AuthFailureLimiterDeps {
  db: Db;
  clock: Clock;
  perMinute: number;
}

export class AuthFailureLimiter {
  private readonly db: Db;
  private readonly clock: Clock;
  private readonly perMinute: number;

  constructor({ db, clock, perMinute }: AuthFailureLimiterDeps) {
    this.db = db;
    this.clock = clock;
    this.perMinute = perMinute;
  }

  /**
   * Records a failure; answers the seconds to wait when this address is over the limit (else 0) and the
   * rate-limit headers of its 401, so a client sees how many more failures it has before it is refused.
   */
  async recordFailure(address: string): Promise<{ retryAfter: number; headers: Record<string, string> }> {
    const now = this.clock.now();
    const since = new Date(now.getTime() - WINDOW_MS);
    await this.db('auth_failures').where({ address }).andWhere('at', '<=', since).delete();
    await this.db('auth_failures').insert({ address, at: now });
    const recent: { at: Date }[] = await this.db('auth_failures')
      .where({ address })
      .andWhere('at', '>', since)
      .orderBy('at')
      .select('at');
    const secondsUntil = (at: Date) =>
      Math.max(1, Math.ceil((new Date(at).getTime() + WINDOW_MS - now.getTime()) / 1000));
    const over = recent.length > this.perMinute;
    // The failure that must leave the window before this address may fail again.
    const freeing = over ? recent[recent.length - this.perMinute - 1] : recent[0];
    const headers = {
      'RateLimit-Policy': `"auth-failures";q=${this.perMinute};w=${WINDOW_MS / 1000}`,
      RateLimit: `"auth-failures";r=${Math.max(0, this.perMinute - recent.length)};t=${secondsUntil(freeing.at)}`,
    };
    return { retryAfter: over ? secondsUntil(freeing.at) : 0, headers };
  }
}
