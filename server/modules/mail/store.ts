/**
 * `email_messages`: every message the accounts send and every inbound one matched to them. This is the only
 * code that reads or writes the table; other modules go through MailService.
 */
import { columnsOf, prepared, selectList, type Executor } from '../../db';

/**
 * What a message is. `campaign`, `manual`, `warmup` and `placement` are outbound, `reply`, `autoReply` and
 * `bounce` inbound. `warmup` and `placement` are the mail system's own traffic (HIDDEN_KINDS).
 */
export type MessageKind = 'campaign' | 'manual' | 'reply' | 'autoReply' | 'bounce' | 'warmup' | 'placement';

/** Kinds no user conversation includes: never listed in the unibox, never matched as what a reply answers. */
export const HIDDEN_KINDS: readonly MessageKind[] = ['warmup', 'placement'];

export type MessageStatus = 'sending' | 'sent' | 'failed' | 'bounced' | 'unknown' | 'received';

export interface MessageRow {
  id: string;
  workspace_id: string;
  account_id: string | null;
  campaign_id: string | null;
  contact_id: string | null;
  step_id: string | null;
  variant_id: string | null;
  step_number: number | null;
  direction: 'outbound' | 'inbound';
  kind: MessageKind;
  message_id: string;
  in_reply_to: string | null;
  references: string[];
  thread_id: string;
  from_address: string;
  to_address: string;
  subject: string;
  text_body: string;
  html_body: string | null;
  status: MessageStatus;
  smtp_response: string | null;
  sent_at: Date | null;
  received_at: Date | null;
  read_at: Date | null;
  created_at: Date;
}

const MESSAGE_COLUMNS = columnsOf<MessageRow>({
  id: true,
  workspace_id: true,
  account_id: true,
  campaign_id: true,
  contact_id: true,
  step_id: true,
  variant_id: true,
  step_number: true,
  direction: true,
  kind: true,
  message_id: true,
  in_reply_to: true,
  references: true,
  thread_id: true,
  from_address: true,
  to_address: true,
  subject: true,
  text_body: true,
  html_body: true,
  status: true,
  smtp_response: true,
  sent_at: true,
  received_at: true,
  read_at: true,
  created_at: true,
});
const MESSAGE_SELECT = selectList(MESSAGE_COLUMNS);

/** What a reply needs from the message it answers. */
export type ThreadParent = Pick<MessageRow, 'id' | 'subject' | 'message_id' | 'references' | 'thread_id'>;

export interface ListFilter {
  workspaceId: string;
  campaignId?: string;
  contactId?: string;
  accountId?: string;
  direction?: 'outbound' | 'inbound';
  unread?: boolean;
  /** Keyset: rows strictly older than this (created_at, id). */
  before?: { createdAt: Date; id: string };
  limit: number;
}

/** The statuses that count toward a daily limit: the message went out, or may have. */
const COUNTED = ['sending', 'sent', 'unknown', 'bounced'];
const NEWEST_FIRST = [
  { column: 'created_at', order: 'desc' as const },
  { column: 'id', order: 'desc' as const },
];

const normalize = <T extends Pick<MessageRow, 'references'>>(row: T): T => ({
  ...row,
  references: row.references ?? [],
});

export class MailStore {
  async insert(
    db: Executor,
    row: Partial<MessageRow> &
      Pick<MessageRow, 'id' | 'workspace_id' | 'direction' | 'kind' | 'message_id' | 'thread_id'>,
  ): Promise<void> {
    await db('email_messages').insert(row);
  }

  /** Stores an inbound message; false when the account already holds its Message-ID (a unique index backs this). */
  async insertInbound(db: Executor, row: MessageRow): Promise<boolean> {
    const inserted = await db('email_messages')
      .insert(row)
      .onConflict(db.raw(`(account_id, message_id) WHERE direction = 'inbound'`) as unknown as string)
      .ignore()
      .returning('id');
    return inserted.length > 0;
  }

  /** The outcome of a send; only a message still `sending` changes (one expired to `unknown` stays so). */
  async finish(
    db: Executor,
    id: string,
    patch: { status: 'sent' | 'failed' | 'bounced' | 'unknown'; smtp_response: string; sent_at?: Date | null },
  ): Promise<boolean> {
    const n = await db('email_messages').where({ id, status: 'sending' }).update(patch);
    return n > 0;
  }

  /**
   * Messages left `sending` that may have gone out become `unknown`: a campaign claim handed to SMTP before
   * `before`, any other kind (sent as soon as recorded) created before it.
   */
  async expireSending(
    db: Executor,
    before: Date,
    response: string,
  ): Promise<{ id: string; contact_id: string | null }[]> {
    return db('email_messages')
      .where({ status: 'sending' })
      .andWhere((q) => {
        q.where('handed_at', '<', before).orWhere((other) => {
          other.whereNull('handed_at').whereNot('kind', 'campaign').andWhere('created_at', '<', before);
        });
      })
      .update({ status: 'unknown', smtp_response: response })
      .returning(['id', 'contact_id']);
  }

  /** Campaign claims never handed to SMTP (those among `ids`, or all made before `before`) are deleted; returns their contacts. */
  async dropUnhanded(db: Executor, which: { ids: string[] } | { before: Date }): Promise<string[]> {
    const q = db('email_messages').where({ status: 'sending', kind: 'campaign' }).whereNull('handed_at');
    if ('ids' in which) q.whereIn('id', which.ids);
    else q.andWhere('created_at', '<', which.before);
    const rows: { contact_id: string }[] = await q.delete().returning('contact_id');
    return rows.map((r) => r.contact_id);
  }

  /** Marks a claim as handed to SMTP; false when it is no longer a claim never handed over. */
  async handOver(db: Executor, id: string, now: Date): Promise<boolean> {
    return (
      (await db('email_messages').where({ id, status: 'sending' }).whereNull('handed_at').update({ handed_at: now })) >
      0
    );
  }

  /** A message SMTP accepted that bounced later (a DSN): `bounced`, once. */
  async markLateBounce(
    db: Executor,
    id: string,
  ): Promise<Pick<MessageRow, 'account_id' | 'campaign_id' | 'contact_id' | 'kind'> | undefined> {
    const [row] = await db('email_messages')
      .where({ id, direction: 'outbound' })
      .whereIn('status', ['sent', 'unknown'])
      .update({ status: 'bounced' })
      .returning<Pick<MessageRow, 'account_id' | 'campaign_id' | 'contact_id' | 'kind'>[]>([
        'account_id',
        'campaign_id',
        'contact_id',
        'kind',
      ]);
    return row;
  }

  async markRead(db: Executor, workspaceId: string, ids: string[], readAt: Date | null): Promise<string[]> {
    const rows = await db('email_messages')
      .where('workspace_id', workspaceId)
      .whereIn('id', ids)
      .update({ read_at: readAt })
      .returning('id');
    return rows.map((r: { id: string }) => r.id);
  }

  async threadParent(db: Executor, id: string): Promise<ThreadParent | undefined> {
    const row = await db<MessageRow>('email_messages')
      .where({ id })
      .first('id', 'subject', 'message_id', 'references', 'thread_id');
    return row && normalize(row);
  }

  /** A message of the workspace's conversations (never a hidden kind). */
  async get(db: Executor, workspaceId: string, id: string): Promise<MessageRow | undefined> {
    const row = await db<MessageRow>('email_messages')
      .where({ workspace_id: workspaceId, id })
      .whereNotIn('kind', HIDDEN_KINDS)
      .first();
    return row && normalize(row);
  }

  async thread(db: Executor, workspaceId: string, threadId: string): Promise<MessageRow[]> {
    const rows = await db<MessageRow>('email_messages')
      .where({ workspace_id: workspaceId, thread_id: threadId })
      .whereNotIn('kind', HIDDEN_KINDS)
      .orderBy([{ column: 'created_at' }, { column: 'id' }])
      .limit(500);
    return rows.map(normalize);
  }

  async list(db: Executor, f: ListFilter): Promise<MessageRow[]> {
    const q = db<MessageRow>('email_messages').where('workspace_id', f.workspaceId).whereNotIn('kind', HIDDEN_KINDS);
    if (f.campaignId) q.andWhere('campaign_id', f.campaignId);
    if (f.contactId) q.andWhere('contact_id', f.contactId);
    if (f.accountId) q.andWhere('account_id', f.accountId);
    if (f.direction) q.andWhere('direction', f.direction);
    if (f.unread === true) q.andWhere('direction', 'inbound').whereNull('read_at');
    if (f.unread === false) {
      q.andWhere((w) => {
        w.whereNotNull('read_at').orWhere('direction', 'outbound');
      });
    }
    if (f.before) q.andWhereRaw('(created_at, id) < (?, ?)', [f.before.createdAt, f.before.id]);
    const rows = await prepared<MessageRow>(db, q.orderBy(NEWEST_FIRST).limit(f.limit).select(db.raw(MESSAGE_SELECT)));
    return rows.map(normalize);
  }

  /** Outbound conversation messages of the workspace with any of these RFC Message-IDs, newest first. */
  async findOutboundByMessageIds(db: Executor, workspaceId: string, messageIds: string[]): Promise<MessageRow[]> {
    if (messageIds.length === 0) return [];
    const rows = await db<MessageRow>('email_messages')
      .where({ workspace_id: workspaceId, direction: 'outbound' })
      .whereNotIn('kind', HIDDEN_KINDS)
      .whereIn('message_id', messageIds.slice(0, 100))
      .orderBy(NEWEST_FIRST);
    return rows.map(normalize);
  }

  /** The latest outbound conversation messages an account sent to an address, newest first. */
  async findOutboundTo(db: Executor, accountId: string, address: string, limit: number): Promise<MessageRow[]> {
    const rows = await db<MessageRow>('email_messages')
      .where({ account_id: accountId, direction: 'outbound' })
      .whereNotIn('kind', HIDDEN_KINDS)
      .whereRaw('lower(to_address) = ?', [address.toLowerCase()])
      .orderBy(NEWEST_FIRST)
      .limit(limit);
    return rows.map(normalize);
  }

  async hasInbound(db: Executor, accountId: string, messageId: string): Promise<boolean> {
    return Boolean(
      await db('email_messages')
        .where({ account_id: accountId, message_id: messageId, direction: 'inbound' })
        .first('id'),
    );
  }

  // --- counts the sending engine paces and protects by ---

  /** Outbound messages of a campaign since `since`: all, and first emails only. */
  async campaignSentSince(db: Executor, campaignId: string, since: Date): Promise<{ all: number; first: number }> {
    const row = await db('email_messages')
      .where({ campaign_id: campaignId, direction: 'outbound' })
      .andWhere('created_at', '>=', since)
      .whereIn('status', COUNTED)
      .first<{ all: number; first: number } | undefined>(
        db.raw('count(*)::int AS all'),
        db.raw('count(*) FILTER (WHERE step_number = 1)::int AS first'),
      );
    return { all: row?.all ?? 0, first: row?.first ?? 0 };
  }

  /** Messages of these kinds each account sent since `since` (accounts with none are absent). */
  async sentSinceByAccount(
    db: Executor,
    accountIds: string[],
    kinds: readonly MessageKind[],
    since: Date,
  ): Promise<Map<string, number>> {
    if (accountIds.length === 0) return new Map();
    const rows: { account_id: string; n: number }[] = await db('email_messages')
      .whereIn('account_id', accountIds)
      .andWhere({ direction: 'outbound' })
      .whereIn('kind', kinds)
      .andWhere('created_at', '>=', since)
      .whereIn('status', COUNTED)
      .groupBy('account_id')
      .select('account_id', db.raw('count(*)::int AS n'));
    return new Map(rows.map((r) => [r.account_id, r.n]));
  }

  async sentToDomainsSince(
    db: Executor,
    scope: { workspaceId: string; campaignId?: string },
    domains: string[],
    since: Date,
  ): Promise<Map<string, number>> {
    if (domains.length === 0) return new Map();
    // The expression of the recipient-domain index (workspace, domain, created_at).
    const domain = "lower(split_part(to_address, '@', 2))";
    const query = db('email_messages')
      .where({ workspace_id: scope.workspaceId, direction: 'outbound', kind: 'campaign' })
      .whereRaw(`${domain} = ANY(?::text[])`, [domains])
      .andWhere('created_at', '>=', since)
      .whereIn('status', COUNTED)
      .groupByRaw(domain)
      .select<{ domain: string; n: number }[]>(db.raw(`${domain} AS domain`), db.raw('count(*)::int AS n'));
    if (scope.campaignId) query.andWhere('campaign_id', scope.campaignId);
    const rows = await query;
    return new Map(rows.map((r) => [r.domain, r.n]));
  }

  /** The account's last `n` finished campaign sends: how many, and how many bounced hard. */
  async recentOutcomes(
    db: Executor,
    of: { account_id: string } | { campaign_id: string },
    n: number,
  ): Promise<{ total: number; bounced: number }> {
    const row = await db
      .from(
        db('email_messages')
          .where({ ...of, direction: 'outbound', kind: 'campaign' })
          .whereIn('status', ['sent', 'bounced'])
          .orderBy('created_at', 'desc')
          .limit(n)
          .select('status')
          .as('recent'),
      )
      .first<{ total: number; bounced: number } | undefined>(
        db.raw('count(*)::int AS total'),
        db.raw("count(*) FILTER (WHERE status = 'bounced')::int AS bounced"),
      );
    return { total: row?.total ?? 0, bounced: row?.bounced ?? 0 };
  }

  async sentPerStep(db: Executor, campaignId: string): Promise<Map<string, number>> {
    const rows: { step_id: string; n: number }[] = await db('email_messages')
      .where({ campaign_id: campaignId, direction: 'outbound', kind: 'campaign', status: 'sent' })
      .groupBy('step_id')
      .select('step_id', db.raw('count(*)::int AS n'));
    return new Map(rows.map((r) => [r.step_id, r.n]));
  }
}
