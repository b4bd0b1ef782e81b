/**
 * Reading one account's INBOX over IMAP (imapflow): connect to the checked address (outbound rule),
 * open INBOX read-only, and hand the messages after the checkpoint to `onMessage` in UID order, at most
 * `limit` per run. UIDVALIDITY is compared with the checkpoint: when it changed, the mailbox is read
 * again from the start (the processor skips Message-IDs it already holds).
 */
import { ImapFlow } from 'imapflow';
import { OutboundRefusedError, resolveAllowedAddress } from '../../net/outbound';
import type { LoginFailure, MailLogin } from '../account/service';

export interface ReadResult {
  uidValidity: string;
  processed: number;
  lastUid: number;
  /** More messages were waiting than the limit allowed. */
  more: boolean;
}

export interface ReadOptions {
  allowPrivate: boolean;
  mailbox: string;
  checkpoint: { uidValidity: string | null; lastUid: number };
  limit: number;
  timeoutMs: number;
  /** Processes one message and moves the checkpoint (one transaction). */
  onMessage(uid: number, uidValidity: string, source: Buffer): Promise<void>;
}

/** A failure to read a mailbox, with whether it is the login's fault (then the account needs the user). */
export class MailboxError extends Error {
  constructor(
    message: string,
    readonly permanent: boolean,
  ) {
    super(message);
  }
}

const FETCH_CHUNK = 50;

export function imapClient(login: MailLogin, address: string, timeoutMs: number): ImapFlow {
  return new ImapFlow({
    host: address,
    port: login.port,
    secure: login.port === 993,
    servername: login.host,
    tls: { servername: login.host },
    auth: { user: login.username, pass: login.password },
    logger: false,
    connectionTimeout: timeoutMs,
    greetingTimeout: timeoutMs,
    socketTimeout: timeoutMs * 3,
    disableAutoIdle: true,
  } as ConstructorParameters<typeof ImapFlow>[0]);
}

/** Connect-time check of a new account's IMAP login; null when it works. */
export async function verifyImapLogin(login: MailLogin, options: { allowPrivate: boolean; timeoutMs: number }): Promise<LoginFailure | null> {
  try {
    const client = await connectImap(login, options);
    await client.logout();
    return null;
  } catch (err) {
    const e = err as Error;
    const reason = e.message.startsWith('IMAP host refused') ? 'private_destination' : e instanceof MailboxError && e.permanent ? 'auth_failed' : 'unreachable';
    return { reason, message: e.message };
  }
}

/** Connects and logs in, translating failures into MailboxError. */
export async function connectImap(login: MailLogin, options: { allowPrivate: boolean; timeoutMs: number }): Promise<ImapFlow> {
  let address: string;
  try {
    address = await resolveAllowedAddress(login.host, { allowPrivate: options.allowPrivate });
  } catch (err) {
    if (err instanceof OutboundRefusedError) throw new MailboxError(`IMAP host refused: ${err.message}`, true);
    throw new MailboxError(`IMAP host ${login.host} cannot be resolved: ${(err as Error).message}`, false);
  }
  const client = imapClient(login, address, options.timeoutMs);
  client.on('error', () => undefined);
  try {
    await client.connect();
  } catch (err) {
    const e = err as Error & { authenticationFailed?: boolean; responseText?: string; code?: string };
    client.close();
    if (e.authenticationFailed) {
      throw new MailboxError(`IMAP authentication failed for ${login.username} at ${login.host}:${login.port}${e.responseText ? `: ${e.responseText}` : ''}`, true);
    }
    throw new MailboxError(`IMAP connection to ${login.host}:${login.port} failed: ${e.code ?? e.message}`, false);
  }
  return client;
}

export async function readMailbox(login: MailLogin, options: ReadOptions): Promise<ReadResult> {
  const client = await connectImap(login, options);
  try {
    let lock;
    try {
      lock = await client.getMailboxLock(options.mailbox, { readOnly: true });
    } catch (err) {
      throw new MailboxError(`IMAP mailbox ${options.mailbox} cannot be opened: ${(err as Error).message}`, false);
    }
    try {
      const box = client.mailbox as { uidValidity: bigint; exists: number };
      const uidValidity = String(box.uidValidity);
      let lastUid = options.checkpoint.uidValidity === uidValidity ? options.checkpoint.lastUid : 0;
      if (box.exists === 0) return { uidValidity, processed: 0, lastUid, more: false };
      const found = (await client.search({ uid: `${lastUid + 1}:*` }, { uid: true })) || [];
      // `n:*` names the last message even when its UID is below n: keep only the new ones.
      const uids = found.filter((u) => u > lastUid).sort((a, b) => a - b);
      const todo = uids.slice(0, options.limit);
      let processed = 0;
      for (let i = 0; i < todo.length; i += FETCH_CHUNK) {
        const chunk = todo.slice(i, i + FETCH_CHUNK);
        const messages = await client.fetchAll(chunk.join(','), { uid: true, source: true }, { uid: true });
        messages.sort((a, b) => a.uid - b.uid);
        for (const m of messages) {
          if (m.uid <= lastUid) continue;
          await options.onMessage(m.uid, uidValidity, m.source ?? Buffer.alloc(0));
          lastUid = m.uid;
          processed += 1;
        }
      }
      return { uidValidity, processed, lastUid, more: uids.length > todo.length };
    } finally {
      lock.release();
    }
  } finally {
    await client.logout().catch(() => client.close());
  }
}

/** Appends a sent message to the account's special-use \Sent mailbox; false when it has none. */
export async function appendToSent(login: MailLogin, raw: Buffer, options: { allowPrivate: boolean; timeoutMs: number }): Promise<boolean> {
  const client = await connectImap(login, options);
  try {
    const boxes = await client.list();
    const sent = boxes.find((b) => b.specialUse === '\\Sent');
    if (!sent) return false;
    const result = await client.append(sent.path, raw, ['\\Seen']);
    return Boolean(result);
  } finally {
    await client.logout().catch(() => client.close());
  }
}
