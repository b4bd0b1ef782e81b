/**
 * What the inbox needs from the mail the accounts send and receive (`email_messages`, owned by the
 * sending module). `MessagePort` is the interface; `EmailMessages` implements it over the table until
 * the sending module's message service is merged, and then the composition root passes that one.
 */
import type { Executor } from '../../db';

export interface MessageRow {
  id: string;
  workspace_id: string;
  account_id: string | null;
  campaign_id: string | null;
  contact_id: string | null;
  step_id: string | null;
  variant_id: string | null;
  direction: 'outbound' | 'inbound';
  kind: 'campaign' | 'manual' | 'reply' | 'autoReply' | 'bounce';
  message_id: string;
  in_reply_to: string | null;
  references: string[];
  thread_id: string;
  from_address: string;
  to_address: string;
  subject: string;
  text_body: string;
  html_body: string | null;
  status: string;
  smtp_response: string | null;
  sent_at: Date | null;
  received_at: Date | null;
  read_at: Date | null;
  created_at: Date;
}

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

export interface MessagePort {
  /** Outbound messages of the workspace with any of these RFC Message-IDs, newest first. */
  findOutboundByMessageIds(db: Executor, workspaceId: string, messageIds: string[]): Promise<MessageRow[]>;
  /** The latest outbound messages an account sent to an address, newest first. */
  findOutboundTo(db: Executor, accountId: string, address: string, limit: number): Promise<MessageRow[]>;
  /** Whether the account already holds this inbound Message-ID. */
  hasInbound(db: Executor, accountId: string, messageId: string): Promise<boolean>;
  /** Stores an inbound message; false when the account already holds its Message-ID. */
  insertInbound(db: Executor, row: MessageRow): Promise<boolean>;
  insertOutbound(db: Executor, row: MessageRow): Promise<void>;
  updateOutbound(db: Executor, id: string, patch: Partial<Pick<MessageRow, 'status' | 'smtp_response' | 'sent_at'>>): Promise<void>;
  get(db: Executor, workspaceId: string, id: string): Promise<MessageRow | undefined>;
  thread(db: Executor, workspaceId: string, threadId: string): Promise<MessageRow[]>;
  list(db: Executor, filter: ListFilter): Promise<MessageRow[]>;
  /** Sets or clears read_at on the workspace's messages among `ids`; returns the ids found. */
  markRead(db: Executor, workspaceId: string, ids: string[], readAt: Date | null): Promise<string[]>;
}

const normalize = (row: MessageRow): MessageRow => ({ ...row, references: row.references ?? [] });

export class EmailMessages implements MessagePort {
  async findOutboundByMessageIds(db: Executor, workspaceId: string, messageIds: string[]): Promise<MessageRow[]> {
    if (messageIds.length === 0) return [];
    const rows = await db<MessageRow>('email_messages')
      .where({ workspace_id: workspaceId, direction: 'outbound' })
      .whereIn('message_id', messageIds.slice(0, 100))
      .orderBy([{ column: 'created_at', order: 'desc' }, { column: 'id', order: 'desc' }]);
    return rows.map(normalize);
  }

  async findOutboundTo(db: Executor, accountId: string, address: string, limit: number): Promise<MessageRow[]> {
    const rows = await db<MessageRow>('email_messages')
      .where({ account_id: accountId, direction: 'outbound' })
      .whereRaw('lower(to_address) = ?', [address.toLowerCase()])
      .orderBy([{ column: 'created_at', order: 'desc' }, { column: 'id', order: 'desc' }])
      .limit(limit);
    return rows.map(normalize);
  }

  async hasInbound(db: Executor, accountId: string, messageId: string): Promise<boolean> {
    return Boolean(await db('email_messages').where({ account_id: accountId, message_id: messageId, direction: 'inbound' }).first('id'));
  }

  async insertInbound(db: Executor, row: MessageRow): Promise<boolean> {
    const inserted = await db('email_messages')
      .insert(row)
      .onConflict(db.raw(`(account_id, message_id) WHERE direction = 'inbound'`) as unknown as string)
      .ignore()
      .returning('id');
    return inserted.length > 0;
  }

  async insertOutbound(db: Executor, row: MessageRow): Promise<void> {
    await db('email_messages').insert(row);
  }

  async updateOutbound(db: Executor, id: string, patch: Partial<Pick<MessageRow, 'status' | 'smtp_response' | 'sent_at'>>): Promise<void> {
    await db('email_messages').where({ id }).update(patch);
  }

  async get(db: Executor, workspaceId: string, id: string): Promise<MessageRow | undefined> {
    const row = await db<MessageRow>('email_messages').where({ workspace_id: workspaceId, id }).first();
    return row && normalize(row);
  }

  async thread(db: Executor, workspaceId: string, threadId: string): Promise<MessageRow[]> {
    const rows = await db<MessageRow>('email_messages')
      .where({ workspace_id: workspaceId, thread_id: threadId })
      .orderBy([{ column: 'created_at' }, { column: 'id' }])
      .limit(500);
    return rows.map(normalize);
  }

  async list(db: Executor, f: ListFilter): Promise<MessageRow[]> {
    const q = db<MessageRow>('email_messages').where('workspace_id', f.workspaceId);
    if (f.campaignId) q.andWhere('campaign_id', f.campaignId);
    if (f.contactId) q.andWhere('contact_id', f.contactId);
    if (f.accountId) q.andWhere('account_id', f.accountId);
    if (f.direction) q.andWhere('direction', f.direction);
    if (f.unread === true) q.andWhere('direction', 'inbound').whereNull('read_at');
    if (f.unread === false) q.andWhere((w) => w.whereNotNull('read_at').orWhere('direction', 'outbound'));
    if (f.before) q.andWhereRaw('(created_at, id) < (?, ?)', [f.before.createdAt, f.before.id]);
    const rows = await q.orderBy([{ column: 'created_at', order: 'desc' }, { column: 'id', order: 'desc' }]).limit(f.limit);
    return rows.map(normalize);
  }

  async markRead(db: Executor, workspaceId: string, ids: string[], readAt: Date | null): Promise<string[]> {
    const rows = await db('email_messages').where('workspace_id', workspaceId).whereIn('id', ids).update({ read_at: readAt }).returning('id');
    return rows.map((r: { id: string }) => r.id);
  }
}
