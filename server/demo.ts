/**
 * A week of outreach in the demo workspace, made by the product itself: a campaign of three steps is mailed
 * by the sending engine to 48 contacts over the past seven days of a clock of the demo's own, into a
 * loopback SMTP server that keeps the messages only for this run; opens and clicks arrive through the
 * tracking links those messages carry, and replies (each intent the inbox classifies, an automatic reply
 * and a bounce) are read by the inbox as its IMAP reader would hand them over. Every figure the analytics,
 * the unibox and the event feed then show is one the services made. The campaign ends paused, and its
 * stand-in mailbox sends nothing after the demo.
 */
import type { AddressInfo } from 'node:net';
import { simpleParser } from 'mailparser';
import { SMTPServer } from 'smtp-server';
import type { Clock } from './platform/clock';
import { createServices, type Deps, type Services } from './services';

const DAY_MS = 86_400_000;
const TICK_MS = 60 * 60_000;
/** The campaign's sending hours (UTC): the week's clock moves through them, and jumps over the nights. */
const HOURS = { from: 8, to: 18 };

/** The people mailed: `.example` addresses (RFC 2606), which no real mailbox can have. */
const FIRST = ['Lena', 'Marco', 'Priya', 'Tom', 'Aiko', 'Sam', 'Nora', 'Felix', 'Ines', 'Omar', 'Julia', 'Ravi'];
const LAST = ['Fischer', 'Rossi', 'Nair', 'Baker', 'Sato', 'Lee', 'Berg', 'Wagner', 'Costa', 'Haddad', 'Novak'];
const COMPANIES = ['Northwind', 'Globex', 'Initech', 'Umbrella'];
const TITLES = ['Head of Operations', 'VP Sales', 'COO', 'Revenue Operations Lead'];
const CONTACTS = 48;
const SENDERS = ['alex', 'maria', 'jon'];

/** What each contact does, by its place in the list: most open, some click, a few reply, one bounces. */
const REPLIES: Record<number, { text: string; auto?: boolean }> = {
  2: { text: 'Sounds interesting. Could you send me pricing for a team of 12?' },
  7: { text: 'Happy to talk. Can we set up a call on Thursday at 3pm?' },
  11: { text: 'Thanks, but we are not interested at the moment.' },
  16: { text: 'Please remove me from your list.' },
  21: { text: "I'm not the right person for this, you want our COO, Dana Whitfield." },
  26: { text: 'How does this integrate with our CRM?' },
  31: { text: 'I am out of the office until Monday with limited access to email.', auto: true },
};
const BOUNCES = new Set([5]);

/** A clock the demo moves by hand through its week. */
class DemoClock implements Clock {
  constructor(private at: number) {}
  now(): Date {
    return new Date(this.at);
  }
  set(at: number): void {
    this.at = at;
  }
}

interface Received {
  raw: Buffer;
  to: string;
}

/** A loopback SMTP server that takes every message, for the length of the demo. */
async function startMailSink(): Promise<{ port: number; received: Received[]; close: () => Promise<void> }> {
  const received: Received[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onAuth: (_auth, _session, cb) => cb(null, { user: 'demo' }),
    onData(stream, session, cb) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        received.push({ raw: Buffer.concat(chunks), to: session.envelope.rcptTo[0]?.address ?? '' });
        cb();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.server.address() as AddressInfo;
  return { port, received, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

export const DEMO_CONTACTS = Array.from({ length: CONTACTS }, (_, i) => {
  const first = FIRST[i % FIRST.length];
  const last = LAST[(i * 7) % LAST.length];
  const company = COMPANIES[i % COMPANIES.length];
  return {
    email: `${first}.${last}${i}@${company.toLowerCase()}.example`.toLowerCase(),
    firstName: first,
    lastName: last,
    companyName: company,
    jobTitle: TITLES[i % TITLES.length],
  };
});

function reply(sent: { messageId: string; subject: string }, from: string, to: string, text: string, auto: boolean) {
  return Buffer.from(
    [
      `From: ${from}`,
      `To: ${to}`,
      `Subject: Re: ${sent.subject}`,
      `Message-ID: <reply-${sent.messageId.replace(/[<>]/g, '')}>`,
      `In-Reply-To: ${sent.messageId}`,
      `References: ${sent.messageId}`,
      ...(auto ? ['Auto-Submitted: auto-replied'] : []),
      'MIME-Version: 1.0',
      'Content-Type: text/plain; charset=utf-8',
      '',
      text,
      '',
    ].join('\r\n'),
  );
}

function bounce(sent: { messageId: string }, recipient: string, to: string) {
  return Buffer.from(
    [
      'From: Mail Delivery System <MAILER-DAEMON@mx.example>',
      `To: ${to}`,
      'Subject: Undelivered Mail Returned to Sender',
      `Message-ID: <dsn-${sent.messageId.replace(/[<>]/g, '')}>`,
      'Auto-Submitted: auto-replied',
      'MIME-Version: 1.0',
      'Content-Type: multipart/report; report-type=delivery-status; boundary="B"',
      '',
      '--B',
      'Content-Type: message/delivery-status',
      '',
      'Reporting-MTA: dns; mx.example',
      '',
      `Final-Recipient: rfc822; ${recipient}`,
      'Action: failed',
      'Status: 5.1.1',
      'Diagnostic-Code: smtp; 550 5.1.1 mailbox unavailable',
      '',
      '--B',
      'Content-Type: text/rfc822-headers',
      '',
      `Message-ID: ${sent.messageId}`,
      '',
      '--B--',
      '',
    ].join('\r\n'),
  );
}

export interface DemoWeek {
  campaignId: string;
  accountIds: string[];
  sent: number;
  replies: number;
}

/** One line on what the demo made, for the first start and `admin demo`. */
export const describeDemoWeek = (week: DemoWeek) =>
  `a demo campaign (${week.campaignId}) that mailed ${DEMO_CONTACTS.length} contacts over the past week: ` +
  `${week.sent} emails, ${week.replies} replies, now paused.`;

/**
 * Fills `workspaceId` with the demo week, ending at the deployment's now. The stand-in mailbox is the one
 * thing not real: it is connected to the loopback server above, which is gone once the demo is made.
 */
export async function makeDemoWeek(deps: Deps, workspaceId: string): Promise<DemoWeek> {
  const end = deps.clock.now().getTime();
  // The week starts at 08:00 UTC seven days ago, so its sending windows are whole days.
  const start = Math.floor((end - 7 * DAY_MS) / DAY_MS) * DAY_MS + 8 * 3_600_000;
  const clock = new DemoClock(start);
  // The demo's own services: its clock, and leave to reach the loopback server (no login check: it takes any).
  // Its sends are not the deployment's: they count in no metric (and register none a second time).
  const services: Services = createServices({
    ...deps,
    telemetry: undefined,
    clock,
    config: { ...deps.config, allowPrivateMailHosts: true, verifyMailLogins: false },
  });
  await services.workspaces.assertExists(workspaceId);
  const sink = await startMailSink();
  try {
    // Three sending mailboxes, as a cold campaign spreads its volume.
    const accounts = [];
    for (const name of SENDERS)
      accounts.push(
        await services.accounts.connect(workspaceId, {
          email: `${name}@demo-outreach.example`,
          provider: 'smtp',
          smtp: { host: '127.0.0.1', port: sink.port, password: 'demo' },
          dailyLimit: 30,
        }),
      );
    const campaign = await services.campaigns.create(workspaceId, {
      name: 'Demo: operations leaders, Q1',
      accountIds: accounts.map((a) => a.id),
      schedule: { timezone: 'UTC', days: [0, 1, 2, 3, 4, 5, 6], from: hhmm(HOURS.from), to: hhmm(HOURS.to) },
      // New contacts start a few a day, so the week ends with contacts at every step.
      options: { dailyNewContacts: 9, emailGapMinutes: 30 },
    });
    await services.campaigns.createSteps(workspaceId, campaign.id, [
      {
        delay: { value: 0, unit: 'days' },
        variants: [
          {
            subject: '{Quick question|A question} for {{companyName}}',
            body: '<p>{Hi|Hello} {{firstName | there}},</p><p>Teams like yours cut their reporting time in half with us: <a href="https://demo-outreach.example/case-study">read how</a>.</p><p>Worth a short call?</p>',
          },
          {
            subject: '{{firstName}}, your weekly reporting',
            body: '<p>Hi {{firstName | there}},</p><p>How long does your team spend on weekly reports? <a href="https://demo-outreach.example/case-study">One customer went from 6 hours to 2</a>.</p>',
          },
        ],
      },
      {
        delay: { value: 2, unit: 'days' },
        variants: [{ subject: '', body: '<p>{Hi|Hello} {{firstName | there}}, did you see my note above?</p>' }],
      },
      {
        delay: { value: 3, unit: 'days' },
        variants: [{ subject: '', body: '<p>Last one from me, {{firstName | there}}: shall I close your file?</p>' }],
      },
    ]);
    await services.contacts.add(workspaceId, campaign.id, DEMO_CONTACTS);
    await services.campaigns.launch(workspaceId, campaign.id);
    const mailboxes = new Map(accounts.map((a) => [a.email, { accountId: a.id, workspaceId, email: a.email }]));
    const stats = await runWeek(deps.db, services, clock, sink.received, { start, end, mailboxes });
    await services.campaigns.pause(workspaceId, campaign.id);
    return { campaignId: campaign.id, accountIds: accounts.map((a) => a.id), ...stats };
  } finally {
    services.mail.close();
    await sink.close();
  }
}

type Mailbox = Parameters<Services['inbox']['processMessage']>[1];

/** Moves the demo clock through the week: sends what is due, then what people do with what they got. */
async function runWeek(
  db: Deps['db'],
  services: Services,
  clock: DemoClock,
  received: Received[],
  week: { start: number; end: number; mailboxes: Map<string, Mailbox> },
): Promise<{ sent: number; replies: number }> {
  const due: { at: number; run: () => Promise<unknown> }[] = [];
  // Opens and clicks arrive on the default host, which serves every workspace's links.
  const scope = { workspaceId: null };
  const firstMail = new Set<string>();
  const read = (mailbox: Mailbox, raw: Buffer) =>
    db.transaction((trx) => services.inbox.processMessage(trx, mailbox, raw));
  let handled = 0;
  let replies = 0;
  for (let at = week.start; at <= week.end; at = nextTick(at)) {
    // What people do between two ticks happens at its own time.
    due.sort((a, b) => a.at - b.at);
    while (due.length && due[0].at <= at) {
      const action = due.shift()!;
      clock.set(action.at);
      await action.run();
    }
    clock.set(at);
    while ((await services.sending.runOnce()) > 0);
    for (; handled < received.length; handled++) {
      const { raw, to } = received[handled];
      const index = DEMO_CONTACTS.findIndex((p) => p.email === to);
      const parsed = await simpleParser(raw);
      const mailbox = week.mailboxes.get(parsed.from?.value[0]?.address ?? '');
      if (!mailbox || index < 0) continue;
      const html = typeof parsed.html === 'string' ? parsed.html : '';
      const open = /\/o\/([^"/]+)\.gif/.exec(html)?.[1];
      const click = /\/c\/([^"]+)"/.exec(html)?.[1];
      const sent = { messageId: parsed.messageId ?? '', subject: parsed.subject ?? '' };
      const later = (hours: number, run: () => Promise<unknown>) => due.push({ at: at + hours * 3_600_000, run });
      const first = !firstMail.has(to);
      firstMail.add(to);
      if (BOUNCES.has(index)) {
        later(0.1, () => read(mailbox, bounce(sent, to, mailbox.email)));
        continue;
      }
      // Two in three open, one in five clicks; the replies answer the first message.
      if (open && index % 3 !== 0) later(1 + (index % 5), () => services.tracking.open(open, 'Mozilla/5.0', scope));
      if (click && index % 5 === 1) later(2 + (index % 4), () => services.tracking.click(click, 'Mozilla/5.0', scope));
      const answer = first ? REPLIES[index] : undefined;
      if (answer) {
        replies += 1;
        later(3 + (index % 6), () => read(mailbox, reply(sent, to, mailbox.email, answer.text, Boolean(answer.auto))));
      }
    }
  }
  return { sent: received.length, replies };
}

const hhmm = (hour: number) => `${String(hour).padStart(2, '0')}:00`;

/** The next hour inside the sending hours, or the next morning's first. */
function nextTick(at: number): number {
  const next = at + TICK_MS;
  const hour = new Date(next).getUTCHours();
  if (hour >= HOURS.from && hour < HOURS.to) return next;
  const day = Math.floor(next / DAY_MS) * DAY_MS;
  return (hour < HOURS.from ? day : day + DAY_MS) + HOURS.from * 3_600_000;
}
