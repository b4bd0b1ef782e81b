/**
 * `npm run bench:warmup`: BENCH_ACCOUNTS pool accounts (default 500) at BENCH_PER_DAY warm-up emails a day
 * (default 40) on the loopback mail provider (SMTP front into a private dovecot), one simulated day in steps of
 * 10 simulated minutes. Each step runs the sender job until a run finds less than a batch due, and the reader
 * job once, as a worker ticking every 10 minutes would. Replies are off (reply rate 0): every message is a
 * first email.
 *
 * The baseline replays each step right after the jobs did it (so both meet the same machine load), with plain
 * nodemailer and imapflow on a twin set of mailboxes (`base<i>` for `box<i>`, same domains), doing the same work:
 *   - sends: the same messages (sender, recipient, subject and bodies; composed by nodemailer's MailComposer)
 *     through one pooled nodemailer transport per sender (2 connections, as the mail module's), as many
 *     senders at once as a sender run (sendConcurrency, 100);
 *   - Sent appends: per sender and step, one IMAP session appending that step's messages to Sent;
 *   - reads: the mailboxes the reader read in that step, 8 at once (the reader's concurrency), one session
 *     each: Junk then INBOX, new UIDs past an in-memory checkpoint (no SEARCH when UIDNEXT shows none), their
 *     Message-ID headers, recognised against the set of Message-IDs sent, marked read, 30% flagged, moved
 *     (Junk to INBOX, INBOX to a Warmup folder).
 * What the baseline leaves out is what the jobs add: the database (the pool, the plan, the claims, the
 * record of every message in warmup_messages and email_messages, the checkpoints), finding the special-use
 * folders, and the warm-up content.
 *
 * BENCH_DATABASE_URL (else DATABASE_URL) selects PostgreSQL (database lr_bench_warmup_<accounts>), otherwise
 * the embedded PGlite runs in memory. BENCH_HEAP_SNAPSHOT=file writes a heap snapshot after the day (after the
 * last collection), to see what the heap still holds. Needs dovecot and root.
 */
import { writeHeapSnapshot } from 'node:v8';
import nodemailer from 'nodemailer';
import MailComposer from 'nodemailer/lib/mail-composer';
import { ImapFlow } from 'imapflow';
import pino from 'pino';
import { loadConfig } from '../server/platform/config';
import { migrate } from '../server/db';
import { openBenchDatabase } from './bench-database';
import { createServices, type Deps } from '../server/services';
import { DEFAULT_WARMUP_SETTINGS, headerMessageId } from '../server/modules/warmup/service';
import { TestClock } from '../test/helpers/clock';
import { dovecotMissing } from '../test/helpers/imap-server';
import { startMailProvider, type MailProvider } from '../test/helpers/mail-provider';

const ACCOUNTS = Number(process.env.BENCH_ACCOUNTS ?? 500);
const PER_DAY = Number(process.env.BENCH_PER_DAY ?? 40);
const STEPS = 144;
const STEP_MS = 10 * 60_000;
const READ_CONCURRENCY = 8;
// One database per size, so runs at two sizes can go side by side.
const DB_NAME = `lr_bench_warmup_${ACCOUNTS}`;
const mb = (n: number) => `${(n / 1024 / 1024).toFixed(0)} MB`;
/** The heap in use after a full collection (the script runs with --expose-gc), so before and after compare. */
const heapUsed = () => {
  (globalThis as { gc?: () => void }).gc?.();
  return process.memoryUsage().heapUsed;
};

async function timed<T>(fn: () => Promise<T>): Promise<[T, number]> {
  const start = performance.now();
  const value = await fn();
  return [value, performance.now() - start];
}

/** What one step of the warm-up day did: the messages that went out and the mailboxes read. */
interface Step {
  sent: { from: string; to: string; subject: string; text: string; html: string | null }[];
  read: string[];
}

interface Side {
  sent: number;
  sendMs: number;
  appendSessions: number;
  recognised: number;
  readMs: number;
  mailboxReads: number;
  heapBefore: number;
  heapPeak: number;
  heapAfter: number;
  /** After the SMTP pools of both sides are closed (their connections are also the in-process provider's sessions). */
  heapPoolsClosed: number;
}

/** The baseline: plain nodemailer and imapflow replaying each step on its own mailboxes. */
function baseline(provider: MailProvider, addresses: string[]) {
  const login = (user: string) => ({
    host: '127.0.0.1',
    port: provider.imapPort,
    secure: false,
    auth: { user, pass: provider.password(user) },
    logger: false as const,
    disableAutoIdle: true,
  });
  const transports = new Map(
    addresses.map((a) => [
      a,
      nodemailer.createTransport({
        host: '127.0.0.1',
        port: provider.smtpPort,
        secure: false,
        auth: { user: a, pass: provider.password(a) },
        pool: true,
        maxConnections: 2,
      }),
    ]),
  );
  const sentIds = new Set<string>();
  const checkpoints = new Map<string, number>();
  const archived = new Set<string>();
  const side: Side = {
    sent: 0,
    sendMs: 0,
    appendSessions: 0,
    recognised: 0,
    readMs: 0,
    mailboxReads: 0,
    heapBefore: 0,
    heapPeak: 0,
    heapAfter: 0,
    heapPoolsClosed: 0,
  };
  let n = 0;

  const sendFrom = async (from: string, messages: Step['sent']) => {
    const raws = await Promise.all(
      messages.map(async (m) => {
        n += 1;
        const messageId = `<baseline-${n}@${from.split('@')[1]}>`;
        sentIds.add(messageId.slice(1, -1));
        const raw = await new MailComposer({
          from,
          to: m.to,
          subject: m.subject,
          text: m.text,
          ...(m.html ? { html: m.html } : {}),
          messageId,
        })
          .compile()
          .build();
        const transport = transports.get(from)!;
        // A pooled connection the server closed for idling (421) is replaced: the one retry any pool user makes.
        await transport.sendMail({ envelope: { from, to: [m.to] }, raw }).catch((err: { responseCode?: number }) => {
          if (err.responseCode !== 421) throw err;
          return transport.sendMail({ envelope: { from, to: [m.to] }, raw });
        });
        return raw;
      }),
    );
    const client = new ImapFlow(login(from));
    await client.connect();
    for (const raw of raws) await client.append('Sent', raw, ['\\Seen']);
    await client.logout();
    side.sent += raws.length;
    side.appendSessions += 1;
  };

  const readFolder = async (client: ImapFlow, user: string, folder: string, to: string) => {
    const key = `${user} ${folder}`;
    const box = await client.mailboxOpen(folder);
    const last = checkpoints.get(key) ?? 0;
    if (box.exists === 0 || box.uidNext <= last + 1) return;
    const uids = ((await client.search({ uid: `${last + 1}:*` }, { uid: true })) || []).filter((u) => u > last);
    if (!uids.length) return;
    const heads = await client.fetchAll(uids.join(','), { uid: true, headers: ['message-id'] }, { uid: true });
    const mine = heads
      .filter((h) => sentIds.has(headerMessageId(h.headers ?? Buffer.alloc(0)) ?? ''))
      .map((h) => h.uid);
    side.recognised += folder === 'INBOX' ? mine.length : 0;
    if (mine.length) {
      if (to !== 'INBOX' && !archived.has(user)) {
        await client.mailboxCreate(to).catch(() => undefined);
        archived.add(user);
      }
      await client.messageFlagsAdd(mine.join(','), ['\\Seen'], { uid: true });
      const flagged = mine.filter(() => Math.random() < 0.3);
      if (flagged.length) await client.messageFlagsAdd(flagged.join(','), ['\\Flagged'], { uid: true });
      await client.messageMove(mine.join(','), to, { uid: true });
    }
    checkpoints.set(key, Math.max(last, ...uids));
  };
  const readMailbox = async (user: string) => {
    const client = new ImapFlow(login(user));
    await client.connect();
    await readFolder(client, user, 'Junk', 'INBOX');
    await readFolder(client, user, 'INBOX', 'Warmup');
    await client.logout();
    side.mailboxReads += 1;
  };

  return {
    side,
    async step(step: Step): Promise<void> {
      const bySender = new Map<string, Step['sent']>();
      for (const m of step.sent) bySender.set(m.from, [...(bySender.get(m.from) ?? []), m]);
      // As many senders at once as a sender run delivers (500 IMAP logins at once outrun dovecot on a loaded machine).
      const queue = [...bySender];
      const [, sendMs] = await timed(() =>
        Promise.all(
          Array.from({ length: Math.min(DEFAULT_WARMUP_SETTINGS.sendConcurrency, queue.length) }, async () => {
            for (let next = queue.shift(); next; next = queue.shift()) await sendFrom(...next);
          }),
        ),
      );
      side.sendMs += sendMs;
      const readers = [...step.read];
      const [, readMs] = await timed(() =>
        Promise.all(
          Array.from({ length: Math.min(READ_CONCURRENCY, readers.length) }, async () => {
            for (let user = readers.shift(); user; user = readers.shift()) await readMailbox(user);
          }),
        ),
      );
      side.readMs += readMs;
    },
    close(): void {
      for (const t of transports.values()) t.close();
    },
  };
}

async function main(): Promise<void> {
  const missing = dovecotMissing();
  if (missing) throw new Error(missing);
  // The jobs' mailboxes and the baseline's: the same domains, one each, so neither side meets the other's mail.
  const addresses = Array.from({ length: ACCOUNTS }, (_, i) => `box${i}@d${i % 20}.bench.test`);
  const twin = new Map(addresses.map((a) => [a, a.replace(/^box/, 'base')]));
  const provider = await startMailProvider({ mailboxes: [...addresses, ...twin.values()] });
  const { database, label } = await openBenchDatabase(DB_NAME);
  await migrate(database.db);
  const clock = new TestClock();
  clock.set('2026-11-23T00:00:00.000Z');
  const config = loadConfig({
    seedDemo: false,
    verifyMailLogins: false,
    allowPrivateMailHosts: true,
    secretKey: 'ab'.repeat(32),
  });
  const deps: Deps = { config, db: database.db, clock, logger: pino({ level: 'silent' }) };
  const services = createServices(deps);
  const { workspace } = await services.workspaces.createWorkspace({ name: 'Bench' });
  const emailOf = new Map<string, string>();
  for (const email of addresses) {
    const account = await services.accounts.connect(workspace.id, {
      ...provider.connectBody(email),
      dailyLimit: 2000,
      warmup: { dailyLimit: PER_DAY, increasePerDay: PER_DAY, replyRatePercent: 0 },
    });
    emailOf.set(account.id, email);
  }
  const base = baseline(provider, [...twin.values()]);
  const app: Side = {
    sent: 0,
    sendMs: 0,
    appendSessions: 0,
    recognised: 0,
    readMs: 0,
    mailboxReads: 0,
    heapBefore: heapUsed(),
    heapPeak: 0,
    heapAfter: 0,
    heapPoolsClosed: 0,
  };
  app.heapPeak = app.heapBefore;

  const read = async (step: Step, now: Date) => {
    const [n, ms] = await timed(() => services.warmup.reader.runOnce());
    app.readMs += ms;
    app.mailboxReads += n;
    // A mailbox read in this run has its next read set past now.
    if (n)
      step.read.push(
        ...(await database.db('warmup_members').where('next_read_at', '>', now).pluck('member_id')).map((id: string) =>
          emailOf.get(id)!,
        ),
      );
    return n;
  };
  /** The baseline does what the jobs just did, on its own mailboxes, right after them (the same machine load). */
  const replay = (step: Step) =>
    base.step({
      sent: step.sent.map((m) => ({ ...m, from: twin.get(m.from)!, to: twin.get(m.to)! })),
      read: step.read.map((a) => twin.get(a)!),
    });

  for (let i = 0; i < STEPS; i += 1) {
    const now = clock.now();
    const step: Step = { sent: [], read: [] };
    // Until a run finds fewer than a batch due (then nothing else is due now).
    for (let n = DEFAULT_WARMUP_SETTINGS.sendBatch; n >= DEFAULT_WARMUP_SETTINGS.sendBatch;) {
      const [done, ms] = await timed(() => services.warmup.sender.runOnce());
      n = done;
      app.sendMs += ms;
    }
    step.sent = await database
      .db('warmup_messages')
      .where({ status: 'sent', sent_at: now })
      .orderBy('id')
      .select({ from: 'sender_email', to: 'recipient_email', subject: 'subject', text: 'text', html: 'html' });
    app.sent += step.sent.length;
    app.appendSessions += new Set(step.sent.map((m) => m.from)).size;
    await read(step, now);
    await replay(step);
    app.heapPeak = Math.max(app.heapPeak, process.memoryUsage().heapUsed);
    clock.advance(STEP_MS);
    // Progress every simulated 2 hours (stderr), so a run stopped early still says how far it got and at what rates.
    if ((i + 1) % 12 === 0) console.error(`${(i + 1) / 6} h: ${progress(app, base.side)}`);
  }
  // Whatever arrived after the last read.
  for (;;) {
    const step: Step = { sent: [], read: [] };
    if (!(await read(step, clock.now()))) break;
    await replay(step);
    clock.advance(STEP_MS);
  }
  app.recognised = Number(
    (await database.db('warmup_messages').whereNotNull('seen_at').count<{ n: string }[]>({ n: '*' }))[0].n,
  );
  app.heapAfter = heapUsed();
  if (process.env.BENCH_HEAP_SNAPSHOT) writeHeapSnapshot(process.env.BENCH_HEAP_SNAPSHOT);
  services.mail.close();
  base.close();
  // The pooled connections end with a QUIT exchange: give them a moment before measuring again.
  await new Promise((resolve) => setTimeout(resolve, 2_000));
  app.heapPoolsClosed = heapUsed();
  await database.close();
  await provider.close();
  report(label, app, base.side);
}

const rate = (n: number, ms: number) => (ms ? n / (ms / 1000) : 0);
const pct = (a: number, b: number) => (b ? `${((a / b) * 100).toFixed(0)}%` : '-');

function progress(app: Side, base: Side): string {
  const sends = `sent ${app.sent} at ${rate(app.sent, app.sendMs).toFixed(0)} msg/s vs ${rate(base.sent, base.sendMs).toFixed(0)} (${pct(rate(app.sent, app.sendMs), rate(base.sent, base.sendMs))})`;
  const reads = `${app.mailboxReads} mailbox reads at ${rate(app.mailboxReads, app.readMs).toFixed(1)}/s vs ${rate(base.mailboxReads, base.readMs).toFixed(1)}/s (${pct(rate(app.mailboxReads, app.readMs), rate(base.mailboxReads, base.readMs))})`;
  return `${sends}; ${reads}; heap ${mb(process.memoryUsage().heapUsed)}`;
}

function report(label: string, app: Side, base: Side): void {
  const row = (name: string, a: string | number, b: string | number, ratio = '') =>
    console.log(`| ${name} | ${a} | ${b} | ${ratio} |`);
  console.log(
    `\nbench:warmup on ${label}: ${ACCOUNTS} pool accounts x ${PER_DAY} a day, one simulated day (${STEPS} steps of 10 minutes, then reads until nothing is due)\n`,
  );
  console.log('| measure | warm-up jobs | baseline (nodemailer / imapflow) | ratio |');
  console.log('|---|---:|---:|---:|');
  row('messages sent', app.sent, base.sent);
  row('Sent-folder append sessions', app.appendSessions, base.appendSessions);
  row(
    'send rate incl. Sent appends (msg/s)',
    rate(app.sent, app.sendMs).toFixed(0),
    rate(base.sent, base.sendMs).toFixed(0),
    pct(rate(app.sent, app.sendMs), rate(base.sent, base.sendMs)),
  );
  row('mailbox reads (sessions)', app.mailboxReads, base.mailboxReads);
  row('messages read and recognised', app.recognised, base.recognised);
  row(
    'read rate (msg/s)',
    rate(app.recognised, app.readMs).toFixed(0),
    rate(base.recognised, base.readMs).toFixed(0),
    pct(rate(app.recognised, app.readMs), rate(base.recognised, base.readMs)),
  );
  const per100 = (s: Side) => (s.mailboxReads ? (s.readMs / s.mailboxReads) * 100 : 0);
  row(
    'reader run time per 100 mailboxes',
    `${per100(app).toFixed(0)} ms`,
    `${per100(base).toFixed(0)} ms`,
    pct(per100(base), per100(app)),
  );
  row(
    'heap before / peak / after the day / after closing the SMTP pools',
    `${mb(app.heapBefore)} / ${mb(app.heapPeak)} / ${mb(app.heapAfter)} / ${mb(app.heapPoolsClosed)}`,
    '',
  );
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
