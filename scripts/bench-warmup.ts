/**
 * `npm run bench:warmup`: BENCH_ACCOUNTS pool accounts (default 500) at BENCH_PER_DAY warm-up emails a day
 * (default 40) on the loopback mail provider (SMTP front into a private dovecot), one simulated day: the
 * sender and reader jobs run every 10 simulated minutes. Prints messages/s sent and read, the reader's run
 * time per 100 mailboxes and the heap, next to a baseline from the same run: plain nodemailer (a pooled
 * transport per account) sending the same number of messages and plain imapflow reading each mailbox's
 * INBOX and Junk, marking them read and moving them to a folder. Replies are off (reply rate 0) so both sides
 * move the same messages. BENCH_DATABASE_URL (else DATABASE_URL) selects PostgreSQL (database
 * lr_bench_warmup), otherwise the embedded PGlite runs in memory. Needs dovecot and root.
 */
import nodemailer from 'nodemailer';
import { ImapFlow } from 'imapflow';
import pino from 'pino';
import { loadConfig } from '../server/config';
import { migrate } from '../server/db';
import { openBenchDatabase } from './bench-database';
import { createServices, type Deps } from '../server/services';
import { TestClock } from '../test/helpers/clock';
import { dovecotMissing } from '../test/helpers/imap-server';
import { startMailProvider } from '../test/helpers/mail-provider';

const ACCOUNTS = Number(process.env.BENCH_ACCOUNTS ?? 500);
const PER_DAY = Number(process.env.BENCH_PER_DAY ?? 40);
const DB_NAME = 'lr_bench_warmup';
const mb = (n: number) => `${(n / 1024 / 1024).toFixed(0)} MB`;

async function timed<T>(fn: () => Promise<T>): Promise<[T, number]> {
  const start = performance.now();
  const value = await fn();
  return [value, performance.now() - start];
}

async function main(): Promise<void> {
  const missing = dovecotMissing();
  if (missing) throw new Error(missing);
  const addresses = Array.from({ length: ACCOUNTS }, (_, i) => `box${i}@d${i % 20}.bench.test`);
  const provider = await startMailProvider({ mailboxes: addresses });
  const { database, label } = await openBenchDatabase(DB_NAME);
  await migrate(database.db);
  const clock = new TestClock();
  clock.set('2026-11-23T00:00:00.000Z');
  const config = loadConfig({ seedDemo: false, verifyMailLogins: false, allowPrivateMailHosts: true, secretKey: 'ab'.repeat(32) });
  const deps: Deps = { config, db: database.db, clock, logger: pino({ level: 'silent' }) };
  const services = createServices(deps);
  const { workspace } = await services.workspaces.createWorkspace({ name: 'Bench' });
  for (const email of addresses) {
    await services.accounts.connect(workspace.id, { ...provider.connectBody(email), dailyLimit: 2000, warmup: { dailyLimit: PER_DAY, increasePerDay: PER_DAY, replyRatePercent: 0 } });
  }

  // --- the warm-up jobs over one simulated day ---
  const heapBefore = process.memoryUsage().heapUsed;
  let heapPeak = heapBefore;
  let sent = 0;
  let sendMs = 0;
  let readMs = 0;
  let readRuns = 0;
  let mailboxesRead = 0;
  for (let step = 0; step < 144; step += 1) {
    for (;;) {
      const [n, ms] = await timed(() => services.warmup.sender.runOnce());
      sent += n;
      sendMs += ms;
      if (n === 0) break;
    }
    const [read, ms] = await timed(() => services.warmup.reader.runOnce());
    if (read) {
      readMs += ms;
      readRuns += 1;
      mailboxesRead += read;
    }
    heapPeak = Math.max(heapPeak, process.memoryUsage().heapUsed);
    clock.advance(10 * 60_000);
  }
  // Whatever arrived after the last read.
  clock.advance(10 * 60_000);
  for (let read = 1; read; ) {
    const [n, ms] = await timed(() => services.warmup.reader.runOnce());
    read = n;
    readMs += ms;
    mailboxesRead += n;
  }
  const seen = Number((await database.db('warmup_messages').whereNotNull('seen_at').count<{ n: string }[]>({ n: '*' }))[0].n);
  const heapAfter = process.memoryUsage().heapUsed;
  services.mail.close();

  // --- baseline: plain nodemailer and imapflow doing the same sends and reads ---
  const transports = new Map(addresses.map((a) => [a, nodemailer.createTransport({ host: '127.0.0.1', port: provider.smtpPort, secure: false, auth: { user: a, pass: provider.password(a) }, pool: true, maxConnections: 2 })]));
  const queue = Array.from({ length: sent }, (_, i) => i);
  const [, baseSendMs] = await timed(() =>
    Promise.all(
      Array.from({ length: 16 }, async () => {
        for (let i = queue.shift(); i !== undefined; i = queue.shift()) {
          const from = addresses[i % ACCOUNTS];
          const to = addresses[(i * 7 + 1) % ACCOUNTS] === from ? addresses[(i + 1) % ACCOUNTS] : addresses[(i * 7 + 1) % ACCOUNTS];
          await transports.get(from)!.sendMail({ from, to, subject: `Baseline ${i}`, text: `Hello ${i}` });
        }
      }),
    ),
  );
  for (const t of transports.values()) t.close();
  let baseRead = 0;
  const boxes = [...addresses];
  const [, baseReadMs] = await timed(() =>
    Promise.all(
      Array.from({ length: 8 }, async () => {
        for (let a = boxes.shift(); a; a = boxes.shift()) {
          const client = new ImapFlow({ host: '127.0.0.1', port: provider.imapPort, secure: false, auth: { user: a, pass: provider.password(a) }, logger: false });
          await client.connect();
          for (const folder of ['Junk', 'INBOX']) {
            const lock = await client.getMailboxLock(folder);
            try {
              const uids = (await client.search({ all: true }, { uid: true })) || [];
              if (uids.length) {
                const heads = await client.fetchAll(uids.join(','), { uid: true, source: { maxLength: 16384 } }, { uid: true });
                baseRead += heads.length;
                await client.messageFlagsAdd(uids.join(','), ['\\Seen'], { uid: true });
                await client.mailboxCreate('Baseline').catch(() => undefined);
                await client.messageMove(uids.join(','), 'Baseline', { uid: true });
              }
            } finally {
              lock.release();
            }
          }
          await client.logout();
        }
      }),
    ),
  );
  await provider.close();
  await database.close();

  const rate = (n: number, ms: number) => (ms ? (n / (ms / 1000)).toFixed(0) : '-');
  console.log(`\nbench:warmup on ${label}: ${ACCOUNTS} pool accounts x ${PER_DAY} a day, one simulated day (144 runs of each job)\n`);
  console.log('| measure | warm-up jobs | baseline (nodemailer / imapflow) | ratio |');
  console.log('|---|---:|---:|---:|');
  console.log(`| messages sent | ${sent} | ${sent} | |`);
  console.log(`| send rate (msg/s) | ${rate(sent, sendMs)} | ${rate(sent, baseSendMs)} | ${((sent / sendMs) / (sent / baseSendMs) * 100).toFixed(0)}% |`);
  console.log(`| messages read (recognised) | ${seen} | ${baseRead} | |`);
  console.log(`| read rate (msg/s) | ${rate(seen, readMs)} | ${rate(baseRead, baseReadMs)} | ${((seen / readMs) / (baseRead / baseReadMs) * 100).toFixed(0)}% |`);
  console.log(`| reader run time per 100 mailboxes | ${((readMs / Math.max(1, mailboxesRead)) * 100).toFixed(0)} ms | ${((baseReadMs / ACCOUNTS) * 100).toFixed(0)} ms | |`);
  console.log(`| heap before / peak / after | ${mb(heapBefore)} / ${mb(heapPeak)} / ${mb(heapAfter)} | | |`);
  console.log(`\n(reader runs that found mailboxes due: ${readRuns}; mailbox reads: ${mailboxesRead})`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
