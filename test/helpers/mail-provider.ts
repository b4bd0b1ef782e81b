/**
 * A small mail provider on loopback for warm-up and deliverability tests: an SMTP front (smtp-server) that
 * takes mail for its mailboxes, on as many domains as the test likes, and files each message into a private
 * dovecot's maildirs (test/helpers/imap-server.ts), in INBOX or, when the spam rule says so, in `Junk`
 * (special-use \Junk). Accounts log in to both sides with the mailbox's address and password.
 *
 *   const provider = await startMailProvider({ mailboxes: ['ann@gmail.test', 'bob@outlook.test'] });
 *   await t.client.POST('/v1/account/connect', { body: provider.connectBody('ann@gmail.test') });
 *   provider.spamFrom('spammy.test');                 // mail from that domain (or an address) goes to Junk
 *   provider.refuse('bob@outlook.test', 'full');      // RCPT answers 552 5.2.2
 *   provider.discard('cy@yahoo.test');                // accepted, filed nowhere
 *   await provider.locate('bob@outlook.test', '<id@x>'); // [{ mailbox: 'Junk', uid: 1, flags: [] }]
 *   await provider.close();
 *
 * Delivery writes the message into the mailbox's maildir (tmp/ then new/, owned by the dovecot user), as a
 * local delivery agent does, before the SMTP front answers 250: once a send returns, the message is there.
 * Writing the maildir needs no IMAP login per message, so it also carries a benchmark's volume.
 */
import type { AddressInfo } from 'node:net';
import { simpleParser } from 'mailparser';
import { SMTPServer, type SMTPServerAddress } from 'smtp-server';
import { startImapServer, type ImapTestServer } from './imap-server';

export type Folder = 'INBOX' | 'Junk';

/** What the spam rule sees of one message for one recipient. */
export interface Incoming {
  /** Envelope sender (MAIL FROM), lower-case; '' for a null sender. */
  mailFrom: string;
  /** The From header's address, lower-case; '' when missing. */
  from: string;
  /** This recipient, lower-case. */
  to: string;
  subject: string;
  messageId: string | null;
  raw: Buffer;
}

/** Why a recipient is refused at RCPT: a full mailbox (552 5.2.2), an unknown user (550 5.1.1), or any reply. */
export type Refusal = 'full' | 'unknown' | { code: number; message: string };

/** One message for one recipient, as the provider handled it. */
export interface Delivery {
  mailFrom: string;
  from: string;
  to: string;
  subject: string;
  messageId: string | null;
  /** Where it was filed; null when refused or discarded. */
  folder: Folder | null;
  /** The SMTP reply of a refusal. */
  refused: string | null;
  /** The SMTP login that sent it, if any. */
  authUser: string | null;
}

export interface MailProvider {
  host: '127.0.0.1';
  smtpPort: number;
  imapPort: number;
  /** The dovecot instance behind it (raw IMAP clients, `messages`, `deliverDirect`). */
  imap: ImapTestServer;
  /** Adds a mailbox (usable at once); the password defaults to `pw-<address>`. */
  addMailbox(address: string, password?: string): void;
  /** The mailboxes' addresses, lower-case. */
  addresses(): string[];
  password(address: string): string;
  /** The body of `POST /v1/account/connect` that connects this mailbox (SMTP and IMAP on this provider). */
  connectBody(address: string): {
    email: string;
    provider: 'smtp';
    smtp: { host: string; port: number; password: string };
    imap: { host: string; port: number; password: string };
  };
  /** Files mail from these senders in Junk: an address, or a domain (`spammy.test` or `@spammy.test`). */
  spamFrom(...senders: string[]): void;
  /** Clears `spamFrom` and `spamWhen`: everything goes to INBOX again. */
  clearSpamRules(): void;
  /** Files a message in Junk when this returns true (besides `spamFrom`). */
  spamWhen(rule: ((message: Incoming) => boolean) | null): void;
  /** Accepts mail for the mailbox (250) and files it nowhere, as a provider that silently drops it; false stops. */
  discard(address: string, on?: boolean): void;
  /** Makes a mailbox refuse mail at RCPT; null accepts again. */
  refuse(address: string, refusal: Refusal | null): void;
  /** Every message per recipient, in arrival order. */
  deliveries: Delivery[];
  /** Where a message with this Message-ID is now in the mailbox (every folder is searched, over IMAP). */
  locate(address: string, messageId: string): Promise<{ mailbox: string; uid: number; flags: string[] }[]>;
  /** The folders a mailbox has, with their special use. */
  folders(address: string): Promise<{ path: string; specialUse: string | null }[]>;
  close(): Promise<void>;
}

const smtpError = (code: number, message: string) => Object.assign(new Error(message), { responseCode: code });

const REFUSALS: Record<'full' | 'unknown', { code: number; message: string }> = {
  full: { code: 552, message: '5.2.2 Mailbox full: the recipient is over quota' },
  unknown: { code: 550, message: '5.1.1 User unknown: no such mailbox here' },
};

const angle = (id: string) => (id.startsWith('<') ? id : `<${id}>`);

export async function startMailProvider(
  options: {
    mailboxes?: (string | { address: string; password: string })[];
    /** The INTERNALDATE stamped on delivered mail (the test's clock); real time by default. */
    now?: () => Date;
  } = {},
): Promise<MailProvider> {
  const imap = await startImapServer();
  const passwords = new Map<string, string>();
  const refusals = new Map<string, Refusal>();
  const discarded = new Set<string>();
  const spamSenders = new Set<string>();
  let spamRule: ((message: Incoming) => boolean) | null = null;
  const deliveries: Delivery[] = [];
  const now = options.now ?? (() => new Date());

  const addMailbox = (address: string, password = `pw-${address.toLowerCase()}`) => {
    const key = address.toLowerCase();
    passwords.set(key, password);
    imap.addUser(key, password);
  };
  for (const m of options.mailboxes ?? []) {
    if (typeof m === 'string') addMailbox(m);
    else addMailbox(m.address, m.password);
  }
  const password = (address: string) => {
    const found = passwords.get(address.toLowerCase());
    if (found === undefined) throw new Error(`the mail provider has no mailbox ${address}`);
    return found;
  };

  const refusalOf = (to: string): { code: number; message: string } | null => {
    if (!passwords.has(to)) return REFUSALS.unknown;
    const r = refusals.get(to);
    if (!r) return null;
    return typeof r === 'string' ? REFUSALS[r] : r;
  };
  const isSpam = (m: Incoming) => {
    for (const sender of [m.from, m.mailFrom]) {
      if (!sender) continue;
      const domain = sender.slice(sender.lastIndexOf('@') + 1);
      if (spamSenders.has(sender) || spamSenders.has(domain)) return true;
    }
    return spamRule ? spamRule(m) : false;
  };

  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    // Loopback without TLS: plain logins are what the app's SMTP client sends here.
    allowInsecureAuth: true,
    size: 50 * 1024 * 1024,
    logger: false,
    onAuth(auth, _session, cb) {
      const known = passwords.get((auth.username ?? '').toLowerCase());
      if (known === undefined || known !== auth.password)
        return cb(smtpError(535, '5.7.8 Authentication credentials invalid'));
      cb(null, { user: (auth.username ?? '').toLowerCase() });
    },
    onRcptTo(address: SMTPServerAddress, session, cb) {
      const to = address.address.toLowerCase();
      const refusal = refusalOf(to);
      if (refusal) {
        const mailFrom = session.envelope.mailFrom ? session.envelope.mailFrom.address.toLowerCase() : '';
        deliveries.push({
          mailFrom,
          from: '',
          to,
          subject: '',
          messageId: null,
          folder: null,
          refused: `${refusal.code} ${refusal.message}`,
          authUser: typeof session.user === 'string' ? session.user : null,
        });
        return cb(smtpError(refusal.code, refusal.message));
      }
      cb();
    },
    onData(stream, session, cb) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        const raw = Buffer.concat(chunks);
        simpleParser(raw, {
          skipHtmlToText: true,
          skipTextToHtml: true,
          skipImageLinks: true,
          skipTextLinks: true,
        }).then(
          (parsed) => {
            const mailFrom = session.envelope.mailFrom ? session.envelope.mailFrom.address.toLowerCase() : '';
            const from = (parsed.from?.value[0]?.address ?? '').toLowerCase();
            const messageId = parsed.messageId ?? null;
            const subject = parsed.subject ?? '';
            try {
              for (const rcpt of session.envelope.rcptTo) {
                const to = rcpt.address.toLowerCase();
                const folder: Folder | null = discarded.has(to)
                  ? null
                  : isSpam({ mailFrom, from, to, subject, messageId, raw })
                    ? 'Junk'
                    : 'INBOX';
                // What a delivery agent adds on top: the envelope sender and the recipient.
                const stamped = Buffer.concat([
                  Buffer.from(`Return-Path: <${mailFrom}>\r\nDelivered-To: ${to}\r\n`),
                  raw,
                ]);
                if (folder) imap.deliverDirect(to, [stamped], { mailbox: folder, date: now() });
                deliveries.push({
                  mailFrom,
                  from,
                  to,
                  subject,
                  messageId,
                  folder,
                  refused: null,
                  authUser: typeof session.user === 'string' ? session.user : null,
                });
              }
            } catch (err) {
              return cb(smtpError(451, `4.3.0 Local delivery failed: ${(err as Error).message}`));
            }
            cb();
          },
          (err: Error) => cb(smtpError(554, `5.6.0 Malformed message: ${err.message}`)),
        );
      });
    },
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const smtpPort = (server.server.address() as AddressInfo).port;

  return {
    host: '127.0.0.1',
    smtpPort,
    imapPort: imap.port,
    imap,
    addMailbox,
    addresses: () => [...passwords.keys()],
    password,
    connectBody(address) {
      const pass = password(address);
      return {
        email: address.toLowerCase(),
        provider: 'smtp',
        smtp: { host: '127.0.0.1', port: smtpPort, password: pass },
        imap: { host: '127.0.0.1', port: imap.port, password: pass },
      };
    },
    spamFrom(...senders) {
      for (const s of senders) spamSenders.add(s.toLowerCase().replace(/^@/, ''));
    },
    clearSpamRules() {
      spamSenders.clear();
      spamRule = null;
    },
    spamWhen(rule) {
      spamRule = rule;
    },
    discard(address, on = true) {
      if (on) discarded.add(address.toLowerCase());
      else discarded.delete(address.toLowerCase());
    },
    refuse(address, refusal) {
      if (refusal === null) refusals.delete(address.toLowerCase());
      else refusals.set(address.toLowerCase(), refusal);
    },
    deliveries,
    async locate(address, messageId) {
      const c = await imap.client(address.toLowerCase());
      try {
        const found: { mailbox: string; uid: number; flags: string[] }[] = [];
        for (const box of await c.list()) {
          const lock = await c.getMailboxLock(box.path);
          try {
            const uids = await c.search({ header: { 'message-id': angle(messageId) } }, { uid: true });
            if (!uids || uids.length === 0) continue;
            for await (const m of c.fetch(uids, { uid: true, flags: true }, { uid: true })) {
              // \Recent says only which session saw it first (dropped in IMAP4rev2): not where it landed.
              found.push({
                mailbox: box.path,
                uid: m.uid,
                flags: [...(m.flags ?? [])].filter((f) => f !== '\\Recent'),
              });
            }
          } finally {
            lock.release();
          }
        }
        return found;
      } finally {
        await c.logout().catch(() => c.close());
      }
    },
    async folders(address) {
      const c = await imap.client(address.toLowerCase());
      try {
        return (await c.list()).map((b) => ({ path: b.path, specialUse: b.specialUse ?? null }));
      } finally {
        await c.logout().catch(() => c.close());
      }
    },
    async close() {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await imap.close();
    },
  };
}
