/**
 * Inbox placement tests through HTTP on the loopback mail provider: accounts send to warm-up pool mailboxes
 * on several provider domains, the worker finds each message in INBOX or Junk (or nowhere by the deadline),
 * and `placement.completed` reaches a webhook. Time moves by the injected clock.
 */
import { readHook, readJson, type ErrorBody, type Success } from '../helpers/bodies';
import { describeWithDovecot } from '../helpers/imap-server';
import { startMailProvider, type MailProvider } from '../helpers/mail-provider';
import { startTestServer, type TestServer, type TestWorkspace } from '../helpers/server';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver';

const JANE = 'jane@acme.test';
const JOE = 'joe@acme.test';
const BOB = 'bob@outlook.test'; // another workspace's warm-up account
const SEEDS = ['seed1@gmail.test', 'seed2@gmail.test', 'seed3@yahoo.test', 'seed4@aol.test'];
const MINUTE = 60_000;

describeWithDovecot('inbox placement tests', () => {
  let provider: MailProvider;
  let t: TestServer;
  let ws: TestWorkspace;
  let other: TestWorkspace;
  let receiver: WebhookReceiver;
  let jane: string;
  let joe: string;
  let bob: string;

  const connect = async (w: TestWorkspace, email: string, warmup: boolean) => {
    const { data, response } = await w.client.POST('/v2/account/connect', {
      body: { ...provider.connectBody(email), ...(warmup ? { warmup: {} } : {}) },
    });
    expect(response.status).toBe(201);
    return data!.data.account.id;
  };
  const post = (w: TestWorkspace, body: unknown) =>
    t.fetch('/v2/placement/create', {
      apiKey: w.apiKey,
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  /** The test a create answered with (201). */
  const created = async (res: Response) => (await readJson<Success<'/v2/placement/create', 'post'>>(res)).data.test;
  const get = async (w: TestWorkspace, id: string) =>
    (await w.client.GET('/v2/placement/get', { params: { query: { id } } })).data!.data.test;
  const drain = async () => {
    while ((await t.services.placement.runOnce()) > 0);
  };

  beforeAll(async () => {
    provider = await startMailProvider({ mailboxes: [JANE, JOE, BOB, ...SEEDS], now: () => t.clock.now() });
    receiver = await startWebhookReceiver();
    t = await startTestServer({
      config: { secretKey: '45'.repeat(32), allowPrivateMailHosts: true, allowPrivateWebhooks: true },
    });
    ws = await t.createWorkspace();
    other = await t.createWorkspace();
    jane = await connect(ws, JANE, true); // in the pool, never its own recipient
    joe = await connect(ws, JOE, false);
  }, 120_000); // dovecot and the server starting on a loaded machine
  afterEach(() => {
    provider.clearSpamRules();
    provider.refuse('seed4@aol.test', null);
    provider.discard('seed3@yahoo.test', false);
  });
  afterAll(async () => {
    t?.services.mail.close();
    await t?.close();
    await provider?.close();
    await receiver?.close();
  });

  it('answers 409 while the pool has no mailbox besides the senders', async () => {
    const res = await post(ws, { accountIds: [jane], subject: 'Hello', text: 'Hi' });
    expect(res.status).toBe(409);
    expect((await readJson<ErrorBody>(res)).error).toMatch(/warm-up pool has no mailbox/);
  });

  it('sends to the pool, finds each message in INBOX or Junk or nowhere, and completes with an event', async () => {
    bob = await connect(other, BOB, true);
    for (const email of SEEDS) {
      await t.services.warmup.addMailbox({
        email,
        password: provider.password(email),
        smtpHost: '127.0.0.1',
        smtpPort: provider.smtpPort,
        imapHost: '127.0.0.1',
        imapPort: provider.imapPort,
      });
    }
    const hook = await ws.client.POST('/v2/webhook/create', {
      body: { url: receiver.url, eventTypes: ['placement.completed'] },
    });
    expect(hook.response.status).toBe(201);
    // Outlook files mail from acme.test in Junk; aol's mailbox is full; yahoo drops it silently.
    provider.spamWhen((m) => m.to.endsWith('@outlook.test') && m.from.endsWith('@acme.test'));
    provider.refuse('seed4@aol.test', 'full');
    provider.discard('seed3@yahoo.test');

    const before = provider.deliveries.length;
    const res = await post(ws, {
      accountIds: [joe, jane],
      subject: 'Quick question',
      text: 'Are you the right person?',
      html: '<p>Are you the right person?</p>',
      timeoutMinutes: 30,
    });
    expect(res.status).toBe(201);
    const started = await created(res);
    expect(started).toMatchObject({
      status: 'running',
      accountIds: [joe, jane],
      recipientCount: 5,
      timeoutMinutes: 30,
      createdAt: t.clock.now().toISOString(),
      completedAt: null,
    });
    expect(started.deadlineAt).toBe(new Date(t.clock.now().getTime() + 30 * MINUTE).toISOString());
    expect(started.counts).toEqual({
      total: 10,
      inbox: 0,
      spam: 0,
      nowhere: 0,
      notSent: 0,
      pending: 10,
      inboxPercent: null,
    });
    // Jane's own mailbox is left out for both senders; Bob (another workspace's account) shows no address.
    expect(started.results.map((r) => `${r.from}>${r.to}`)).toEqual([
      ...['seed4@aol.test', 'seed1@gmail.test', 'seed2@gmail.test', null, 'seed3@yahoo.test'].map(
        (to) => `${JOE}>${to}`,
      ),
      ...['seed4@aol.test', 'seed1@gmail.test', 'seed2@gmail.test', null, 'seed3@yahoo.test'].map(
        (to) => `${JANE}>${to}`,
      ),
    ]);
    expect(JSON.stringify(started)).not.toMatch(/bob|b\*\*\*/i);

    await t.services.placement.runOnce(); // sends all ten and looks at once
    let test = await get(ws, started.id);
    expect(test.status).toBe('running');
    expect(test.counts).toEqual({
      total: 10,
      inbox: 4,
      spam: 2,
      nowhere: 0,
      notSent: 2,
      pending: 2,
      inboxPercent: 66.67,
    });
    const refused = test.results.find((r) => r.to === 'seed4@aol.test')!;
    expect(refused).toMatchObject({ placement: 'notSent', folder: null, seenAt: null });
    expect(refused.reason).toMatch(/552 5\.2\.2 Mailbox full/);
    // Where Bob's reader found it is told as its placement only: his folder and when his reader looked are his.
    const spam = test.results.find((r) => r.from === JANE && r.domain === 'outlook.test')!;
    expect(spam).toMatchObject({
      placement: 'spam',
      to: null,
      folder: null,
      domain: 'outlook.test',
      seenAt: null,
      sentAt: t.clock.now().toISOString(),
    });
    const own = test.results.find((r) => r.from === JANE && r.to === 'seed1@gmail.test')!;
    expect(own).toMatchObject({ placement: 'inbox', folder: 'INBOX', seenAt: t.clock.now().toISOString() });
    // Where the provider filed each message is what the test says; once found, it is deleted from the mailbox.
    const filed = (from: string, to: string) =>
      provider.deliveries.slice(before).find((d) => d.from === from && d.to === to)!.folder;
    expect(filed(JANE, BOB)).toBe('Junk');
    expect(await provider.locate(BOB, spam.messageId!)).toEqual([]);
    const inbox = test.results.find((r) => r.from === JANE && r.to === 'seed1@gmail.test')!;
    expect(filed(JANE, 'seed1@gmail.test')).toBe('INBOX');
    expect(await provider.locate('seed1@gmail.test', inbox.messageId!)).toEqual([]);
    // The one dropped silently was never found: nothing to delete, nothing there.
    expect(filed(JANE, 'seed3@yahoo.test')).toBeNull();

    // Before the deadline the dropped messages stay pending; at it they are nowhere.
    t.clock.advance(29 * MINUTE);
    await drain();
    expect((await get(ws, started.id)).status).toBe('running');
    t.clock.advance(MINUTE);
    await drain();
    test = await get(ws, started.id);
    expect(test.status).toBe('completed');
    expect(test.completedAt).toBe(t.clock.now().toISOString());
    expect(test.counts).toEqual({ total: 10, inbox: 4, spam: 2, nowhere: 2, notSent: 2, pending: 0, inboxPercent: 50 });
    expect(test.results.find((r) => r.to === 'seed3@yahoo.test')).toMatchObject({
      placement: 'nowhere',
      reason: 'Not found in INBOX or spam within 30 minutes.',
    });
    expect(test.byDomain).toEqual([
      {
        domain: 'aol.test',
        counts: { total: 2, inbox: 0, spam: 0, nowhere: 0, notSent: 2, pending: 0, inboxPercent: null },
      },
      {
        domain: 'gmail.test',
        counts: { total: 4, inbox: 4, spam: 0, nowhere: 0, notSent: 0, pending: 0, inboxPercent: 100 },
      },
      {
        domain: 'outlook.test',
        counts: { total: 2, inbox: 0, spam: 2, nowhere: 0, notSent: 0, pending: 0, inboxPercent: 0 },
      },
      {
        domain: 'yahoo.test',
        counts: { total: 2, inbox: 0, spam: 0, nowhere: 2, notSent: 0, pending: 0, inboxPercent: 0 },
      },
    ]);
    expect(test.byAccount.map((a) => [a.accountId, a.email, a.counts.inbox, a.counts.spam])).toEqual([
      [joe, JOE, 2, 1],
      [jane, JANE, 2, 1],
    ]);
    // Each message went out once (two refused at RCPT), and placement mail stays out of the unibox.
    expect(provider.deliveries.slice(before)).toHaveLength(10);
    expect(provider.deliveries.slice(before).filter((d) => d.refused)).toHaveLength(2);
    expect((await ws.client.GET('/v2/email/list', { params: { query: {} } })).data!.data.items).toEqual([]);

    while ((await t.services.webhooks.runOnce()) > 0);
    const events = receiver.received
      .map((h) => readHook<'placement.completed'>(h))
      .filter((e) => e.workspaceId === ws.workspaceId);
    expect(events.map((e) => e.type)).toEqual(['placement.completed']);
    expect(events[0].data.test).toEqual(test);

    const list = await ws.client.GET('/v2/placement/list', { params: { query: { status: 'completed' } } });
    expect(list.data!.message).toBe('1 placement test');
    expect(list.data!.data.items).toEqual(
      [{ ...test, byDomain: undefined, byAccount: undefined, results: undefined }].map(
        ({ byDomain: _d, byAccount: _a, results: _r, ...summary }) => summary,
      ),
    );
    expect(
      (await ws.client.GET('/v2/placement/list', { params: { query: { status: 'running' } } })).data!.data.pagination
        .total,
    ).toBe(0);
  });

  it('completes as soon as every message is seen, spreading a small count over the domains', async () => {
    const res = await post(ws, { accountIds: [joe], subject: 'Spread', text: 'Hi', recipientCount: 3 });
    const started = await created(res);
    // One per domain first (Jane is in the pool and not a sender here; her own workspace sees her address).
    expect(started.results.map((r) => r.to)).toEqual([JANE, 'seed4@aol.test', 'seed1@gmail.test']);
    await drain();
    const test = await get(ws, started.id);
    expect(test).toMatchObject({ status: 'completed', completedAt: t.clock.now().toISOString() });
    expect(test.counts).toMatchObject({ inbox: 3, pending: 0, inboxPercent: 100 });
  });

  it("answers 404 for another workspace's accounts and tests, 400 naming the field", async () => {
    const res = await post(ws, { accountIds: [joe, bob], subject: 'x', text: 'y' });
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({
      code: 'not_found',
      details: [{ field: 'body.accountIds.1', code: 'not_found' }],
    });
    const mine = await created(await post(ws, { accountIds: [joe], subject: 'Mine', text: 'y', recipientCount: 1 }));
    const theirs = await t.fetch(`/v2/placement/get?id=${mine.id}`, { apiKey: other.apiKey });
    expect(theirs.status).toBe(404);
    expect((await other.client.GET('/v2/placement/list', { params: { query: {} } })).data!.data.pagination.total).toBe(
      0,
    );

    const cases: [unknown, string][] = [
      [{ subject: 'x', text: 'y' }, 'body.accountIds'],
      [{ accountIds: [], subject: 'x', text: 'y' }, 'body.accountIds'],
      [{ accountIds: ['nope'], subject: 'x', text: 'y' }, 'body.accountIds.0'],
      [{ accountIds: [joe], text: 'y' }, 'body.subject'],
      [{ accountIds: [joe], subject: '', text: 'y' }, 'body.subject'],
      [{ accountIds: [joe], subject: 'x' }, 'body.text'],
      [{ accountIds: [joe], subject: 'x', text: 'y', recipientCount: 0 }, 'body.recipientCount'],
      [{ accountIds: [joe], subject: 'x', text: 'y', recipientCount: 101 }, 'body.recipientCount'],
      [{ accountIds: [joe], subject: 'x', text: 'y', timeoutMinutes: 4 }, 'body.timeoutMinutes'],
      [{ accountIds: [joe], subject: 'x', text: 'y', extra: 1 }, 'body.extra'],
    ];
    for (const [body, field] of cases) {
      const bad = await post(ws, body);
      expect(bad.status).toBe(400);
      expect((await readJson<ErrorBody>(bad)).details.map((d) => d.field)).toContain(field);
    }
    const badId = await t.fetch('/v2/placement/get?id=nope', { apiKey: ws.apiKey });
    expect(badId.status).toBe(400);
  });

  it('answers 409 for an account that cannot send', async () => {
    await t.db('email_accounts').where({ id: joe }).update({ status: 'paused' });
    const res = await post(ws, { accountIds: [jane, joe], subject: 'x', text: 'y' });
    await t.db('email_accounts').where({ id: joe }).update({ status: 'active' });
    expect(res.status).toBe(409);
    expect(await res.json()).toMatchObject({
      error: `${JOE} is paused: only active accounts can send a placement test.`,
      details: [{ field: 'body.accountIds.1' }],
    });
  });

  it("counts placement sends against the account's daily limit and in sentToday", async () => {
    const KIM = 'kim@acme.test';
    provider.addMailbox(KIM);
    const { data } = await ws.client.POST('/v2/account/connect', {
      body: { ...provider.connectBody(KIM), dailyLimit: 3 },
    });
    const kim = data!.data.account.id;
    const started = await created(
      await post(ws, { accountIds: [kim], subject: 'Limit', text: 'y', recipientCount: 5 }),
    );
    await drain();
    const test = await get(ws, started.id);
    // Three went out; the other two found the limit reached, and were never handed to SMTP.
    expect(test.counts).toMatchObject({ total: 5, inbox: 3, notSent: 2, pending: 0 });
    expect(test.results.filter((r) => r.placement === 'notSent').map((r) => r.reason)).toEqual(
      Array(2).fill(
        "The account's daily limit of 3 emails (campaign, warm-up and placement-test mail together) is reached for today.",
      ),
    );
    expect(provider.deliveries.filter((d) => d.from === KIM)).toHaveLength(3);
    const listed = (
      await ws.client.GET('/v1/account/list', { params: { query: { limit: 100 } } })
    ).data!.data.items.find((a) => a.id === kim)!;
    expect(listed).toMatchObject({ sentToday: 3, warmupSentToday: 0 });
    const status = (await ws.client.GET('/v1/account/status', { params: { query: { accountId: kim } } })).data!.data;
    expect(status).toMatchObject({ sentToday: 3, remainingToday: 0, canSend: false, reason: 'dailyLimitReached' });
  });

  it('never sends a message twice when two workers run at once', async () => {
    await drain();
    const before = provider.deliveries.length;
    const started = await created(await post(ws, { accountIds: [joe, jane], subject: 'Twice?', text: 'y' }));
    await Promise.all([t.services.placement.runOnce(), t.services.placement.runOnce()]);
    await drain();
    expect(
      provider.deliveries
        .slice(before)
        .map((d) => `${d.mailFrom}>${d.to}`)
        .sort(),
    ).toEqual([JOE, JANE].flatMap((from) => [...SEEDS, BOB].map((to) => `${from}>${to}`)).sort());
    expect((await get(ws, started.id)).counts).toMatchObject({ pending: 0, inbox: started.counts.total });
  });
});
