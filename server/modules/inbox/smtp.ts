/**
 * One manual message through the account's SMTP login (nodemailer), to the checked address of its host
 * (outbound rule), TLS verified against the host name. Builds the raw message first so the same bytes can
 * be appended to the account's Sent mailbox. (The sending module's pooled transports replace this when
 * they offer a send-one call.)
 */
import nodemailer from 'nodemailer';
import MailComposer from 'nodemailer/lib/mail-composer';
import { resolveAllowedAddress } from '../../net/outbound';
import type { MailLogin } from '../account/service';

export interface OutgoingMail {
  from: string;
  to: string;
  subject: string;
  text: string;
  html?: string;
  messageId: string;
  inReplyTo?: string;
  references?: string[];
  date: Date;
}

export interface SendResult {
  accepted: boolean;
  /** The outcome is not known (connection lost after DATA). */
  unknown: boolean;
  response: string;
  raw: Buffer | null;
}

export async function buildRaw(mail: OutgoingMail): Promise<Buffer> {
  const composer = new MailComposer({
    from: mail.from,
    to: mail.to,
    subject: mail.subject,
    text: mail.text,
    html: mail.html,
    messageId: mail.messageId,
    inReplyTo: mail.inReplyTo,
    references: mail.references,
    date: mail.date,
  });
  return new Promise((resolve, reject) => composer.compile().build((err, message) => (err ? reject(err) : resolve(message))));
}

export async function sendMail(login: MailLogin, mail: OutgoingMail, options: { allowPrivate: boolean; timeoutMs: number }): Promise<SendResult> {
  let raw: Buffer;
  try {
    raw = await buildRaw(mail);
  } catch (err) {
    return { accepted: false, unknown: false, response: `message could not be built: ${(err as Error).message}`, raw: null };
  }
  let address: string;
  try {
    address = await resolveAllowedAddress(login.host, { allowPrivate: options.allowPrivate });
  } catch (err) {
    return { accepted: false, unknown: false, response: `SMTP host refused: ${(err as Error).message}`, raw: null };
  }
  const transport = nodemailer.createTransport({
    host: address,
    port: login.port,
    secure: login.port === 465,
    auth: { user: login.username, pass: login.password },
    tls: { servername: login.host },
    name: login.email.slice(login.email.lastIndexOf('@') + 1),
    connectionTimeout: options.timeoutMs,
    greetingTimeout: options.timeoutMs,
    socketTimeout: options.timeoutMs * 2,
  });
  try {
    const info = await transport.sendMail({ envelope: { from: mail.from, to: [mail.to] }, raw });
    const accepted = (info.accepted as unknown[]).length > 0;
    return { accepted, unknown: false, response: String(info.response ?? ''), raw };
  } catch (err) {
    const e = err as Error & { response?: string; responseCode?: number; command?: string; code?: string };
    // Lost after the message data went out: the server may have taken it.
    const unknown = !e.responseCode && e.command === 'DATA';
    return { accepted: false, unknown, response: e.response ?? `${e.code ?? 'error'}: ${e.message}`, raw: null };
  } finally {
    transport.close();
  }
}
