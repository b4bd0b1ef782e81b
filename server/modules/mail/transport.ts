/**
 * SMTP delivery: one pooled nodemailer transport per account, connected to the checked address of the
 * account's host (outbound rule) with TLS verified against the host name, and the outcome of each send
 * sorted into what the engine does next.
 */
import nodemailer, { type Transporter } from 'nodemailer';
import type SMTPPool from 'nodemailer/lib/smtp-pool';
import { OutboundRefusedError, resolveAllowedAddress } from '../../net/outbound';
import type { OutgoingMessage } from './compose';
import { domainOf } from '../../platform/email-address';
import { OAuthError } from './oauth';
import { GrantDeadError, type ConnectionOptions, type LoginAuth, type LoginFailure, type MailLogin } from './login';

/** The pooled transport of an account (createTransport with pool: true). */
type SmtpTransporter = Transporter<SMTPPool.SentMessageInfo>;

export type SendOutcome =
  | { kind: 'sent'; response: string }
  /** The server refused this recipient for good (5xx at RCPT or DATA). */
  | { kind: 'bounced'; response: string }
  /** The login was refused: the account cannot send until a person fixes it. */
  | { kind: 'accountFailure'; response: string }
  /**
   * Try again later: 4xx, connection refused or dropped, timeout. `server` when the account's server did not
   * take the session (connection, greeting, login, sender), so no message of the account can go now;
   * `message` when it put off this message (a 4xx to its recipient or data).
   */
  | { kind: 'transient'; response: string; scope: 'server' | 'message' }
  /** The connection broke after the message data went out: the server may have taken it. */
  | { kind: 'unknown'; response: string };

/** A message composed beforehand (composeRaw), sent as these exact bytes. */
export interface RawMessage {
  to: string;
  raw: Buffer;
}

/** SMTP connections each account's pooled transport opens at most. */
export const CONNECTIONS_PER_ACCOUNT = 2;

export class TransportPool {
  private readonly pools = new Map<string, { key: string; transport: SmtpTransporter }>();

  constructor(private readonly options: ConnectionOptions) {}

  private async transportFor(
    login: MailLogin,
    given: LoginAuth | null,
  ): Promise<{ transport: SmtpTransporter; address: string; auth: LoginAuth }> {
    const address = await resolveAllowedAddress(login.host, { allowPrivate: this.options.allowPrivate });
    const auth = given ?? (await this.options.authOf(login));
    // A changed login, access token or address replaces the pool.
    const key = `${address}:${login.port}:${auth.user}:${'pass' in auth ? auth.pass : auth.accessToken}`;
    const existing = this.pools.get(login.accountId);
    if (existing?.key === key) return { transport: existing.transport, address, auth };
    existing?.transport.close();
    const transport = nodemailer.createTransport({
      ...this.connection(login, address, auth),
      pool: true,
      maxConnections: CONNECTIONS_PER_ACCOUNT,
      maxMessages: 100,
    });
    this.pools.set(login.accountId, { key, transport });
    return { transport, address, auth };
  }

  private connection(login: MailLogin, address: string, auth: LoginAuth) {
    return {
      host: address,
      port: login.port,
      secure: login.port === 465,
      auth: 'pass' in auth ? auth : { type: 'OAuth2' as const, user: auth.user, accessToken: auth.accessToken },
      tls: { servername: login.host },
      name: domainOf(login.email),
      connectionTimeout: this.options.timeoutMs,
      greetingTimeout: this.options.timeoutMs,
      socketTimeout: this.options.timeoutMs * 2,
    };
  }

  /**
   * Sends one message. A refused OAuth login is tried once more with a refreshed access token (the server
   * may have dropped a token before its time); only a second refusal, or a refused refresh, fails the account.
   */
  async send(login: MailLogin, message: OutgoingMessage | RawMessage): Promise<SendOutcome> {
    const first = await this.sendWith(login, message, null);
    if (first.outcome.kind !== 'accountFailure' || !first.auth) return first.outcome;
    let again: LoginAuth | null;
    try {
      again = await this.options.afterRefusal(login, first.auth);
    } catch (err) {
      return noLogin(err);
    }
    return again ? (await this.sendWith(login, message, again)).outcome : first.outcome;
  }

  /** One send with the account's current login (or `given`), and the login it used. */
  private async sendWith(
    login: MailLogin,
    message: OutgoingMessage | RawMessage,
    given: LoginAuth | null,
  ): Promise<{ outcome: SendOutcome; auth?: LoginAuth }> {
    let pooled: { transport: SmtpTransporter; address: string; auth: LoginAuth };
    try {
      pooled = await this.transportFor(login, given);
    } catch (err) {
      return { outcome: noLogin(err) };
    }
    return { outcome: await this.deliver(login, message, pooled), auth: pooled.auth };
  }

  private async deliver(
    login: MailLogin,
    message: OutgoingMessage | RawMessage,
    pooled: { transport: SmtpTransporter; address: string; auth: LoginAuth },
  ): Promise<SendOutcome> {
    const copies = 'raw' in message ? [] : [...(message.cc ?? []), ...(message.bcc ?? [])];
    const mail = { ...message, envelope: { from: login.email, to: [message.to, ...copies] } };
    try {
      return outcomeOf(await pooled.transport.sendMail(mail), message.to);
    } catch (err) {
      const e = err as SmtpError;
      if (!droppedBeforeRecipient(e)) return classify(e);
      // A pooled connection the server dropped (a 421 when its idle timeout met our next command, a reset)
      // before it took the recipient: once more on a fresh connection of its own, so nothing can go out twice.
      const fresh = nodemailer.createTransport(this.connection(login, pooled.address, pooled.auth));
      try {
        return outcomeOf(await fresh.sendMail(mail), message.to);
      } catch (again) {
        return classify(again as SmtpError);
      } finally {
        fresh.close();
      }
    }
  }

  /** Logs in once without sending (connect-time check of a new account); null when the login works. */
  async verify(login: MailLogin): Promise<LoginFailure | null> {
    let address: string;
    let auth: LoginAuth;
    try {
      address = await resolveAllowedAddress(login.host, { allowPrivate: this.options.allowPrivate });
      auth = await this.options.authOf(login);
    } catch (err) {
      if (err instanceof OutboundRefusedError) return { reason: 'private_destination', message: err.message };
      if (err instanceof GrantDeadError) return { reason: 'reconnect_required', message: err.message };
      if (err instanceof OAuthError) return { reason: 'unreachable', message: err.message };
      return { reason: 'unreachable', message: `${login.host} cannot be resolved.` };
    }
    const refused = await this.verifyWith(login, address, auth);
    if (refused?.reason !== 'auth_failed') return refused;
    // A refused OAuth login: once more with a refreshed access token, as a send does.
    let again: LoginAuth | null;
    try {
      again = await this.options.afterRefusal(login, auth);
    } catch (err) {
      if (err instanceof GrantDeadError) return { reason: 'reconnect_required', message: err.message };
      return { reason: 'unreachable', message: (err as Error).message };
    }
    return again ? this.verifyWith(login, address, again) : refused;
  }

  private async verifyWith(login: MailLogin, address: string, auth: LoginAuth): Promise<LoginFailure | null> {
    const transport = nodemailer.createTransport(this.connection(login, address, auth));
    try {
      await transport.verify();
      return null;
    } catch (err) {
      const e = err as Error & { code?: string; responseCode?: number; response?: string };
      if (e.code === 'EAUTH' || e.responseCode === 535)
        return {
          reason: 'auth_failed',
          message: `authentication refused for ${login.username} at ${login.host}:${login.port}${e.response ? ` (${e.response})` : ''}.`,
        };
      return {
        reason: 'unreachable',
        message: `${login.host}:${login.port} did not answer as an SMTP server (${e.code ?? e.message}).`,
      };
    } finally {
      transport.close();
    }
  }

  close(): void {
    for (const { transport } of this.pools.values()) transport.close();
    this.pools.clear();
  }
}

/** No login could be made: the host or the access token is out of reach (retried), or the grant is dead. */
function noLogin(err: unknown): SendOutcome {
  // This process may not reach the address (its ALLOW_PRIVATE_MAIL_HOSTS may differ from the API's that
  // accepted the account): the server is out of reach from here, not the account's fault.
  if (err instanceof OutboundRefusedError)
    return { kind: 'transient', scope: 'server', response: `private_destination: ${err.message}` };
  if (err instanceof GrantDeadError) return { kind: 'accountFailure', response: err.message };
  if (err instanceof OAuthError)
    return { kind: 'transient', scope: 'server', response: `no access token: ${err.message}` };
  return { kind: 'transient', scope: 'server', response: `SMTP host not resolved: ${(err as Error).message}` };
}

type SmtpError = Error & { response?: string; responseCode?: number; command?: string; code?: string };

/** A refused copy (cc, bcc) is not the contact's bounce: only its own address decides. */
function outcomeOf(info: { rejected: unknown[]; response: string }, to: string): SendOutcome {
  if (info.rejected.some((r) => String(r).toLowerCase() === to.toLowerCase()))
    return { kind: 'bounced', response: String(info.response ?? 'recipient rejected') };
  return { kind: 'sent', response: String(info.response ?? '') };
}

/** Commands of a session before its recipient is accepted (each message here has one recipient). */
const BEFORE_RECIPIENT = new Set(['EHLO', 'HELO', 'LHLO', 'STARTTLS', 'MAIL FROM', 'RCPT TO']);

/**
 * The connection went away before the server took the recipient: a 421 (closing the channel) anywhere
 * but in answer to the message data, or a dropped socket during the envelope. A message whose data went out
 * (command DATA, or a connection lost mid-message) may have been taken, and is not sent again.
 */
function droppedBeforeRecipient(e: SmtpError): boolean {
  if (e.responseCode === 421) return e.command !== 'DATA';
  return (
    (e.code === 'ECONNECTION' || e.code === 'ESOCKET' || e.code === 'EPROTOCOL') &&
    BEFORE_RECIPIENT.has(e.command ?? '')
  );
}

function classify(e: SmtpError): SendOutcome {
  const response = (e.response ?? `${e.code ?? 'error'}: ${e.message}`).slice(0, 1000);
  const code = e.responseCode ?? 0;
  // A refused login needs a person; a 4xx to it (454: try later) is the server's trouble.
  if ((e.code === 'EAUTH' && !(code >= 400 && code < 500)) || code === 535 || code === 534)
    return { kind: 'accountFailure', response: `auth_failed: ${response}` };
  if (
    code >= 500 &&
    (e.command === 'RCPT TO' || e.command === 'DATA' || e.code === 'EENVELOPE' || e.code === 'EMESSAGE')
  )
    return { kind: 'bounced', response };
  // No answer after the message data went out: the server may have accepted it.
  if (!code && e.command === 'DATA') return { kind: 'unknown', response };
  const scope = e.command === 'RCPT TO' || e.command === 'DATA' || e.code === 'EMESSAGE' ? 'message' : 'server';
  return { kind: 'transient', scope, response };
}
