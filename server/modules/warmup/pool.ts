/**
 * The pool's members: every account of the deployment with warm-up enabled (any workspace) plus the pool-only
 * mailboxes an operator adds. Here are who takes part now, their logins, what they sent and how their mail
 * landed, a refused login taking a member out, and the operator's commands (pool-only mailboxes, bans).
 */
import type { components } from '../../../generated/api';
import type { Clock } from '../../platform/clock';
import { queryAll, type Db, type Executor } from '../../db';
import { domainOf } from '../../platform/email-address';
import { detail, conflict, notFound } from '../../platform/errors';
import { newId } from '../../platform/ids';
import type { SecretBox } from '../../platform/secrets';
import { startOfLocalDay } from '../../time/schedule';
import type { AccountMailAccess, AccountRow, AccountService } from '../account';
import type { MailLogin } from '../mail';
import type { WorkspaceService } from '../workspace';
import { healthOf } from './plan';
import type { PoolMailboxRow, WarmupStore } from './store';

type Schemas = components['schemas'];

/** One pool member: an account (with its workspace) or a pool-only mailbox (no workspace, never a sender of first emails). */
export interface PoolMember {
  id: string;
  kind: 'account' | 'mailbox';
  email: string;
  domain: string;
  workspaceId: string | null;
  /** Sends and reads warm-up mail now (running, logins working). */
  inPool: boolean;
}

export interface AccountMember extends PoolMember {
  kind: 'account';
  row: AccountRow;
  timezone: string;
}

/** A pool member with the row it was loaded from. */
export type Member = AccountMember | (PoolMember & { kind: 'mailbox'; row: PoolMailboxRow });

/** Placement is judged over this many days (health, spam protection, partner choice). */
export const HEALTH_DAYS = 7;
export const DAY_MS = 86_400_000;

/** A pool-only mailbox as the operator adds it (`admin warmup pool add`). */
export interface NewPoolMailbox {
  email: string;
  password: string;
  smtpHost: string;
  smtpPort: number;
  imapHost: string;
  imapPort: number;
  username?: string;
  imapPassword?: string;
}

/** What WarmupPool is built from, by name. */
interface WarmupPoolDeps {
  db: Db;
  store: WarmupStore;
  accounts: Pick<AccountService, 'warmupAccounts' | 'findAnyAccount' | 'stopWarmup'>;
  mailAccess: Pick<AccountMailAccess, 'smtpLogin' | 'imapLogin' | 'loginFromRow' | 'markConnectionError'>;
  workspaces: Pick<WorkspaceService, 'timezones'>;
  secrets: SecretBox;
  clock: Clock;
}

export class WarmupPool {
  private readonly db: Db;
  private readonly store: WarmupStore;
  private readonly accounts: Pick<AccountService, 'warmupAccounts' | 'findAnyAccount' | 'stopWarmup'>;
  private readonly mailAccess: Pick<
    AccountMailAccess,
    'smtpLogin' | 'imapLogin' | 'loginFromRow' | 'markConnectionError'
  >;
  private readonly workspaces: Pick<WorkspaceService, 'timezones'>;
  private readonly secrets: SecretBox;
  private readonly clock: Clock;

  constructor({ db, store, accounts, mailAccess, workspaces, secrets, clock }: WarmupPoolDeps) {
    this.db = db;
    this.store = store;
    this.accounts = accounts;
    this.mailAccess = mailAccess;
    this.workspaces = workspaces;
    this.secrets = secrets;
    this.clock = clock;
  }

  /** Every member with its row, whether it takes part now or not. */
  async members(db: Executor): Promise<Member[]> {
    const [accounts, mailboxes] = await queryAll(db, [
      () => this.accounts.warmupAccounts(db),
      () => this.store.mailboxes(db),
    ]);
    const timezones = await this.workspaces.timezones(db, [...new Set(accounts.map((a) => a.workspace_id))]);
    return [
      ...accounts.map((row): Member => ({
        id: row.id,
        kind: 'account',
        email: row.email,
        domain: domainOf(row.email).toLowerCase(),
        workspaceId: row.workspace_id,
        inPool: row.in_pool,
        row,
        timezone: timezones.get(row.workspace_id) ?? 'UTC',
      })),
      ...mailboxes.map((row): Member => ({
        id: row.id,
        kind: 'mailbox',
        email: row.email,
        domain: domainOf(row.email).toLowerCase(),
        workspaceId: null,
        inPool: row.status === 'active',
        row,
      })),
    ];
  }

  /** Every member of the pool (warm-up-enabled accounts of every workspace and pool-only mailboxes), with whether it takes part now. */
  async listPool(db: Executor = this.db): Promise<PoolMember[]> {
    return (await this.members(db)).map(({ id, kind, email, domain, workspaceId, inPool }) => ({
      id,
      kind,
      email,
      domain,
      workspaceId,
      inPool,
    }));
  }

  /** A member's SMTP or IMAP login (accounts through the account module, pool-only mailboxes decrypted here). */
  async loginOf(db: Executor, memberId: string, kind: 'smtp' | 'imap'): Promise<MailLogin | null> {
    const mailbox = await this.store.mailbox(db, memberId);
    if (mailbox) return this.mailboxLogin(mailbox, kind);
    const account = await this.accounts.findAnyAccount(db, memberId);
    if (!account) return null;
    return kind === 'smtp'
      ? this.mailAccess.smtpLogin(db, account.workspace_id, account.id)
      : this.mailAccess.imapLogin(db, account.id);
  }

  /** A pool member's login from the row the pool look-up already loaded (no query). */
  memberLogin(member: Member, kind: 'smtp' | 'imap'): MailLogin | null {
    if (member.kind === 'mailbox') return this.mailboxLogin(member.row, kind);
    return kind === 'imap' && member.row.status === 'connectionError'
      ? null
      : this.mailAccess.loginFromRow(member.row, kind);
  }

  private mailboxLogin(mailbox: PoolMailboxRow, kind: 'smtp' | 'imap'): MailLogin {
    const host = kind === 'smtp' ? mailbox.smtp_host : mailbox.imap_host;
    const port = kind === 'smtp' ? mailbox.smtp_port : mailbox.imap_port;
    const username = kind === 'smtp' ? mailbox.smtp_user : mailbox.imap_user;
    const enc = kind === 'smtp' ? mailbox.smtp_password_enc : mailbox.imap_password_enc;
    return {
      accountId: mailbox.id,
      workspaceId: '',
      email: mailbox.email,
      host,
      port,
      username,
      password: this.secrets.decrypt(enc, `${mailbox.id}:${kind}`),
    };
  }

  /** A refused login: the account goes to connectionError (out of the pool until it works), a mailbox to loginFailed. */
  async loginFailed(trx: Executor, memberId: string, reason: string): Promise<void> {
    const mailbox = await this.store.mailbox(trx, memberId);
    if (mailbox) {
      await this.store.setMailboxStatus(trx, memberId, 'loginFailed', reason.slice(0, 500), this.clock.now());
      return;
    }
    await this.mailAccess.markConnectionError(trx, memberId, reason);
  }

  /** Warm-up emails each account sent today (local day in `timezone`): the account view's `warmupSentToday`. */
  sentToday(db: Executor, accountIds: string[], timezone: string): Promise<Map<string, number>> {
    return this.sentSince(db, accountIds, startOfLocalDay(timezone, this.clock.now()));
  }

  /** Warm-up emails (answers included) each account sent or is sending since `since`. */
  async sentSince(db: Executor, accountIds: string[], since: Date): Promise<Map<string, number>> {
    const counts = await this.store.sentSince(db, accountIds, since);
    return new Map([...counts].map(([id, n]) => [id, n.all]));
  }

  /** inbox / (inbox + spam) of each member's warm-up mail over the last 7 days, with its label. */
  async healthScores(db: Executor, memberIds: string[]): Promise<Map<string, Schemas['WarmupHealth']>> {
    const since = new Date(this.clock.now().getTime() - HEALTH_DAYS * DAY_MS);
    const placed = await this.store.placement(db, memberIds, since);
    return new Map(
      memberIds.map((id) => {
        const { inbox, spam } = placed.get(id) ?? { inbox: 0, spam: 0 };
        return [id, { days: HEALTH_DAYS, landedInbox: inbox, landedSpam: spam, ...healthOf(inbox, spam) }];
      }),
    );
  }

  // --- the operator's commands (admin CLI) ---

  async addMailbox(input: NewPoolMailbox): Promise<PoolMailboxRow> {
    this.secrets.ensureKey('warmup');
    const id = newId();
    const email = input.email.trim().toLowerCase();
    const now = this.clock.now();
    const row: PoolMailboxRow = {
      id,
      email,
      smtp_host: input.smtpHost,
      smtp_port: input.smtpPort,
      smtp_user: input.username ?? email,
      smtp_password_enc: this.secrets.encrypt(input.password, `${id}:smtp`),
      imap_host: input.imapHost,
      imap_port: input.imapPort,
      imap_user: input.username ?? email,
      imap_password_enc: this.secrets.encrypt(input.imapPassword ?? input.password, `${id}:imap`),
      status: 'active',
      status_reason: null,
      created_at: now,
      updated_at: now,
    };
    if ((await this.store.mailboxes(this.db)).some((m) => m.email === email))
      throw conflict(`The pool already has a mailbox ${email}.`, [detail('email', 'already in the pool', 'duplicate')]);
    await this.store.insertMailbox(this.db, row);
    return row;
  }

  mailboxes(): Promise<PoolMailboxRow[]> {
    return this.store.mailboxes(this.db);
  }

  async removeMailbox(idOrEmail: string): Promise<void> {
    if ((await this.store.deleteMailbox(this.db, idOrEmail)) === 0) throw notFound(`No pool mailbox ${idOrEmail}.`);
  }

  /** An operator excludes an account from the pool for good (`banned`, reason `banned_by_operator`). */
  async ban(accountId: string, why: string): Promise<void> {
    await this.db.transaction(async (trx) => {
      if (!(await this.accounts.findAnyAccount(trx, accountId))) throw notFound(`No email account ${accountId}.`);
      await this.accounts.stopWarmup(trx, accountId, 'banned', { code: 'banned_by_operator', message: why });
    });
  }
}
