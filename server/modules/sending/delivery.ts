/**
 * The hand-over to SMTP: each claim sent after committing `handed_at` (a claim released meanwhile is
 * skipped), its outcome recorded in its own transaction. What this process could not hand over or record
 * while the database was away is kept and settled once it answers.
 */
import type { Db } from '../../db';
import type { Clock } from '../../platform/clock';
import type { AccountMailAccess } from '../account';
import { CONNECTIONS_PER_ACCOUNT, type MailService, type SendOutcome } from '../mail';
import type { EngineOptions } from './options';
import type { Claimed, SendingOutcomes } from './outcome';
import type { SendingStore } from './store';

/** A send's outcome: `deferred` is a failure retried later. */
export type MessageOutcome = 'sent' | 'bounced' | 'unknown' | 'deferred';

/** Sends in flight per account: the pooled transport's connections, so a message handed over is on the wire. */
const SENDS_PER_ACCOUNT = CONNECTIONS_PER_ACCOUNT;

/** What SmtpHandOver is built from, by name. */
interface SmtpHandOverDeps {
  db: Db;
  store: SendingStore;
  accounts: AccountMailAccess;
  mail: MailService;
  outcomes: SendingOutcomes;
  clock: Clock;
  options: EngineOptions;
}

/** Sends claimed messages and records their outcomes. */
export class SmtpHandOver {
  /** Claims this process never handed to SMTP because the database went away: released once it answers. */
  private readonly unhanded = new Set<string>();
  /** SMTP outcomes this process could not record (database away): recorded once it answers. */
  private readonly unrecorded: { item: Claimed; outcome: SendOutcome }[] = [];
  private readonly outcomeListeners: ((outcome: MessageOutcome) => void)[] = [];
  private readonly db: Db;
  private readonly store: SendingStore;
  private readonly accounts: AccountMailAccess;
  private readonly mail: MailService;
  private readonly outcomes: SendingOutcomes;
  private readonly clock: Clock;
  private readonly options: EngineOptions;

  constructor({ db, store, accounts, mail, outcomes, clock, options }: SmtpHandOverDeps) {
    this.db = db;
    this.store = store;
    this.accounts = accounts;
    this.mail = mail;
    this.outcomes = outcomes;
    this.clock = clock;
    this.options = options;
  }

  /** Called once per message handed to SMTP, with its outcome, after it is recorded (the composition root counts them for metrics). */
  onOutcome(listener: (outcome: MessageOutcome) => void): void {
    this.outcomeListeners.push(listener);
  }

  private reportOutcome(outcome: SendOutcome): void {
    const reported: MessageOutcome =
      outcome.kind === 'sent' || outcome.kind === 'bounced' || outcome.kind === 'unknown' ? outcome.kind : 'deferred';
    for (const listener of this.outcomeListeners) listener(reported);
  }

  /** Throws while the database is still away; the worker tries again at its next tick. */
  async settleOwnClaims(): Promise<void> {
    while (this.unrecorded.length > 0) {
      const { item, outcome } = this.unrecorded[0];
      await this.db.transaction((trx) => this.outcomes.record(trx, item, outcome));
      this.unrecorded.shift();
      this.reportOutcome(outcome);
    }
    if (this.unhanded.size > 0) {
      const ids = [...this.unhanded];
      await this.db.transaction(async (trx) =>
        this.store.requeue(trx, await this.mail.dropUnhanded(trx, { ids }), this.clock.now()),
      );
      this.unhanded.clear();
    }
  }

  /**
   * Sends each claim, at most SENDS_PER_ACCOUNT at once per account and `concurrency` in all. Once the
   * database fails, nothing more is handed over in this run: unsent claims and unrecorded outcomes are
   * kept for settleOwnClaims.
   */
  async deliver(claimed: Claimed[], run: { stopped: boolean }): Promise<number> {
    let sent = 0;
    let databaseLost = false;
    // One login look-up (and decryption) per account per run, not per message.
    const logins = new Map<string, ReturnType<AccountMailAccess['smtpLogin']>>();
    const loginFor = (m: Claimed['message']) => {
      if (!logins.has(m.account_id))
        logins.set(m.account_id, this.accounts.smtpLogin(this.db, m.workspace_id, m.account_id));
      return logins.get(m.account_id)!;
    };
    // Accounts whose server did not take a session in this run: their other claims are not tried again now.
    const unreachable = new Map<string, SendOutcome>();
    const sendOne = async (item: Claimed) => {
      let login: Awaited<ReturnType<AccountMailAccess['smtpLogin']>>;
      try {
        if (databaseLost || run.stopped)
          throw new Error('not handed over: the database failed earlier in this run, or the worker is stopping');
        login = await loginFor(item.message);
        if (!(await this.mail.handOver(this.db, item.message.id))) return;
      } catch {
        if (!run.stopped) databaseLost = true;
        this.unhanded.add(item.message.id);
        return;
      }
      const outcome: SendOutcome =
        unreachable.get(item.message.account_id) ??
        (login
          ? await this.mail.transmit(login, item.composed.message)
          : { kind: 'accountFailure', response: 'no_smtp_login: the account has no SMTP login' });
      if (outcome.kind === 'transient' && outcome.scope === 'server') unreachable.set(item.message.account_id, outcome);
      if (outcome.kind === 'sent') sent += 1;
      try {
        await this.db.transaction((trx) => this.outcomes.record(trx, item, outcome));
        this.reportOutcome(outcome);
      } catch {
        databaseLost = true;
        this.unrecorded.push({ item, outcome });
      }
    };
    const queues = new Map<string, Claimed[]>();
    for (const item of claimed)
      queues.set(item.message.account_id, [...(queues.get(item.message.account_id) ?? []), item]);
    const busy = new Map<string, number>();
    const take = (): Claimed | undefined => {
      for (const [accountId, queue] of queues) {
        if (queue.length > 0 && (busy.get(accountId) ?? 0) < SENDS_PER_ACCOUNT) {
          busy.set(accountId, (busy.get(accountId) ?? 0) + 1);
          return queue.shift();
        }
      }
      return undefined;
    };
    // A lane that finds every remaining account busy ends: each such account has a lane that drains it.
    const lane = async () => {
      for (let item = take(); item; item = take()) {
        await sendOne(item);
        busy.set(item.message.account_id, busy.get(item.message.account_id)! - 1);
      }
    };
    const lanes = [...queues.values()].reduce((n, q) => n + Math.min(SENDS_PER_ACCOUNT, q.length), 0);
    await Promise.all(Array.from({ length: Math.min(this.options.concurrency, lanes) }, lane));
    if (!databaseLost && this.unhanded.size > 0) await this.settleOwnClaims();
    if (this.unhanded.size + this.unrecorded.length > 0)
      throw new Error(
        `the database failed while sending: ${this.unhanded.size} claims kept to release, ${this.unrecorded.length} outcomes to record`,
      );
    return sent;
  }
}
