/**
 * A loopback SMTP server (smtp-server) that keeps what it receives, parsed as a mail client would
 * (mailparser), and answers what a test scripts: a refused recipient, a temporary failure, a refused
 * login, silence after DATA (a server that never answers), or a connection closed for idling as the client's
 * next MAIL FROM arrives (421, as smtp-server's idle timeout answers). With `oauth`, XOAUTH2 logins are taken too,
 * each token checked against the identity provider's user-info endpoint (it must name the login's mailbox).
 */
import type { AddressInfo, Socket } from 'node:net';
import { simpleParser, type ParsedMail } from 'mailparser';
import { SMTPServer } from 'smtp-server';

export interface SinkMessage {
  envelope: { from: string; to: string[] };
  parsed: ParsedMail;
  raw: string;
}

export type Fault = { at: 'rcpt' | 'data'; code: number; message: string } | { at: 'hang' };

export interface SmtpSink {
  port: number;
  received: SinkMessage[];
  /** Faults per recipient address (lower-case); `*` for every recipient. */
  faults: Map<string, Fault>;
  /** Passwords the server accepts (any user); empty accepts every login. */
  passwords: Set<string>;
  /** How long the server takes to accept each message (a slow receiver); 0 by default. */
  delayMs: number;
  /** The next this many MAIL FROM commands are answered 421 and their connection closed (an idle timeout). */
  idleCloses: number;
  /** While true, new connections are greeted `421 Too busy` and closed (a server that says: try later). */
  busy: boolean;
  /** Stops listening and drops every open connection: connections are refused until start(). */
  stop(): Promise<void>;
  /** Listens again on the same port. */
  start(): Promise<void>;
  /** Users who logged in over XOAUTH2, one entry a login. */
  oauthLogins: string[];
  /** Users (lower-case) whose XOAUTH2 logins are refused whatever the token (a mailbox the server turned off). */
  oauthRefused: Set<string>;
  close(): Promise<void>;
}

const smtpError = (code: number, message: string) => Object.assign(new Error(message), { responseCode: code });

/** Whether the provider's user-info endpoint takes the access token as the mailbox `user`. */
async function tokenNames(userInfoUrl: string, user: string, token: string): Promise<boolean> {
  const answer = await fetch(userInfoUrl, { headers: { authorization: `Bearer ${token}` } });
  if (answer.status !== 200) return false;
  const info = (await answer.json()) as { email?: string };
  return info.email?.toLowerCase() === user.toLowerCase();
}

export async function startSmtpSink(options: { oauth?: { userInfoUrl: string } } = {}): Promise<SmtpSink> {
  const received: SinkMessage[] = [];
  const oauthLogins: string[] = [];
  const oauthRefused = new Set<string>();
  const faults = new Map<string, Fault>();
  const passwords = new Set<string>();
  const state = { delayMs: 0, idleCloses: 0, busy: false };
  const faultFor = (to: string) => faults.get(to.toLowerCase()) ?? faults.get('*');
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onConnect(_session, cb) {
      cb(state.busy ? smtpError(421, 'Too busy, try later') : null);
    },
    ...(options.oauth ? { authMethods: ['PLAIN', 'LOGIN', 'XOAUTH2'] } : {}),
    onAuth(auth, _session, cb) {
      if (auth.method === 'XOAUTH2') {
        const { userInfoUrl } = options.oauth ?? { userInfoUrl: '' };
        void tokenNames(userInfoUrl, auth.username ?? '', auth.accessToken ?? '').then(
          (ok) => {
            if (!ok || oauthRefused.has((auth.username ?? '').toLowerCase()))
              return cb(null, { data: { status: '401', schemes: 'bearer' } });
            oauthLogins.push(auth.username ?? '');
            cb(null, { user: auth.username });
          },
          (err: Error) => cb(err),
        );
        return;
      }
      if (passwords.size && !passwords.has(auth.password ?? ''))
        return cb(smtpError(535, '5.7.8 Authentication credentials invalid'));
      cb(null, { user: auth.username });
    },
    onMailFrom(_address, _session, cb) {
      if (state.idleCloses <= 0) return cb();
      state.idleCloses -= 1;
      cb(smtpError(421, 'Timeout - closing connection'));
    },
    onRcptTo(address, _session, cb) {
      const fault = faultFor(address.address);
      if (fault && fault.at === 'rcpt') return cb(smtpError(fault.code, fault.message));
      cb();
    },
    onData(stream, session, cb) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        const to = session.envelope.rcptTo.map((r) => r.address);
        const fault = faultFor(to[0]);
        if (fault?.at === 'hang') return; // never answers: the client times out after DATA
        if (fault?.at === 'data') return cb(smtpError(fault.code, fault.message));
        const raw = Buffer.concat(chunks).toString('utf8');
        simpleParser(raw).then((parsed) => {
          received.push({
            envelope: { from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '', to },
            parsed,
            raw,
          });
          setTimeout(cb, state.delayMs);
        }, cb);
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const port = (server.server.address() as AddressInfo).port;
  const sockets = new Set<Socket>();
  server.server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  return {
    port,
    stop: async () => {
      const closed = new Promise<void>((resolve) => server.server.close(() => resolve()));
      for (const socket of sockets) socket.destroy();
      await closed;
    },
    start: () => new Promise<void>((resolve) => server.server.listen(port, '127.0.0.1', () => resolve())),
    received,
    faults,
    passwords,
    oauthLogins,
    oauthRefused,
    get delayMs() {
      return state.delayMs;
    },
    set delayMs(ms: number) {
      state.delayMs = ms;
    },
    get busy() {
      return state.busy;
    },
    set busy(busy: boolean) {
      state.busy = busy;
    },
    get idleCloses() {
      return state.idleCloses;
    },
    set idleCloses(n: number) {
      state.idleCloses = n;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
