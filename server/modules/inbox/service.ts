/**
 * The inbox: the reader job (every account's INBOX over IMAP, one claimed mailbox at a time per worker),
 * matching and classifying what arrives, what it does to contacts, and the unibox operations.
 *
 * Guarantees: a message and the checkpoint past it commit in one transaction with every change and event
 * it causes, so a crash re-reads at most the message in flight and a message is never processed twice;
 * after a UIDVALIDITY change the mailbox is read again and messages whose Message-ID the account already
 * holds are skipped (a unique index backs this).
 */
import { createHash } from 'node:crypto';
import { simpleParser, type ParsedMail } from 'mailparser';
import freeProviders from 'email-providers/common.json';
import type { components } from '../../../generated/api';
import type { Clock } from '../../platform/clock';
import type { Db, Executor } from '../../db';
import type { Backlog } from '../../observability/telemetry';
import { newId } from '../../platform/ids';
import { domainOf } from '../../platform/email-address';
import type { Logger } from '../../platform/logger';
import { conflict, detail, notFound } from '../../platform/errors';
import type { AccountMailAccess } from '../account';
import type { CampaignService, SubsequenceTriggers } from '../campaign';
import type { ContactService } from '../contact';
import type { EventService } from '../events';
import { type MailLogin, type MailService, MailboxError, type MessageRow, readMailbox } from '../mail';
import { classify, threadSubject, toIncoming, type Classification, type IncomingMessage } from './classify';
import type { CheckpointRow, InboxStore } from './store';
import { defaulted } from '../../platform/paging';
import { decodeCursor, encodeCursor } from '../../platform/cursor';
import { viewOf, type IntentView, type ReplyIntentService } from './reply-intents';
import { visibleReply } from './intent';

type Schemas = components['schemas'];
export type EmailMessage = Schemas['EmailMessage'];

/** Bounce accounting of the sending engine: a DSN's hard bounce counts toward bounce protection. */
export interface LateBouncePort {
  recordLateHardBounce(db: Executor, workspaceId: string, messageId: string): Promise<void>;
}

/** The suppression list: the inbox adds hard-bounced addresses and never answers a suppressed one. */
export interface SuppressionPort {
  isSuppressed(db: Executor, workspaceId: string, email: string): Promise<boolean>;
  suppress(
    db: Executor,
    workspaceId: string,
    entries: { value: string; reason: 'unsubscribed' | 'bounced' | 'manual' }[],
  ): Promise<void>;
}

export interface InboxSettings {
  /** Messages read per account per run. */
  messagesPerRun: number;
  /** Mailboxes claimed per run (per worker). */
  accountsPerRun: number;
  /** Mailboxes read at once. */
  concurrency: number;
  /** How long a claim holds before another worker may take the mailbox (crashed worker). */
  claimSeconds: number;
  /** Bytes of a message read at most: its headers and the start of its body (what matching and classification read). */
  maxMessageBytes: number;
}

export const DEFAULT_INBOX_SETTINGS: InboxSettings = {
  messagesPerRun: 200,
  accountsPerRun: 50,
  concurrency: 8,
  claimSeconds: 300,
  maxMessageBytes: 1024 * 1024,
};

const MAILBOX = 'INBOX';
/** Runs a message whose processing fails is retried before it is skipped. */
const STUCK_RUNS = 3;

/** Processing (not reading) a message failed. */
class ProcessingError extends Error {}
const FREE_PROVIDERS = new Set<string>(freeProviders);

export interface ProcessOutcome {
  outcome: 'ignored' | 'duplicate' | 'reply' | 'autoReply' | 'bounce' | 'malformed';
  messageId?: string;
  /** Why a message could not be read (`malformed`): `parser_limit` (too many MIME parts, a header block too large) or `unparsable`. */
  reason?: 'parser_limit' | 'unparsable';
}

const iso = (d: Date | null) => (d ? new Date(d).toISOString() : null);

export function toEmailMessage(row: MessageRow, intent: IntentView = viewOf(undefined)): EmailMessage {
  return {
    id: row.id,
    threadId: row.thread_id,
    accountId: row.account_id,
    campaignId: row.campaign_id,
    contactId: row.contact_id,
    stepId: row.step_id,
    variantId: row.variant_id,
    direction: row.direction,
    // Hidden kinds (warm-up, placement) never reach the unibox: the store leaves them out.
    kind: row.kind as EmailMessage['kind'],
    messageId: row.message_id,
    inReplyTo: row.in_reply_to,
    from: row.from_address,
    to: row.to_address,
    subject: row.subject,
    textBody: row.text_body,
    htmlBody: row.html_body,
    status: row.status,
    smtpResponse: row.smtp_response,
    sentAt: iso(row.sent_at),
    receivedAt: iso(row.received_at),
    read: row.direction === 'outbound' || row.read_at !== null,
    readAt: iso(row.read_at),
    ...intent,
    createdAt: new Date(row.created_at).toISOString(),
  };
}

/** A stable Message-ID for a message that has none, so a re-read finds it again. */
function syntheticMessageId(raw: Buffer): string {
  return `<${createHash('sha256').update(raw).digest('hex').slice(0, 40)}@no-message-id.invalid>`;
}

/** The modules the inbox reads mail through and applies what arrives to. */
export interface InboxCollaborators {
  mail: MailService;
  accounts: AccountMailAccess;
  campaigns: CampaignService;
  contacts: ContactService;
  events: EventService;
  suppression: SuppressionPort;
  bounces: LateBouncePort;
  intents: ReplyIntentService;
  subsequences: SubsequenceTriggers;
}

/** What InboxService is built from, by name. */
export interface InboxServiceDeps {
  db: Db;
  store: InboxStore;
  collaborators: InboxCollaborators;
  clock: Clock;
  logger: Logger;
  settings?: InboxSettings;
}

export class InboxService {
  private readonly workerId = `inbox-${process.pid}-${newId().slice(-8)}`;
  private readonly mail: MailService;
  private readonly accounts: AccountMailAccess;
  private readonly campaigns: CampaignService;
  private readonly contacts: ContactService;
  private readonly events: EventService;
  private readonly suppression: SuppressionPort;
  private readonly bounces: LateBouncePort;
  private readonly intents: ReplyIntentService;
  private readonly subsequences: SubsequenceTriggers;

  private readonly db: Db;
  private readonly store: InboxStore;
  private readonly clock: Clock;
  private readonly logger: Logger;
  private readonly settings: InboxSettings;

  constructor({ db, store, collaborators, clock, logger, settings = DEFAULT_INBOX_SETTINGS }: InboxServiceDeps) {
    this.db = db;
    this.store = store;
    this.clock = clock;
    this.logger = logger;
    this.settings = settings;

    ({
      mail: this.mail,
      accounts: this.accounts,
      campaigns: this.campaigns,
      contacts: this.contacts,
      events: this.events,
      suppression: this.suppression,
      bounces: this.bounces,
      intents: this.intents,
      subsequences: this.subsequences,
    } = collaborators);
  }

  /** The worker job: read the claimed mailboxes once. Returns the messages processed. */
  /** Worker backlog for metrics: mailboxes waiting for a read, and the least recently read one. */
  backlog(): Promise<Backlog> {
    return this.store.backlog(this.db, MAILBOX, this.clock.now());
  }

  async runOnce(): Promise<number> {
    const now = this.clock.now();
    const readable = await this.accounts.readableImapAccounts(this.db);
    if (readable.length === 0) return 0;
    await this.store.ensureCheckpoints(
      this.db,
      readable.map((a) => ({ id: a.id, workspaceId: a.workspace_id })),
      MAILBOX,
      now,
    );
    const until = new Date(now.getTime() + this.settings.claimSeconds * 1000);
    const claimed = await this.db.transaction((trx) =>
      this.store.claim(
        trx,
        readable.map((a) => a.id),
        MAILBOX,
        now,
        until,
        this.workerId,
        this.settings.accountsPerRun,
      ),
    );
    let total = 0;
    let next = 0;
    const lane = async () => {
      while (next < claimed.length) {
        const checkpoint = claimed[next++];
        const n = await this.readAccount(checkpoint);
        total += n;
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.settings.concurrency, claimed.length) }, lane));
    return total;
  }

  private async readAccount(checkpoint: CheckpointRow): Promise<number> {
    const accountId = checkpoint.account_id;
    let processed = 0;
    let error: string | null = null;
    let failures = checkpoint.failures;
    let stuck = checkpoint.stuck_uid !== null ? { uid: checkpoint.stuck_uid, count: checkpoint.stuck_count } : null;
    try {
      const login = await this.accounts.imapLogin(this.db, accountId);
      if (!login) return 0;
      const result = await this.mail.withMailbox(login, (session) =>
        readMailbox(session, {
          mailbox: MAILBOX,
          checkpoint: { uidValidity: checkpoint.uid_validity, lastUid: checkpoint.last_uid },
          limit: this.settings.messagesPerRun,
          maxBytes: this.settings.maxMessageBytes,
          onMessage: async (uid, uidValidity, source, size) => {
            if (size > source.length) {
              // Matched and classified on its headers and first part; the rest (attachments) is never fetched.
              this.logger.info(
                { accountId, uid, size, read: source.length, reason: 'message_over_size_limit' },
                'inbox: a large message is read up to the size limit',
              );
            }
            try {
              await this.db.transaction(async (trx) => {
                await this.processMessage(trx, login, source);
                await this.store.advance(trx, accountId, MAILBOX, uidValidity, uid, this.clock.now());
              });
            } catch (err) {
              // Not the mailbox's fault: retry this message next run, and skip it after STUCK_RUNS runs so one
              // message the processor cannot handle never blocks the mailbox.
              const count = stuck?.uid === uid ? stuck.count + 1 : 1;
              stuck = { uid, count };
              if (count < STUCK_RUNS)
                throw new ProcessingError(`message UID ${uid} could not be processed: ${(err as Error).message}`);
              this.logger.error(
                { accountId, uid, err: (err as Error).message },
                'inbox: skipping a message that failed to process 3 times',
              );
              await this.store.advance(this.db, accountId, MAILBOX, uidValidity, uid, this.clock.now());
              stuck = null;
              return;
            }
            if (stuck?.uid === uid) stuck = null;
            processed += 1;
          },
        }),
      );
      if (result.processed === 0 && checkpoint.uid_validity !== result.uidValidity) {
        await this.store.advance(this.db, accountId, MAILBOX, result.uidValidity, result.lastUid, this.clock.now());
      }
      if (failures > 0) await this.accounts.connectionWorks(this.db, accountId, 'imap');
      failures = 0;
    } catch (err) {
      if (err instanceof ProcessingError) {
        error = err.message;
        this.logger.warn({ accountId, err: error }, 'inbox: processing failed; the message is retried next run');
      } else {
        const permanent = err instanceof MailboxError ? err.permanent : false;
        error = err instanceof MailboxError ? err.message : `IMAP read failed: ${(err as Error).message}`;
        failures += 1;
        // A refused login needs the user; anything else (refused, timed out, a 4xx greeting) time fixes: the
        // account stays as it is and the mailbox is read again after a growing wait.
        if (permanent) await this.markConnectionError(accountId, error);
        else {
          const retry = await this.accounts.connectionFailed(this.db, accountId, 'imap', error);
          this.logger.warn(
            { accountId, err: error, failures: retry.failures, nextTryAt: retry.nextTryAt.toISOString() },
            'inbox: mailbox read failed; trying again later',
          );
        }
      }
    } finally {
      await this.store.release(this.db, accountId, MAILBOX, this.workerId, {
        now: this.clock.now(),
        error,
        failures,
        stuck,
      });
    }
    return processed;
  }

  private async markConnectionError(accountId: string, reason: string): Promise<void> {
    await this.db.transaction((trx) => this.accounts.markConnectionError(trx, accountId, reason));
  }

  /**
   * Matches, classifies and applies one raw message for `account`, in the caller's transaction.
   * Mail that matches nothing the workspace sent is ignored (not stored).
   */
  async processMessage(
    trx: Executor,
    account: Pick<MailLogin, 'accountId' | 'workspaceId' | 'email'>,
    raw: Buffer,
  ): Promise<ProcessOutcome> {
    let parsed: ParsedMail;
    try {
      parsed = await simpleParser(raw, { skipImageLinks: true, skipTextToHtml: true, skipTextLinks: true });
    } catch (err) {
      // mailsplit tags what passes its limits (1,000 MIME parts, a 1 MB header block) with EMAXLEN.
      const reason = (err as { code?: string }).code === 'EMAXLEN' ? 'parser_limit' : 'unparsable';
      this.logger.warn(
        { accountId: account.accountId, bytes: raw.length, reason, err: (err as Error).message },
        'inbox: a message could not be parsed and is not read',
      );
      return { outcome: 'malformed', reason };
    }
    const incoming = toIncoming(parsed, raw);
    const kind = classify(parsed, raw, incoming);
    const original = await this.match(trx, account, incoming, kind);
    if (!original) return { outcome: 'ignored' };
    const messageId = incoming.messageId ?? syntheticMessageId(raw);
    if (await this.mail.hasInbound(trx, account.accountId, messageId)) return { outcome: 'duplicate', messageId };

    const now = this.clock.now();
    const row: MessageRow = {
      id: newId(),
      workspace_id: account.workspaceId,
      account_id: account.accountId,
      campaign_id: original.campaign_id,
      contact_id: original.contact_id,
      step_id: original.step_id,
      variant_id: original.variant_id,
      step_number: null,
      direction: 'inbound',
      kind: kind.kind,
      message_id: messageId,
      in_reply_to: incoming.inReplyTo[0] ?? null,
      references: incoming.references,
      thread_id: original.thread_id,
      from_address: (incoming.fromAddress ?? '').slice(0, 320),
      to_address: (incoming.toAddress ?? account.email).slice(0, 320),
      subject: incoming.subject.slice(0, 2000),
      text_body: incoming.textBody.slice(0, 200_000),
      html_body: incoming.htmlBody ? incoming.htmlBody.slice(0, 500_000) : null,
      status: 'received',
      smtp_response: kind.kind === 'bounce' ? kind.dsn.diagnostic : null,
      sent_at: null,
      received_at: now,
      read_at: null,
      created_at: now,
    };
    if (!(await this.mail.insertInbound(trx, row))) return { outcome: 'duplicate', messageId };
    await this.apply(trx, account, original, row, kind);
    return { outcome: kind.kind, messageId };
  }

  /** The outbound message this one answers or reports on, or null when it is not ours. */
  private async match(
    trx: Executor,
    account: Pick<MailLogin, 'accountId' | 'workspaceId'>,
    incoming: IncomingMessage,
    kind: Classification,
  ): Promise<MessageRow | null> {
    const named = [
      ...incoming.inReplyTo,
      ...[...incoming.references].reverse(),
      ...(kind.kind === 'bounce' ? incoming.quotedMessageIds : []),
    ];
    if (named.length) {
      const found = await this.mail.findOutboundByMessageIds(trx, account.workspaceId, named);
      if (found.length) {
        // The most specific name first (In-Reply-To, then the last reference), preferring this account's mail.
        const byId = new Map<string, MessageRow>();
        for (const row of found)
          if (!byId.has(row.message_id) || row.account_id === account.accountId) byId.set(row.message_id, row);
        for (const id of named) if (byId.has(id)) return byId.get(id)!;
      }
    }
    // Fallback: what this account sent to the sender (or, for a bounce, to the failed recipient) in the same thread subject.
    if (kind.kind === 'bounce') {
      if (!kind.dsn.recipient) return null;
      const [latest] = await this.mail.findOutboundTo(trx, account.accountId, kind.dsn.recipient, 1);
      return latest ?? null;
    }
    if (!incoming.fromAddress) return null;
    const subject = threadSubject(incoming.subject);
    if (!subject) return null;
    const sent = await this.mail.findOutboundTo(trx, account.accountId, incoming.fromAddress, 20);
    return sent.find((m) => m.contact_id && threadSubject(m.subject) === subject) ?? null;
  }

  private async apply(
    trx: Executor,
    account: Pick<MailLogin, 'accountId' | 'workspaceId'>,
    original: MessageRow,
    inbound: MessageRow,
    kind: Classification,
  ): Promise<void> {
    const workspaceId = account.workspaceId;
    const contact = original.contact_id ? await this.contacts.lockForMail(trx, workspaceId, original.contact_id) : null;
    const campaign = original.campaign_id
      ? await this.campaigns.findInWorkspace(trx, workspaceId, original.campaign_id).catch(() => null)
      : null;
    const mail = {
      campaignId: original.campaign_id,
      stepId: original.step_id,
      variantId: original.variant_id,
      accountId: account.accountId,
      contactId: contact?.id ?? null,
      messageId: original.id,
    };
    const base = { ...mail, email: contact?.email ?? original.to_address };
    const occurredAt = inbound.created_at;

    if (kind.kind === 'reply') {
      const { intent, referral } = await this.intents.decide(trx, inbound, original);
      await this.events.record(trx, {
        workspaceId,
        type: 'email.replied',
        occurredAt,
        mail,
        data: {
          ...base,
          inboundMessageId: inbound.id,
          subject: inbound.subject,
          intent,
          ...(referral ? { referral } : {}),
        },
      });
      // A subsequence the reply triggers takes the contact instead of stopping it.
      const entered =
        contact !== null &&
        (await this.subsequences.fire(trx, {
          type: 'replied',
          workspaceId,
          campaignId: contact.campaign_id,
          contactId: contact.id,
          intent,
          text: visibleReply(inbound.text_body),
        }));
      if (contact && campaign?.stop_on_reply && !entered) {
        await this.contacts.finishForMail(trx, workspaceId, contact.id, 'completed');
        const domain = domainOf(contact.email).toLowerCase();
        if (campaign.stop_for_company && !FREE_PROVIDERS.has(domain))
          await this.contacts.finishCompany(trx, workspaceId, campaign.id, domain);
      }
      await this.intents.apply(trx, workspaceId, { ...inbound, contact_id: contact?.id ?? null }, mail, intent);
      return;
    }
    if (kind.kind === 'autoReply') {
      await this.events.record(trx, {
        workspaceId,
        type: 'email.autoReplied',
        occurredAt,
        mail,
        data: { ...base, inboundMessageId: inbound.id, subject: inbound.subject },
      });
      if (!contact) return;
      if (campaign?.stop_on_auto_reply) await this.contacts.finishForMail(trx, workspaceId, contact.id, 'completed');
      const change = await this.contacts.setLeadStatusIfNone(trx, workspaceId, contact.id, 'outOfOffice');
      if (change) {
        await this.events.record(trx, {
          workspaceId,
          type: 'contact.leadStatusChanged',
          occurredAt,
          data: {
            campaignId: contact.campaign_id,
            contactId: contact.id,
            email: contact.email,
            previous: change.previous,
            leadStatus: change.leadStatus,
          },
        });
      }
      return;
    }
    // A delivery status notification: only a permanent failure changes anything beyond the stored report.
    if (kind.dsn.bounceType !== 'hard') return;
    // It applies only to the address the quoted message went to: a report naming anyone else (forged, or
    // about another message) is stored and shown, and suppresses and bounces no one.
    const recipient = original.to_address.toLowerCase();
    if (!kind.dsn.recipients.includes(recipient)) {
      this.logger.warn(
        {
          workspaceId,
          accountId: account.accountId,
          inboundMessageId: inbound.id,
          quotedMessageId: original.id,
          named: kind.dsn.recipients.slice(0, 5),
        },
        'bounce report not applied: the recipient it names is not the one the quoted message was sent to',
      );
      return;
    }
    await this.suppression.suppress(trx, workspaceId, [{ value: recipient, reason: 'bounced' }]);
    if (contact) await this.contacts.finishForMail(trx, workspaceId, contact.id, 'bounced');
    await this.bounces.recordLateHardBounce(trx, workspaceId, original.id);
    await this.events.record(trx, {
      workspaceId,
      type: 'email.bounced',
      occurredAt,
      mail,
      data: {
        ...base,
        email: recipient,
        bounceType: 'hard',
        smtpResponse: kind.dsn.diagnostic ?? kind.dsn.status ?? 'Action: failed',
      },
    });
  }

  // --- unibox ---

  async list(
    workspaceId: string,
    query: {
      campaignId?: string;
      contactId?: string;
      accountId?: string;
      direction?: 'outbound' | 'inbound';
      unread?: boolean;
      limit?: number;
      cursor?: string;
    },
  ) {
    const limit = defaulted(query.limit, 'limit');
    const cursor = query.cursor ? decodeCursor(query.cursor) : undefined;
    const before = cursor && { createdAt: cursor.at, id: cursor.id };
    const rows = await this.mail.list(this.db, {
      workspaceId,
      campaignId: query.campaignId,
      contactId: query.contactId,
      accountId: query.accountId,
      direction: query.direction,
      unread: query.unread,
      before,
      limit: limit + 1,
    });
    const page = rows.slice(0, limit);
    const hasMore = rows.length > limit;
    const intents = await this.intents.viewsOf(
      workspaceId,
      page.map((r) => r.id),
    );
    return {
      items: page.map((r) => toEmailMessage(r, intents.get(r.id))),
      pagination: {
        limit,
        nextCursor: hasMore ? encodeCursor(page[page.length - 1].created_at, page[page.length - 1].id) : null,
        hasMore,
      },
    };
  }

  private async require(db: Executor, workspaceId: string, id: string): Promise<MessageRow> {
    const row = await this.mail.get(db, workspaceId, id);
    if (!row) throw notFound('Email not found.');
    return row;
  }

  async get(workspaceId: string, id: string) {
    const row = await this.require(this.db, workspaceId, id);
    const thread = await this.mail.thread(this.db, workspaceId, row.thread_id);
    const intents = await this.intents.viewsOf(workspaceId, [row.id, ...thread.map((m) => m.id)]);
    return {
      message: toEmailMessage(row, intents.get(row.id)),
      thread: thread.map((m) => toEmailMessage(m, intents.get(m.id))),
    };
  }

  async markRead(workspaceId: string, ids: string[], read: boolean) {
    const at = read ? this.clock.now() : null;
    const updated = await this.db.transaction((trx) => this.mail.markRead(trx, workspaceId, ids, at));
    const found = new Set(updated);
    return { read, updated: ids.filter((id) => found.has(id)), notFound: ids.filter((id) => !found.has(id)) };
  }

  /** POST /v2/email/reply: see the spec. */
  async reply(workspaceId: string, body: { id: string; text: string; html?: string }) {
    const target = await this.require(this.db, workspaceId, body.id);
    if (!target.account_id)
      throw conflict('The account that holds this thread has been removed; the answer cannot be sent.');
    const login = await this.accounts.smtpLogin(this.db, workspaceId, target.account_id);
    if (!login) throw conflict('The account that holds this thread has no SMTP login; the answer cannot be sent.');
    const to = (target.direction === 'inbound' ? target.from_address : target.to_address).toLowerCase();
    if (!to) throw conflict('The message names no address to answer.');
    if (await this.suppression.isSuppressed(this.db, workspaceId, to)) {
      throw conflict(
        `${to} is on the suppression list (unsubscribed, bounced or added by hand); no email is sent to it.`,
        [detail('id', `the recipient ${to} is suppressed`, 'suppressed')],
      );
    }
    const sent = await this.mail.send({
      login,
      draft: { to, text: body.text, html: body.html, parent: target },
      record: {
        workspaceId,
        accountId: login.accountId,
        kind: 'manual',
        campaignId: target.campaign_id,
        contactId: target.contact_id,
      },
      appendToSent: await this.accounts.imapLogin(this.db, login.accountId),
    });
    return { message: toEmailMessage(sent.row), appendedToSent: sent.appendedToSent };
  }

  /** POST /v2/email/set-intent */
  async setIntent(workspaceId: string, body: Parameters<ReplyIntentService['set']>[1]) {
    const row = await this.intents.set(workspaceId, body);
    const views = await this.intents.viewsOf(workspaceId, [row.id]);
    return { message: toEmailMessage(row, views.get(row.id)) };
  }
}
