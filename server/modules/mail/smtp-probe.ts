/**
 * The SMTP mailbox probe: connect to a mail server, EHLO (STARTTLS when offered), MAIL FROM, then
 * RCPT TO the address and, when it is accepted, RCPT TO a random mailbox at the same domain to tell
 * a catch-all domain. It never sends DATA, so no message is ever delivered.
 *
 * nodemailer's SMTPConnection does the connection, greeting, EHLO, TLS upgrade and time-outs; it has
 * no public "envelope only" call (send() always goes on to DATA), so the two envelope commands go
 * through its internal command queue (_sendCommand / _responseActions), wrapped here in one place.
 * The SMTP tests (loopback smtp-server) catch a nodemailer upgrade that changes them.
 */
import { randomBytes } from 'node:crypto';
import SMTPConnection from 'nodemailer/lib/smtp-connection';

export type ProbeOutcome = 'accepted' | 'rejected' | 'catchAll' | 'timeout' | 'unavailable' | 'temporaryFailure';

export interface ProbeOptions {
  host: string;
  port: number;
  timeoutMs: number;
  helo: string;
  from: string;
}

interface CommandQueue {
  _sendCommand(line: string): void;
  _responseActions: ((response: string) => void)[];
}

const isTimeout = (err: unknown) => (err as { code?: string })?.code === 'ETIMEDOUT';

export async function probeMailbox(options: ProbeOptions, email: string, domain: string): Promise<ProbeOutcome> {
  const conn = new SMTPConnection({
    host: options.host,
    port: options.port,
    name: options.helo,
    connectionTimeout: options.timeoutMs,
    greetingTimeout: options.timeoutMs,
    socketTimeout: options.timeoutMs,
    // Opportunistic TLS between mail servers: a self-signed MX certificate is the norm, not an attack.
    tls: { rejectUnauthorized: false },
  });
  // Any failure of the connection (error, or the server hanging up) ends whichever step is waiting.
  let fail: (err: unknown) => void = () => {};
  const failed = new Promise<never>((_, reject) => {
    fail = reject;
  });
  failed.catch(() => {});
  conn.on('error', (err) => fail(err));
  conn.on('end', () => fail(new Error('connection closed')));
  const deadline = setTimeout(
    () => fail(Object.assign(new Error('probe deadline'), { code: 'ETIMEDOUT' })),
    options.timeoutMs * 3,
  );

  const step = <T>(work: Promise<T>) => Promise.race([work, failed]);
  const command = (line: string) =>
    step(
      new Promise<string>((resolve) => {
        const queue = conn as unknown as CommandQueue;
        queue._responseActions.push(resolve);
        queue._sendCommand(line);
      }),
    );

  // QUIT politely after a finished conversation; drop the socket after a failure.
  let clean = false;
  try {
    await step(new Promise<void>((resolve) => conn.connect(() => resolve())));
    clean = true;
    const mail = await command(`MAIL FROM:<${options.from}>`);
    if (!mail.startsWith('2')) return mail.startsWith('4') ? 'temporaryFailure' : 'unavailable';
    const rcpt = await command(`RCPT TO:<${email}>`);
    if (rcpt.startsWith('5')) return 'rejected';
    if (!rcpt.startsWith('2')) return 'temporaryFailure';
    const random = await command(`RCPT TO:<probe-${randomBytes(8).toString('hex')}@${domain}>`);
    return random.startsWith('2') ? 'catchAll' : 'accepted';
  } catch (err) {
    clean = false;
    return isTimeout(err) ? 'timeout' : 'unavailable';
  } finally {
    clearTimeout(deadline);
    conn.removeAllListeners('end');
    conn.on('error', () => {});
    if (clean) conn.quit();
    else conn.close();
  }
}
