/**
 * `npm run bench:scale -- --json FILE` (PostgreSQL only: BENCH_DATABASE_URL or DATABASE_URL, a fresh database
 * lr_bench_scale): what the operations whose cost could grow with a workspace cost as one workspace grows,
 * beside 50 smaller ones.
 *
 * Data grows by powers of ten, incrementally (10k, then more rows to reach 100k, ...), up to
 * BENCH_SCALE_MAX_EVENTS email events (10,000,000) and BENCH_SCALE_MAX_CONTACTS contacts in active campaigns
 * (1,000,000) in the big workspace; the 50 small workspaces hold a tenth of that between them. Workspaces,
 * plan, accounts, campaigns (steps, schedule, launch) and the list are made through the services; the bulk
 * rows are written by SQL exactly as the product's write paths leave them (see `grow`):
 *   - contacts (as contact/add stores them), each with the message of its first step (email_messages, as the
 *     engine records a sent one) and its progress row waiting for step 2 in 3 days (as record() leaves it);
 *     1% of them paused, 1% marked interested, 2% with a classified reply (reply_intents, half interested), and
 *     1% of the newest campaign's in its subsequence: what the contact list's filters select;
 *   - email events (as EventService.record writes the analytics row; the feed row in `events` is not written:
 *     no measured operation reads it, and it would double the build), then the rollups that record keeps
 *     beside them, rebuilt from the raw events by the events module's rebuildRollups;
 *   - lead-database people and the big people list's memberships (as list/add/leads stores them), and the
 *     list's member counter and member blocks built from the rows (the list module's rebuildMemberBlocks).
 * The big workspace has 200 active campaigns over three years, each with its events in its own 90 days (the
 * newest ends today), and 20 accounts; each small workspace has 2 campaigns and an account.
 *
 * At each size it times through HTTP, against the real server (server/main.ts in a child process, the worker
 * off), p50 and p95 of 20 calls after 2 warm-up calls: analytics counts and summary of the whole workspace
 * (90 days) and of the newest campaign, contact/add of 1,000 under a plan contact cap (the added contacts are
 * deleted after each call, untimed), the campaign list (100), the last page of the big list (by cursor, and
 * by skip), the email list of
 * one campaign, the contact list's first page by each filter and search (CONTACT_LIST), and the big list's CSV export (with the server's RSS before, at its peak and after). The sending
 * worker's pass (SendingService.runOnce, the sending job the worker loop runs) is timed in this process: idle
 * (every progress row due in 3 days) and busy (85% of the contacts due now, every account's next send a month
 * away, so nothing is sendable). Rule for slow calls: when the first warm-up call takes over 5 s, there is
 * one warm-up and 3 measured calls (p95 is then the slowest of the 3); over 30 s, one warm-up and one measured
 * call.
 *
 * Analytics operations are sized by events, the others by contacts; an operation is measured at a size only
 * when its own dimension grew. Prints a table per operation across sizes with the ratio of each p50 to the
 * smallest size's and the issue's goals (the export's time grows with its rows; its goal is the server's RSS
 * back within 10% of its level), and writes rows { operation, size, p50Ms, p95Ms, calls } to FILE
 * (the export's rows also rssBeforeMb, rssPeakMb, rssAfterMb); `-- --table FILE` prints the table again from it,
 * `-- --table FILE --before BEFORE_FILE` beside an earlier run's, per operation and size.
 * BENCH_SCALE_KEEP=1 keeps the database afterwards; BENCH_SCALE_DB_NAME names it (lr_bench_scale), so that runs side
 * by side do not drop each other's.
 */
import type { ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import pino from 'pino';
import { loadConfig } from '../server/platform/config';
import { migrate, openDatabase, type Db } from '../server/db';
import { encodeCursor } from '../server/platform/cursor';
import { newId } from '../server/platform/ids';
import { addMonths, createMonthPartition, monthOf } from '../server/modules/events/partitions';
import { rebuildRollups } from '../server/modules/events/rollups';
import { EventStore } from '../server/modules/events/store';
import { createServices, type Deps } from '../server/services';
import { freshBenchDatabase } from './bench-database';
import { argument, startServer, stop, withRss } from './bench-process';
import { addListPeople, BENCH_UUID_SQL } from './bench-rows';

const MAX_EVENTS = Number(process.env.BENCH_SCALE_MAX_EVENTS ?? 10_000_000);
const MAX_CONTACTS = Number(process.env.BENCH_SCALE_MAX_CONTACTS ?? 1_000_000);
const KEEP = process.env.BENCH_SCALE_KEEP === '1';
const DB_NAME = process.env.BENCH_SCALE_DB_NAME ?? 'lr_bench_scale';
const ROOT = join(__dirname, '..');
const SECRET_KEY = '5c'.repeat(32);
const CALLS = 20;
const SLOW_MS = 5000;
const SLOW_CALLS = 3;
const VERY_SLOW_MS = 30_000;
const BIG_CAMPAIGNS = 200;
const BIG_ACCOUNTS = 20;
const SMALL_WORKSPACES = 50;
const SMALL_CAMPAIGNS = 2;
/** The small workspaces together hold this share of the big one's rows. */
const SMALL_SHARE = 0.1;
const DAY_MS = 86_400_000;
/** Contacts due in the busy run. */
const BUSY_SHARE = 0.85;

type Dimension = 'events' | 'contacts';
interface Op {
  name: string;
  dimension: Dimension;
  /** The goal beside "within 2x of the smallest size": p95 under this many ms at the largest size. */
  p95GoalMs?: number;
  /** Its answer grows with the data (an export): the goal is constant memory instead of time within 2x. */
  outputGrows?: boolean;
  /** Its name in runs made before it was renamed (so that a table beside an earlier run finds its rows). */
  was?: string;
}
/** The last-page operation's name before the list pages had cursors (it paged by skip). */
const LAST_PAGE = 'GET /v2/list/leads (last page of the big list)';
const OPS = {
  count: { name: 'GET /v1/analytics/campaign/count (workspace)', dimension: 'events', p95GoalMs: 100 },
  summary: { name: 'GET /v1/analytics/campaign/summary (workspace, 90 days)', dimension: 'events', p95GoalMs: 100 },
  campaignSummary: { name: 'GET /v1/analytics/campaign/summary (newest campaign, 90 days)', dimension: 'events' },
  idle: { name: 'worker: idle run', dimension: 'contacts', p95GoalMs: 50 },
  busy: {
    name: `worker: busy run (${BUSY_SHARE * 100}% due, nothing sendable)`,
    dimension: 'contacts',
    p95GoalMs: 200,
  },
  add: { name: 'POST /v1/contact/add (1,000, plan contact cap)', dimension: 'contacts' },
  campaignList: { name: 'GET /v1/campaign/list (limit 100)', dimension: 'contacts' },
  listLeads: {
    name: 'GET /v2/list/leads (last page of the big list, by cursor)',
    dimension: 'contacts',
    was: LAST_PAGE,
  },
  listLeadsSkip: {
    name: 'GET /v2/list/leads (last page of the big list, by skip)',
    dimension: 'contacts',
    was: LAST_PAGE,
  },
  emailList: { name: 'GET /v2/email/list (one campaign)', dimension: 'contacts' },
  export: { name: 'GET /v2/list/export (big list, CSV)', dimension: 'contacts', outputGrows: true },
} satisfies Record<string, Op>;

/**
 * The contact list's first page of 50 contacts of the big workspace, newest first, by each filter and search: the
 * filters that match a share of the contacts (status, lead status, intent, paused, subsequence: about 1% each;
 * created after: the newest campaign's) and the ones that match most (step 2, one campaign); a search for a term
 * 1% of the contacts hold, for the newest campaign's addresses, and for a name 200 contacts hold. Its query string
 * beside each (the bench fills in CAMPAIGN and SUBSEQUENCE).
 */
const CONTACT_LIST: Record<string, string> = {
  'workspace, no filter': '',
  'one campaign': 'campaignId=CAMPAIGN',
  'status=paused': 'status=paused',
  'leadStatus=interested': 'leadStatus=interested',
  'intent=interested': 'intent=interested',
  'step=2': 'step=2',
  'paused=true': 'paused=true',
  subsequenceId: 'subsequenceId=SUBSEQUENCE',
  'createdAfter (the newest campaign)': 'createdAfter=CREATED_AFTER',
  'search "company 42" (about 1%)': 'search=company%2042',
  'search "lead199-" (the newest campaign)': 'search=lead199-',
  'search "first7 " (one contact of each campaign)': 'search=first7%20',
};
const CONTACT_LIST_OPS: Record<string, Op> = Object.fromEntries(
  Object.keys(CONTACT_LIST).map((label) => [
    label,
    { name: `GET /v2/contact/list (${label})`, dimension: 'contacts', p95GoalMs: 50 },
  ]),
);

interface Row {
  operation: string;
  size: number;
  p50Ms: number;
  p95Ms: number;
  calls: number;
  rssBeforeMb?: number;
  rssPeakMb?: number;
  rssAfterMb?: number;
}

const fmt = (n: number) =>
  n >= 1e6 && n % 1e6 === 0 ? `${n / 1e6}M` : n >= 1e3 && n % 1e3 === 0 ? `${n / 1e3}k` : String(n);
const ms = (n: number) => (n >= 100 ? n.toFixed(0) : n.toFixed(1));
const dateOf = (d: Date) => d.toISOString().slice(0, 10);
/** Nearest-rank percentile of sorted values. */
const percentile = (sorted: number[], p: number) => sorted[Math.max(0, Math.ceil(p * sorted.length) - 1)];

/** bench_uuid (bench-rows.ts), event ids at a given time, and the campaigns the bulk rows are spread over. */
const SQL_FUNCTIONS = `${BENCH_UUID_SQL}
CREATE FUNCTION bench_event_id(at timestamptz) RETURNS uuid VOLATILE LANGUAGE sql AS $$
  SELECT overlay(overlay(replace(gen_random_uuid()::text, '-', '') PLACING lpad(to_hex((extract(epoch FROM at) * 1000)::bigint), 12, '0') FROM 1 FOR 12) PLACING '7' FROM 13 FOR 1)::uuid
$$;
CREATE TABLE bench_campaigns (
  idx int PRIMARY KEY, id uuid NOT NULL, workspace_id uuid NOT NULL, account_id uuid NOT NULL, account_email text NOT NULL,
  step_id uuid NOT NULL, variant_id uuid NOT NULL, window_start timestamptz NOT NULL, big boolean NOT NULL, contacts int NOT NULL DEFAULT 0
);`;

/** The bulk rows for one size: contacts, their messages and progress, events, people and list members. */
async function grow(
  pg: Client,
  db: Db,
  target: { events: number; contacts: number },
  done: { events: number; contacts: number },
  listId: string,
  subsequence: { campaignId: string; id: string },
): Promise<void> {
  const now = new Date();
  const spent: Record<string, number> = {};
  /** A statement, its time added to the table it writes (for the build's report). */
  const run = async (table: string, sql: string, params: unknown[] = []) => {
    const t0 = performance.now();
    const result = await pg.query(sql, params);
    spent[table] = (spent[table] ?? 0) + (performance.now() - t0) / 1000;
    return result;
  };
  // The rows are consistent by construction; without the foreign keys' checks (a look-up per key per row)
  // the bulk insert is several times faster. Contacts alone are written with triggers on: statement triggers
  // keep their counters (contact_counts) where the product has them.
  await pg.query('SET session_replication_role = replica');
  // Contacts per campaign: the big workspace's spread over its campaigns, the small ones' over theirs.
  const bigPer = Math.round(target.contacts / BIG_CAMPAIGNS);
  const smallPer = Math.max(1, Math.round((target.contacts * SMALL_SHARE) / (SMALL_WORKSPACES * SMALL_CAMPAIGNS)));
  if (target.contacts > done.contacts) {
    const t0 = performance.now();
    await pg.query(
      `CREATE TEMP TABLE bench_new AS
      SELECT c.*, k FROM bench_campaigns c CROSS JOIN LATERAL generate_series(c.contacts, (CASE WHEN c.big THEN $1::int ELSE $2::int END) - 1) k`,
      [bigPer, smallPer],
    );
    await pg.query('SET session_replication_role = DEFAULT');
    await run(
      'contacts',
      `INSERT INTO contacts (id, workspace_id, campaign_id, email, first_name, last_name, company_name, job_title, custom_variables, status, lead_status, created_at, updated_at)
      SELECT bench_uuid(1, idx, k), workspace_id, id, 'lead' || idx || '-' || k || '@company' || (k % 997) || '.example', 'First' || k, 'Last' || k,
             'Company ' || (k % 997), 'Head of Sales', '{}', CASE WHEN k % 100 = 7 THEN 'paused' ELSE 'active' END,
             CASE WHEN k % 100 = 3 THEN 'interested' END, window_start, window_start
        FROM bench_new`,
    );
    await pg.query('SET session_replication_role = replica');
    const sentAt = `n.window_start + (n.k % 86400) * interval '1 second'`;
    await run(
      'email_messages',
      `INSERT INTO email_messages (id, workspace_id, account_id, campaign_id, contact_id, step_id, variant_id, step_number, direction, kind, message_id,
                                                "references", thread_id, from_address, to_address, subject, text_body, html_body, status, smtp_response, sent_at, created_at, handed_at)
      SELECT bench_uuid(2, n.idx, n.k), n.workspace_id, n.account_id, n.id, bench_uuid(1, n.idx, n.k), n.step_id, n.variant_id, 1, 'outbound', 'campaign',
             '<' || bench_uuid(2, n.idx, n.k) || '@bench-mail.example>', '{}', bench_uuid(2, n.idx, n.k), n.account_email,
             'lead' || n.idx || '-' || n.k || '@company' || (n.k % 997) || '.example', 'Quick question, First' || n.k,
             'Hello First' || n.k || ', a quick question about Company ' || (n.k % 997) || ' and its sales team: who looks after outbound there?',
             '<p>Hello First' || n.k || ', a quick question about Company ' || (n.k % 997) || ' and its sales team: who looks after outbound there?</p>',
             'sent', '250 2.0.0 OK', ${sentAt}, ${sentAt}, ${sentAt}
        FROM bench_new n`,
    );
    await run(
      'sending_progress',
      `INSERT INTO sending_progress (contact_id, workspace_id, campaign_id, account_id, step_number, state, due_at, reason, attempts, last_message_id, last_sent_at, updated_at, subsequence_id)
      SELECT bench_uuid(1, n.idx, n.k), n.workspace_id, n.id, n.account_id, 2, 'waiting', $1, NULL, 0, bench_uuid(2, n.idx, n.k), ${sentAt}, ${sentAt},
             CASE WHEN n.id = $2 AND n.k % 100 = 9 THEN $3::uuid END
        FROM bench_new n`,
      [new Date(now.getTime() + 3 * DAY_MS), subsequence.campaignId, subsequence.id],
    );
    // A classified reply from 2% of the contacts, half of them interested (as the inbox records a reply's intent).
    await run(
      'reply_intents',
      `INSERT INTO reply_intents (message_id, workspace_id, campaign_id, contact_id, intent, source, replied_at, decided_at)
      SELECT bench_uuid(2, n.idx, n.k), n.workspace_id, n.id, bench_uuid(1, n.idx, n.k),
             CASE WHEN n.k % 100 = 3 THEN 'interested' ELSE 'notInterested' END, 'rules',
             ${sentAt} + interval '1 day', ${sentAt} + interval '1 day'
        FROM bench_new n WHERE n.k % 100 IN (3, 5)`,
    );
    await pg.query('DROP TABLE bench_new');
    await pg.query(
      'UPDATE bench_campaigns SET contacts = CASE WHEN big THEN $1::int ELSE $2::int END WHERE contacts < CASE WHEN big THEN $1::int ELSE $2::int END',
      [bigPer, smallPer],
    );
    // Lead-database people and the big list's memberships, one person per contact of the big workspace.
    await addListPeople(run, db, listId, done.contacts, target.contacts, now);
    console.log(
      `  contacts ${fmt(done.contacts)} -> ${fmt(target.contacts)} (+ messages, progress rows, people, list members): ${((performance.now() - t0) / 1000).toFixed(0)} s`,
    );
  }
  if (target.events > done.events) {
    const t0 = performance.now();
    const chunk = 1_000_000;
    // More rows than the table holds are added: its secondary indexes are dropped and built again afterwards
    // from their own definitions (random inserts into four large indexes made the 10M step take most of an hour).
    const indexes = (
      await pg.query<{
        indexname: string;
        indexdef: string;
      }>(`SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = 'public' AND tablename = 'email_events'
                       AND indexname NOT IN (SELECT conname FROM pg_constraint WHERE conrelid = 'email_events'::regclass)`)
    ).rows;
    for (const index of indexes) await pg.query(`DROP INDEX "${index.indexname}"`);
    // A partition for every month the events cover, as the worker makes them month by month; without them
    // the events of past months would all land in the default partition.
    const { months } = await new EventStore().eventPartitions(db);
    const oldest = (await pg.query<{ at: Date }>('SELECT min(window_start) AS at FROM bench_campaigns')).rows[0].at;
    for (let month = monthOf(oldest); month <= monthOf(now); month = addMonths(month, 1)) {
      if (!months.includes(month)) await db.transaction((trx) => createMonthPartition(trx, month));
    }
    // The events of the big workspace, then a tenth of that for the small ones, in chunks of a million.
    for (const [big, from, to] of [
      [true, done.events, target.events],
      [false, Math.round(done.events * SMALL_SHARE), Math.round(target.events * SMALL_SHARE)],
    ] as const) {
      const campaigns = big ? BIG_CAMPAIGNS : SMALL_WORKSPACES * SMALL_CAMPAIGNS;
      const offset = big ? 0 : BIG_CAMPAIGNS;
      for (let start = from; start < to; start += chunk) {
        const end = Math.min(to, start + chunk);
        await run(
          'email_events',
          `INSERT INTO email_events (id, workspace_id, campaign_id, step_id, variant_id, account_id, contact_id, message_id, type, is_warmup, flagged, occurred_at)
          SELECT bench_event_id(at), workspace_id, id, step_id, variant_id, account_id, bench_uuid(1, idx, k), bench_uuid(2, idx, k),
                 CASE WHEN r < 0.5 THEN 'sent' WHEN r < 0.8 THEN 'opened' WHEN r < 0.9 THEN 'clicked' WHEN r < 0.96 THEN 'replied' WHEN r < 0.98 THEN 'bounced' ELSE 'unsubscribed' END,
                 false, false, at
            FROM (SELECT c.*, floor(random() * c.contacts)::bigint AS k, random() AS r, least($1::timestamptz, c.window_start + random() * interval '90 days') AS at
                    FROM generate_series($2::bigint, $3::bigint - 1) g JOIN bench_campaigns c ON c.idx = $4::int + (g % $5::int)::int) e`,
          [now, start, end, offset, campaigns],
        );
      }
    }
    // A partitioned table's index is defined ON ONLY the parent; built ON it, it is built on every partition.
    for (const index of indexes) await run('email_events indexes', index.indexdef.replace(' ON ONLY ', ' ON '));
    // The rollups that EventService.record keeps beside each event, rebuilt from the raw events in each
    // workspace's time zone (the bulk insert bypassed record).
    const r0 = performance.now();
    await rebuildRollups(db);
    spent.rollups = (performance.now() - r0) / 1000;
    console.log(
      `  events ${fmt(done.events)} -> ${fmt(target.events)} (+ ${SMALL_SHARE * 100}% in the small workspaces): ${((performance.now() - t0) / 1000).toFixed(0)} s`,
    );
  }
  await pg.query('SET session_replication_role = DEFAULT');
  const t0 = performance.now();
  await pg.query(
    'VACUUM ANALYZE campaigns, contacts, contact_counts, reply_intents, email_messages, sending_progress, email_events, email_rollups, email_rollup_totals, email_event_firsts, email_rollup_days, people, list_people, lists',
  );
  spent['VACUUM ANALYZE'] = (performance.now() - t0) / 1000;
  console.log(
    `  seconds spent: ${Object.entries(spent)
      .map(([k, v]) => `${k} ${v.toFixed(0)}`)
      .join(', ')}`,
  );
}

/**
 * The operations across sizes, with the ratio to the smallest size and the issue's goals (of `rows`); with
 * `before`, each cell shows an earlier run's figures, then this run's.
 */
function table(rows: Row[], before?: Row[]): string {
  const sizes = [...new Set([...rows, ...(before ?? [])].map((r) => r.size))].sort((a, b) => a - b);
  const heading = before ? 'before -> after p50 / p95 ms' : 'p50 / p95 ms';
  const lines = [
    `| operation | ${sizes.map((s) => `${fmt(s)} ${heading}`).join(' | ')} | largest / smallest p50 | goal |`,
    `|---|${sizes.map(() => '---:').join('|')}|---:|---|`,
  ];
  const cell = (r: Row | undefined) =>
    r ? `${ms(r.p50Ms)} / ${ms(r.p95Ms)}${r.calls < CALLS ? ` (${r.calls})` : ''}` : '';
  for (const op of [...Object.values(OPS), ...Object.values(CONTACT_LIST_OPS)] as Op[]) {
    const mine = rows.filter((r) => r.operation === op.name);
    const earlier = before?.filter((r) => r.operation === op.name || r.operation === op.was) ?? [];
    if (mine.length === 0) continue;
    const first = mine[0];
    const last = mine[mine.length - 1];
    const ratio = last.p50Ms / first.p50Ms;
    const flat = op.outputGrows || mine.every((r) => r.p50Ms <= 2 * first.p50Ms);
    const bounded = op.p95GoalMs === undefined || last.p95Ms < op.p95GoalMs;
    // Constant memory: the server's RSS back within 10% of where it was before the export calls.
    const returned = last.rssAfterMb === undefined || last.rssAfterMb <= 1.1 * last.rssBeforeMb!;
    const memory =
      last.rssAfterMb !== undefined
        ? `; RSS ${last.rssBeforeMb} -> ${last.rssPeakMb} -> ${last.rssAfterMb} MB${returned ? '' : ', not returned'}`
        : '';
    const holds = flat && bounded && returned;
    const goal = `${op.outputGrows ? 'constant memory' : flat ? 'within 2x' : 'NOT within 2x'}${op.p95GoalMs !== undefined ? `; p95 ${bounded ? '<' : '>='} ${op.p95GoalMs} ms at ${fmt(last.size)}` : ''}${memory}: ${holds ? 'holds' : 'fails'}`;
    const cells = sizes.map((s) => {
      const now = cell(mine.find((m) => m.size === s));
      const then = cell(earlier.find((m) => m.size === s));
      return before && (then || now) ? `${then || '-'} -> ${now || '-'}` : now;
    });
    lines.push(`| ${op.name} | ${cells.join(' | ')} | ${ratio.toFixed(1)}x | ${goal} |`);
  }
  return lines.join('\n');
}

async function main(): Promise<void> {
  const saved = argument('--table');
  if (saved) {
    // The table again from a run's FILE, without a database.
    const read = (file: string) => JSON.parse(readFileSync(file, 'utf8')) as Row[];
    const earlier = argument('--before');
    console.log(table(read(saved), earlier ? read(earlier) : undefined));
    return;
  }
  const json = argument('--json');
  const bench = await freshBenchDatabase(DB_NAME, 'bench:scale');
  const config = loadConfig({
    databaseUrl: bench.url,
    dataDir: '',
    secretKey: SECRET_KEY,
    allowPrivateMailHosts: true,
    verifyMailLogins: false,
    seedDemo: false,
    validateResponses: false,
  });
  const database = await openDatabase(config);
  await migrate(database.db);
  const db = database.db;
  const deps: Deps = { config, db, clock: { now: () => new Date() }, logger: pino({ level: 'silent' }) };
  const services = createServices(deps);
  const pg = new Client({ connectionString: bench.url });
  await pg.connect();
  await pg.query("SET synchronous_commit = off; SET work_mem = '64MB'; SET maintenance_work_mem = '256MB'");
  await pg.query(SQL_FUNCTIONS);

  let server: ChildProcess | undefined;
  const rows: Row[] = [];
  try {
    // --- setup through the services ---
    const now = new Date();
    const planId = newId();
    await db('plans').insert({
      id: planId,
      name: 'Bench scale',
      per_min: 1e9,
      per_hour: 1e9,
      per_day: 1e9,
      credits: 0,
      max_contacts: 100_000_000,
      created_at: now,
    });
    const schedule = { timezone: 'UTC', days: [0, 1, 2, 3, 4, 5, 6], from: '00:00', to: '23:59' };
    const steps = [
      {
        delayDays: 0,
        variants: [
          {
            subject: 'Quick question, {{firstName}}',
            body: '<p>Hello {{firstName}}, a quick question about {{companyName}}.</p>',
          },
        ],
      },
      { delayDays: 3, variants: [{ subject: '', body: 'Following up, {{firstName}}.' }] },
    ];
    const span = 3 * 365 * DAY_MS - 90 * DAY_MS;
    let idx = 0;
    const makeWorkspace = async (name: string, accounts: number, campaigns: number, big: boolean) => {
      const { workspace, apiKey } = await services.workspaces.createWorkspace({ name, planId });
      const accountList: { id: string; email: string }[] = [];
      for (let a = 0; a < accounts; a += 1) {
        const email = `sdr${a}@${name.toLowerCase().replace(/\W+/g, '-')}.bench-mail.example`;
        const account = await services.accounts.connect(workspace.id, {
          email,
          provider: 'smtp',
          dailyLimit: 500,
          smtp: { host: '127.0.0.1', port: 2525, password: 'x' },
        });
        accountList.push({ id: account.id, email });
      }
      const campaignIds: string[] = [];
      for (let c = 0; c < campaigns; c += 1) {
        const account = accountList[c % accounts];
        const campaign = await services.campaigns.create(workspace.id, {
          name: `Campaign ${c + 1}`,
          accountIds: [account.id],
          schedule,
        });
        await services.campaigns.createSteps(workspace.id, campaign.id, steps);
        await services.campaigns.launch(workspace.id, campaign.id);
        const first = await db('campaign_steps as s')
          .join('step_variants as v', 'v.step_id', 's.id')
          .where({ 's.campaign_id': campaign.id, 's.step_order': 1 })
          .first<{ step_id: string; variant_id: string }>('s.id as step_id', 'v.id as variant_id');
        // The big workspace's campaigns start over three years, the newest 90 days ago.
        const windowStart = new Date(
          now.getTime() - 90 * DAY_MS - (big ? span * (1 - c / (campaigns - 1)) : span * Math.random()),
        );
        await pg.query(
          'INSERT INTO bench_campaigns (idx, id, workspace_id, account_id, account_email, step_id, variant_id, window_start, big) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)',
          [
            idx,
            campaign.id,
            workspace.id,
            account.id,
            account.email,
            first.step_id,
            first.variant_id,
            windowStart,
            big,
          ],
        );
        idx += 1;
        campaignIds.push(campaign.id);
      }
      return { workspace, apiKey, campaignIds };
    };
    const setup0 = performance.now();
    const big = await makeWorkspace('Bench big', BIG_ACCOUNTS, BIG_CAMPAIGNS, true);
    for (let w = 0; w < SMALL_WORKSPACES; w += 1)
      await makeWorkspace(`Bench small ${w + 1}`, 1, SMALL_CAMPAIGNS, false);
    // contact/add goes to a campaign of its own (a draft: the worker never looks at it), emptied after each call.
    const addCampaign = await services.campaigns.create(big.workspace.id, { name: 'Contact add' });
    const list = await services.lists.create(big.workspace.id, 'people', 'Big list');
    // The newest campaign's subsequence, which 1% of its contacts are in (the contact list's subsequence filter).
    const newestCampaign = big.campaignIds[BIG_CAMPAIGNS - 1];
    const subsequence = await services.subsequences.create(big.workspace.id, {
      campaignId: newestCampaign,
      name: 'No reply',
      trigger: { type: 'noReply' },
      steps: [{ delay: { value: 1, unit: 'days' }, variants: [{ subject: '', body: 'One more, {{firstName}}.' }] }],
    });
    // Every account's next send a month away: a busy run finds due contacts and nothing it may send.
    await db('sending_accounts').insert(
      (await db('email_accounts').select('id')).map((a: { id: string }) => ({
        account_id: a.id,
        next_send_at: new Date(now.getTime() + 30 * DAY_MS),
        failures: 0,
      })),
    );
    console.log(
      `Setup through the services (51 workspaces, ${BIG_CAMPAIGNS + SMALL_WORKSPACES * SMALL_CAMPAIGNS} campaigns launched): ${((performance.now() - setup0) / 1000).toFixed(0)} s`,
    );

    // --- the server ---
    const started = await startServer(ROOT, { DATABASE_URL: bench.url, SECRET_KEY });
    server = started.child;
    const { base } = started;
    const serverPid = server.pid!;

    const headers = { 'X-API-Key': big.apiKey, 'Content-Type': 'application/json' };
    const call = async (path: string, init: RequestInit = {}): Promise<void> => {
      const res = await fetch(`${base}${path}`, { ...init, headers });
      // The whole body is read (an export streams its CSV); only its status is checked.
      const body = await res.arrayBuffer();
      if (!res.ok)
        throw new Error(
          `${init.method ?? 'GET'} ${path}: ${res.status} ${Buffer.from(body).toString('utf8').slice(0, 300)}`,
        );
    };
    /** Warm-up and measured calls of one operation; `after` runs untimed after each call. */
    const time = async (op: Op, size: number, fn: () => Promise<void>, after?: () => Promise<void>): Promise<Row> => {
      const once = async () => {
        const t0 = performance.now();
        await fn();
        const elapsed = performance.now() - t0;
        await after?.();
        return elapsed;
      };
      const first = await once();
      if (first <= SLOW_MS) await once();
      const calls = first > VERY_SLOW_MS ? 1 : first > SLOW_MS ? SLOW_CALLS : CALLS;
      const times: number[] = [];
      for (let i = 0; i < calls; i += 1) times.push(await once());
      times.sort((a, b) => a - b);
      const row: Row = {
        operation: op.name,
        size,
        p50Ms: percentile(times, 0.5),
        p95Ms: percentile(times, 0.95),
        calls: times.length,
      };
      console.log(
        `  ${op.name.padEnd(64)} ${fmt(size).padStart(5)}  p50 ${ms(row.p50Ms).padStart(7)} ms  p95 ${ms(row.p95Ms).padStart(7)} ms  (${times.length} calls)`,
      );
      return row;
    };

    const newest = newestCampaign;
    const done = { events: 0, contacts: 0 };
    const top = Math.max(MAX_EVENTS, MAX_CONTACTS);
    for (let size = 10_000; size <= top; size *= 10) {
      const target = { events: Math.min(size, MAX_EVENTS), contacts: Math.min(size, MAX_CONTACTS) };
      console.log(
        `\nSize: ${fmt(target.events)} events, ${fmt(target.contacts)} contacts in the big workspace (load average ${loadavg()
          .map((l) => l.toFixed(2))
          .join(' ')})`,
      );
      const grew = { events: target.events > done.events, contacts: target.contacts > done.contacts };
      await grow(pg, db, target, done, list.id, { campaignId: newestCampaign, id: subsequence.id });
      const today = new Date();
      const range = `startDate=${dateOf(new Date(today.getTime() - 89 * DAY_MS))}&endDate=${dateOf(today)}`;
      if (grew.events) {
        rows.push(await time(OPS.count, target.events, () => call('/v1/analytics/campaign/count')));
        rows.push(await time(OPS.summary, target.events, () => call(`/v1/analytics/campaign/summary?${range}`)));
        rows.push(
          await time(OPS.campaignSummary, target.events, () =>
            call(`/v1/analytics/campaign/summary?campaignId=${newest}&${range}`),
          ),
        );
      }
      if (grew.contacts) {
        const C = target.contacts;
        rows.push(await time(OPS.idle, C, async () => void (await services.sending.runOnce())));
        const due = await pg.query(
          `UPDATE sending_progress SET due_at = $1 WHERE state = 'waiting' AND random() < ${BUSY_SHARE}`,
          [new Date(Date.now() - 60_000)],
        );
        console.log(`  (busy run: ${due.rowCount} contacts due)`);
        rows.push(await time(OPS.busy, C, async () => void (await services.sending.runOnce())));
        await pg.query(`UPDATE sending_progress SET due_at = $1 WHERE state = 'waiting'`, [
          new Date(Date.now() + 3 * DAY_MS),
        ]);
        await pg.query('VACUUM ANALYZE sending_progress');
        let batch = 0;
        const addBody = () => {
          batch += 1;
          const contacts = Array.from({ length: 1000 }, (_, i) => ({
            email: `added${batch}-${i}@new-company${i % 97}.example`,
            firstName: `Added${i}`,
          }));
          return JSON.stringify({ campaignId: addCampaign.id, contacts });
        };
        rows.push(
          await time(
            OPS.add,
            C,
            () => call('/v1/contact/add', { method: 'POST', body: addBody() }),
            // Without the foreign keys' triggers: nothing references these contacts, and each trigger would
            // scan email_events and email_messages (no index on their contact_id) per deleted contact.
            async () => {
              await pg.query('SET session_replication_role = replica');
              await pg.query('DELETE FROM contacts WHERE campaign_id = $1', [addCampaign.id]);
              await pg.query('SET session_replication_role = DEFAULT');
              // The delete skipped the counters' trigger too: the campaign's counters are cleared to match.
              await pg.query('DELETE FROM contact_counts WHERE campaign_id = $1', [addCampaign.id]);
            },
          ),
        );
        rows.push(await time(OPS.campaignList, C, () => call('/v1/campaign/list?limit=100')));
        // The last page by cursor: the cursor names the member just before it (found untimed, in list order).
        const before = await pg.query<{ added_at: Date; person_id: string }>(
          'SELECT added_at, person_id FROM list_people WHERE list_id = $1 ORDER BY added_at, person_id OFFSET $2 LIMIT 1',
          [list.id, C - 101],
        );
        const cursor = encodeCursor(before.rows[0].added_at, before.rows[0].person_id);
        // Untimed: that page is the list's last 100 members and its counter matches the rows.
        const last = (await (
          await fetch(`${base}/v2/list/leads?listId=${list.id}&limit=100&cursor=${cursor}`, { headers })
        ).json()) as {
          data: { items: unknown[]; pagination: { total: number; hasMore: boolean } };
        };
        if (last.data.items.length !== 100 || last.data.pagination.hasMore || last.data.pagination.total !== C) {
          throw new Error(
            `last page by cursor: ${last.data.items.length} items, hasMore ${last.data.pagination.hasMore}, total ${last.data.pagination.total} (expected 100, false, ${C})`,
          );
        }
        rows.push(
          await time(OPS.listLeads, C, () => call(`/v2/list/leads?listId=${list.id}&limit=100&cursor=${cursor}`)),
        );
        rows.push(
          await time(OPS.listLeadsSkip, C, () =>
            call(`/v2/list/leads?listId=${list.id}&limit=100&skip=${Math.max(0, C - 100)}`),
          ),
        );
        rows.push(await time(OPS.emailList, C, () => call(`/v2/email/list?campaignId=${newest}`)));
        const newestStart = (
          await pg.query<{ at: Date }>('SELECT window_start AS at FROM bench_campaigns WHERE id = $1', [newest])
        ).rows[0].at;
        for (const [label, query] of Object.entries(CONTACT_LIST)) {
          const filled = query
            .replace('CAMPAIGN', newest)
            .replace('SUBSEQUENCE', subsequence.id)
            .replace('CREATED_AFTER', encodeURIComponent(newestStart.toISOString()));
          rows.push(
            await time(CONTACT_LIST_OPS[label], C, () =>
              call(`/v2/contact/list?limit=50${filled ? `&${filled}` : ''}`),
            ),
          );
        }
        const { result: row, ...rss } = await withRss(serverPid, () =>
          time(OPS.export, C, () => call(`/v2/list/export?listId=${list.id}&format=csv`)),
        );
        Object.assign(row, rss);
        console.log(
          `    server RSS ${row.rssBeforeMb} MB before the export calls, ${row.rssPeakMb} MB at the peak, ${row.rssAfterMb} MB 2 s after the last`,
        );
        rows.push(row);
      }
      Object.assign(done, target);
      // Printed and written after every size, so a run stopped early keeps what it measured.
      console.log(`\n${table(rows)}`);
      if (json) writeFileSync(json, `${JSON.stringify(rows, null, 2)}\n`);
    }

    console.log(
      `\nload average at the end: ${loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}\n`,
    );
    console.log(table(rows));
  } finally {
    if (server) await stop(server);
    services.mail.close();
    await pg.end();
    await database.close();
    if (KEEP) await bench.release();
    else await bench.drop();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
