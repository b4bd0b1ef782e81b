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

  /** Records a failure; answers the seconds to wait when this address is over the limit, else 0. */
  async recordFailure(address: string): Promise<number> {
    const now = this.clock.now();
    const since = new Date(now.getTime() - WINDOW_MS);
    await this.db('auth_failures').where({ address }).andWhere('at', '<=', since).delete();
    await this.db('auth_failures').insert({ address, at: now });
    const recent: { at: Date }[] = await this.db('auth_failures')
      .where({ address })
      .andWhere('at', '>', since)
      .orderBy('at')
      .select('at');
    if (recent.length <= this.perMinute) return 0;
    const oldest = new Date(recent[recent.length - this.perMinute - 1].at).getTime();
    return Math.max(1, Math.ceil((oldest + WINDOW_MS - now.getTime()) / 1000));
  }
}
