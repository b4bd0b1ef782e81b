/**
 * The warm-up pool: every account of the deployment with warm-up enabled (any workspace) plus the pool-only
 * mailboxes an operator adds, writing to each other. Cut along its jobs: the members, their logins and counts
 * and the operator's commands in pool.ts; the summary in summary.ts; the two worker jobs, which share the work
 * across any number of processes, in sender.ts (writing and sending warm-up mail) and reader.ts (reading it over
 * IMAP, rescuing it from spam, answering it). This service composes them.
 *
 * Protection: a hard bounce pauses the sender (`hard_bounce`); spam for most of the last 7 days' placement
 * pauses it (`spam_placement`); a refused login puts the account in connectionError (out of the pool until it
 * works again); a partner that refuses (mailbox full, 4xx) is skipped for a day with the reason.
 */
import type { Clock } from '../../platform/clock';
import type { Db, Executor } from '../../db';
import type { Logger } from '../../platform/logger';
import type { SecretBox } from '../../platform/secrets';
import type { AccountMailAccess, AccountService } from '../account';
import type { MailService } from '../mail';
import type { WorkspaceService, ZonedWorkspace } from '../workspace';
import { DEFAULT_WARMUP_SETTINGS, type WarmupSettings } from './jobs';
import { WarmupPool } from './pool';
import { WarmupReader } from './reader';
import { WarmupSender } from './sender';
import type { WarmupStore } from './store';
import { WarmupSummary } from './summary';

export { DEFAULT_WARMUP_SETTINGS } from './jobs';
export { headerMessageId } from './reader';

/** What WarmupService is built from, by name. */
export interface WarmupServiceDeps {
  db: Db;
  store: WarmupStore;
  accounts: AccountService;
  mailAccess: AccountMailAccess;
  mail: MailService;
  workspaces: WorkspaceService;
  secrets: SecretBox;
  clock: Clock;
  logger: Logger;
  settings?: WarmupSettings;
}

export class WarmupService {
  private markerKey: Buffer | null = null;
  private readonly pool: WarmupPool;
  private readonly summaries: WarmupSummary;
  /** The worker's jobs: each runOnce is one pass, backlog() what is due for the metrics. */
  readonly sender: WarmupSender;
  readonly reader: WarmupReader;

  private readonly secrets: SecretBox;

  constructor({
    db,
    store,
    accounts,
    mailAccess,
    mail,
    workspaces,
    secrets,
    clock,
    logger,
    settings = DEFAULT_WARMUP_SETTINGS,
  }: WarmupServiceDeps) {
    this.secrets = secrets;

    const key = () => this.key();
    this.pool = new WarmupPool({ db, store, accounts, mailAccess, workspaces, secrets, clock });
    this.summaries = new WarmupSummary({ db, store, accounts, pool: this.pool, clock });
    this.sender = new WarmupSender({
      db,
      store,
      pool: this.pool,
      accounts,
      mailAccess,
      mail,
      workspaces,
      markerKey: key,
      clock,
      logger,
      settings,
    });
    this.reader = new WarmupReader({
      db,
      store,
      pool: this.pool,
      accounts,
      mail,
      markerKey: key,
      clock,
      logger,
      settings,
    });
  }

  /** The per-deployment key of the marker (from the server's secret key), derived on first use; both jobs mark and recognise with it. */
  private key(): Buffer {
    this.markerKey ??= this.secrets.deriveKey('warmup-marker', 'warmup');
    return this.markerKey;
  }

  listPool(db?: Executor) {
    return this.pool.listPool(db);
  }

  loginOf(db: Executor, memberId: string, kind: 'smtp' | 'imap') {
    return this.pool.loginOf(db, memberId, kind);
  }

  /** An arrow: it is handed on as a function (the account view's count). */
  sentToday = (db: Executor, accountIds: string[], timezone: string) => this.pool.sentToday(db, accountIds, timezone);

  sentSince(db: Executor, accountIds: string[], since: Date) {
    return this.pool.sentSince(db, accountIds, since);
  }

  healthScores(db: Executor, memberIds: string[]) {
    return this.pool.healthScores(db, memberIds);
  }

  addMailbox(input: Parameters<WarmupPool['addMailbox']>[0]) {
    return this.pool.addMailbox(input);
  }

  mailboxes() {
    return this.pool.mailboxes();
  }

  removeMailbox(idOrEmail: string) {
    return this.pool.removeMailbox(idOrEmail);
  }

  ban(accountId: string, why: string) {
    return this.pool.ban(accountId, why);
  }

  summary(workspace: ZonedWorkspace, query: Parameters<WarmupSummary['summary']>[1]) {
    return this.summaries.summary(workspace, query);
  }
}
