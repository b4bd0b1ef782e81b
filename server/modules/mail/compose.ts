/**
 * Composing a message: its Message-ID on the sender's domain, the threading headers of an answer and the one
 * subject rule for answers. Pure: no I/O but building the bytes.
 */
import MailComposer from 'nodemailer/lib/mail-composer';
import { newId } from '../../platform/ids';
import { domainOf } from '../../platform/email-address';
import type { ThreadParent } from './store';

/** A message as nodemailer takes it. */
export interface OutgoingMessage {
  from: string;
  to: string;
  /** Copies: the SMTP envelope takes them too; a Bcc is never a header of the message. */
  cc?: string[];
  bcc?: string[];
  subject: string;
  text: string;
  html?: string;
  messageId: string;
  inReplyTo?: string;
  references?: string[];
  headers: Record<string, string>;
  date: Date;
}

export interface Draft {
  /** The sending account's address. */
  from: string;
  to: string;
  cc?: string[];
  bcc?: string[];
  /** Required unless `parent` is given; an answer without one takes replySubject(parent.subject). */
  subject?: string;
  text: string;
  html?: string;
  /** Extra headers (List-Unsubscribe, a warm-up marker, ...). */
  headers?: Record<string, string>;
  /** The message this one answers: In-Reply-To, References and the thread come from it. */
  parent?: ThreadParent;
  /** The row id and Message-ID's local part; a new id when absent. */
  id?: string;
  date: Date;
}

export interface Composed {
  id: string;
  /** `<id@sender-domain>` */
  messageId: string;
  threadId: string;
  inReplyTo: string | null;
  references: string[];
  subject: string;
  message: OutgoingMessage;
}

/** References an answer carries: at most this many, the newest kept (long threads stay a sane header size). */
const MAX_REFERENCES = 20;

/** The subject of an answer: the original's, trimmed, with one `Re: ` unless it already starts with one (any case). */
export function replySubject(subject: string): string {
  const trimmed = subject.trim();
  return /^re:/i.test(trimmed) ? trimmed : `Re: ${trimmed}`;
}

/** The References of an answer to `parent`: its own, then its Message-ID, once each. */
export function threadReferences(parent: Pick<ThreadParent, 'message_id' | 'references'>): string[] {
  return [...parent.references.filter((r) => r !== parent.message_id), parent.message_id].slice(-MAX_REFERENCES);
}

export function compose(draft: Draft): Composed {
  const id = draft.id ?? newId();
  const messageId = `<${id}@${domainOf(draft.from)}>`;
  const parent = draft.parent;
  const subject = draft.subject ?? (parent ? replySubject(parent.subject) : '');
  const references = parent ? threadReferences(parent) : [];
  const inReplyTo = parent ? parent.message_id : null;
  return {
    id,
    messageId,
    threadId: parent ? parent.thread_id : id,
    inReplyTo,
    references,
    subject,
    message: {
      from: draft.from,
      to: draft.to,
      ...(draft.cc?.length ? { cc: draft.cc } : {}),
      ...(draft.bcc?.length ? { bcc: draft.bcc } : {}),
      subject,
      text: draft.text,
      html: draft.html,
      messageId,
      inReplyTo: inReplyTo ?? undefined,
      references: references.length ? references : undefined,
      headers: draft.headers ?? {},
      date: draft.date,
    },
  };
}

/** The message's bytes as they will be sent: for a caller that keeps a copy (appended to Sent). */
export function composeRaw(message: OutgoingMessage): Promise<Buffer> {
  const composer = new MailComposer(message);
  return new Promise((resolve, reject) =>
    composer.compile().build((err, built) => (err ? reject(err) : resolve(built))),
  );
}
