/**
 * An account's warm-up settings and state (the `warmup_*` columns of email_accounts): enabled, paused,
 * banned, the ramp's figures and window, and the warm-up pool's side of them (the warmup module calls those
 * for any workspace's account).
 */
import type { components } from '../../../generated/api';
import type { Db, Executor } from '../../db';
import type { Clock } from '../../platform/clock';
import { conflict, detail, invalid } from '../../platform/errors';
import type { EventService } from '../events';
import { hasImapLogin, inWarmupPool, warmupReason } from './mapping';
import type { AccountRow, AccountStore, WarmupColumns } from './store';
import type { ZonedWorkspace } from '../workspace';
import type { AccountViews } from './views';

type Schemas = components['schemas'];
export type WarmupInput = Schemas['EmailAccountWarmupInput'];

export const WARMUP_DEFAULTS = {
  dailyLimit: 10,
  increasePerDay: 1,
  replyRatePercent: 30,
  windowFrom: '00:00',
  windowTo: '24:00',
  weekdaysOnly: false,
};

export type WarmupReasonValue = Schemas['WarmupReason'];

export const warmupNeedsImap = () =>
  conflict('Warm-up needs to read the mailbox: connect the account with an IMAP login first.', [
    detail('accountId', 'has no IMAP login: warm-up needs to read the mailbox', 'imap_required'),
  ]);

/** The window must open before it closes (the schema bounds each end). */
export function checkWindow(row: Pick<AccountRow, 'warmup_window_from' | 'warmup_window_to'>): void {
  if (row.warmup_window_from >= row.warmup_window_to) {
    throw invalid('The warm-up window must open before it closes.', [
      detail('warmup.windowTo', `must be after windowFrom (${row.warmup_window_from})`, 'window_order'),
    ]);
  }
}
/** A warm-up input's window, checked before a flow that stores the account later starts. */
export function validateWarmup(input: WarmupInput): void {
  checkWindow({
    warmup_window_from: input.windowFrom ?? WARMUP_DEFAULTS.windowFrom,
    warmup_window_to: input.windowTo ?? WARMUP_DEFAULTS.windowTo,
  });
}

function warmupColumns(input: WarmupInput): WarmupColumns {
  const columns: WarmupColumns = {};
  if (input.dailyLimit !== undefined) columns.warmup_daily_limit = input.dailyLimit;
  if (input.increasePerDay !== undefined) columns.warmup_increase_per_day = input.increasePerDay;
  if (input.replyRatePercent !== undefined) columns.warmup_reply_rate_percent = input.replyRatePercent;
  if (input.windowFrom !== undefined) columns.warmup_window_from = input.windowFrom;
  if (input.windowTo !== undefined) columns.warmup_window_to = input.windowTo;
  if (input.weekdaysOnly !== undefined) columns.warmup_weekdays_only = input.weekdaysOnly;
  return columns;
}

/** What AccountWarmup is built from, by name. */
interface AccountWarmupDeps {
  db: Db;
  store: AccountStore;
  events: EventService;
  clock: Clock;
  views: AccountViews;
}

/** An account's warm-up: enabled, paused or stopped by protection, and its settings. */
export class AccountWarmup {
  private readonly db: Db;
  private readonly store: AccountStore;
  private readonly events: EventService;
  private readonly clock: Clock;
  private readonly views: AccountViews;

  constructor({ db, store, events, clock, views }: AccountWarmupDeps) {
    this.db = db;
    this.store = store;
    this.events = events;
    this.clock = clock;
    this.views = views;
  }
  async enableWarmup(workspace: ZonedWorkspace, accountId: string, input: WarmupInput = {}) {
    return this.changeWarmup(workspace, accountId, (row) => {
      if (row.warmup_status === 'banned') {
        throw conflict('Warm-up cannot be enabled: the warm-up network has banned this account.', [
          detail('accountId', row.warmup_reason_message ?? 'banned', 'warmup_banned'),
        ]);
      }
      if (!hasImapLogin(row)) throw warmupNeedsImap();
      const columns: WarmupColumns = {
        warmup_enabled: true,
        warmup_status: 'active',
        warmup_reason_code: null,
        warmup_reason_message: null,
        ...warmupColumns(input),
      };
      checkWindow({ ...row, ...columns });
      // From paused the ramp starts again at day 1: a mailbox that stopped is treated as new.
      if (!row.warmup_enabled || row.warmup_status !== 'active') columns.warmup_started_at = this.clock.now();
      return columns;
    });
  }

  async pauseWarmup(workspace: ZonedWorkspace, accountId: string) {
    return this.changeWarmup(workspace, accountId, (row) =>
      // A ban is the network's decision: pausing does not lift it.
      row.warmup_status === 'banned'
        ? { warmup_enabled: false }
        : {
            warmup_enabled: false,
            warmup_status: 'paused',
            warmup_reason_code: 'paused_by_user',
            warmup_reason_message: 'Warm-up was paused through the API.',
          },
    );
  }

  /** Applies `change` under a row lock; `changed` is false when it would change nothing (idempotent calls). */
  private async changeWarmup(workspace: ZonedWorkspace, accountId: string, change: (row: AccountRow) => WarmupColumns) {
    return this.db.transaction(async (trx) => {
      const before = await this.views.require(trx, workspace.id, accountId, true);
      let row = before;
      const columns = change(row);
      const changed = (Object.keys(columns) as (keyof WarmupColumns)[]).some(
        (k) => k !== 'warmup_started_at' && row[k] !== columns[k],
      );
      if (changed) {
        row = await this.store.update(trx, workspace.id, row.id, { ...columns, updated_at: this.clock.now() });
        await this.recordWarmupChange(trx, before, row);
      }
      return { changed, account: await this.views.view(trx, workspace, row) };
    });
  }

  /** Records account.warmupEnabled / warmupPaused / warmupBanned when the state (not only a setting) changed. */
  private async recordWarmupChange(trx: Executor, before: AccountRow, after: AccountRow): Promise<void> {
    if (before.warmup_enabled === after.warmup_enabled && before.warmup_status === after.warmup_status) return;
    const type =
      after.warmup_status === 'banned'
        ? 'account.warmupBanned'
        : after.warmup_enabled && after.warmup_status === 'active'
          ? 'account.warmupEnabled'
          : 'account.warmupPaused';
    await this.events.record(trx, {
      workspaceId: after.workspace_id,
      type,
      data: {
        accountId: after.id,
        email: after.email,
        status: after.warmup_status,
        enabled: after.warmup_enabled,
        reason: warmupReason(after),
      },
    });
  }

  // --- the warm-up pool's side (the warmup module calls these; any workspace's account) ---

  /** Accounts of every workspace with warm-up enabled and running, and whether each is in the pool now. */
  async warmupAccounts(db: Executor): Promise<(AccountRow & { in_pool: boolean })[]> {
    return (await this.store.warmupEnabled(db)).map((row) => ({ ...row, in_pool: inWarmupPool(row) }));
  }

  async findAnyAccount(db: Executor, accountId: string): Promise<AccountRow | undefined> {
    return this.store.findAny(db, accountId);
  }

  /**
   * Protection: pauses or bans the account's warm-up with a reason code, in the caller's transaction, and
   * records the event; false when it was no longer running.
   */
  async stopWarmup(
    trx: Executor,
    accountId: string,
    status: 'paused' | 'banned',
    reason: WarmupReasonValue,
  ): Promise<boolean> {
    const before = await this.store.findAny(trx, accountId, { forUpdate: true });
    if (!before || (before.warmup_status === status && !before.warmup_enabled)) return false;
    const columns: WarmupColumns = {
      warmup_enabled: false,
      warmup_status: status,
      warmup_reason_code: reason.code,
      warmup_reason_message: reason.message.slice(0, 500),
    };
    await this.store.updateWarmup(trx, accountId, { ...columns, updated_at: this.clock.now() });
    await this.recordWarmupChange(trx, before, { ...before, ...columns });
    return true;
  }

  /** A note on a running warm-up (`pool_too_small`), or null to clear it; no event (the state did not change). */
  async noteWarmup(db: Executor, accountId: string, reason: WarmupReasonValue | null): Promise<void> {
    await this.store.updateWarmup(db, accountId, {
      warmup_reason_code: reason?.code ?? null,
      warmup_reason_message: reason?.message ?? null,
      updated_at: this.clock.now(),
    });
  }
}
