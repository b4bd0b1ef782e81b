/**
 * The one owner of mail: composes messages, sends them through the SMTP transport pool, records them in
 * `email_messages`, appends them to Sent and opens mailbox sessions. Sending, the inbox, the account login
 * check and warm-up call it (and email verification its SMTP mailbox probe, `probeMailbox`); nothing else
 * imports nodemailer or imapflow or touches the table.
 *
 * Two ways to send:
 *   - `send()`: compose, (optionally) record as `sending`, send, record the outcome, (optionally) append to
 *     Sent. For one message at a time (answers, warm-up, placement tests).
 *   - `compose()` + `recordOutbound()` in the caller's transaction, then `transmit()` and `finish()`: the
 *     sending engine claims and records many messages before any network I/O.
 */
import type { Clock } from '../../platform/clock';
import type { Db, Executor } from '../../db';
import type { Logger } from '../../platform/logger';
import { compose, composeRaw, type Composed, type Draft, type OutgoingMessage } from './compose';
import type { SecretBox } from '../../platform/secrets';
import { GrantStore } from './grants';
import {
  MailCredentials,
  type ConnectionOptions,
  type GrantDeathHandler,
  type LoginAuth,
  type LoginFailure,
  type MailLogin,
} from './login';
import type { OAuthClients, OAuthProviderName, TokenAnswer } from './oauth';
import { MailboxSession, verifyImapLogin, type Folder } from './mailbox';
import {
  MailStore,
  type ListFilter,
  type MessageKind,
  type MessageRow,
  type MessageStatus,
  type ThreadParent,
} from './store';
import { TransportPool, type RawMessage, type SendOutcome } from './transport';

export { replySubject } from './compose';
export type { Composed, Draft, OutgoingMessage } from './compose';
export {
  GrantDeadError,
  type ConnectionOptions,
  type GrantDeathHandler,
  type LoginFailure,
  type MailLogin,
} from './login';
export {
  OAuthClients,
  OAuthError,
  PROVIDER_SETTING,
  pkcePair,
  type OAuthProvider,
  type OAuthProviderName,
  type TokenAnswer,
} from './oauth';
export {
  MailboxError,
  MailboxSession,
  readMailbox,
  type FetchedMessage,
  type Folder,
  type MailboxQuery,
  type OpenFolder,
  type ReadResult,
  type SpecialUse,
} from './mailbox';
export { probeMailbox, type ProbeOptions, type ProbeOutcome } from './smtp-probe';
export {
  HIDDEN_KINDS,
  type ListFilter,
  type MessageKind,
  type MessageRow,
  type MessageStatus,
  type ThreadParent,
} from './store';
export { CONNECTIONS_PER_ACCOUNT } from './transport';
export type { RawMessage, SendOutcome } from './transport';

export interface MailSettings {
  /** Loopback and private mail hosts may be reached (tests, self-hosted relays). */
  allowPrivate: boolean;
  smtpTimeoutMs: number;
  imapTimeoutMs: number;
}

/** What logging in with OAuth grants needs: the providers, the key that encrypts tokens, and who hears of a dead grant. */
export interface MailOAuth {
  clients: OAuthClients;
  secrets: SecretBox;
  grantDied: GrantDeathHandler;
}

/** Who a recorded message belongs to and what it is part of. */
export interface RecordAs {
  workspaceId: string;
  accountId: string;
  kind: MessageKind;
  campaignId?: string | null;
  contactId?: string | null;
  stepId?: string | null;
  variantId?: string | null;
  stepNumber?: number | null;
}

export interface SendRequest {
  /** The sending account's SMTP login; the message goes out from its address. */
  login: MailLogin;
  draft: Omit<Draft, 'from' | 'date'> & { date?: Date };
  /** Stores the message in `email_messages` (as `sending`, then its outcome); not stored when absent. */
  record?: RecordAs;
  /** The account's IMAP login: after a successful send the very bytes sent are appended to its \Sent folder. */
  appendToSent?: MailLogin | null;
}

export interface SendResult {
  composed: Composed;
  /** The very bytes sent (for a caller that appends several sent messages to Sent in one session). */
  raw: Buffer;
  outcome: SendOutcome;
  /** The stored row with its outcome (when `record` was given). */
  row: MessageRow | null;
  appendedToSent: boolean;
}

/**
 * The status a send outcome gives a message. Only campaign mail is `bounced` on a permanent refusal (bounce
 * accounting and protection count it); any other refused message is `failed`.
 */
export function statusOf(kind: MessageKind, outcome: SendOutcome): Exclude<MessageStatus, 'sending' | 'received'> {
  if (outcome.kind === 'sent' || outcome.kind === 'unknown') return outcome.kind;
  return outcome.kind === 'bounced' && kind === 'campaign' ? 'bounced' : 'failed';
}

/** How long a login's folder list is reused before it is asked again. */
const FOLDER_LIST_TTL_MS = 60 * 60_000;

/** What MailService is built from, by name. */
export interface MailServiceDeps {
  db: Db;
  store: MailStore;
  clock: Clock;
  logger: Logger;
  settings: MailSettings;
  oauth: MailOAuth;
}

export class MailService {
  private readonly transports: TransportPool;
  private readonly imap: ConnectionOptions;
  /** How each account logs in now (password or a grant's access token); tests read its refresh count. */
  readonly credentials: MailCredentials;
  /**
   * Each login's folder list from a recent session, so a later session within FOLDER_LIST_TTL_MS skips the
   * LIST round trip (the warm-up pool opens thousands of short sessions a day). A session that fails forgets
   * it: a folder renamed or deleted meanwhile costs one failed read, then a fresh list.
   */
  private readonly folderLists = new Map<string, { folders: Folder[]; listedAt: number }>();

  private readonly db: Db;
  private readonly store: MailStore;
  private readonly clock: Clock;
  private readonly logger: Logger;

  constructor({ db, store, clock, logger, settings, oauth }: MailServiceDeps) {
    this.db = db;
    this.store = store;
    this.clock = clock;
    this.logger = logger;

    this.credentials = new MailCredentials({
      db,
      store: new GrantStore(),
      clients: oauth.clients,
      secrets: oauth.secrets,
      clock,
      grantDied: oauth.grantDied,
    });
    const logins = {
      authOf: (login: MailLogin) => this.credentials.authOf(login),
      afterRefusal: (login: MailLogin, auth: LoginAuth) => this.credentials.afterRefusal(login, auth),
    };
    this.transports = new TransportPool({
      allowPrivate: settings.allowPrivate,
      timeoutMs: settings.smtpTimeoutMs,
      ...logins,
    });
    this.imap = { allowPrivate: settings.allowPrivate, timeoutMs: settings.imapTimeoutMs, ...logins };
  }

  /** Stores a proved OAuth grant for the account (connect or reconnect), in the caller's transaction. */
  storeGrant(
    trx: Executor,
    accountId: string,
    provider: OAuthProviderName,
    refreshToken: string,
    answer: TokenAnswer,
  ): Promise<void> {
    return this.credentials.storeGrant(trx, accountId, provider, refreshToken, answer);
  }

  // --- composing and sending ---

  compose(draft: Draft): Composed {
    return compose(draft);
  }

  /** Stores a composed outbound message as `sending` (before it goes out), in the caller's transaction. */
  async recordOutbound(db: Executor, composed: Composed, as: RecordAs): Promise<MessageRow> {
    const m = composed.message;
    const row: MessageRow = {
      id: composed.id,
      workspace_id: as.workspaceId,
      account_id: as.accountId,
      campaign_id: as.campaignId ?? null,
      contact_id: as.contactId ?? null,
      step_id: as.stepId ?? null,
      variant_id: as.variantId ?? null,
      step_number: as.stepNumber ?? null,
      direction: 'outbound',
      kind: as.kind,
      message_id: composed.messageId,
      in_reply_to: composed.inReplyTo,
      references: composed.references,
      thread_id: composed.threadId,
      from_address: m.from,
      to_address: m.to,
      subject: composed.subject,
      text_body: m.text,
      html_body: m.html ?? null,
      status: 'sending',
      smtp_response: null,
      sent_at: null,
      received_at: null,
      read_at: null,
      created_at: m.date,
    };
    await this.store.insert(db, row);
    return row;
  }

  /** Hands a message to the account's pooled SMTP transport; never throws, the outcome says what happened. */
  transmit(login: MailLogin, message: OutgoingMessage | RawMessage): Promise<SendOutcome> {
    return this.transports.send(login, message);
  }

  /** Records a send's outcome on a `sending` message; false when it is no longer `sending` (expired meanwhile). */
  finish(db: Executor, id: string, kind: MessageKind, outcome: SendOutcome): Promise<boolean> {
    const status = statusOf(kind, outcome);
    return this.store.finish(db, id, {
      status,
      smtp_response: outcome.response,
      sent_at: status === 'sent' ? this.clock.now() : null,
    });
  }

  /** Composes, sends and (as asked) records one message and appends it to Sent. */
  send(request: SendRequest & { record: RecordAs }): Promise<SendResult & { row: MessageRow }>;
  send(request: SendRequest): Promise<SendResult>;
  async send(request: SendRequest): Promise<SendResult> {
    const { login } = request;
    const composed = compose({ ...request.draft, from: login.email, date: request.draft.date ?? this.clock.now() });
    const row = request.record ? await this.recordOutbound(this.db, composed, request.record) : null;
    // Composed first, so the very bytes sent are the ones appended to the Sent mailbox.
    const raw = await composeRaw(composed.message);
    const outcome = await this.transports.send(login, { to: composed.message.to, raw });
    if (row) {
      await this.finish(this.db, row.id, row.kind, outcome);
      const status = statusOf(row.kind, outcome);
      Object.assign(row, {
        status,
        smtp_response: outcome.response,
        sent_at: status === 'sent' ? this.clock.now() : null,
      });
    }
    let appendedToSent = false;
    if (outcome.kind === 'sent' && request.appendToSent) {
      try {
        appendedToSent = (await this.appendToSent(request.appendToSent, [raw])) > 0;
      } catch (err) {
        this.logger.warn(
          { accountId: login.accountId, err: (err as Error).message },
          'mail: could not append the sent message to Sent',
        );
      }
    }
    return { composed, raw, outcome, row, appendedToSent };
  }

  /**
   * Appends sent messages to the account's special-use \Sent folder (seen), in one session (one login for
   * all of them); how many were appended, 0 when it has no \Sent folder.
   */
  appendToSent(login: MailLogin, raws: Buffer[]): Promise<number> {
    if (raws.length === 0) return Promise.resolve(0);
    return this.withMailbox(login, async (session) => {
      const sent = await session.specialUse('\\Sent');
      if (!sent) return 0;
      let appended = 0;
      for (const raw of raws) if (await session.append(sent, raw, ['\\Seen'])) appended += 1;
      return appended;
    });
  }

  // --- mailboxes and logins ---

  /** A logged-in session on the account's mailbox; the caller closes it (or use withMailbox). Throws MailboxError. */
  openMailbox(login: MailLogin): Promise<MailboxSession> {
    return MailboxSession.open(login, this.imap);
  }

  /** Runs `work` in a session on the account's mailbox, closed afterwards whatever happens. */
  async withMailbox<T>(login: MailLogin, work: (session: MailboxSession) => Promise<T>): Promise<T> {
    const key = `${login.accountId} ${login.username}@${login.host}:${login.port}`;
    const now = this.clock.now().getTime();
    const known = this.folderLists.get(key);
    const fresh = known && now - known.listedAt < FOLDER_LIST_TTL_MS ? known : null;
    const session = await MailboxSession.open(login, this.imap, fresh?.folders ?? null);
    try {
      const result = await work(session);
      const folders = session.knownFolders();
      if (folders) this.folderLists.set(key, { folders, listedAt: fresh?.listedAt ?? now });
      return result;
    } catch (err) {
      this.folderLists.delete(key);
      throw err;
    } finally {
      await session.close();
    }
  }

  /** Logs in to SMTP once without sending; null when the login works. */
  verifySmtp(login: MailLogin): Promise<LoginFailure | null> {
    return this.transports.verify(login);
  }

  /** Logs in to IMAP once; null when the login works. */
  verifyImap(login: MailLogin): Promise<LoginFailure | null> {
    return verifyImapLogin(login, this.imap);
  }

  /** Closes the pooled SMTP connections (shutdown). */
  close(): void {
    this.transports.close();
  }

  // --- the message record ---

  /** Stores an inbound message; false when the account already holds its Message-ID. */
  insertInbound(db: Executor, row: MessageRow): Promise<boolean> {
    return this.store.insertInbound(db, row);
  }

  hasInbound(db: Executor, accountId: string, messageId: string): Promise<boolean> {
    return this.store.hasInbound(db, accountId, messageId);
  }

  /**
   * Messages left `sending` that may have gone out become `unknown` (their sender stopped before the outcome):
   * a campaign claim handed to SMTP before `before`, any other kind recorded before it.
   */
  expireSending(db: Executor, before: Date): Promise<{ id: string; contact_id: string | null }[]> {
    return this.store.expireSending(db, before, 'The worker stopped before the SMTP outcome was recorded.');
  }

  /**
   * A batch engine's claim (recordOutbound) is handed to SMTP now: committed before transmit(), so a claim
   * never handed over is known not to have gone out. False when the claim is gone (dropped meanwhile).
   */
  handOver(db: Executor, id: string): Promise<boolean> {
    return this.store.handOver(db, id, this.clock.now());
  }

  /** Campaign claims never handed to SMTP (`ids`, or all recorded before `before`) are deleted; returns their contacts. */
  dropUnhanded(db: Executor, which: { ids: string[] } | { before: Date }): Promise<string[]> {
    return this.store.dropUnhanded(db, which);
  }

  /** A message SMTP accepted that bounced later (a DSN): `bounced`, once; undefined when it already was. */
  markLateBounce(
    db: Executor,
    id: string,
  ): Promise<Pick<MessageRow, 'account_id' | 'campaign_id' | 'contact_id' | 'kind'> | undefined> {
    return this.store.markLateBounce(db, id);
  }

  /** Sets or clears read_at on the workspace's messages among `ids`; returns the ids found. */
  markRead(db: Executor, workspaceId: string, ids: string[], readAt: Date | null): Promise<string[]> {
    return this.store.markRead(db, workspaceId, ids, readAt);
  }

  /** What an answer to the message needs (any kind, any workspace: the caller holds its id). */
  threadParent(db: Executor, id: string): Promise<ThreadParent | undefined> {
    return this.store.threadParent(db, id);
  }

  /** A message of the workspace's conversations (warm-up and placement mail are never returned). */
  get(db: Executor, workspaceId: string, id: string): Promise<MessageRow | undefined> {
    return this.store.get(db, workspaceId, id);
  }

  thread(db: Executor, workspaceId: string, threadId: string): Promise<MessageRow[]> {
    return this.store.thread(db, workspaceId, threadId);
  }

  list(db: Executor, filter: ListFilter): Promise<MessageRow[]> {
    return this.store.list(db, filter);
  }

  /** Outbound conversation messages of the workspace with any of these RFC Message-IDs, newest first. */
  findOutboundByMessageIds(db: Executor, workspaceId: string, messageIds: string[]): Promise<MessageRow[]> {
    return this.store.findOutboundByMessageIds(db, workspaceId, messageIds);
  }

  /** The latest outbound conversation messages an account sent to an address, newest first. */
  findOutboundTo(db: Executor, accountId: string, address: string, limit: number): Promise<MessageRow[]> {
    return this.store.findOutboundTo(db, accountId, address, limit);
  }

  // --- counts the sending engine paces and protects by ---

  /** Outbound messages of a campaign created since `since` that went out or may have: all, and first steps. */
  campaignSentSince(db: Executor, campaignId: string, since: Date): Promise<{ all: number; first: number }> {
    return this.store.campaignSentSince(db, campaignId, since);
  }

  /** Per account: outbound messages of these kinds created since `since` that went out or may have. */
  sentSinceByAccount(
    db: Executor,
    accountIds: string[],
    kinds: readonly MessageKind[],
    since: Date,
  ): Promise<Map<string, number>> {
    return this.store.sentSinceByAccount(db, accountIds, kinds, since);
  }

  /**
   * Per recipient domain (lower case) among `domains`: campaign messages of the workspace (of one campaign when
   * `campaignId` is given) created since `since` that went out or may have.
   */
  sentToDomainsSince(
    db: Executor,
    scope: { workspaceId: string; campaignId?: string },
    domains: string[],
    since: Date,
  ): Promise<Map<string, number>> {
    return this.store.sentToDomainsSince(db, scope, domains, since);
  }

  /** The account's last `n` finished campaign sends: how many, and how many bounced hard. */
  recentOutcomes(db: Executor, accountId: string, n: number): Promise<{ total: number; bounced: number }> {
    return this.store.recentOutcomes(db, { account_id: accountId }, n);
  }

  /** The campaign's last `n` finished sends: how many, and how many bounced hard. */
  recentCampaignOutcomes(db: Executor, campaignId: string, n: number): Promise<{ total: number; bounced: number }> {
    return this.store.recentOutcomes(db, { campaign_id: campaignId }, n);
  }

  /** Campaign messages sent, per step. */
  sentPerStep(db: Executor, campaignId: string): Promise<Map<string, number>> {
    return this.store.sentPerStep(db, campaignId);
  }
}
