/**
 * Inbox placement tests: a user's message sent from chosen accounts to mailboxes of the warm-up pool, and
 * where each recipient's provider filed it. The worker job (runOnce) sends queued messages through the mail
 * module (claimed with SKIP LOCKED and a lease, so two workers never send one twice; each counts against the
 * account's daily limit), looks for sent ones by Message-ID in each recipient's INBOX and spam folder about
 * every minute (deleting each once found), and completes a test when every message is found or refused, or
 * at its deadline (the rest is `nowhere`), recording `placement.completed`.
 */
import type { components } from '../../../generated/api';
import type { Clock } from '../../platform/clock';
import type { Db, Executor } from '../../db';
import { conflict, detail, notFound } from '../../platform/errors';
import { newId } from '../../platform/ids';
import type { Logger } from '../../platform/logger';
import type { Backlog } from '../../observability/telemetry';
import type { AccountMailAccess, AccountService } from '../account';
import type { EventService } from '../events';
import type { Composed, MailLogin, MailService } from '../mail';
import { startOfLocalDay } from '../../time/schedule';
import type { PoolMember } from '../warmup';
import type { WorkspaceService } from '../workspace';
import { PlacementStore, type Placement, type ResultRow, type TestRow } from './store';

type Schemas = components['schemas'];
type PlacementTest = Schemas['PlacementTest'];
type Counts = Schemas['PlacementCounts'];
type CreateRequest = Schemas['PlacementTestCreateRequest'];

/** What placement tests need of the warm-up pool (the warmup module's service). */
export interface PlacementPool {
  listPool(db: Executor): Promise<PoolMember[]>;
  loginOf(db: Executor, memberId: string, kind: 'imap'): Promise<MailLogin | null>;
}

export interface PlacementSettings {
  /** Messages one run sends, and results one run looks for. */
  sendBatch: number;
  readBatch: number;
  /** Recipient mailboxes read at once. */
  readConcurrency: number;
  /** How often a sent message is looked for. */
  readIntervalMs: number;
  /** A claimed send not finished by then is claimed again (a worker died). */
  sendLeaseMs: number;
  /** A send that failed for now is tried this many times in all, a minute apart. */
  sendAttempts: number;
}

export const DEFAULT_PLACEMENT_SETTINGS: PlacementSettings = {
  sendBatch: 50,
  readBatch: 500,
  readConcurrency: 4,
  readIntervalMs: 60_000,
  sendLeaseMs: 10 * 60_000,
  sendAttempts: 3,
};

const DEFAULT_RECIPIENTS = 20;
const DEFAULT_TIMEOUT_MINUTES = 60;
const RETRY_MS = 60_000;
const FINISH_BATCH = 20;

const iso = (d: Date | null) => (d ? new Date(d).toISOString() : null);
const mask = (email: string) => `${email[0]}***${email.slice(email.lastIndexOf('@'))}`;
/** A result whose recipient is another workspace's account: stored masked when the test was created. */
const isAnotherWorkspaces = (r: ResultRow) => r.recipient_shown !== r.recipient_email;

function groupBy<T>(items: T[], key: (item: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const k = key(item);
    const group = groups.get(k);
    if (group) group.push(item);
    else groups.set(k, [item]);
  }
  return groups;
}

/** Counts of a set of results; inboxPercent over the results whose place is known. */
export function countsOf(placements: Placement[]): Counts {
  const c = { total: placements.length, inbox: 0, spam: 0, nowhere: 0, notSent: 0, pending: 0 };
  for (const p of placements) c[p] += 1;
  const known = c.inbox + c.spam + c.nowhere;
  return { ...c, inboxPercent: known === 0 ? null : Math.round((c.inbox / known) * 10_000) / 100 };
}

/**
 * `count` recipients taken round-robin over the provider domains (each domain's mailboxes by address), so a
 * test reaches every provider before it reaches one twice.
 */
export function pickRecipients(members: PoolMember[], count: number): PoolMember[] {
  const queues = [
    ...groupBy(
      [...members].sort((a, b) => a.domain.localeCompare(b.domain) || a.email.localeCompare(b.email)),
      (m) => m.domain,
    ).values(),
  ];
  const picked: PoolMember[] = [];
  for (let round = 0; picked.length < count && queues.some((q) => q.length > round); round++) {
    for (const q of queues) if (q[round] && picked.length < count) picked.push(q[round]);
  }
  return picked;
}

/** What PlacementService is built from, by name. */
export interface PlacementServiceDeps {
  db: Db;
  store: PlacementStore;
  accounts: AccountService;
  mailAccess: AccountMailAccess;
  mail: MailService;
  pool: PlacementPool;
  workspaces: WorkspaceService;
  events: EventService;
  clock: Clock;
  logger: Logger;
  settings?: PlacementSettings;
}

export class PlacementService {
  private readonly db: Db;
  private readonly store: PlacementStore;
  private readonly accounts: AccountService;
  private readonly mailAccess: AccountMailAccess;
  private readonly mail: MailService;
  private readonly pool: PlacementPool;
  private readonly workspaces: WorkspaceService;
  private readonly events: EventService;
  private readonly clock: Clock;
  private readonly logger: Logger;
  private readonly settings: PlacementSettings;

  constructor({
    db,
    store,
    accounts,
    mailAccess,
    mail,
    pool,
    workspaces,
    events,
    clock,
    logger,
    settings = DEFAULT_PLACEMENT_SETTINGS,
  }: PlacementServiceDeps) {
    this.db = db;
    this.store = store;
    this.accounts = accounts;
    this.mailAccess = mailAccess;
    this.mail = mail;
    this.pool = pool;
    this.workspaces = workspaces;
    this.events = events;
    this.clock = clock;
    this.logger = logger;
    this.settings = settings;
  }

  async create(workspaceId: string, body: CreateRequest): Promise<PlacementTest> {
    const senders = await this.accounts.summaries(this.db, workspaceId, body.accountIds);
    const missing = body.accountIds.map((id, i) => ({ id, i })).filter(({ id }) => !senders.has(id));
    if (missing.length) {
      throw notFound(
        missing.length === 1 ? 'Email account not found.' : `${missing.length} email accounts not found.`,
        missing.map(({ id, i }) => detail(`accountIds.${i}`, `email account ${id} not found`, 'not_found')),
      );
    }
    const idle = body.accountIds
      .map((id, i) => ({ account: senders.get(id)!, i }))
      .filter(({ account }) => account.status !== 'active');
    if (idle.length) {
      throw conflict(
        `${idle.map(({ account }) => `${account.email} is ${account.status}`).join('; ')}: only active accounts can send a placement test.`,
        idle.map(({ account, i }) =>
          detail(`accountIds.${i}`, `email account ${account.email} is ${account.status}`, 'not_active'),
        ),
      );
    }
    const senderEmails = new Set([...senders.values()].map((a) => a.email.toLowerCase()));
    const candidates = (await this.pool.listPool(this.db)).filter(
      (m) => m.inPool && !senderEmails.has(m.email.toLowerCase()),
    );
    if (!candidates.length) {
      throw conflict(
        'The warm-up pool has no mailbox to send the test to besides the senders: enable warm-up on more accounts, or add pool-only mailboxes with the admin CLI.',
      );
    }
    const recipients = pickRecipients(candidates, body.recipientCount ?? DEFAULT_RECIPIENTS);
    // Results list recipients by domain and address, under each sender in the order asked.
    const ordered = [...recipients].sort((a, b) => a.domain.localeCompare(b.domain) || a.email.localeCompare(b.email));
    const now = this.clock.now();
    const timeoutMinutes = body.timeoutMinutes ?? DEFAULT_TIMEOUT_MINUTES;
    const test: TestRow = {
      id: newId(),
      workspace_id: workspaceId,
      status: 'running',
      subject: body.subject,
      text_body: body.text,
      html_body: body.html ?? null,
      account_ids: body.accountIds,
      recipient_count: recipients.length,
      timeout_minutes: timeoutMinutes,
      created_at: now,
      deadline_at: new Date(now.getTime() + timeoutMinutes * 60_000),
      completed_at: null,
    };
    const results: ResultRow[] = body.accountIds.flatMap((accountId, a) =>
      ordered.map((r, i) => ({
        id: newId(),
        test_id: test.id,
        position: a * ordered.length + i,
        account_id: accountId,
        from_address: senders.get(accountId)!.email,
        recipient_id: r.id,
        recipient_email: r.email,
        // Another workspace's account is shown masked; pool-only mailboxes are the operator's seeds.
        recipient_shown: r.kind === 'account' && r.workspaceId !== workspaceId ? mask(r.email) : r.email,
        recipient_domain: r.domain,
        state: 'queued',
        due_at: now,
        attempts: 0,
        placement: 'pending',
        folder: null,
        message_id: null,
        sent_at: null,
        seen_at: null,
        reason: null,
      })),
    );
    await this.db.transaction((trx) => this.store.insert(trx, test, results));
    return this.view(test, results);
  }

  async get(workspaceId: string, id: string): Promise<PlacementTest> {
    const test = await this.store.find(this.db, workspaceId, id);
    if (!test) throw notFound('Placement test not found.');
    return this.view(test, await this.store.results(this.db, [test.id]));
  }

  async list(workspaceId: string, query: { limit?: number; skip?: number; status?: TestRow['status'] }) {
    const limit = query.limit ?? 20;
    const skip = query.skip ?? 0;
    const { rows, total } = await this.store.page(this.db, workspaceId, query.status, limit, skip);
    const counted = await this.store.counts(
      this.db,
      rows.map((r) => r.id),
    );
    const items = rows.map((test) => {
      const placements = counted
        .filter((c) => c.test_id === test.id)
        .flatMap((c) => Array<Placement>(c.n).fill(c.placement));
      return this.summary(test, placements);
    });
    return { items, pagination: { limit, skip, total, hasMore: skip + rows.length < total } };
  }

  private summary(test: TestRow, placements: Placement[]): Schemas['PlacementTestSummary'] {
    return {
      id: test.id,
      status: test.status,
      subject: test.subject,
      accountIds: test.account_ids,
      recipientCount: test.recipient_count,
      timeoutMinutes: test.timeout_minutes,
      createdAt: new Date(test.created_at).toISOString(),
      deadlineAt: new Date(test.deadline_at).toISOString(),
      completedAt: iso(test.completed_at),
      counts: countsOf(placements),
    };
  }

  private view(test: TestRow, results: ResultRow[]): PlacementTest {
    const domains = groupBy(results, (r) => r.recipient_domain);
    const accounts = groupBy(results, (r) => r.account_id);
    return {
      ...this.summary(
        test,
        results.map((r) => r.placement),
      ),
      byDomain: [...domains.keys()]
        .sort()
        .map((domain) => ({ domain, counts: countsOf(domains.get(domain)!.map((r) => r.placement)) })),
      byAccount: test.account_ids.map((accountId) => {
        const rows = accounts.get(accountId) ?? [];
        return { accountId, email: rows[0]?.from_address ?? '', counts: countsOf(rows.map((r) => r.placement)) };
      }),
      results: results.map((r) => {
        // Another workspace's mailbox: its address, its folders and when its reader looked are not the caller's.
        const theirs = isAnotherWorkspaces(r);
        return {
          accountId: r.account_id,
          from: r.from_address,
          to: theirs ? null : r.recipient_email,
          domain: r.recipient_domain,
          placement: r.placement,
          folder: theirs ? null : r.folder,
          messageId: r.message_id,
          sentAt: iso(r.sent_at),
          seenAt: theirs ? null : iso(r.seen_at),
          reason: r.reason,
        };
      }),
    };
  }

  /** Placement-test emails each account sent today (local day in `timezone`): part of the account view's `sentToday`. */
  sentToday = (db: Executor, accountIds: string[], timezone: string): Promise<Map<string, number>> =>
    this.mail.sentSinceByAccount(db, accountIds, ['placement'], startOfLocalDay(timezone, this.clock.now()));

  // --- the worker job ---

  /** Sends and looks due now, for the worker's metrics. */
  backlog(): Promise<Backlog> {
    return this.store.backlog(this.db, this.clock.now());
  }

  /** One pass: send what is due, look for what was sent, complete what is done. Returns the work done. */
  async runOnce(): Promise<number> {
    return (await this.sendDue()) + (await this.readDue()) + (await this.finishDue());
  }

  private async sendDue(): Promise<number> {
    const now = this.clock.now();
    // Claimed, checked against each account's daily limit and recorded as `sending` in one transaction that
    // locks the sending accounts: another worker's check waits for it and counts these messages, so two
    // tests sending at once never pass the limit. SMTP starts after the commit.
    const claimed = await this.db.transaction(async (trx) => {
      const rows = await this.store.claim(
        trx,
        'queued',
        now,
        new Date(now.getTime() + this.settings.sendLeaseMs),
        this.settings.sendBatch,
      );
      if (!rows.length) return [];
      const tests = new Map(
        (await this.store.testsOf(trx, [...new Set(rows.map((r) => r.test_id))])).map((t) => [t.id, t]),
      );
      const left = await this.capacityLeft(
        trx,
        rows.map((r) => ({ accountId: r.account_id, workspaceId: tests.get(r.test_id)!.workspace_id })),
        now,
      );
      const ready: { row: ResultRow; login: MailLogin; composed: Composed }[] = [];
      for (const row of rows) {
        const test = tests.get(row.test_id)!;
        const room = left.get(row.account_id);
        const login = room ? await this.mailAccess.smtpLogin(trx, test.workspace_id, row.account_id) : null;
        if (!room || !login) {
          await this.store.updateIf(trx, row.id, 'sending', {
            state: 'done',
            placement: 'notSent',
            reason: 'The sending account was removed.',
          });
        } else if (room.left <= 0) {
          const reason = `The account's daily limit of ${room.limit} emails (campaign, warm-up and placement-test mail together) is reached for today.`;
          await this.store.updateIf(trx, row.id, 'sending', { state: 'done', placement: 'notSent', reason });
        } else {
          room.left -= 1;
          const composed = this.mail.compose({
            to: row.recipient_email,
            subject: test.subject,
            text: test.text_body,
            ...(test.html_body ? { html: test.html_body } : {}),
            from: login.email,
            date: now,
          });
          await this.mail.recordOutbound(trx, composed, {
            workspaceId: test.workspace_id,
            accountId: row.account_id,
            kind: 'placement',
          });
          ready.push({ row, login, composed });
        }
      }
      return ready;
    });
    for (const { row, login, composed } of claimed) await this.sendOne(row, login, composed);
    return claimed.length;
  }

  /**
   * What is left of each sending account's daily limit today (its workspace's day), with the accounts locked
   * until the caller's transaction ends (workspace by workspace, accounts in id order: no two workers wait
   * on each other): placement tests share it with campaign and warm-up mail. Accounts gone meanwhile are absent.
   */
  private async capacityLeft(
    trx: Executor,
    senders: { accountId: string; workspaceId: string }[],
    now: Date,
  ): Promise<Map<string, { limit: number; left: number }>> {
    const out = new Map<string, { limit: number; left: number }>();
    const byWorkspace = groupBy(senders, (s) => s.workspaceId);
    const timezones = await this.workspaces.timezones(trx, [...byWorkspace.keys()]);
    for (const workspaceId of [...byWorkspace.keys()].sort()) {
      const ids = [...new Set(byWorkspace.get(workspaceId)!.map((s) => s.accountId))];
      const accounts = await this.accounts.summaries(trx, workspaceId, ids, { lock: true });
      const sent = await this.mail.sentSinceByAccount(
        trx,
        ids,
        ['campaign', 'warmup', 'placement'],
        startOfLocalDay(timezones.get(workspaceId) ?? 'UTC', now),
      );
      for (const [id, a] of accounts) out.set(id, { limit: a.dailyLimit, left: a.dailyLimit - (sent.get(id) ?? 0) });
    }
    return out;
  }

  /** Sends one claimed message recorded as `sending`, and records its outcome on the row. */
  private async sendOne(row: ResultRow, login: MailLogin, composed: Composed): Promise<void> {
    const outcome = await this.mail.transmit(login, composed.message);
    await this.mail.finish(this.db, composed.id, 'placement', outcome);
    const now = this.clock.now();
    if (outcome.kind === 'sent' || outcome.kind === 'unknown') {
      // `unknown`: the server may have taken it; the readers decide.
      await this.store.updateIf(this.db, row.id, 'sending', {
        state: 'sent',
        message_id: composed.messageId,
        sent_at: now,
        due_at: now,
      });
    } else if (outcome.kind === 'transient' && row.attempts < this.settings.sendAttempts) {
      await this.store.updateIf(this.db, row.id, 'sending', {
        state: 'queued',
        due_at: new Date(now.getTime() + RETRY_MS),
        reason: outcome.response,
      });
    } else {
      await this.store.updateIf(this.db, row.id, 'sending', {
        state: 'done',
        placement: 'notSent',
        reason: outcome.response,
      });
    }
  }

  private async readDue(): Promise<number> {
    const now = this.clock.now();
    const claimed = await this.db.transaction((trx) =>
      this.store.claim(
        trx,
        'sent',
        now,
        new Date(now.getTime() + this.settings.readIntervalMs),
        this.settings.readBatch,
      ),
    );
    if (!claimed.length) return 0;
    const queue = [...groupBy(claimed, (r) => r.recipient_id).entries()];
    const worker = async () => {
      for (let next = queue.shift(); next; next = queue.shift()) await this.readMailbox(next[0], next[1]);
    };
    await Promise.all(Array.from({ length: Math.min(this.settings.readConcurrency, queue.length) }, worker));
    return claimed.length;
  }

  /**
   * Looks for each message in the recipient's INBOX and spam folder, and deletes the ones found once their
   * place is recorded: a test message is of no use to the mailbox's owner (often another workspace's warm-up
   * account) and must not wait in their inbox. A failure waits for the next look.
   */
  private async readMailbox(recipientId: string, rows: ResultRow[]): Promise<void> {
    const login = await this.pool.loginOf(this.db, recipientId, 'imap');
    if (!login) {
      for (const r of rows)
        await this.store.updateIf(this.db, r.id, 'sent', {
          reason: 'The recipient mailbox cannot be read (no IMAP login, or out of the warm-up pool).',
        });
      return;
    }
    try {
      await this.mail.withMailbox(login, async (session) => {
        const spam = await session.spamFolder();
        const folders: [string, Placement][] = [
          ['INBOX', 'inbox'],
          ...(spam ? [[spam, 'spam'] as [string, Placement]] : []),
        ];
        const left = new Set(rows);
        for (const [folder, placement] of folders) {
          await session.select(folder);
          const found: number[] = [];
          for (const r of [...left]) {
            const uids = await session.search({ header: { 'message-id': r.message_id! } });
            if (!uids.length) continue;
            left.delete(r);
            await this.store.updateIf(this.db, r.id, 'sent', {
              state: 'done',
              placement,
              folder,
              seen_at: this.clock.now(),
              reason: null,
            });
            found.push(...uids);
          }
          await session.delete(found);
        }
      });
    } catch (err) {
      const reason = `The recipient mailbox could not be read: ${(err as Error).message}`;
      this.logger.warn({ recipientId, err: (err as Error).message }, 'placement: reading a recipient mailbox failed');
      for (const r of rows) await this.store.updateIf(this.db, r.id, 'sent', { reason });
    }
  }

  private async finishDue(): Promise<number> {
    const now = this.clock.now();
    return this.db.transaction(async (trx) => {
      const tests = await this.store.finishable(trx, now, FINISH_BATCH);
      for (const test of tests) {
        await this.store.closeOpen(trx, test.id, {
          unsent: 'Not sent before the deadline.',
          unseen: `Not found in INBOX or spam within ${test.timeout_minutes} minutes.`,
        });
        await this.store.complete(trx, test.id, now);
        const done = { ...test, status: 'completed' as const, completed_at: now };
        await this.events.record(trx, {
          workspaceId: test.workspace_id,
          type: 'placement.completed',
          data: { test: this.view(done, await this.store.results(trx, [test.id])) },
        });
      }
      return tests.length;
    });
  }
}
