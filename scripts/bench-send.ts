/**
 * `npm run bench:send` (PostgreSQL: BENCH_DATABASE_URL or DATABASE_URL): the sending engine end to end.
 *   - 10,000 contacts x 2 steps over 50 accounts to a loopback SMTP sink, gaps 0: messages per second from
 *     the first worker run to the last accepted message of each step, beside a baseline in the same run:
 *     the same number of messages sent straight with nodemailer (pooled, same concurrency), no engine;
 *   - the same 10,000 contacts through a branching campaign in the same run: spintax in every step, the
 *     follow-up 4 hours after the opener, and 2 subsequences (a click of the opener, which no one does, and
 *     "finished without a reply", which every contact enters and whose step goes an hour later), beside the
 *     straight line's rate;
 *   - the same campaign over 50 accounts connected by OAuth (a loopback identity provider; the sink checks
 *     each XOAUTH2 login against its user-info endpoint, and the day between the steps makes every access
 *     token expire, so step 2 includes one refresh per account), as a share of the password accounts' rate;
 *   - the scheduler's time for a run that finds the due work among 100,000 waiting contacts;
 *   - the worker's heap after each phase.
 * It creates and drops its own database (lr_bench_send, or BENCH_DATABASE_NAME when several runs share a server).
 * BENCH_CONTACTS changes the size.
 *
 * With `-- --baseline REF [--rounds N]` it runs, N times (1), this checkout's benchmark and git revision REF's own
 * (its sources extracted beside, node_modules linked), one after the other in alternating order, each in a child
 * process on a database of its own, and ends with each rate's and time's medians and the range of the rounds'
 * ratios: what a change of the engine costs, measured in one run.
 */
import { execFileSync } from 'node:child_process';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import nodemailer from 'nodemailer';
import pino from 'pino';
import { SMTPServer } from 'smtp-server';
import { loadConfig } from '../server/platform/config';
import { freshBenchDatabase } from './bench-database';
import { argument, checkoutRevision, median } from './bench-process';
import { migrate, openDatabase } from '../server/db';
import { newId } from '../server/platform/ids';
import { createServices, type Deps } from '../server/services';
import { startOAuthProvider } from '../test/helpers/oauth-provider';

const CONTACTS = Number(process.env.BENCH_CONTACTS ?? 10_000);
const WAITING = Number(process.env.BENCH_WAITING ?? 100_000);
const ACCOUNTS = 50;
const DB_NAME = process.env.BENCH_DATABASE_NAME ?? 'lr_bench_send';
const heapMb = () => (process.memoryUsage().heapUsed / 1024 / 1024).toFixed(1);

class BenchClock {
  constructor(public current = new Date('2026-11-23T10:00:00.000Z').getTime()) {}
  now = () => new Date(this.current);
}

async function main(): Promise<void> {
  const bench = await freshBenchDatabase(DB_NAME, 'bench:send');
  const clock = new BenchClock();
  const idp = await startOAuthProvider({ now: clock.now });

  let received = 0;
  const sink = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    authMethods: ['PLAIN', 'LOGIN', 'XOAUTH2'],
    onAuth(auth, _s, cb) {
      if (auth.method !== 'XOAUTH2') return cb(null, { user: 'bench' });
      // Each XOAUTH2 login is checked against the provider, as Gmail and Exchange check theirs.
      fetch(idp.userInfoUrl, { headers: { authorization: `Bearer ${auth.accessToken ?? ''}` } }).then(
        (res) =>
          cb(null, res.status === 200 ? { user: auth.username } : { data: { status: '401', schemes: 'bearer' } }),
        cb,
      );
    },
    onData(stream, _s, cb) {
      stream.on('data', () => undefined);
      stream.on('end', () => {
        received += 1;
        cb();
      });
    },
  });
  await new Promise<void>((resolve) => sink.listen(0, '127.0.0.1', () => resolve()));
  const port = (sink.server.address() as AddressInfo).port;

  const config = loadConfig({
    databaseUrl: bench.url,
    secretKey: '66'.repeat(32),
    allowPrivateMailHosts: true,
    seedDemo: false,
    // Both kinds of account are measured sending, not connecting.
    verifyMailLogins: false,
    oauth: idp.settings({
      smtp: { host: '127.0.0.1', port },
      imap: { host: '127.0.0.1', port: 993 },
      timeoutMs: 10_000,
    }),
  });
  const database = await openDatabase(config);
  await migrate(database.db);
  const db = database.db;
  const deps: Deps = { config, db, clock, logger: pino({ level: 'silent' }) };
  const services = createServices(deps);
  try {
    // Baseline: the same messages straight through nodemailer, 16 at a time over one pool.
    const direct = nodemailer.createTransport({
      pool: true,
      maxConnections: 16,
      host: '127.0.0.1',
      port,
      secure: false,
      ignoreTLS: true,
    });
    const baseStart = performance.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: 16 }, async () => {
        while (next < CONTACTS) {
          next += 1;
          await direct.sendMail({
            from: 'a@acme-mail.io',
            to: `c${next}@x.test`,
            subject: 'Hello',
            text: 'Hi',
            html: '<p>Hi</p>',
          });
        }
      }),
    );
    const baseRate = CONTACTS / ((performance.now() - baseStart) / 1000);
    direct.close();
    received = 0;

    const planId = newId();
    await db('plans').insert({
      id: planId,
      name: 'Bench',
      per_min: 1e6,
      per_hour: 1e6,
      per_day: 1e6,
      credits: 0,
      created_at: clock.now(),
    });
    const { workspace } = await services.workspaces.createWorkspace({ name: 'Bench', planId });
    const accountIds: string[] = [];
    for (let i = 0; i < ACCOUNTS; i += 1) {
      const account = await services.accounts.connect(workspace.id, {
        email: `s${i}@acme-mail.io`,
        provider: 'smtp',
        dailyLimit: 1000,
        smtp: { host: '127.0.0.1', port, password: 'pw' },
      } as never);
      accountIds.push(account.id);
    }
    const oauthIds: string[] = [];
    for (let i = 0; i < ACCOUNTS; i += 1) {
      const email = `o${i}@acme-mail.io`;
      const account = await services.oauth.connectGrant(
        { id: workspace.id, timezone: 'UTC' },
        {
          email,
          provider: 'smtp',
          dailyLimit: 1000,
          auth: { type: 'oauth2', provider: 'generic', refreshToken: idp.grant(email) },
        },
      );
      oauthIds.push(account.id);
    }
    const schedule = { timezone: 'UTC', days: [0, 1, 2, 3, 4, 5, 6], from: '00:00', to: '23:59' };
    const straight = [
      {
        delayDays: 0,
        variants: [
          {
            subject: 'Hi {{firstName}}',
            body: '<p>Hello {{firstName}}, see <a href="https://acme.test">this</a>.</p>',
          },
        ],
      },
      { delayDays: 1, variants: [{ subject: '', body: 'Following up, {{firstName}}.' }] },
    ];
    const makeCampaign = async (
      name: string,
      contacts: number,
      steps: unknown[] = straight,
      branches: (campaignId: string, stepIds: string[]) => Promise<void> = () => Promise.resolve(),
      senders = accountIds,
    ) => {
      const campaign = await services.campaigns.create(workspace.id, {
        name,
        accountIds: senders,
        schedule,
        options: { emailGapMinutes: 0, randomWaitMaxMinutes: 0 },
      });
      const created = await services.campaigns.createSteps(workspace.id, campaign.id, steps as never);
      await branches(
        campaign.id,
        created.steps.map((s) => s.id),
      );
      for (let i = 0; i < contacts; i += 5000) {
        const rows = Array.from({ length: Math.min(5000, contacts - i) }, (_, k) => ({
          id: newId(),
          workspace_id: workspace.id,
          campaign_id: campaign.id,
          email: `${name}${i + k}@x.test`,
          first_name: `N${i + k}`,
          custom_variables: '{}',
          status: 'active',
          created_at: clock.now(),
          updated_at: clock.now(),
        }));
        await db('contacts').insert(rows);
      }
      await services.campaigns.launch(workspace.id, campaign.id);
      return campaign.id;
    };

    const rows: [string, string][] = [['baseline: nodemailer alone, 16 at a time', `${baseRate.toFixed(0)} msg/s`]];
    /** Runs the engine until `goal` messages in all have reached the sink; messages per second of this phase. */
    const phase = async (label: string, goal: number, thenAdvanceMs: number) => {
      const start = performance.now();
      let runs = 0;
      while (received < goal && runs < 10_000) {
        await services.sending.runOnce();
        runs += 1;
      }
      const rate = CONTACTS / ((performance.now() - start) / 1000);
      rows.push([`${label}, ${CONTACTS} messages (${runs} runs)`, `${rate.toFixed(0)} msg/s, heap ${heapMb()} MB`]);
      clock.current += thenAdvanceMs;
      return rate;
    };
    await makeCampaign('send', CONTACTS);
    const straightRates = [
      await phase('engine: step 1', CONTACTS, 86_400_000),
      await phase('engine: step 2', 2 * CONTACTS, 86_400_000),
    ];

    // The straight line again, over the accounts connected by OAuth.
    received = 0;
    await makeCampaign('oauth', CONTACTS, straight, undefined, oauthIds);
    const refreshes = idp.refreshes;
    const oauthRates = [
      await phase('engine, OAuth accounts: step 1', CONTACTS, 86_400_000),
      await phase('engine, OAuth accounts: step 2', 2 * CONTACTS, 86_400_000),
    ];
    rows.push([
      'OAuth accounts / password accounts',
      `${straightRates.map((p, i) => `step ${i + 1}: ${((100 * oauthRates[i]) / p).toFixed(0)}%`).join(', ')} ` +
        `(${idp.refreshes - refreshes} token refreshes)`,
    ]);

    // The branching campaign: spintax, an hours delay, two subsequences.
    received = 0;
    await makeCampaign(
      'branch',
      CONTACTS,
      [
        {
          delayDays: 0,
          variants: [
            {
              subject: '{Hi|Hello|Hey} {{firstName}}',
              body: '<p>{Hello|Hi} {{firstName}}, {see|have a look at} <a href="https://acme.test">this</a>.</p>',
            },
          ],
        },
        {
          delay: { value: 4, unit: 'hours' },
          variants: [{ subject: '', body: '{Following up|Bumping this}, {{firstName}}.' }],
        },
      ],
      async (campaignId, stepIds) => {
        await services.subsequences.create(workspace.id, {
          campaignId,
          name: 'Clicked the opener',
          trigger: { type: 'clicked', stepId: stepIds[0] },
          steps: [{ delay: { value: 1, unit: 'days' }, variants: [{ subject: 'Case study', body: 'Here it is.' }] }],
        });
        await services.subsequences.create(workspace.id, {
          campaignId,
          name: 'No reply',
          trigger: { type: 'noReply' },
          steps: [
            {
              delay: { value: 1, unit: 'hours' },
              variants: [{ subject: '', body: '{Last try|One more}, {{firstName}}.' }],
            },
          ],
        });
      },
    );
    const branchRates = [
      await phase('branching: step 1 (spintax)', CONTACTS, 4 * 3_600_000),
      await phase('branching: step 2 after 4 hours, then into the no-reply subsequence', 2 * CONTACTS, 3_600_000),
      await phase('branching: the subsequence step an hour later', 3 * CONTACTS, 86_400_000),
    ];
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    rows.push([
      'branching / straight line (mean of their phases)',
      `${((100 * mean(branchRates)) / mean(straightRates)).toFixed(0)} %`,
    ]);

    // 100,000 waiting contacts (not due for a day) beside the due ones: how long a run takes to find work.
    const waitingId = await makeCampaign('wait', WAITING);
    await db('sending_progress')
      .where({ campaign_id: waitingId })
      .update({ state: 'waiting', due_at: new Date(clock.current + 86_400_000) });
    await db.raw('ANALYZE');
    const times: number[] = [];
    for (let i = 0; i < 5; i += 1) {
      const t0 = performance.now();
      await services.sending.runOnce();
      times.push(performance.now() - t0);
    }
    rows.push([
      `scheduler: idle run among ${WAITING} waiting contacts (median of 5)`,
      `${times.sort((a, b) => a - b)[2].toFixed(1)} ms, heap ${heapMb()} MB`,
    ]);

    console.log('\n| measure | result |\n|---|---|');
    for (const [k, v] of rows) console.log(`| ${k} | ${v} |`);
  } finally {
    services.mail.close();
    await database.close();
    await bench.drop();
    sink.close();
    await idp.close();
  }
}

/** One run of the benchmark of the checkout at `root`: its table's rates (msg/s) and times (ms) by measure. */
function runOnce(root: string, database: string): Map<string, { value: number; unit: string }> {
  const out = execFileSync(join(root, 'node_modules/.bin/tsx'), ['scripts/bench-send.ts'], {
    cwd: root,
    env: { ...process.env, BENCH_DATABASE_NAME: database },
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  process.stdout.write(out);
  const figures = new Map<string, { value: number; unit: string }>();
  for (const [, measure, value, unit] of out.matchAll(/^\| (.+?) \| ([\d.]+) (msg\/s|ms)\b/gm))
    // The number of worker runs a phase took is not part of what it measures.
    figures.set(measure.replace(/ \(\d+ runs\)/, ''), { value: Number(value), unit });
  return figures;
}

function againstBaseline(ref: string): void {
  const rounds = Number(argument('--rounds') ?? 1);
  if (!Number.isInteger(rounds) || rounds < 1)
    throw new Error(`--rounds must be a whole number from 1, not ${argument('--rounds')}`);
  const root = join(__dirname, '..');
  const baselineRoot = checkoutRevision(root, ref, ['scripts', 'test/helpers']);
  const runs: { baseline: ReturnType<typeof runOnce>; current: ReturnType<typeof runOnce> }[] = [];
  for (let round = 0; round < rounds; round += 1) {
    const order = round % 2 ? (['baseline', 'current'] as const) : (['current', 'baseline'] as const);
    const figures = {} as (typeof runs)[number];
    for (const which of order) {
      console.log(`\nRound ${round + 1}, ${which === 'current' ? 'this checkout' : ref}:`);
      figures[which] = runOnce(which === 'current' ? root : baselineRoot, `lr_bench_send_${process.pid}_${which}`);
    }
    runs.push(figures);
  }
  console.log(
    `\nThis checkout against ${ref} over ${rounds} round(s) (medians; a time's ratio is the baseline's over this one's)`,
  );
  console.log('| measure | baseline | this checkout | of baseline | rounds |\n|---|---:|---:|---:|---:|');
  for (const [measure, { unit }] of runs[0].current) {
    const pairs = runs.flatMap(({ baseline, current }) => {
      const b = baseline.get(measure)?.value;
      const c = current.get(measure)?.value;
      return b && c ? [{ b, c, ratio: unit === 'ms' ? (100 * b) / c : (100 * c) / b }] : [];
    });
    if (!pairs.length) continue;
    const ratios = pairs.map((p) => p.ratio);
    console.log(
      `| ${measure} | ${+median(pairs.map((p) => p.b)).toFixed(2)} ${unit} | ${+median(pairs.map((p) => p.c)).toFixed(2)} ${unit} | ` +
        `${median(ratios).toFixed(0)}% | ${Math.min(...ratios).toFixed(0)}-${Math.max(...ratios).toFixed(0)}% |`,
    );
  }
}

const baselineRef = argument('--baseline');
(baselineRef ? Promise.resolve().then(() => againstBaseline(baselineRef)) : main()).catch((err) => {
  console.error(err);
  process.exit(1);
});
