/** The warm-up summary of one account: its day-by-day counts over a range, the totals and its placement health. */
import type { components } from '../../../generated/api';
import type { Clock } from '../../platform/clock';
import type { Db } from '../../db';
import { addDays, resolveRange } from '../../time/days';
import { startOfLocalDay } from '../../time/schedule';
import type { AccountService } from '../account';
import type { ZonedWorkspace } from '../workspace';
import type { WarmupPool } from './pool';
import type { WarmupStore } from './store';

type Schemas = components['schemas'];
type Counts = Schemas['WarmupCounts'];

const zero = (): Counts => ({
  sent: 0,
  received: 0,
  landedInbox: 0,
  landedSpam: 0,
  rescued: 0,
  replied: 0,
  bounced: 0,
});

/** What WarmupSummary is built from, by name. */
interface WarmupSummaryDeps {
  db: Db;
  store: WarmupStore;
  accounts: Pick<AccountService, 'get'>;
  pool: Pick<WarmupPool, 'healthScores'>;
  clock: Clock;
}

export class WarmupSummary {
  private readonly db: Db;
  private readonly store: WarmupStore;
  private readonly accounts: Pick<AccountService, 'get'>;
  private readonly pool: Pick<WarmupPool, 'healthScores'>;
  private readonly clock: Clock;

  constructor({ db, store, accounts, pool, clock }: WarmupSummaryDeps) {
    this.db = db;
    this.store = store;
    this.accounts = accounts;
    this.pool = pool;
    this.clock = clock;
  }

  async summary(
    workspace: ZonedWorkspace,
    query: { accountId: string; startDate?: string; endDate?: string },
  ): Promise<Schemas['WarmupAnalyticsSummary']> {
    const range = resolveRange(query, workspace.timezone, this.clock.now());
    const account = await this.accounts.get(workspace, query.accountId);
    const from = startOfLocalDay(workspace.timezone, new Date(`${range.startDate}T12:00:00Z`));
    const to = startOfLocalDay(workspace.timezone, new Date(`${addDays(range.endDate, 1)}T12:00:00Z`));
    const [rows, health] = await Promise.all([
      this.store.dailyCounts(this.db, account.id, from, to, workspace.timezone),
      this.pool.healthScores(this.db, [account.id]),
    ]);
    const byDay = new Map<string, Counts>();
    const totals = zero();
    for (const r of rows) {
      const counts = byDay.get(r.day) ?? zero();
      counts[r.metric] += r.n;
      totals[r.metric] += r.n;
      byDay.set(r.day, counts);
    }
    return {
      accountId: account.id,
      email: account.email,
      startDate: range.startDate,
      endDate: range.endDate,
      timezone: range.timezone,
      warmup: account.warmup,
      sentToday: account.warmupSentToday,
      totals,
      graph: range.days.map((date) => ({ date, ...(byDay.get(date) ?? zero()) })),
      health: health.get(account.id)!,
    };
  }
}
