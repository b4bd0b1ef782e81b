/**
 * What an incoming message is, from its headers and structure alone (no database): a delivery status
 * notification (bounce), an automatic reply (out of office, autoresponder), or a person's reply.
 * Matching it to something we sent is the reader's job (reader.ts); this file only reads the message.
 */
import type { HeaderValue, ParsedMail } from 'mailparser';

export interface DeliveryStatus {
  /** The recipient the report is about (Final-Recipient, else Original-Recipient), lower-case. */
  recipient: string | null;
  /** Every recipient the report names (Final-Recipient and Original-Recipient), lower-case. */
  recipients: string[];
  /** RFC 3463 status, e.g. `5.1.1`. */
  status: string | null;
  action: string | null;
  /** The remote server's answer (Diagnostic-Code without its type), or the status when there is none. */
  diagnostic: string | null;
  /** hard: permanent failure (5.x.x, or action failed without a status); soft: transient (4.x.x). */
  bounceType: 'hard' | 'soft' | null;
}

export type Classification =
  { kind: 'bounce'; dsn: DeliveryStatus } | { kind: 'autoReply'; reason: string } | { kind: 'reply' };

/** The parts of a message matching needs, normalised. */
export interface IncomingMessage {
  messageId: string | null;
  inReplyTo: string[];
  references: string[];
  fromAddress: string | null;
  fromName: string | null;
  toAddress: string | null;
  subject: string;
  date: Date | null;
  textBody: string;
  htmlBody: string | null;
  /** Message-IDs quoted inside the message (a DSN's returned headers): what it is about. */
  quotedMessageIds: string[];
}

const MESSAGE_ID = /<[^<>\s]+@[^<>\s]+>/g;

function header(parsed: ParsedMail, name: string): string | null {
  const value = parsed.headers.get(name);
  return value === undefined || value === null ? null : headerText(value);
}

/** A header as text: mailparser gives a string, a Date, a structure, or a list of these for a repeated header. */
function headerText(value: HeaderValue): string {
  if (typeof value === 'string' || value instanceof Date) return String(value);
  if (Array.isArray(value)) return value.map(headerText).join(',');
  // An address list's text, a structured header's value; the List-* headers (parsed together as `list`) have neither.
  const text = 'text' in value ? value.text : value.value;
  return typeof text === 'string' ? text : '';
}

function ids(value: string | string[] | undefined): string[] {
  if (!value) return [];
  const text = Array.isArray(value) ? value.join(' ') : value;
  return [...new Set(text.match(MESSAGE_ID) ?? [])];
}

/** The Message-IDs in one header block (`Message-ID:` lines only). */
function messageIdHeaders(block: string): string[] {
  const out: string[] = [];
  for (const m of block.matchAll(/^message-id:[ \t]*(<[^<>\s]+@[^<>\s]+>)/gim)) out.push(m[1]);
  return out;
}

export function toIncoming(parsed: ParsedMail, raw: Buffer): IncomingMessage {
  const from = parsed.from?.value?.[0];
  const toList = parsed.to ? (Array.isArray(parsed.to) ? parsed.to : [parsed.to]) : [];
  const to = toList.flatMap((a) => a.value)[0];
  const messageId =
    parsed.messageId && /^<.+>$/.test(parsed.messageId)
      ? parsed.messageId
      : parsed.messageId
        ? `<${parsed.messageId}>`
        : null;
  // Message-IDs quoted in the body parts (the returned message of a DSN), not the message's own.
  const source = raw.toString('latin1');
  const headerEnd = source.search(/\r?\n\r?\n/);
  const quoted = headerEnd >= 0 ? messageIdHeaders(source.slice(headerEnd)).filter((id) => id !== messageId) : [];
  return {
    messageId,
    inReplyTo: ids(parsed.inReplyTo),
    references: ids(parsed.references),
    fromAddress: from?.address ? from.address.trim().toLowerCase() : null,
    fromName: from?.name || null,
    toAddress: to?.address ? to.address.trim().toLowerCase() : null,
    subject: (parsed.subject ?? '').trim(),
    date: parsed.date && !Number.isNaN(parsed.date.getTime()) ? parsed.date : null,
    textBody: parsed.text ?? '',
    htmlBody: typeof parsed.html === 'string' ? parsed.html : null,
    quotedMessageIds: [...new Set(quoted)],
  };
}

/** `Re: Fwd: AW: Hello` -> `hello`: the subject a thread keeps, for the fallback match. */
export function threadSubject(subject: string): string {
  let s = subject.trim();
  const prefix =
    /^(?:re|fw|fwd|aw|wg|sv|vs|antw|antwort|réf|ref|tr|rv|r|res|enc|odp|pd|fs|vb|ynt|回复|答复|转发)\s*(?:\[\d+\])?\s*[:：]\s*/i;
  for (let i = 0; i < 10 && prefix.test(s); i++) s = s.replace(prefix, '');
  return s.replace(/\s+/g, ' ').trim().toLowerCase();
}

/** Out-of-office subjects in the languages our users' prospects write in. */
const AUTO_REPLY_SUBJECTS = [
  /\bout of (the )?office\b/i,
  /\bautomatic reply\b/i,
  /\bauto[- ]?reply\b/i,
  /\bauto[- ]?response\b/i,
  /^auto(matic)?:/i,
  /\bautoresponder\b/i,
  /\bon (vacation|holiday|leave)\b/i,
  /\babwesenheitsnotiz\b/i,
  /\bautomatische antwort\b/i,
  /\bnicht im büro\b/i,
  /\babwesend\b/i,
  /\bréponse automatique\b/i,
  /\babsence du bureau\b/i,
  /\babsente? (du|jusqu)/i,
  /\brespuesta automática\b/i,
  /\bfuera de la oficina\b/i,
  /\bausente\b/i,
  /\brisposta automatica\b/i,
  /\bfuori (sede|ufficio)\b/i,
  /\bresposta automática\b/i,
  /\bautomatisch antwoord\b/i,
  /\bafwezig\b/i,
  /\bautomatiskt svar\b/i,
  /\bfrånvaro\b/i,
  /\bautomatisk svar\b/i,
  /\bodpowiedź automatyczna\b/i,
];

/** Why this is an automatic reply, or null for a person's message. */
export function autoReplyReason(parsed: ParsedMail, subject: string): string | null {
  const autoSubmitted = header(parsed, 'auto-submitted');
  if (autoSubmitted && autoSubmitted.trim().toLowerCase().split(';')[0].trim() !== 'no')
    return `Auto-Submitted: ${autoSubmitted.trim()}`;
  for (const name of ['x-autoreply', 'x-autorespond', 'x-autoresponder']) {
    const value = header(parsed, name);
    if (value !== null && value.trim().toLowerCase() !== 'no') return `${name}: ${value.trim()}`;
  }
  const precedence = header(parsed, 'precedence')?.trim().toLowerCase();
  if (precedence && ['auto_reply', 'bulk', 'junk'].includes(precedence)) return `Precedence: ${precedence}`;
  // Exchange/Outlook out-of-office answers suppress answers to themselves.
  const suppress = header(parsed, 'x-auto-response-suppress');
  if (suppress && /\b(all|oof|autoreply)\b/i.test(suppress)) return `X-Auto-Response-Suppress: ${suppress.trim()}`;
  const pattern = AUTO_REPLY_SUBJECTS.find((p) => p.test(subject));
  if (pattern) return `subject "${subject.slice(0, 80)}"`;
  return null;
}

/** The delivery-status fields of a DSN (RFC 3464), from the raw message. */
export function parseDeliveryStatus(raw: Buffer): DeliveryStatus {
  const source = raw.toString('utf8');
  const start = source.search(/content-type:[ \t]*message\/(?:global-)?delivery-status/i);
  let block = '';
  if (start >= 0) {
    const bodyStart = source.slice(start).search(/\r?\n\r?\n/);
    const rest = bodyStart >= 0 ? source.slice(start + bodyStart) : '';
    const end = rest.search(/\r?\n--/);
    block = end >= 0 ? rest.slice(0, end) : rest;
  }
  // Unfold continuation lines.
  block = block.replace(/\r?\n[ \t]+/g, ' ');
  const field = (name: string): string | null => {
    const m = block.match(new RegExp(`^${name}:[ \\t]*(.+)$`, 'im'));
    return m ? m[1].trim() : null;
  };
  const address = (value: string | null) => {
    if (!value) return null;
    const v = value.includes(';') ? value.slice(value.indexOf(';') + 1) : value;
    return v.trim().replace(/^<|>$/g, '').toLowerCase() || null;
  };
  const recipients = [address(field('Final-Recipient')), address(field('Original-Recipient'))].filter(
    (r): r is string => r !== null,
  );
  const recipient = recipients[0] ?? null;
  const statusMatch = field('Status')?.match(/([245])\.\d{1,3}\.\d{1,3}/);
  const status = statusMatch ? statusMatch[0] : null;
  const action = field('Action')?.toLowerCase() ?? null;
  const diagnosticRaw = field('Diagnostic-Code');
  const diagnostic = diagnosticRaw ? diagnosticRaw.replace(/^[\w-]+;\s*/, '').slice(0, 1000) : status;
  let bounceType: DeliveryStatus['bounceType'] = null;
  if (status?.startsWith('5')) bounceType = 'hard';
  else if (status?.startsWith('4')) bounceType = 'soft';
  else if (!status && action === 'failed') bounceType = 'hard';
  else if (!status && action === 'delayed') bounceType = 'soft';
  return { recipient, recipients, status, action, diagnostic, bounceType };
}

export function isDeliveryReport(parsed: ParsedMail): boolean {
  const type = parsed.headers.get('content-type') as { value?: string; params?: Record<string, string> } | undefined;
  return Boolean(
    type &&
    type.value?.toLowerCase() === 'multipart/report' &&
    type.params?.['report-type']?.toLowerCase() === 'delivery-status',
  );
}

export function classify(parsed: ParsedMail, raw: Buffer, incoming: IncomingMessage): Classification {
  if (isDeliveryReport(parsed)) return { kind: 'bounce', dsn: parseDeliveryStatus(raw) };
  const reason = autoReplyReason(parsed, incoming.subject);
  if (reason) return { kind: 'autoReply', reason };
  return { kind: 'reply' };
}
