/**
 * Subsequences end to end on loopback servers: the engine's mail in the SMTP sink, replies through dovecot and
 * the inbox reader, clicks through the tracking redirect, time moved by the test clock. A trigger moves the
 * contact into its subsequence once; the subsequence's steps go out in the contact's thread.
 */
import { startSmtpSink, type SmtpSink } from '../helpers/smtp-sink';
import { startTestServer, type TestServer, type TestWorkspace } from '../helpers/server';
import { describeWithDovecot, startImapServer, type ImapTestServer } from '../helpers/imap-server';
import type { Event } from '../../server/modules/events/service';

const SDR = 'subs@acme-mail.io';
const MIN = 60_000;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;
const WEEK = 7 * DAY;

type ErrorBody = { details: { field: string; code: string }[]; error: string };

describeWithDovecot('subsequences', () => {
  let imap: ImapTestServer;
  let sink: SmtpSink;
  let t: TestServer;
  let ws: TestWorkspace;
  let accountId: string;
  let n = 0;
  let week = 0;
  const recorded: Event[] = [];
  /** Each test's campaigns, paused after it so their contacts never send into the next test's week. */
  const campaigns: string[] = [];

  beforeAll(async () => {
    imap = await startImapServer({ users: [{ user: SDR, password: 'imap-pw' }] });
    sink = await startSmtpSink();
    t = await startTestServer({
      config: { secretKey: '55'.repeat(32), allowPrivateMailHosts: true, publicUrl: 'https://links.example.test' },
    });
    // Click links point at this test server.
    (t.services.tracking as unknown as { publicUrl: string }).publicUrl = t.url;
    t.services.events.onRecorded((_db, e) => {
      recorded.push(e);
      return Promise.resolve();
    });
    ws = await t.createWorkspace();
    const account = await ws.client.POST('/v2/account/connect', {
      body: {
        email: SDR,
        provider: 'smtp',
        dailyLimit: 500,
        smtp: { host: '127.0.0.1', port: sink.port, password: 'smtp-pw' },
        imap: { host: '127.0.0.1', port: imap.port, password: 'imap-pw' },
      },
    });
    expect(account.response.status).toBe(201);
    accountId = account.data!.data.account.id;
  });
  afterAll(async () => {
    t?.services.mail.close();
    await t?.close();
    await sink?.close();
    await imap?.close();
  });
  afterEach(async () => {
    for (const campaignId of campaigns.splice(0)) await ws.client.POST('/v2/campaign/pause', { body: { campaignId } });
  });
  beforeEach(() => {
    sink.received.length = 0;
    // A Monday 10:00 UTC, a week apart per test so the account's pace never carries over.
    t.clock.set(new Date(Date.parse('2026-11-23T10:00:00.000Z') + week * WEEK));
    week += 1;
  });

  async function campaign(steps: unknown[], options: object = {}) {
    n += 1;
    const created = await ws.client.POST('/v2/campaign/create', {
      body: {
        name: `Subsequences ${n}`,
        accountIds: [accountId],
        schedule: { timezone: 'UTC', days: [0, 1, 2, 3, 4, 5, 6], from: '00:00', to: '23:59' },
        options: {
          stopOnReply: true,
          emailGapMinutes: 0,
          randomWaitMaxMinutes: 0,
          trackOpens: false,
          trackClicks: false,
          ...options,
        },
      } as never,
    });
    const campaignId = created.data!.data.campaign.id;
    campaigns.push(campaignId);
    const seq = await ws.client.POST('/v2/campaign/sequence-create', { body: { campaignId, steps } as never });
    expect(seq.response.status).toBe(201);
    return { campaignId, stepIds: seq.data!.data.steps.map((s) => s.id) };
  }

  const subsequence = (body: object) => ws.client.POST('/v2/subsequence/create', { body: body as never });

  async function launch(campaignId: string, emails: string[]) {
    const added = await ws.client.POST('/v1/contact/add', {
      body: { campaignId, contacts: emails.map((email, i) => ({ email, firstName: `P${i}` })) } as never,
    });
    expect((await ws.client.POST('/v2/campaign/launch', { body: { campaignId } })).response.status).toBe(200);
    return added.data!.data.added.map((c) => c.id);
  }

  const progressOf = async (contactId: string) =>
    (await ws.client.GET('/v1/contact/get', { params: { query: { contactId } } })).data!.data;

  async function replyFrom(email: string, to: string, text: string) {
    n += 1;
    await imap.deliver(
      SDR,
      [
        `From: <${email}>`,
        `To: ${SDR}`,
        'Subject: Re: Quick question',
        `Message-ID: <reply-${n}@globex.test>`,
        `In-Reply-To: ${to}`,
        `References: ${to}`,
        `Date: ${t.clock.now().toUTCString()}`,
        '',
        text,
        '',
        '> Hi, worth a call?',
        '',
      ].join('\r\n'),
    );
    expect(await t.services.inbox.runOnce()).toBeGreaterThanOrEqual(1);
  }

  const entered = (contactId: string) =>
    recorded.filter((e) => e.type === 'contact.subsequenceEntered' && e.data.contactId === contactId);

  it('moves a "not now" reply into its subsequence, which sends its first step in the thread, once', async () => {
    const { campaignId } = await campaign([
      { delayDays: 0, variants: [{ subject: 'Quick question', body: 'Hi {{firstName}}, worth a call?' }] },
      { delayDays: 3, variants: [{ subject: '', body: 'Main follow-up' }] },
    ]);
    const created = await subsequence({
      campaignId,
      name: 'Not now',
      trigger: { type: 'replyIntent', intent: 'notInterested' },
      steps: [
        {
          delay: { value: 2, unit: 'hours' },
          variants: [{ subject: '', body: '{Understood|Fair enough}, {{firstName}}.' }],
        },
        { delay: { value: 1, unit: 'days' }, variants: [{ subject: '', body: 'Checking back, {{firstName}}.' }] },
      ],
    });
    expect(created.response.status).toBe(201);
    const sub = created.data!.data.subsequence;
    expect(sub).toMatchObject({ status: 'active', trigger: { type: 'replyIntent', intent: 'notInterested' } });
    expect(sub.steps.map((s) => s.delay)).toEqual([
      { value: 2, unit: 'hours' },
      { value: 1, unit: 'days' },
    ]);

    const [tom, ann] = await launch(campaignId, ['tom@globex.test', 'ann@initech.test']);
    expect(await t.services.sending.runOnce()).toBe(2);
    const opener = sink.received.find((m) => m.envelope.to[0] === 'tom@globex.test')!;

    t.clock.advance(HOUR);
    await replyFrom('tom@globex.test', opener.parsed.messageId!, 'Not now, maybe next quarter.');
    expect(entered(tom)).toHaveLength(1);
    expect(entered(tom)[0].data).toMatchObject({ subsequenceId: sub.id, fromSubsequenceId: null, campaignId });
    let got = await progressOf(tom);
    expect(got.contact.status).toBe('active');
    expect(got.progress).toMatchObject({ state: 'waiting', subsequenceId: sub.id, nextStep: 1 });

    // Due two hours after the reply, in Tom's thread; the main follow-up never reaches him.
    sink.received.length = 0;
    t.clock.advance(2 * HOUR - MIN);
    expect(await t.services.sending.runOnce()).toBe(0);
    t.clock.advance(MIN);
    expect(await t.services.sending.runOnce()).toBe(1);
    const first = sink.received[0];
    expect(first.envelope.to).toEqual(['tom@globex.test']);
    expect(first.parsed.text?.trim()).toMatch(/^(Understood|Fair enough), P0\.$/);
    expect(first.parsed.inReplyTo).toBe(opener.parsed.messageId);

    // Once only: another "not now" does not enter it again (the contact stops, as the campaign says).
    await replyFrom('tom@globex.test', first.parsed.messageId!, 'Still not now, sorry.');
    expect(entered(tom)).toHaveLength(1);
    got = await progressOf(tom);
    expect(got.contact.status).toBe('completed');

    // Ann never replied: she gets the main follow-up, never the subsequence.
    sink.received.length = 0;
    t.clock.advance(3 * DAY);
    await t.services.sending.runOnce();
    expect(sink.received.map((m) => [m.envelope.to[0], m.parsed.text?.trim()])).toEqual([
      ['ann@initech.test', 'Main follow-up'],
    ]);
    expect(entered(ann)).toHaveLength(0);

    const view = await ws.client.GET('/v2/subsequence/get', { params: { query: { subsequenceId: sub.id } } });
    expect(view.data!.data.subsequence.stats).toMatchObject({ entered: 1, inSubsequence: 0, sent: 1, replied: 1 });
  });

  it('moves a contact who clicks a link of the watched step, into a new thread when the step has a subject', async () => {
    const { campaignId, stepIds } = await campaign(
      [
        {
          delayDays: 0,
          variants: [{ subject: 'Pricing', body: '<p>See <a href="https://acme.test/pricing">pricing</a></p>' }],
        },
        { delayDays: 2, variants: [{ subject: '', body: 'Main follow-up' }] },
      ],
      { trackClicks: true },
    );
    const sub = (
      await subsequence({
        campaignId,
        name: 'Clicked pricing',
        trigger: { type: 'clicked', stepId: stepIds[0] },
        steps: [
          { delay: { value: 30, unit: 'minutes' }, variants: [{ subject: 'The case study', body: 'Here it is.' }] },
        ],
      })
    ).data!.data.subsequence;
    const [joe, kim] = await launch(campaignId, ['joe@globex.test', 'kim@initech.test']);
    expect(await t.services.sending.runOnce()).toBe(2);
    const html = sink.received.find((m) => m.envelope.to[0] === 'joe@globex.test')!.parsed.html as string;
    const click = [...html.matchAll(/href="([^"]+)"/g)].map((m) => m[1]).find((h) => h.includes('/c/'))!;

    t.clock.advance(5 * MIN);
    const res = await fetch(click, { redirect: 'manual', headers: { 'user-agent': 'Mozilla/5.0' } });
    expect(res.status).toBe(302);
    expect(entered(joe)).toHaveLength(1);
    // A second click does not enter it again.
    await fetch(click, { redirect: 'manual', headers: { 'user-agent': 'Mozilla/5.0' } });
    expect(entered(joe)).toHaveLength(1);

    sink.received.length = 0;
    t.clock.advance(30 * MIN);
    expect(await t.services.sending.runOnce()).toBe(1);
    expect(sink.received[0].envelope.to).toEqual(['joe@globex.test']);
    expect(sink.received[0].parsed.subject).toBe('The case study');
    expect(sink.received[0].parsed.inReplyTo).toBeUndefined();
    const joeNow = await progressOf(joe);
    expect(joeNow.contact.status).toBe('completed');
    expect(joeNow.progress).toMatchObject({ state: 'done', subsequenceId: sub.id });
    expect(entered(kim)).toHaveLength(0);
  });

  it('takes a contact that finished the main sequence without a reply, then finishes it', async () => {
    const { campaignId } = await campaign([{ delayDays: 0, variants: [{ subject: 'One shot', body: 'Hi' }] }]);
    const sub = (
      await subsequence({
        campaignId,
        name: 'No reply',
        trigger: { type: 'noReply' },
        steps: [{ delay: { value: 1, unit: 'days' }, variants: [{ subject: '', body: 'Last try.' }] }],
      })
    ).data!.data.subsequence;
    const [lee] = await launch(campaignId, ['lee@globex.test']);
    expect(await t.services.sending.runOnce()).toBe(1);
    const afterMain = await progressOf(lee);
    expect(afterMain.contact.status).toBe('active');
    expect(afterMain.progress).toMatchObject({ state: 'waiting', subsequenceId: sub.id, nextStep: 1 });
    expect(entered(lee)[0].data).toMatchObject({ trigger: { type: 'noReply' } });

    t.clock.advance(DAY);
    expect(await t.services.sending.runOnce()).toBe(1);
    expect(sink.received[1].parsed.text?.trim()).toBe('Last try.');
    expect(sink.received[1].parsed.inReplyTo).toBe(sink.received[0].parsed.messageId);
    expect((await progressOf(lee)).contact.status).toBe('completed');
    expect(entered(lee)).toHaveLength(1);
  });

  it('holds the contacts of a paused subsequence until it is resumed', async () => {
    const { campaignId } = await campaign([{ delayDays: 0, variants: [{ subject: 'Hello', body: 'Hi' }] }]);
    const sub = (
      await subsequence({
        campaignId,
        name: 'No reply',
        trigger: { type: 'noReply' },
        steps: [{ delay: { value: 1, unit: 'hours' }, variants: [{ subject: '', body: 'Nudge.' }] }],
      })
    ).data!.data.subsequence;
    const [amy] = await launch(campaignId, ['amy@globex.test']);
    expect(await t.services.sending.runOnce()).toBe(1);
    const paused = await ws.client.POST('/v2/subsequence/pause', { body: { subsequenceId: sub.id } });
    expect(paused.data!.data.subsequence.status).toBe('paused');
    expect((await ws.client.POST('/v2/subsequence/pause', { body: { subsequenceId: sub.id } })).response.status).toBe(
      409,
    );
    t.clock.advance(HOUR);
    expect(await t.services.sending.runOnce()).toBe(0);
    expect((await progressOf(amy)).progress).toMatchObject({ state: 'held', reason: 'subsequence_paused' });
    const status = await ws.client.GET('/v2/campaign/sending-status', { params: { query: { campaignId } } });
    expect(status.data!.data.heldReasons).toEqual(['subsequence_paused']);
    await ws.client.POST('/v2/subsequence/resume', { body: { subsequenceId: sub.id } });
    expect(await t.services.sending.runOnce()).toBe(1);
    expect(sink.received[1].parsed.text?.trim()).toBe('Nudge.');
  });

  it('refuses a trigger naming a step, intent or status that does not exist, and limits, naming the field', async () => {
    const { campaignId } = await campaign([{ delayDays: 0, variants: [{ subject: 'Hello', body: 'Hi' }] }]);
    const other = await campaign([{ delayDays: 0, variants: [{ subject: 'Hello', body: 'Hi' }] }]);
    const steps = [{ delayDays: 1, variants: [{ subject: '', body: 'x' }] }];
    const fields = async (body: object) => {
      const res = await subsequence({ campaignId, name: 'Bad', steps, ...body });
      expect(res.response.status).toBe(400);
      return (res.error as unknown as ErrorBody).details.map((d) => d.field);
    };
    expect(await fields({ trigger: { type: 'opened', stepId: other.stepIds[0] } })).toEqual(['body.trigger.stepId']);
    expect(await fields({ trigger: { type: 'replyIntent', intent: 'maybeLater' } })).toContain('body.trigger.intent');
    expect(await fields({ trigger: { type: 'leadStatus', leadStatus: 'warm' } })).toContain('body.trigger.leadStatus');
    expect(await fields({ trigger: { type: 'replyContains' } })).toEqual(['body.trigger.phrase']);
    expect(await fields({ trigger: { type: 'noReply', intent: 'question' } })).toEqual(['body.trigger.intent']);
    expect(
      await fields({
        trigger: { type: 'noReply' },
        steps: [{ delayDays: 0, variants: [{ subject: '', body: '{Hi|Hello' }] }],
      }),
    ).toEqual(['body.steps.0.variants.0.body']);
    const tooMany = await fields({ trigger: { type: 'noReply' }, steps: Array.from({ length: 11 }, () => steps[0]) });
    expect(tooMany).toContain('body.steps');

    // At most 10 subsequences per campaign.
    for (let i = 0; i < 10; i += 1)
      expect(
        (await subsequence({ campaignId, name: `S${i}`, trigger: { type: 'noReply' }, steps })).response.status,
      ).toBe(201);
    const eleventh = await subsequence({ campaignId, name: 'S10', trigger: { type: 'noReply' }, steps });
    expect(eleventh.response.status).toBe(409);
    const list = await ws.client.GET('/v2/subsequence/list', { params: { query: { campaignId, limit: 5 } } });
    expect(list.data!.data.pagination).toMatchObject({ total: 10, hasMore: true });
    expect(list.data!.data.items[0].name).toBe('S0');

    // Another workspace's subsequence is a 404.
    const stranger = await t.createWorkspace();
    const id = list.data!.data.items[0].id;
    const res = await stranger.client.GET('/v2/subsequence/get', { params: { query: { subsequenceId: id } } });
    expect(res.response.status).toBe(404);
  });

  it('refuses to delete a subsequence with contacts in it unless they are moved out', async () => {
    const { campaignId } = await campaign([
      { delayDays: 0, variants: [{ subject: 'Hello', body: 'Hi' }] },
      { delayDays: 2, variants: [{ subject: '', body: 'Main two' }] },
    ]);
    const sub = (
      await subsequence({
        campaignId,
        name: 'Interested',
        trigger: { type: 'leadStatus', leadStatus: 'interested' },
        steps: [{ delay: { value: 3, unit: 'days' }, variants: [{ subject: '', body: 'Booking link.' }] }],
      })
    ).data!.data.subsequence;
    const [sam] = await launch(campaignId, ['sam@globex.test']);
    expect(await t.services.sending.runOnce()).toBe(1);
    const set = await ws.client.POST('/v1/contact/update/status', {
      body: { contactId: sam, leadStatus: 'interested' } as never,
    });
    expect(set.response.status).toBe(200);
    expect((await progressOf(sam)).progress).toMatchObject({ subsequenceId: sub.id, nextStep: 1 });

    const refused = await ws.client.DELETE('/v2/subsequence/delete', { params: { query: { subsequenceId: sub.id } } });
    expect(refused.response.status).toBe(409);
    expect((refused.error as unknown as ErrorBody).details[0]).toMatchObject({
      field: 'query.moveContactsTo',
      code: 'contacts_in_subsequence',
    });
    const moved = await ws.client.DELETE('/v2/subsequence/delete', {
      params: { query: { subsequenceId: sub.id, moveContactsTo: 'main' } },
    });
    expect(moved.data!.data).toEqual({ deletedSubsequenceId: sub.id, contactsMoved: 1 });
    expect((await progressOf(sam)).progress).toMatchObject({ subsequenceId: null, nextStep: 2, state: 'waiting' });
    expect(await t.services.sending.runOnce()).toBe(1);
    expect(sink.received[1].parsed.text?.trim()).toBe('Main two');
  });
});
