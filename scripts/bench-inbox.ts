/**
 * `npm run bench:inbox`: 100 accounts on a private loopback dovecot with 10,000 new messages (replies,
 * out-of-office answers, bounces and unrelated mail to campaign emails already sent), read and classified
 * by the inbox reader until nothing is left: the time it takes and the reader's memory.
 *
 * BENCH_DATABASE_URL (else DATABASE_URL) names a PostgreSQL server (a fresh database BENCH_DB_NAME, default
 * lr_bench_inbox, is created there); without it the embedded PGlite database (in memory) is used.
 * BENCH_ACCOUNTS / BENCH_MESSAGES change the sizes. Needs dovecot (`apt-get install -y dovecot-imapd`) and root.
 */
import pino from 'pino';
import { systemClock } from '../server/platform/clock';
import { loadConfig } from '../server/platform/config';
import { migrate } from '../server/db';
import { openBenchDatabase } from './bench-database';
import { newId } from '../server/platform/ids';
import { createServices, type Deps } from '../server/services';
import { dovecotMissing, startImapServer } from '../test/helpers/imap-server';

const ACCOUNTS = Number(process.env.BENCH_ACCOUNTS ?? 100);
const MESSAGES = Number(process.env.BENCH_MESSAGES ?? 10_000);
const DB_NAME = process.env.BENCH_DB_NAME ?? 'lr_bench_inbox';
const mb = (n: number) => `${(n / 1024 / 1024).toFixed(1)} MB`;

function message(kind: number, i: number, account: string, contact: string, sentMessageId: string): string {
  const date = 'Date: Mon, 23 Nov 2026 10:30:00 +0000';
  if (kind < 70) {
    return `From: ${contact}\r\nTo: ${account}\r\nSubject: Re: Quick question\r\nMessage-ID: <r${i}@lead.example>\r\nIn-Reply-To: ${sentMessageId}\r\nReferences: ${sentMessageId}\r\n${date}\r\nContent-Type: text/plain\r\n\r\nThanks, tell me more. (${i})\r\n\r\n> Hi, quick question about your team.\r\n`;
  }
  if (kind < 85) {
    return `From: ${contact}\r\nTo: ${account}\r\nSubject: Out of office: Quick question\r\nAuto-Submitted: auto-replied\r\nMessage-ID: <o${i}@lead.example>\r\nIn-Reply-To: ${sentMessageId}\r\n${date}\r\nContent-Type: text/plain\r\n\r\nI am away until Monday.\r\n`;
  }
  if (kind < 95) {
    return [
      `From: MAILER-DAEMON@mx.lead.example`,
      `To: ${account}`,
      'Subject: Undelivered Mail Returned to Sender',
      `Message-ID: <d${i}@mx.lead.example>`,
      date,
      'MIME-Version: 1.0',
      'Content-Type: multipart/report; report-type=delivery-status; boundary="B"',
      '',
      '--B',
      'Content-Type: text/plain',
      '',
      'Delivery failed.',
      '--B',
      'Content-Type: message/delivery-status',
      '',
      'Reporting-MTA: dns; mx.lead.example',
      '',
      `Final-Recipient: rfc822; ${contact}`,
      'Action: failed',
      'Status: 5.1.1',
      'Diagnostic-Code: smtp; 550 5.1.1 user unknown',
      '',
      '--B',
      'Content-Type: text/rfc822-headers',
      '',
      `Message-ID: ${sentMessageId}`,
      '',
      '--B--',
      '',
    ].join('\r\n');
  }
  return `From: news@vendor.example\r\nTo: ${account}\r\nSubject: Weekly deals ${i}\r\nMessage-ID: <n${i}@vendor.example>\r\n${date}\r\nContent-Type: text/plain\r\n\r\nNot related to any campaign.\r\n`;
}

async function main() {
  const missing = dovecotMissing();
  if (missing) throw new Error(missing);
  const perAccount = Math.ceil(MESSAGES / ACCOUNTS);
  const imap = await startImapServer();
  const { database, label } = await openBenchDatabase(DB_NAME);
  const { db } = database;
  try {
    await migrate(db);
    const config = loadConfig({
      validateResponses: false,
      seedDemo: false,
      secretKey: '33'.repeat(32),
      allowPrivateMailHosts: true,
      verifyMailLogins: false,
    });
    const deps: Deps = { config, db, clock: systemClock, logger: pino({ level: 'warn' }) };
    const services = createServices(deps);
    const { workspace } = await services.workspaces.createWorkspace({ name: 'Inbox bench' });

    console.log(
      `Setting up ${ACCOUNTS} accounts, ${ACCOUNTS * perAccount} contacts and sent emails, ${ACCOUNTS * perAccount} new messages on dovecot 127.0.0.1:${imap.port} ...`,
    );
    const campaignId = newId();
    const now = new Date();
    await db('campaigns').insert({
      id: campaignId,
      workspace_id: workspace.id,
      name: 'Bench',
      status: 'active',
      created_at: now,
      updated_at: now,
    });
    for (let a = 0; a < ACCOUNTS; a++) {
      const email = `sdr${a}@bench-mail.example`;
      imap.addUser(email, `pw${a}`);
      const account = await services.accounts.connect(workspace.id, {
        email,
        provider: 'smtp',
        smtp: { host: '127.0.0.1', port: 25, password: 'x' },
        imap: { host: '127.0.0.1', port: imap.port, password: `pw${a}` },
      });
      const contacts = [];
      const sent = [];
      const raws: string[] = [];
      for (let k = 0; k < perAccount; k++) {
        const i = a * perAccount + k;
        const contactId = newId();
        const contact = `lead${i}@company${i % 997}.example`;
        contacts.push({
          id: contactId,
          workspace_id: workspace.id,
          campaign_id: campaignId,
          email: contact,
          status: 'active',
          created_at: now,
          updated_at: now,
        });
        const id = newId();
        const messageId = `<${id}@bench-mail.example>`;
        sent.push({
          id,
          workspace_id: workspace.id,
          account_id: account.id,
          campaign_id: campaignId,
          contact_id: contactId,
          direction: 'outbound',
          kind: 'campaign',
          message_id: messageId,
          references: [],
          thread_id: id,
          from_address: email,
          to_address: contact,
          subject: 'Quick question',
          text_body: 'Hi, quick question about your team.',
          status: 'sent',
          sent_at: now,
          created_at: now,
        });
        raws.push(message(i % 100, i, email, contact, messageId));
      }
      await db('contacts').insert(contacts);
      await db('email_messages').insert(sent);
      imap.deliverDirect(email, raws);
    }

    const samples: number[] = [];
    const rss: number[] = [];
    const sampler = setInterval(() => {
      const m = process.memoryUsage();
      samples.push(m.heapUsed);
      rss.push(m.rss);
    }, 100);
    const heapBefore = process.memoryUsage().heapUsed;
    const started = performance.now();
    let total = 0;
    let runs = 0;
    const perRun: string[] = [];
    for (;;) {
      const n = await services.inbox.runOnce();
      runs += 1;
      perRun.push(
        `${n} in ${((performance.now() - started) / 1000).toFixed(1)} s, heap ${mb(process.memoryUsage().heapUsed)}`,
      );
      total += n;
      if (n === 0) break;
    }
    const seconds = (performance.now() - started) / 1000;
    clearInterval(sampler);

    const kinds = await db('email_messages')
      .where({ direction: 'inbound' })
      .groupBy('kind')
      .select('kind', db.raw('count(*)::int AS n'));
    const events = await db('email_events').groupBy('type').select('type', db.raw('count(*)::int AS n'));
    const contacts = await db('contacts').groupBy('status').select('status', db.raw('count(*)::int AS n'));
    console.log(
      `\nDatabase: ${label}; settings: ${config.inboxMessagesPerRun} messages per account per run, ${config.inboxAccountsPerRun} accounts per run, ${config.inboxConcurrency} at once`,
    );
    console.log(`Runs: ${perRun.map((r, i) => `\n  run ${i + 1}: ${r}`).join('')}`);
    console.log(
      `\nRead and classified ${total} messages from ${ACCOUNTS} mailboxes in ${seconds.toFixed(1)} s (${Math.round(total / seconds)} messages/s, ${runs} runs)`,
    );
    console.log(
      `Stored: ${kinds.map((k: { kind: string; n: number }) => `${k.kind} ${k.n}`).join(', ')} (unrelated mail is not stored)`,
    );
    console.log(`Events: ${events.map((e: { type: string; n: number }) => `${e.type} ${e.n}`).join(', ')}`);
    console.log(`Contacts: ${contacts.map((c: { status: string; n: number }) => `${c.status} ${c.n}`).join(', ')}`);
    console.log(
      `Heap: before ${mb(heapBefore)}, peak ${mb(Math.max(...samples))}, after ${mb(process.memoryUsage().heapUsed)}; RSS peak ${mb(Math.max(...rss))}`,
    );
    console.log(`Goal: under 60 s, flat memory -> ${seconds < 60 ? 'met' : 'MISSED'}`);
  } finally {
    await database.close();
    await imap.close();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
