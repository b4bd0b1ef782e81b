/**
 * A private Debian dovecot instance for tests: its own configuration, state and mail directory in a
 * temporary directory, IMAP on a free loopback port, plain-text logins from a passwd-file.
 *
 *   const reason = dovecotMissing();                 // null when dovecot can run here
 *   const imap = await startImapServer({ users: [{ user: 'sdr@example.com', password: 'pw' }] });
 *   await imap.deliver('sdr@example.com', rawRfc822);  // IMAP APPEND into INBOX
 *   await imap.close();                              // stops dovecot, deletes the directory
 *
 * Install it with `apt-get install -y dovecot-imapd` (`.ci/run` does). What makes a private instance
 * run as root on this system: `default_login_user = dovenull` (root cannot run the login process),
 * `default_internal_user = dovecot`, a static userdb with `uid=dovecot`, `first_valid_uid` low enough
 * for that uid, `ssl = no`, and a mail directory owned by `dovecot`. Every mailbox has the special-use
 * folders `Sent` (\Sent) and `Junk` (\Junk), as a hosted provider's do.
 *
 * With `oauth2: { userInfoUrl }` it also takes XOAUTH2 and OAUTHBEARER logins (`passdb oauth2`), each token
 * checked against that identity provider's user-info endpoint (`introspection_mode = auth`: a GET with the
 * token as bearer, whose `email` must be the login).
 *
 * After a wrong password dovecot's anvil delays the next logins from 127.0.0.1 for a few seconds (its auth
 * penalty): a test of a failing login costs that much.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  renameSync,
  rmSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { createServer, connect, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ImapFlow } from 'imapflow';

export interface ImapUser {
  user: string;
  password: string;
}

export interface ImapTestServer {
  host: '127.0.0.1';
  port: number;
  /** Adds a login (usable at once). */
  addUser(user: string, password: string): void;
  /** A connected client for `user` (the caller logs out). */
  client(user: string): Promise<ImapFlow>;
  /** Appends one raw message to `mailbox` (INBOX by default). */
  deliver(
    user: string,
    raw: string | Buffer,
    options?: { mailbox?: string; flags?: string[]; date?: Date },
  ): Promise<{ uid: number; uidValidity: bigint }>;
  /** Appends many raw messages over one connection. */
  deliverMany(user: string, raws: (string | Buffer)[], options?: { mailbox?: string }): Promise<void>;
  /**
   * Writes messages straight into a mailbox's maildir `new/` (what a local delivery agent does): much faster
   * than APPEND, needs no login; dovecot assigns UIDs when a client next opens the mailbox. `mailbox` is
   * INBOX (default) or a top-level folder such as `Junk`; `date` becomes the INTERNALDATE (the file's mtime).
   */
  deliverDirect(user: string, raws: (string | Buffer)[], options?: { mailbox?: string; date?: Date }): void;
  /** The messages of a mailbox, as raw source, by UID (to check what a client appended, e.g. to Sent). */
  messages(user: string, mailbox?: string): Promise<{ uid: number; source: string; flags: string[] }[]>;
  /**
   * Gives INBOX a new UIDVALIDITY while keeping its messages, as a server does when a mailbox is deleted and
   * recreated or its index is rebuilt: every message gets a new UID under the new UIDVALIDITY.
   */
  resetUidValidity(user: string): Promise<void>;
  /** Deletes every message of INBOX and gives it a new UIDVALIDITY (mailbox deleted and recreated empty). */
  recreateInbox(user: string): Promise<void>;
  /** The server's log (for failure messages). */
  log(): string;
  /** Stops dovecot, keeping its mail and port: connections are refused until start(). */
  stop(): Promise<void>;
  /** Starts a stopped dovecot again on the same port, with the same mail. */
  start(): Promise<void>;
  close(): Promise<void>;
}

/** A contact's answer as a mail client writes it, threaded on the Message-ID it answers (raw RFC 822, for deliver). */
export function replyMessage(m: {
  from: string;
  to: string;
  subject: string;
  messageId: string;
  inReplyTo: string;
  date: string;
  text: string;
}): string {
  return [
    `From: ${m.from}`,
    `To: ${m.to}`,
    `Subject: ${m.subject}`,
    `Message-ID: ${m.messageId}`,
    `In-Reply-To: ${m.inReplyTo}`,
    `References: ${m.inReplyTo}`,
    `Date: ${m.date}`,
    '',
    m.text,
    '',
  ].join('\r\n');
}

/** Why dovecot cannot run here (with how to install it), or null when it can. */
export function dovecotMissing(): string | null {
  const found = spawnSync('dovecot', ['--version'], { encoding: 'utf8' });
  if (found.error || found.status !== 0) {
    return 'dovecot is not installed: run `apt-get install -y dovecot-imapd` (Debian/Ubuntu; `.ci/run` does it) to run the IMAP tests';
  }
  if (typeof process.getuid === 'function' && process.getuid() !== 0) {
    return 'the private dovecot instance needs root (it switches to the dovecot and dovenull users)';
  }
  for (const name of ['dovecot', 'dovenull']) {
    if (spawnSync('id', ['-u', name]).status !== 0) return `the system user ${name} is missing: reinstall dovecot-core`;
  }
  return null;
}

/** `describe` when dovecot can run, otherwise `describe.skip` with a message saying how to install it. */
export function describeWithDovecot(name: string, fn: () => void): void {
  const missing = dovecotMissing();
  if (missing) {
    console.warn(`SKIPPED "${name}": ${missing}`);
    describe.skip(name, fn);
  } else {
    describe(name, fn);
  }
}

function idOf(name: string, flag: '-u' | '-g'): number {
  const out = spawnSync('id', [flag, name], { encoding: 'utf8' });
  if (out.status !== 0) throw new Error(`no system user ${name}`);
  return Number(out.stdout.trim());
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

function portOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function config(dir: string, port: number, oauth2: boolean): string {
  return `# private test instance (test/helpers/imap-server.ts)
protocols = imap
listen = 127.0.0.1
base_dir = ${dir}/run
state_dir = ${dir}/state
log_path = ${dir}/dovecot.log
default_login_user = dovenull
default_internal_user = dovecot
first_valid_uid = 1
first_valid_gid = 1
ssl = no
disable_plaintext_auth = no
auth_mechanisms = plain login${oauth2 ? ' xoauth2 oauthbearer' : ''}
auth_cache_size = 0
auth_verbose = yes
# Tests of wrong passwords need no brute-force delay.
auth_failure_delay = 0
mail_location = maildir:${dir}/mail/%u
mail_max_userip_connections = 1000
passdb {
  driver = passwd-file
  args = scheme=PLAIN username_format=%u ${dir}/users/%u
}
${
  oauth2
    ? `passdb {
  driver = oauth2
  mechanisms = xoauth2 oauthbearer
  args = ${dir}/oauth2.conf
}
`
    : ''
}userdb {
  driver = static
  args = uid=dovecot gid=dovecot home=${dir}/mail/%u
}
namespace inbox {
  inbox = yes
  mailbox Sent {
    special_use = \\Sent
    auto = subscribe
  }
  mailbox Junk {
    special_use = \\Junk
    auto = subscribe
  }
}
service imap-login {
  inet_listener imap {
    address = 127.0.0.1
    port = ${port}
  }
  inet_listener imaps {
    port = 0
  }
  service_count = 0
  process_min_avail = 1
}
service imap {
  process_limit = 1024
}
`;
}

export async function startImapServer(
  options: { users?: ImapUser[]; oauth2?: { userInfoUrl: string } } = {},
): Promise<ImapTestServer> {
  const missing = dovecotMissing();
  if (missing) throw new Error(missing);
  const uid = idOf('dovecot', '-u');
  const gid = idOf('dovecot', '-g');
  const dir = mkdtempSync(join(tmpdir(), 'imap-test-'));
  chmodSync(dir, 0o755);
  for (const sub of ['run', 'state', 'users']) mkdirSync(join(dir, sub));
  mkdirSync(join(dir, 'mail'));
  chownSync(join(dir, 'mail'), uid, gid);
  const users = new Map<string, string>();
  // One passwd-file per user (dovecot re-reads a changed file at most once a second; a new file at once).
  // Line format user:{PLAIN}password (no ':' or newline in tests' passwords).
  const writeUser = (user: string, password: string) => {
    if (/[:\n/]/.test(user + password))
      throw new Error('IMAP test users and passwords may not contain ":", "/" or newlines');
    users.set(user, password);
    writeFileSync(join(dir, 'users', user), `${user}:{PLAIN}${password}\n`, { mode: 0o644 });
  };
  for (const u of options.users ?? []) writeUser(u.user, u.password);
  if (options.oauth2) {
    writeFileSync(
      join(dir, 'oauth2.conf'),
      `introspection_mode = auth\nintrospection_url = ${options.oauth2.userInfoUrl}\nusername_attribute = email\nforce_introspection = yes\n`,
      { mode: 0o644 },
    );
  }

  let child: ChildProcess | undefined;
  let port = 0;
  const readLog = () => {
    try {
      return readFileSync(join(dir, 'dovecot.log'), 'utf8');
    } catch {
      return '';
    }
  };
  /** Dovecot listening on `port`, or the reason it did not start (`inUse` when the port was taken). */
  const spawnOn = async (on: number): Promise<{ proc: ChildProcess } | { inUse: boolean; output: string }> => {
    writeFileSync(join(dir, 'dovecot.conf'), config(dir, on, Boolean(options.oauth2)));
    const proc = spawn('dovecot', ['-F', '-c', join(dir, 'dovecot.conf')], { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    proc.stdout.on('data', (d) => (output += d));
    proc.stderr.on('data', (d) => (output += d));
    let exited = false;
    proc.once('exit', () => (exited = true));
    const deadline = Date.now() + 15_000;
    while (!exited && Date.now() < deadline && !(await portOpen(on))) await sleep(50);
    if (!exited && (await portOpen(on))) return { proc };
    if (!exited) proc.kill('SIGKILL');
    return { inUse: /bind|address already in use/i.test(output + readLog()), output };
  };
  for (let attempt = 0; attempt < 5 && !child; attempt++) {
    port = await freePort();
    const started = await spawnOn(port);
    if ('proc' in started) child = started.proc;
    // A port taken between choosing and binding: try another one.
    else if (!started.inUse) {
      rmSync(dir, { recursive: true, force: true });
      throw new Error(`dovecot did not start: ${started.output}\n${readLog()}`);
    }
  }
  if (!child) {
    rmSync(dir, { recursive: true, force: true });
    throw new Error('dovecot did not start: no free port');
  }
  let proc = child;
  const stopProc = async () => {
    if (proc.exitCode !== null || proc.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
    proc.kill('SIGTERM');
    const timer = setTimeout(() => proc.kill('SIGKILL'), 5000);
    await exited;
    clearTimeout(timer);
    // Dovecot's children (login and imap processes) may hold the port a moment longer.
    while (await portOpen(port)) await sleep(50);
  };

  const client = async (user: string): Promise<ImapFlow> => {
    const password = users.get(user);
    if (password === undefined) throw new Error(`unknown IMAP test user ${user}`);
    const c = new ImapFlow({ host: '127.0.0.1', port, secure: false, auth: { user, pass: password }, logger: false });
    await c.connect();
    return c;
  };

  const withClient = async <T>(user: string, fn: (c: ImapFlow) => Promise<T>): Promise<T> => {
    const c = await client(user);
    try {
      return await fn(c);
    } finally {
      await c.logout().catch(() => c.close());
    }
  };

  const inboxDir = (user: string) => join(dir, 'mail', user);
  let deliveredCount = 0;
  const dropIndex = (user: string, withMessages: boolean) => {
    const home = inboxDir(user);
    if (!existsSync(home)) return;
    // INBOX is the maildir root; the other mailboxes are ".Name" folders. The `dovecot-uidvalidity`
    // sequence file stays, so the next UIDVALIDITY is a new one.
    for (const name of readdirSync(home)) {
      if (name === 'dovecot-uidlist' || name.startsWith('dovecot.index')) rmSync(join(home, name), { force: true });
      if (withMessages && (name === 'cur' || name === 'new')) {
        for (const f of readdirSync(join(home, name))) rmSync(join(home, name, f), { force: true });
      }
    }
  };

  return {
    host: '127.0.0.1',
    port,
    addUser(user, password) {
      writeUser(user, password);
    },
    client,
    async deliver(user, raw, opts = {}) {
      return withClient(user, async (c) => {
        const res = await c.append(opts.mailbox ?? 'INBOX', raw, opts.flags ?? [], opts.date);
        if (!res || !res.uid) throw new Error('APPEND returned no UID');
        return { uid: res.uid, uidValidity: BigInt(res.uidValidity ?? 0) };
      });
    },
    async deliverMany(user, raws, opts = {}) {
      await withClient(user, async (c) => {
        for (const raw of raws) await c.append(opts.mailbox ?? 'INBOX', raw);
      });
    },
    deliverDirect(user, raws, opts = {}) {
      const mailbox = opts.mailbox ?? 'INBOX';
      if (!/^[A-Za-z0-9 _-]+$/.test(mailbox))
        throw new Error(`deliverDirect takes INBOX or a top-level folder name, not ${mailbox}`);
      // Maildir++: INBOX is the root, a folder is `.Name` with a `maildirfolder` marker.
      const folder = mailbox.toUpperCase() === 'INBOX' ? inboxDir(user) : join(inboxDir(user), `.${mailbox}`);
      const owned = (path: string, make: () => void) => {
        if (existsSync(path)) return;
        make();
        chownSync(path, uid, gid);
      };
      owned(inboxDir(user), () => mkdirSync(inboxDir(user), { recursive: true, mode: 0o700 }));
      for (const sub of ['', 'new', 'cur', 'tmp'])
        owned(join(folder, sub), () => mkdirSync(join(folder, sub), { mode: 0o700 }));
      if (folder !== inboxDir(user))
        owned(join(folder, 'maildirfolder'), () => writeFileSync(join(folder, 'maildirfolder'), ''));
      for (const raw of raws) {
        // Written in tmp/ and renamed into new/, so dovecot never sees half a message.
        const name = `${Math.floor(Date.now() / 1000)}.M${++deliveredCount}P${process.pid}.test`;
        const temp = join(folder, 'tmp', name);
        writeFileSync(temp, raw);
        chownSync(temp, uid, gid);
        if (opts.date) utimesSync(temp, opts.date, opts.date);
        renameSync(temp, join(folder, 'new', name));
      }
    },
    async messages(user, mailbox = 'INBOX') {
      return withClient(user, async (c) => {
        const lock = await c.getMailboxLock(mailbox);
        try {
          const out: { uid: number; source: string; flags: string[] }[] = [];
          if ((c.mailbox as { exists: number }).exists === 0) return out;
          for await (const m of c.fetch('1:*', { uid: true, source: true, flags: true })) {
            out.push({ uid: m.uid, source: m.source!.toString('utf8'), flags: [...(m.flags ?? [])] });
          }
          return out;
        } finally {
          lock.release();
        }
      });
    },
    resetUidValidity: (user) => new Promise((resolve) => resolve(dropIndex(user, false))),
    recreateInbox: (user) => new Promise((resolve) => resolve(dropIndex(user, true))),
    log: readLog,
    stop: stopProc,
    async start() {
      for (let attempt = 0; attempt < 20; attempt++) {
        const started = await spawnOn(port);
        if ('proc' in started) {
          proc = started.proc;
          return;
        }
        if (!started.inUse) throw new Error(`dovecot did not start again: ${started.output}\n${readLog()}`);
        await sleep(250);
      }
      throw new Error(`dovecot did not start again: port ${port} stays taken`);
    },
    async close() {
      await stopProc();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
