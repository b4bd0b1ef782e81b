/**
 * A/Z tests that pick their winner, the preview of a contact's next message, and the campaign options the
 * peers have (send order, plain-text first email, cc/bcc, stop on open or click, verified addresses only):
 * through HTTP, the sending engine and the SMTP sink on loopback, with time moved by the test clock.
 */
import {
  closeSendingWorkspace,
  draftCampaign,
  startSendingWorkspace,
  startWeek,
  type SendingWorkspace,
} from '../helpers/sending-workspace';
import type { SmtpSink } from '../helpers/smtp-sink';
import type { TestServer, TestWorkspace } from '../helpers/server';

const MIN = 60_000;
const HOUR = 60 * MIN;

describe('A/Z winners, previews and send options', () => {
  let sending: SendingWorkspace;
  let t: TestServer;
  let sink: SmtpSink;
  let ws: TestWorkspace;
  let n = 0;
  let week = 0;
  let monday = 0;

  beforeAll(async () => {
    sending = await startSendingWorkspace({
      email: 'ab@acme-mail.io',
      dailyLimit: 1000,
      config: { secretKey: '35'.repeat(32) },
      linksToServer: true,
    });
    ({ t, sink, ws } = sending);
  });
  afterAll(() => closeSendingWorkspace(sending));
  beforeEach(() => {
    monday = startWeek(sending, week);
    week += 1;
  });

  const draft = (options: object = {}) => draftCampaign(sending, `AB ${(n += 1)}`, { options });

  async function addSteps(campaignId: string, steps: unknown[]) {
    const res = await ws.client.POST('/v2/campaign/sequence-create', { body: { campaignId, steps } as never });
    expect(res.response.status).toBe(201);
    return res.data!.data.steps;
  }

  async function add(campaignId: string, emails: string[]) {
    const contacts = emails.map((email, i) => ({ email, firstName: `P${i}` }));
    const added = await ws.client.POST('/v1/contact/add', { body: { campaignId, contacts } as never });
    expect(added.response.status).toBe(200);
    return added.data!.data.added as { id: string; email: string }[];
  }

  const launch = async (campaignId: string) =>
    expect((await ws.client.POST('/v2/campaign/launch', { body: { campaignId } })).response.status).toBe(200);

  const winnerEvents = async (campaignId: string) => {
    const res = await ws.client.GET('/v2/event/list', {
      params: { query: { types: ['campaign.variantWinner'], campaignId } as never },
    });
    expect(res.response.status).toBe(200);
    return res.data!.data.items.map((e) => e.data);
  };

  const emails = (prefix: string, count: number) =>
    Array.from({ length: count }, (_, i) => `${prefix}${i}@globex.test`);

  it('picks the variant with the best open rate once the hours have passed, and sends only it from then on', async () => {
    const id = await draft({ trackOpens: true });
    const [step] = await addSteps(id, [
      {
        delayDays: 0,
        autoWinner: { metric: 'opened', minSentPerVariant: 1, decideAfterHours: 24 },
        variants: [
          { subject: 'Alpha', body: '<p>Hi {{firstName}}</p>' },
          { subject: 'Bravo', body: '<p>Hello {{firstName}}</p>' },
        ],
      },
    ]);
    expect(step.autoWinner).toEqual({ metric: 'opened', minSentPerVariant: 1, decideAfterHours: 24 });
    const b = step.variants[1];
    await add(id, emails('first', 16));
    await launch(id);
    expect(await t.services.sending.runOnce()).toBe(16);
    const bravo = sink.received.filter((m) => m.parsed.subject === 'Bravo');
    const alpha = sink.received.filter((m) => m.parsed.subject === 'Alpha');
    expect(alpha.length).toBeGreaterThan(0);
    expect(bravo.length).toBeGreaterThan(0);

    // Only B's readers open (minutes later, so no open reads as a machine's prefetch).
    t.clock.advance(5 * MIN);
    for (const m of bravo) {
      const pixel = /<img src="([^"]+)"/.exec(m.parsed.html as string)![1];
      expect((await fetch(pixel)).status).toBe(200);
    }

    // An hour later B leads, but the rule waits 24 hours: new contacts still get either variant.
    t.clock.set(new Date(monday + HOUR));
    await add(id, emails('early', 16));
    sink.received.length = 0;
    expect(await t.services.sending.runOnce()).toBe(16);
    expect(new Set(sink.received.map((m) => m.parsed.subject))).toEqual(new Set(['Alpha', 'Bravo']));
    expect(await winnerEvents(id)).toEqual([]);

    // 24 hours after the step's first send: B wins, on the figures at that moment.
    t.clock.set(new Date(monday + 24 * HOUR));
    await add(id, emails('late', 8));
    sink.received.length = 0;
    expect(await t.services.sending.runOnce()).toBe(8);
    expect(sink.received.map((m) => m.parsed.subject)).toEqual(Array(8).fill('Bravo'));
    const [event] = await winnerEvents(id);
    expect(event).toMatchObject({
      campaignId: id,
      stepId: step.id,
      variantId: b.id,
      label: 'B',
      metric: 'opened',
      decidedAt: new Date(monday + 24 * HOUR).toISOString(),
    });
    const figures = (event as { variants: { label: string; sent: number; opened: number; rate: number }[] }).variants;
    expect(figures.map((f) => f.label)).toEqual(['A', 'B']);
    expect(figures[0]).toMatchObject({ opened: 0, rate: 0 });
    expect(figures[1].opened).toBe(bravo.length);
    expect(figures[0].sent + figures[1].sent).toBe(32);

    const analytics = await ws.client.GET('/v2/analytics/campaign/steps', { params: { query: { campaignId: id } } });
    expect(analytics.response.status).toBe(200);
    const [row] = analytics.data!.data.steps;
    expect(row.winnerVariantId).toBe(b.id);
    expect(row.variants.map((v) => [v.label, v.winner])).toEqual([
      ['A', false],
      ['B', true],
    ]);
    expect(row.variants[0].stats).toEqual({
      sent: figures[0].sent,
      opened: 0,
      clicked: 0,
      replied: 0,
      bounced: 0,
      unsubscribed: 0,
    });
    expect(row.variants[1].stats).toMatchObject({ sent: figures[1].sent + 8, opened: bravo.length });
  });

  it('waits for the minimum sends of every variant, and gives a tie to the earliest variant', async () => {
    const id = await draft();
    const [step] = await addSteps(id, [
      {
        delayDays: 0,
        autoWinner: { metric: 'replied', minSentPerVariant: 12, decideAfterHours: 0 },
        variants: [
          { subject: 'Alpha', body: 'Hi' },
          { subject: 'Bravo', body: 'Hello' },
        ],
      },
    ]);
    await add(id, emails('tie', 16));
    await launch(id);
    expect(await t.services.sending.runOnce()).toBe(16);
    // Too few sends per variant: no winner yet.
    await add(id, emails('more', 4));
    expect(await t.services.sending.runOnce()).toBe(4);
    expect(await winnerEvents(id)).toEqual([]);
    const counts = async () => {
      const res = await ws.client.GET('/v2/analytics/campaign/steps', { params: { query: { campaignId: id } } });
      return res.data!.data.steps[0].variants.map((v) => v.stats.sent);
    };
    // Enough contacts for both variants: nobody replied, so A (the earliest) wins the tie.
    let batch = 0;
    while ((await counts()).some((sent) => sent < 12)) {
      batch += 1;
      await add(id, emails(`batch${batch}-`, 8));
      await t.services.sending.runOnce();
    }
    sink.received.length = 0;
    await add(id, emails('after', 6));
    expect(await t.services.sending.runOnce()).toBe(6);
    expect(sink.received.map((m) => m.parsed.subject)).toEqual(Array(6).fill('Alpha'));
    const [event] = await winnerEvents(id);
    expect(event).toMatchObject({ stepId: step.id, variantId: step.variants[0].id, label: 'A', metric: 'replied' });
  });
  it("previews a contact's next message, spun as it will be sent, and when it goes in the lead's zone", async () => {
    const id = await draft({ sendInLeadTimezone: true });
    const [first, second] = await addSteps(id, [
      {
        delayDays: 0,
        variants: [
          {
            subject: '{Quick question|A thought} for {{firstName}}',
            body: '{Hi|Hey} {{firstName}}, see {{unsubscribeUrl}}',
          },
        ],
      },
      { delay: { value: 1, unit: 'days' }, variants: [{ subject: '', body: 'Bump, {{companyName | friend}}' }] },
    ]);
    t.clock.set(new Date(monday - 10 * HOUR - MIN)); // Sunday 23:59 UTC
    const added = await ws.client.POST('/v1/contact/add', {
      body: {
        campaignId: id,
        contacts: [
          { email: 'kenji@tokyo.test', firstName: 'Kenji', timezone: 'Asia/Tokyo' },
          { email: 'anon@tokyo.test' },
        ],
      } as never,
    });
    const [kenji, anon] = (added.data!.data.added as { id: string; email: string }[])
      .sort((x, y) => x.email.localeCompare(y.email))
      .reverse();
    const preview = async (contactId: string) => {
      const res = await ws.client.GET('/v2/campaign/preview', { params: { query: { campaignId: id, contactId } } });
      expect(res.response.status).toBe(200);
      return res.data!.data;
    };

    const before = await preview(kenji.id);
    expect(before).toMatchObject({
      reason: 'not_launched',
      sendAt: null,
      step: { stepId: first.id, order: 1, label: 'A' },
    });
    expect(before.message!.subject).toMatch(/^(Quick question|A thought) for Kenji$/);
    expect(before.message!.text).toMatch(/^(Hi|Hey) Kenji, see \[unsubscribe link\]$/);
    expect(await preview(anon.id)).toMatchObject({
      reason: 'missing_variable',
      missingVariable: 'firstName',
      message: null,
    });

    await launch(id);
    const tokyoNine = new Date(monday - 10 * HOUR); // Monday 09:00 in Tokyo
    const launched = await preview(kenji.id);
    expect(launched).toMatchObject({ reason: null, sendAt: tokyoNine.toISOString() });
    expect(launched.message).toEqual(before.message);

    t.clock.set(tokyoNine);
    expect(await t.services.sending.runOnce()).toBe(1);
    const [sent] = sink.received;
    expect(sent.parsed.subject).toBe(before.message!.subject);
    expect(sent.parsed.text!.trim()).toMatch(/^(Hi|Hey) Kenji, see http/);
    expect(sent.parsed.text!.startsWith(before.message!.text.split(',')[0])).toBe(true);

    const next = await preview(kenji.id);
    expect(next).toMatchObject({
      reason: null,
      step: { stepId: second.id, order: 2 },
      message: { subject: `Re: ${sent.parsed.subject}`, inThread: true, text: 'Bump, friend', cc: [], bcc: [] },
      sendAt: new Date(tokyoNine.getTime() + 24 * HOUR).toISOString(),
    });
    const other = await t.createWorkspace();
    const foreign = await other.client.GET('/v2/campaign/preview', {
      params: { query: { campaignId: id, contactId: kenji.id } },
    });
    expect(foreign.response.status).toBe(404);
  });
  const progressOf = async (contactId: string) => {
    const res = await ws.client.GET('/v1/contact/get', { params: { query: { contactId } } });
    expect(res.response.status).toBe(200);
    return res.data!.data as { contact: { status: string }; progress: { state: string; reason: string | null } | null };
  };

  it('sends the first email as plain text, and copies every email to cc and bcc', async () => {
    const id = await draft({
      trackOpens: true,
      firstEmailTextOnly: true,
      cc: ['boss@acme.test'],
      bcc: ['crm-dropbox@acme.test'],
    });
    await addSteps(id, [
      { delayDays: 0, variants: [{ subject: 'Hi', body: '<p>Hello {{firstName}}</p>' }] },
      { delay: { value: 1, unit: 'hours' }, variants: [{ subject: '', body: '<p>Bump</p>' }] },
    ]);
    const created = await ws.client.GET('/v1/campaign/list', { params: { query: {} } });
    const options = created.data!.data.items.find((c) => c.id === id)!.options;
    expect(options).toMatchObject({ firstEmailTextOnly: true, cc: ['boss@acme.test'], bcc: ['crm-dropbox@acme.test'] });
    await add(id, ['copied@globex.test']);
    await launch(id);
    expect(await t.services.sending.runOnce()).toBe(1);
    t.clock.advance(HOUR);
    expect(await t.services.sending.runOnce()).toBe(1);
    const [first, second] = sink.received;
    for (const m of [first, second]) {
      expect(m.envelope.to).toEqual(['copied@globex.test', 'boss@acme.test', 'crm-dropbox@acme.test']);
      expect(m.parsed.cc).toMatchObject({ text: 'boss@acme.test' });
      expect(m.raw).not.toMatch(/^bcc:/im);
      expect(m.raw).not.toContain('crm-dropbox');
    }
    expect(first.parsed.html).toBe(false);
    expect(first.parsed.text!.trim()).toBe('Hello P0');
    expect(second.parsed.html).toMatch(/<p>Bump<\/p><img src=/);
  });

  it('ends the sequence of a contact who clicked, and says so', async () => {
    const id = await draft({ trackClicks: true, stopOnClick: true });
    await addSteps(id, [
      {
        delayDays: 0,
        variants: [{ subject: 'Hi', body: '<p>See <a href="https://acme.test/pricing">pricing</a></p>' }],
      },
      { delay: { value: 1, unit: 'hours' }, variants: [{ subject: '', body: 'Bump' }] },
    ]);
    const [clicker, quiet] = await add(id, ['clicker@globex.test', 'quiet@globex.test']);
    await launch(id);
    expect(await t.services.sending.runOnce()).toBe(2);
    const toClicker = sink.received.find((m) => m.envelope.to[0] === 'clicker@globex.test')!;
    const link = /href="([^"]+\/c\/[^"]+)"/.exec(toClicker.parsed.html as string)![1];
    t.clock.advance(5 * MIN);
    expect((await fetch(link, { redirect: 'manual' })).status).toBe(302);
    t.clock.set(new Date(monday + HOUR));
    sink.received.length = 0;
    expect(await t.services.sending.runOnce()).toBe(1);
    expect(sink.received.map((m) => m.envelope.to[0])).toEqual(['quiet@globex.test']);
    expect(await progressOf(clicker.id)).toMatchObject({
      contact: { status: 'completed' },
      progress: { state: 'done', reason: 'stopped_on_click' },
    });
    const preview = await ws.client.GET('/v2/campaign/preview', {
      params: { query: { campaignId: id, contactId: clicker.id } },
    });
    expect(preview.data!.data).toMatchObject({ reason: 'stopped_on_click', sendAt: null });
    expect((await progressOf(quiet.id)).contact.status).toBe('completed');
  });

  it('sends only to addresses verified valid; the others wait with a reason until they are', async () => {
    const id = await draft({ verifiedOnly: true });
    await addSteps(id, [{ delayDays: 0, variants: [{ subject: 'Hi', body: 'Hello' }] }]);
    const verified = (email: string, status: string) =>
      t
        .db('email_verifications')
        .insert({
          email,
          status,
          sub_status: null,
          score: status === 'valid' ? 95 : 50,
          is_role_account: false,
          is_free_provider: false,
          is_disposable: false,
          mx_found: true,
          checked_at: t.clock.now(),
          expires_at: new Date(t.clock.now().getTime() + 30 * 24 * HOUR),
        })
        .onConflict('email')
        .merge();
    await verified('valid@globex.test', 'valid');
    await verified('risky@globex.test', 'catchAll');
    const [, risky, never] = await add(id, ['Valid@globex.test', 'risky@globex.test', 'never@globex.test']);
    await launch(id);
    expect(await t.services.sending.runOnce()).toBe(1);
    expect(sink.received.map((m) => m.envelope.to[0])).toEqual(['valid@globex.test']);
    for (const c of [risky, never]) {
      expect((await progressOf(c.id)).progress).toMatchObject({ state: 'waiting', reason: 'not_verified' });
      const preview = await ws.client.GET('/v2/campaign/preview', {
        params: { query: { campaignId: id, contactId: c.id } },
      });
      expect(preview.data!.data).toMatchObject({ reason: 'not_verified', sendAt: null });
    }
    const status = await ws.client.GET('/v2/campaign/sending-status', { params: { query: { campaignId: id } } });
    expect(status.data!.data.reasons).toContain('not_verified');

    // Verified valid meanwhile: it goes at the next look, an hour on.
    await verified('risky@globex.test', 'valid');
    t.clock.advance(HOUR - MIN);
    expect(await t.services.sending.runOnce()).toBe(0);
    t.clock.advance(MIN);
    sink.received.length = 0;
    expect(await t.services.sending.runOnce()).toBe(1);
    expect(sink.received.map((m) => m.envelope.to[0])).toEqual(['risky@globex.test']);
    expect((await progressOf(never.id)).progress).toMatchObject({ reason: 'not_verified' });
  });

  it('sends first emails before follow-ups with newLeads when the daily limit cannot take both', async () => {
    const id = await draft({ dailyLimit: 2, sendPriority: 'newLeads' });
    await addSteps(id, [
      { delayDays: 0, variants: [{ subject: 'Hi', body: 'Hello' }] },
      { delay: { value: 1, unit: 'hours' }, variants: [{ subject: '', body: 'Bump' }] },
    ]);
    await add(id, ['early@globex.test']);
    await launch(id);
    expect(await t.services.sending.runOnce()).toBe(1);
    t.clock.advance(HOUR);
    await add(id, ['newcomer@globex.test']);
    sink.received.length = 0;
    expect(await t.services.sending.runOnce()).toBe(1);
    expect(sink.received.map((m) => m.envelope.to[0])).toEqual(['newcomer@globex.test']);

    // The same day's last room goes to the follow-up with followUps.
    const other = await draft({ dailyLimit: 2, sendPriority: 'followUps' });
    await addSteps(other, [
      { delayDays: 0, variants: [{ subject: 'Hi', body: 'Hello' }] },
      { delay: { value: 1, unit: 'hours' }, variants: [{ subject: '', body: 'Bump' }] },
    ]);
    await add(other, ['first@initech.test']);
    await launch(other);
    expect(await t.services.sending.runOnce()).toBe(1);
    t.clock.advance(HOUR);
    await add(other, ['second@initech.test']);
    sink.received.length = 0;
    expect(await t.services.sending.runOnce()).toBe(1);
    expect(sink.received.map((m) => m.envelope.to[0])).toEqual(['first@initech.test']);
  });
  it("takes the lead's time zone from a CSV import's timezone column", async () => {
    const id = await draft();
    const file = [
      'email,First Name,Time Zone',
      'kenji@tokyo.test,Kenji,asia/tokyo',
      'zed@mars.test,Zed,Mars/Olympus',
      'bob@plain.test,Bob,',
    ].join('\r\n');
    const res = await t.fetch(`/v2/job/contact-import?campaignId=${id}`, {
      method: 'POST',
      apiKey: ws.apiKey,
      headers: { 'Content-Type': 'text/csv' },
      body: file,
    });
    expect(res.status).toBe(202);
    const { data } = (await res.json()) as { data: { job: { id: string } } };
    while ((await t.services.jobs.runOnce()) > 0);
    const lines = (await (await t.fetch(`/v2/job/results?jobId=${data.job.id}`, { apiKey: ws.apiKey })).text())
      .trimEnd()
      .split('\n');
    expect(lines.map((l) => l.split(',').slice(1, 4).join(','))).toEqual([
      'email,outcome,reason',
      'kenji@tokyo.test,created,',
      'zed@mars.test,invalid,invalidTimezone',
      'bob@plain.test,created,',
    ]);
    const zones = [];
    for (const line of lines.filter((l) => l.includes(',created,'))) {
      const got = await ws.client.GET('/v1/contact/get', { params: { query: { contactId: line.split(',')[4] } } });
      zones.push([got.data!.data.contact.email, got.data!.data.contact.timezone]);
    }
    expect(zones).toEqual([
      ['kenji@tokyo.test', 'Asia/Tokyo'],
      ['bob@plain.test', null],
    ]);
  });
});
