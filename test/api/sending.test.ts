/**
 * The sending engine through HTTP and a real SMTP server on loopback: a launched campaign sends, inside
 * its schedule, at its pace, threads follow-ups, handles SMTP faults, and explains itself.
 * Time moves by the test clock; each `runOnce()` is one pass of the worker.
 */
import type { AccountRow } from '../../server/modules/account/store';
import { found } from '../helpers/rows';
import { startSmtpSink, type SmtpSink } from '../helpers/smtp-sink';
import { startTestServer, type TestServer, type TestWorkspace } from '../helpers/server';

const MIN = 60_000;
const DAY = 86_400_000;
const weekdaysUtc = { timezone: 'UTC', days: [1, 2, 3, 4, 5], from: '09:00', to: '17:00' };

describe('sending engine', () => {
  let t: TestServer;
  let sink: SmtpSink;
  let ws: TestWorkspace;
  let n = 0;

  beforeAll(async () => {
    sink = await startSmtpSink();
    t = await startTestServer({
      config: {
        secretKey: '33'.repeat(32),
        allowPrivateMailHosts: true,
        publicUrl: 'https://links.example.test',
        smtpTimeoutMs: 1000,
      },
    });
    ws = await t.createWorkspace();
  });
  afterAll(async () => {
    t.services.mail.close();
    await t.close();
    await sink.close();
  });
  beforeEach(() => {
    sink.received.length = 0;
    sink.faults.clear();
    sink.passwords.clear();
    t.clock.set('2026-11-23T10:00:00.000Z'); // a Monday, inside 09:00-17:00 UTC
  });

  async function connect(email: string, dailyLimit = 50, password = 'smtp-pw') {
    const res = await ws.client.POST('/v2/account/connect', {
      body: { email, provider: 'smtp', dailyLimit, smtp: { host: '127.0.0.1', port: sink.port, password } } as never,
    });
    expect(res.response.status).toBe(201);
    return res.data!.data.account.id;
  }

  async function campaign(options: {
    accounts: string[];
    steps: { delayDays: number; variants: { subject: string; body: string }[] }[];
    emails: string[];
    campaignOptions?: Record<string, unknown>;
    schedule?: object;
    contacts?: Record<string, unknown>[];
  }) {
    n += 1;
    const created = await ws.client.POST('/v2/campaign/create', {
      body: {
        name: `Send ${n}`,
        accountIds: options.accounts,
        schedule: options.schedule ?? weekdaysUtc,
        options: { emailGapMinutes: 0, randomWaitMaxMinutes: 0, ...options.campaignOptions },
      } as never,
    });
    expect(created.response.status).toBe(201);
    const id = created.data!.data.campaign.id;
    const steps = await ws.client.POST('/v2/campaign/sequence-create', {
      body: { campaignId: id, steps: options.steps } as never,
    });
    expect(steps.response.status).toBe(201);
    const contacts = options.contacts ?? options.emails.map((email) => ({ email }));
    const added = await ws.client.POST('/v1/contact/add', { body: { campaignId: id, contacts } as never });
    expect(added.response.status).toBe(200);
    const launched = await ws.client.POST('/v2/campaign/launch', { body: { campaignId: id } });
    expect(launched.response.status).toBe(200);
    return {
      id,
      steps: steps.data!.data.steps,
      contactIds: Object.fromEntries(added.data!.data.added.map((c: { email: string; id: string }) => [c.email, c.id])),
    };
  }

  const status = async (campaignId: string) =>
    (await ws.client.GET('/v2/campaign/sending-status', { params: { query: { campaignId } } })).data!.data;

  it('sends the rendered first step through the account, with its own Message-ID, both parts and List-Unsubscribe', async () => {
    const account = await connect('ana@acme-mail.io');
    const c = await campaign({
      accounts: [account],
      steps: [
        {
          delayDays: 0,
          variants: [
            {
              subject: 'Hi {{firstName | there}}',
              body: '<p>{{companyName}} team: <a href="https://acme.test/demo?a=1&amp;b=2">demo</a></p>',
            },
          ],
        },
      ],
      emails: [],
      contacts: [
        { email: 'joe@globex.test', firstName: 'Joe', companyName: 'Globex & Sons' },
        { email: 'kim@initech.test', companyName: 'Initech' },
      ],
    });
    expect(await t.services.sending.runOnce()).toBe(2);
    expect(sink.received).toHaveLength(2);
    const joe = sink.received.find((m) => m.envelope.to[0] === 'joe@globex.test')!;
    const kim = sink.received.find((m) => m.envelope.to[0] === 'kim@initech.test')!;
    expect(joe.parsed.subject).toBe('Hi Joe');
    expect(kim.parsed.subject).toBe('Hi there');
    expect(joe.envelope.from).toBe('ana@acme-mail.io');
    expect(joe.parsed.messageId).toMatch(/^<[0-9a-f-]{36}@acme-mail\.io>$/);
    expect(joe.parsed.text).toContain('Globex & Sons team');
    expect(joe.parsed.html).toContain('<p>Globex &amp; Sons team');
    // Click tracking: the link points at our signed endpoint, the pixel is there.
    expect(joe.parsed.html).toMatch(/href="https:\/\/links\.example\.test\/c\/[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+"/);
    expect(joe.parsed.html).toMatch(/<img src="https:\/\/links\.example\.test\/o\/[^"]+\.gif"/);
    const list = joe.parsed.headers.get('list') as { unsubscribe: { url: string } };
    expect(list.unsubscribe.url).toMatch(/^https:\/\/links\.example\.test\/u\//);
    expect(joe.raw).toMatch(/List-Unsubscribe-Post: List-Unsubscribe=One-Click/);

    const s = await status(c.id);
    expect(s.counts).toMatchObject({ completed: 2, notStarted: 0, due: 0 });
    expect(s.sentPerStep).toEqual([{ stepId: c.steps[0].id, order: 1, sent: 2 }]);
    expect(s.reasons).toEqual(['completed']);
    const summary = await ws.client.GET('/v1/analytics/campaign/count', {
      params: { query: { campaignId: c.id } } as never,
    });
    expect(JSON.stringify(summary.data)).toContain('"sent":2');
    const acct = await ws.client.GET('/v1/account/status', { params: { query: { accountId: account } } as never });
    expect(acct.data!.data.sentToday).toBe(2);
    expect(await t.services.sending.runOnce()).toBe(0);
  });

  it('sends nothing outside the schedule, says why, and sends at the next open moment', async () => {
    const account = await connect('bea@acme-mail.io');
    t.clock.set('2026-11-28T12:00:00.000Z'); // Saturday
    const c = await campaign({
      accounts: [account],
      steps: [{ delayDays: 0, variants: [{ subject: 'Hello', body: 'Hi' }] }],
      emails: ['a@x.test'],
    });
    expect(await t.services.sending.runOnce()).toBe(0);
    const s = await status(c.id);
    expect(s.reasons).toContain('outside_schedule');
    expect(s.nextSendAt).toBe('2026-11-30T09:00:00.000Z');
    t.clock.set('2026-11-30T08:59:00.000Z');
    expect(await t.services.sending.runOnce()).toBe(0);
    t.clock.set('2026-11-30T09:00:00.000Z');
    expect(await t.services.sending.runOnce()).toBe(1);
  });

  it('sends a follow-up after its delay in the same thread, from the same account', async () => {
    const a1 = await connect('cat@acme-mail.io');
    const a2 = await connect('dan@acme-mail.io');
    const c = await campaign({
      accounts: [a1, a2],
      steps: [
        { delayDays: 0, variants: [{ subject: 'Intro {{firstName}}', body: 'One' }] },
        { delayDays: 2, variants: [{ subject: '', body: 'Two' }] },
      ],
      emails: [],
      contacts: ['p1', 'p2', 'p3', 'p4'].map((p) => ({ email: `${p}@q.test`, firstName: p })),
    });
    expect(await t.services.sending.runOnce()).toBe(4);
    // Spread evenly over the two accounts.
    const byAccount = (from: string) => sink.received.filter((m) => m.envelope.from === from).length;
    expect([byAccount('cat@acme-mail.io'), byAccount('dan@acme-mail.io')]).toEqual([2, 2]);
    const first = new Map(sink.received.map((m) => [m.envelope.to[0], m]));
    sink.received.length = 0;
    t.clock.advance(2 * DAY - MIN);
    expect(await t.services.sending.runOnce()).toBe(0);
    const progress = await ws.client.GET('/v1/contact/get', {
      params: { query: { contactId: c.contactIds['p1@q.test'] } } as never,
    });
    expect(progress.data!.data.progress).toMatchObject({
      state: 'waiting',
      nextStep: 2,
      stepsSent: 1,
      nextDueAt: '2026-11-25T10:00:00.000Z',
    });
    t.clock.advance(MIN);
    expect(await t.services.sending.runOnce()).toBe(4);
    for (const m of sink.received) {
      const before = first.get(m.envelope.to[0])!;
      expect(m.parsed.subject).toBe(`Re: ${before.parsed.subject}`);
      expect(m.parsed.inReplyTo).toBe(before.parsed.messageId);
      expect(m.parsed.references).toEqual(before.parsed.messageId);
      expect(m.envelope.from).toBe(before.envelope.from);
    }
    expect((await status(c.id)).counts.completed).toBe(4);
    const camp = await ws.client.GET('/v1/campaign/get/status', { params: { query: { campaignId: c.id } } });
    expect(camp.data!.data.status).toBe('completed');
  });

  it('keeps the gap between an account’s sends and its daily limit, and the campaign’s caps', async () => {
    const account = await connect('eve@acme-mail.io', 3);
    const c = await campaign({
      accounts: [account],
      steps: [{ delayDays: 0, variants: [{ subject: 'Hello', body: 'Hi' }] }],
      emails: ['1@g.test', '2@g.test', '3@g.test', '4@g.test', '5@g.test'],
      campaignOptions: { emailGapMinutes: 10 },
    });
    expect(await t.services.sending.runOnce()).toBe(1);
    t.clock.advance(9 * MIN);
    // With its only account in its gap, the pass reads neither the campaign's steps nor its sends today.
    const campaignReads: string[] = [];
    const record = (q: { sql: string; bindings?: unknown[] }) => {
      if (q.bindings?.includes(c.id) && /campaign_steps|step_variants|email_messages/.test(q.sql))
        campaignReads.push(q.sql);
    };
    t.db.on('query', record);
    expect(await t.services.sending.runOnce()).toBe(0);
    t.db.off('query', record);
    expect(campaignReads).toEqual([]);
    t.clock.advance(MIN);
    expect(await t.services.sending.runOnce()).toBe(1);
    t.clock.advance(10 * MIN);
    expect(await t.services.sending.runOnce()).toBe(1);
    t.clock.advance(10 * MIN);
    expect(await t.services.sending.runOnce()).toBe(0); // the account's 3 a day
    expect((await status(c.id)).counts.due).toBe(2);
    t.clock.set('2026-11-24T09:00:00.000Z');
    expect(await t.services.sending.runOnce()).toBe(1);

    const capped = await campaign({
      accounts: [await connect('fay@acme-mail.io')],
      steps: [{ delayDays: 0, variants: [{ subject: 'Hello', body: 'Hi' }] }],
      emails: ['1@h.test', '2@h.test', '3@h.test'],
      campaignOptions: { dailyNewContacts: 2 },
    });
    sink.received.length = 0;
    expect(await t.services.sending.runOnce()).toBeGreaterThanOrEqual(2);
    expect(sink.received.filter((m) => m.envelope.to[0].endsWith('@h.test'))).toHaveLength(2);
    const s = await status(capped.id);
    expect(s.counts.due).toBe(1);
  });

  it('holds a contact lacking a variable, with the reason, and sends once the variable is set', async () => {
    const account = await connect('gus@acme-mail.io');
    const c = await campaign({
      accounts: [account],
      steps: [{ delayDays: 0, variants: [{ subject: 'For {{teamName}}', body: 'Hi' }] }],
      emails: ['h@x.test'],
    });
    expect(await t.services.sending.runOnce()).toBe(0);
    const s = await status(c.id);
    expect(s.counts.held).toBe(1);
    expect(s.reasons).toContain('contacts_held');
    expect(s.heldReasons).toEqual(['missing_variable:teamName']);
    t.clock.advance(MIN);
    const set = await ws.client.POST('/v1/contact/data/set', {
      body: { contactId: c.contactIds['h@x.test'], customVariables: { teamName: 'Core' } } as never,
    });
    expect(set.response.status).toBe(200);
    expect(await t.services.sending.runOnce()).toBe(1);
    expect(sink.received[0].parsed.subject).toBe('For Core');
  });

  it('bounces and suppresses on a permanent 5xx, retries a 4xx later, and stops an account whose login is refused', async () => {
    const account = await connect('hal@acme-mail.io');
    sink.faults.set('gone@x.test', { at: 'rcpt', code: 550, message: '5.1.1 No such user' });
    sink.faults.set('busy@x.test', { at: 'rcpt', code: 450, message: '4.2.1 Mailbox busy' });
    const c = await campaign({
      accounts: [account],
      steps: [{ delayDays: 0, variants: [{ subject: 'Hello', body: 'Hi' }] }],
      emails: ['gone@x.test', 'busy@x.test', 'ok@x.test'],
    });
    expect(await t.services.sending.runOnce()).toBe(1);
    const gone = await ws.client.GET('/v1/contact/get', {
      params: { query: { contactId: c.contactIds['gone@x.test'] } } as never,
    });
    expect(gone.data!.data.contact.status).toBe('bounced');
    const busy = await ws.client.GET('/v1/contact/get', {
      params: { query: { contactId: c.contactIds['busy@x.test'] } } as never,
    });
    expect(busy.data!.data.progress).toMatchObject({ state: 'waiting', nextDueAt: '2026-11-23T10:05:00.000Z' });
    expect(busy.data!.data.progress!.reason).toMatch(/^smtp_failed: 450/);
    sink.faults.clear();
    t.clock.advance(5 * MIN);
    expect(await t.services.sending.runOnce()).toBe(1);
    // The bounced address is suppressed for the workspace: another campaign does not mail it.
    sink.received.length = 0;
    await campaign({
      accounts: [account],
      steps: [{ delayDays: 0, variants: [{ subject: 'Again', body: 'Hi' }] }],
      emails: ['gone@x.test'],
    });
    expect(await t.services.sending.runOnce()).toBe(0);
    expect(sink.received).toHaveLength(0);

    const refused = await connect('ivy@acme-mail.io', 50, 'wrong');
    sink.passwords.add('right');
    await campaign({
      accounts: [refused],
      steps: [{ delayDays: 0, variants: [{ subject: 'Hello', body: 'Hi' }] }],
      emails: ['z@x.test'],
    });
    expect(await t.services.sending.runOnce()).toBe(0);
    const st = await ws.client.GET('/v1/account/status', { params: { query: { accountId: refused } } as never });
    expect(st.data!.data.status).toBe('connectionError');
    expect(st.data!.data.statusReason).toMatch(/^auth_failed: .*535/);
  });

  it('does not reach a private SMTP host at send time unless allowed', async () => {
    const strictServer = await startTestServer({
      config: { secretKey: '33'.repeat(32), allowPrivateMailHosts: false },
    });
    try {
      const w = await strictServer.createWorkspace();
      // Arrange the account directly: connect itself refuses private hosts.
      const account = await connect('jo@acme-mail.io');
      const row = await found(t.db<AccountRow>('email_accounts').where({ id: account }).first(), 'account');
      await strictServer.db('email_accounts').insert({ ...row, workspace_id: w.workspaceId });
      const created = await w.client.POST('/v2/campaign/create', {
        body: { name: 'Strict', accountIds: [account], schedule: weekdaysUtc } as never,
      });
      const id = created.data!.data.campaign.id;
      await w.client.POST('/v2/campaign/sequence-create', {
        body: { campaignId: id, steps: [{ delayDays: 0, variants: [{ subject: 'S', body: 'B' }] }] } as never,
      });
      await w.client.POST('/v1/contact/add', { body: { campaignId: id, contacts: [{ email: 'p@x.test' }] } as never });
      await w.client.POST('/v2/campaign/launch', { body: { campaignId: id } });
      strictServer.clock.set('2026-11-23T10:00:00.000Z');
      expect(await strictServer.services.sending.runOnce()).toBe(0);
      expect(sink.received).toHaveLength(0);
      // Not the account's fault (this process may differ from the API that accepted it): retried, not marked.
      const st = await w.client.GET('/v1/account/status', { params: { query: { accountId: account } } as never });
      expect(st.data!.data).toMatchObject({ status: 'active', statusReason: null, reason: 'smtpRetrying' });
      expect(st.data!.data.retries[0].reason).toMatch(/^private_destination: /);
    } finally {
      strictServer.services.mail.close();
      await strictServer.close();
    }
  });

  it('sends nothing more once paused', async () => {
    const account = await connect('kai@acme-mail.io');
    const c = await campaign({
      accounts: [account],
      steps: [{ delayDays: 0, variants: [{ subject: 'Hello', body: 'Hi' }] }],
      emails: ['k@x.test'],
    });
    await ws.client.POST('/v2/campaign/pause', { body: { campaignId: c.id } });
    expect(await t.services.sending.runOnce()).toBe(0);
    expect((await status(c.id)).reasons).toContain('paused');
  });

  it('puts a claim never handed to SMTP back in the queue bound to no account, so any account with room may send it', async () => {
    const account = await connect('max@acme-mail.io');
    sink.faults.set('*', { at: 'hang' });
    const c = await campaign({
      accounts: [account],
      steps: [{ delayDays: 0, variants: [{ subject: 'Hello', body: 'Hi' }] }],
      emails: ['m1@x.test', 'm2@x.test', 'm3@x.test'],
    });
    // The run claims all three and hands two to SMTP, whose server holds the account's two connections; the third
    // waits for one when the worker stops, and is released (its message dropped).
    const run = t.services.sending.runOnce();
    const handed = () => t.db('email_messages').where({ campaign_id: c.id }).whereNotNull('handed_at');
    while ((await handed()).length < 2) await new Promise((r) => setTimeout(r, 20));
    t.services.sending.stop();
    await run;
    const released = await t
      .db('sending_progress as p')
      .where({ 'p.campaign_id': c.id })
      .whereNotExists(t.db('email_messages as m').whereRaw('m.contact_id = p.contact_id'))
      .select('p.state', 'p.account_id', 'p.last_message_id');
    expect(released).toEqual([{ state: 'waiting', account_id: null, last_message_id: null }]);
    await ws.client.POST('/v2/campaign/pause', { body: { campaignId: c.id } });
  });

  it('reports a send whose worker died between SMTP and the commit as unknown, and never sends it again', async () => {
    const account = await connect('lou@acme-mail.io');
    sink.faults.set('slow@x.test', { at: 'hang' });
    const c = await campaign({
      accounts: [account],
      steps: [{ delayDays: 0, variants: [{ subject: 'Hello', body: 'Hi' }] }],
      emails: ['slow@x.test'],
    });
    // A worker claims and starts SMTP, then is never heard of again.
    const dying = t.services.sending.runOnce();
    await new Promise((r) => setTimeout(r, 300));
    expect((await status(c.id)).counts.sending).toBe(1);
    t.clock.advance(11 * MIN);
    sink.faults.clear();
    expect(await t.services.sending.runOnce()).toBe(0);
    const s = await status(c.id);
    expect(s.counts.unknown).toBe(1);
    expect(sink.received).toHaveLength(0);
    t.services.mail.close();
    await dying;
    // The late SMTP outcome does not turn the unknown into a sent or a retry.
    expect((await status(c.id)).counts.unknown).toBe(1);
  });
});
