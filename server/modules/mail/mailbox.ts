/**
 * Mailbox sessions over IMAP (imapflow): connect to the checked address of the account's host (outbound
 * rule) with TLS verified against the host name, list folders by special use, open one, search, fetch with a
 * size bound, move, flag and append. `readMailbox` is the inbox reader's walk past a checkpoint.
 */
import { ImapFlow, type SearchObject } from 'imapflow';
import { OutboundRefusedError, resolveAllowedAddress } from '../../net/outbound';
import { GrantDeadError, type ConnectionOptions, type LoginAuth, type LoginFailure, type MailLogin } from './login';

/** A failure to reach or read a mailbox, with whether it is the login's fault (then the account needs the user). */
export class MailboxError extends Error {
  constructor(
    message: string,
    readonly permanent: boolean,
  ) {
    super(message);
  }
}

/** A search over the open folder (imapflow's query object: `{ header: { 'X-Name': 'value' } }`, `{ seen: false }`, ...). */
export type MailboxQuery = SearchObject;

/** A special-use attribute (RFC 6154). */
export type SpecialUse = '\\Inbox' | '\\Sent' | '\\Junk' | '\\Trash' | '\\Drafts' | '\\Archive' | '\\All' | '\\Flagged';

export interface Folder {
  path: string;
  name: string;
  specialUse: string | null;
}

export interface OpenFolder {
  path: string;
  uidValidity: string;
  uidNext: number;
  exists: number;
}

export interface FetchedMessage {
  uid: number;
  /** The whole message's size in bytes. */
  size: number;
  flags: string[];
  /** The message's bytes, at most `maxBytes` of them. */
  source: Buffer;
  /** The message is larger than `maxBytes`: `source` holds its start only. */
  truncated: boolean;
}

export interface FetchOptions {
  /** At most this many bytes of each message are fetched (the size bound). */
  maxBytes?: number;
}

/** What providers call the spam folder when it has no `\Junk` attribute. */
const SPAM_NAMES = [
  'Junk',
  'Spam',
  'Junk E-mail',
  'Junk Email',
  '[Gmail]/Spam',
  'Bulk Mail',
  'INBOX.Junk',
  'INBOX.Spam',
];

/** Messages fetched per round trip. */
const FETCH_CHUNK = 50;
/** Messages whose chosen header fields are fetched per round trip (a few hundred bytes each). */
const HEADER_CHUNK = 500;

function imapClient(login: MailLogin, address: string, auth: LoginAuth, timeoutMs: number): ImapFlow {
  return new ImapFlow({
    host: address,
    port: login.port,
    secure: login.port === 993,
    servername: login.host,
    tls: { servername: login.host },
    auth,
    logger: false,
    connectionTimeout: timeoutMs,
    greetingTimeout: timeoutMs,
    socketTimeout: timeoutMs * 3,
    disableAutoIdle: true,
  });
}

/**
 * Connects and logs in, translating failures into MailboxError. A refused OAuth login is tried once more with
 * a refreshed access token (the server may have dropped a token before its time).
 */
async function connectImap(login: MailLogin, options: ConnectionOptions): Promise<ImapFlow> {
  let address: string;
  try {
    address = await resolveAllowedAddress(login.host, { allowPrivate: options.allowPrivate });
  } catch (err) {
    // This process may not reach the address (its ALLOW_PRIVATE_MAIL_HOSTS may differ from the API's that
    // accepted the account): not the account's fault, so not permanent.
    if (err instanceof OutboundRefusedError) throw new MailboxError(`IMAP host refused: ${err.message}`, false);
    throw new MailboxError(`IMAP host ${login.host} cannot be resolved: ${(err as Error).message}`, false);
  }
  const auth = await loginOf(() => options.authOf(login));
  try {
    return await logIn(login, address, auth, options.timeoutMs);
  } catch (err) {
    if (!(err instanceof MailboxError && err.permanent)) throw err;
    const again = await loginOf(() => options.afterRefusal(login, auth));
    if (!again) throw err;
    return logIn(login, address, again, options.timeoutMs);
  }
}

/** The login to use; a dead grant needs a person, a provider that did not answer is retried like a server. */
async function loginOf<T>(find: () => Promise<T>): Promise<T> {
  try {
    return await find();
  } catch (err) {
    throw new MailboxError((err as Error).message, err instanceof GrantDeadError);
  }
}

async function logIn(login: MailLogin, address: string, auth: LoginAuth, timeoutMs: number): Promise<ImapFlow> {
  const client = imapClient(login, address, auth, timeoutMs);
  client.on('error', () => undefined);
  try {
    await client.connect();
  } catch (err) {
    const e = err as Error & { authenticationFailed?: boolean; responseText?: string; code?: string };
    client.close();
    if (e.authenticationFailed) {
      throw new MailboxError(
        `IMAP authentication failed for ${login.username} at ${login.host}:${login.port}${e.responseText ? `: ${e.responseText}` : ''}`,
        true,
      );
    }
    throw new MailboxError(`IMAP connection to ${login.host}:${login.port} failed: ${e.code ?? e.message}`, false);
  }
  return client;
}

/** Connect-time check of a new account's IMAP login; null when it works. */
export async function verifyImapLogin(login: MailLogin, options: ConnectionOptions): Promise<LoginFailure | null> {
  try {
    const client = await connectImap(login, options);
    await client.logout();
    return null;
  } catch (err) {
    const e = err as Error;
    const reason = e.message.startsWith('IMAP host refused')
      ? 'private_destination'
      : e.message.startsWith('reconnect_required')
        ? 'reconnect_required'
        : e instanceof MailboxError && e.permanent
          ? 'auth_failed'
          : 'unreachable';
    return { reason, message: e.message };
  }
}

/**
 * One logged-in connection to an account's mailbox. Not shared: one caller at a time, and `close()` when done
 * (`MailService.withMailbox` does both). UIDs are used throughout, never sequence numbers.
 */
export class MailboxSession {
  private constructor(
    private readonly client: ImapFlow,
    /**
     * The folder list: asked once (LIST is a round trip), or given by the opener from an earlier session of
     * the same login; ensureFolder adds what it creates.
     */
    private listed: Folder[] | null,
  ) {}

  static async open(
    login: MailLogin,
    options: ConnectionOptions,
    folders: Folder[] | null = null,
  ): Promise<MailboxSession> {
    return new MailboxSession(await connectImap(login, options), folders);
  }

  async folders(): Promise<Folder[]> {
    this.listed ??= (await this.client.list()).map((b) => ({
      path: b.path,
      name: b.name,
      specialUse: b.specialUse ?? null,
    }));
    return this.listed;
  }

  /** The folder list as this IMAP connection last listed it (null when it never asked). */
  knownFolders(): Folder[] | null {
    return this.listed;
  }

  /** The folder with this special use (`\Junk`, `\Sent`, ...), or null when the server names none. */
  async specialUse(use: SpecialUse): Promise<string | null> {
    return (await this.folders()).find((f) => f.specialUse === use)?.path ?? null;
  }

  /** The spam folder: the `\Junk` special-use one, else the first with a name providers use; null when none. */
  async spamFolder(): Promise<string | null> {
    const folders = await this.folders();
    const junk = folders.find((f) => f.specialUse === '\\Junk');
    if (junk) return junk.path;
    const byName = new Map(folders.map((f) => [f.path.toLowerCase(), f.path]));
    return SPAM_NAMES.map((name) => byName.get(name.toLowerCase())).find((path) => path !== undefined) ?? null;
  }

  /** Creates the folder unless it exists. */
  async ensureFolder(path: string): Promise<void> {
    const folders = await this.folders();
    if (folders.some((f) => f.path === path)) return;
    await this.client.mailboxCreate(path);
    folders.push({ path, name: path, specialUse: null });
  }

  /** Opens a folder; the operations below act on the folder opened last. */
  async select(path: string, options: { readOnly?: boolean } = {}): Promise<OpenFolder> {
    let box;
    try {
      box = await this.client.mailboxOpen(path, { readOnly: options.readOnly ?? false });
    } catch (err) {
      throw new MailboxError(`IMAP mailbox ${path} cannot be opened: ${(err as Error).message}`, false);
    }
    return { path: box.path, uidValidity: String(box.uidValidity), uidNext: box.uidNext, exists: box.exists };
  }

  /** UIDs of the open folder's messages matching the query, ascending. */
  async search(query: MailboxQuery): Promise<number[]> {
    const found = (await this.client.search(query, { uid: true })) || [];
    return found.sort((a, b) => a - b);
  }

  /** The messages with these UIDs, ascending, each cut at `maxBytes` when given. */
  async fetch(uids: number[], options: FetchOptions = {}): Promise<FetchedMessage[]> {
    const out: FetchedMessage[] = [];
    for (let i = 0; i < uids.length; i += FETCH_CHUNK)
      out.push(...(await this.fetchChunk(uids.slice(i, i + FETCH_CHUNK), options)));
    return out;
  }

  private async fetchChunk(uids: number[], options: FetchOptions): Promise<FetchedMessage[]> {
    if (uids.length === 0) return [];
    const source = options.maxBytes !== undefined ? { maxLength: options.maxBytes } : true;
    const messages = await this.client.fetchAll(
      uids.join(','),
      { uid: true, size: true, flags: true, source },
      { uid: true },
    );
    return messages
      .map((m) => {
        const bytes = m.source ?? Buffer.alloc(0);
        const size = m.size ?? bytes.length;
        return { uid: m.uid, size, flags: [...(m.flags ?? [])], source: bytes, truncated: size > bytes.length };
      })
      .sort((a, b) => a.uid - b.uid);
  }

  /**
   * The named header fields of these messages (raw header lines, unfolded by the caller), with each message's
   * size: what recognising a message by its headers costs, whatever the size of its body.
   */
  async fetchHeaders(uids: number[], names: string[]): Promise<{ uid: number; size: number; headers: Buffer }[]> {
    const out: { uid: number; size: number; headers: Buffer }[] = [];
    for (let i = 0; i < uids.length; i += HEADER_CHUNK) {
      const chunk = uids.slice(i, i + HEADER_CHUNK);
      for (const m of await this.client.fetchAll(
        chunk.join(','),
        { uid: true, size: true, headers: names },
        { uid: true },
      )) {
        out.push({ uid: m.uid, size: m.size ?? 0, headers: m.headers ?? Buffer.alloc(0) });
      }
    }
    return out.sort((a, b) => a.uid - b.uid);
  }

  /** Moves messages of the open folder to `destination`; returns their UIDs there when the server says. */
  async move(uids: number[], destination: string): Promise<Map<number, number>> {
    if (uids.length === 0) return new Map();
    const result = await this.client.messageMove(uids.join(','), destination, { uid: true });
    return result ? (result.uidMap ?? new Map()) : new Map();
  }

  /** Deletes messages of the open folder for good (flagged \\Deleted and expunged). */
  async delete(uids: number[]): Promise<void> {
    if (uids.length) await this.client.messageDelete(uids.join(','), { uid: true });
  }

  async addFlags(uids: number[], flags: string[]): Promise<void> {
    if (uids.length) await this.client.messageFlagsAdd(uids.join(','), flags, { uid: true });
  }

  async removeFlags(uids: number[], flags: string[]): Promise<void> {
    if (uids.length) await this.client.messageFlagsRemove(uids.join(','), flags, { uid: true });
  }

  /** Appends a message to a folder; its UID there when the server reports one (UIDPLUS). */
  async append(path: string, raw: Buffer, flags: string[] = [], date?: Date): Promise<{ uid: number | null } | null> {
    const result = await this.client.append(path, raw, flags, date);
    return result ? { uid: result.uid ?? null } : null;
  }

  async close(): Promise<void> {
    await this.client.logout().catch(() => this.client.close());
  }
}

export interface ReadResult {
  uidValidity: string;
  processed: number;
  lastUid: number;
  /** More messages were waiting than the limit allowed. */
  more: boolean;
}

export interface ReadOptions {
  mailbox: string;
  checkpoint: { uidValidity: string | null; lastUid: number };
  limit: number;
  /**
   * At most this many bytes of each message are fetched (its headers and the start of its body), and the
   * messages fetched at once hold at most READ_BUDGET bytes: memory stays bounded whatever the mail's size.
   */
  maxBytes?: number;
  /** Processes one message and moves the checkpoint (one transaction); `size` is the whole message's, larger than `source` when cut. */
  onMessage(uid: number, uidValidity: string, source: Buffer, size: number): Promise<void>;
}

/** Bytes of messages one fetch round trip may hold when `maxBytes` bounds each. */
const READ_BUDGET = 8 * 1024 * 1024;

/**
 * Hands the messages of one folder after the checkpoint to `onMessage` in UID order, at most `limit` per call,
 * the folder opened read-only. When UIDVALIDITY differs from the checkpoint's the folder is read from the start.
 */
export async function readMailbox(session: MailboxSession, options: ReadOptions): Promise<ReadResult> {
  const box = await session.select(options.mailbox, { readOnly: true });
  let lastUid = options.checkpoint.uidValidity === box.uidValidity ? options.checkpoint.lastUid : 0;
  if (box.exists === 0) return { uidValidity: box.uidValidity, processed: 0, lastUid, more: false };
  // `n:*` names the last message even when its UID is below n: keep only the new ones.
  const uids = (await session.search({ uid: `${lastUid + 1}:*` })).filter((u) => u > lastUid);
  const todo = uids.slice(0, options.limit);
  let processed = 0;
  const chunk = options.maxBytes
    ? Math.max(1, Math.min(FETCH_CHUNK, Math.floor(READ_BUDGET / options.maxBytes)))
    : FETCH_CHUNK;
  for (let i = 0; i < todo.length; i += chunk) {
    for (const m of await session.fetch(todo.slice(i, i + chunk), { maxBytes: options.maxBytes })) {
      if (m.uid <= lastUid) continue;
      await options.onMessage(m.uid, box.uidValidity, m.source, m.size);
      lastUid = m.uid;
      processed += 1;
    }
  }
  return { uidValidity: box.uidValidity, processed, lastUid, more: uids.length > todo.length };
}
