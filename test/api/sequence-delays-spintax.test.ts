/**
 * Steps that wait minutes or hours, and spintax: through HTTP, the sending engine and the SMTP sink on
 * loopback, with time moved by the test clock.
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

describe('step delays in minutes, hours or days, and spintax', () => {
  let sending: SendingWorkspace;
  let t: TestServer;
  let sink: SmtpSink;
  let ws: TestWorkspace;
  let n = 0;
  let week = 0;
  let monday = 0;

  beforeAll(async () => {
    sending = await startSendingWorkspace({
      email: 'spin@acme-mail.io',
      dailyLimit: 500,
      config: { secretKey: '34'.repeat(32), publicUrl: 'https://links.example.test' },
    });
    ({ t, sink, ws } = sending);
  });
  afterAll(() => closeSendingWorkspace(sending));
  beforeEach(() => {
    monday = startWeek(sending, week);
    week += 1;
  });

  const draft = (schedule?: object, options: object = {}) =>
    draftCampaign(sending, `Spin ${(n += 1)}`, { schedule, options });

  const addSteps = (campaignId: string, steps: unknown[]) =>
    ws.client.POST('/v2/campaign/sequence-create', { body: { campaignId, steps } as never });

  async function launch(campaignId: string, emails: string[]) {
    const contacts = emails.map((email, i) => ({ email, firstName: `P${i}` }));
    const added = await ws.client.POST('/v1/contact/add', { body: { campaignId, contacts } as never });
    expect(added.response.status).toBe(200);
    expect((await ws.client.POST('/v2/campaign/launch', { body: { campaignId } })).response.status).toBe(200);
  }

  it('answers a step delay in its unit and in whole days, and accepts delayDays as before', async () => {
    const id = await draft();
    const res = await addSteps(id, [
      { delayDays: 0, variants: [{ subject: 'One', body: 'Hi' }] },
      { delay: { value: 90, unit: 'minutes' }, variants: [{ subject: '', body: 'Two' }] },
      { delay: { value: 2, unit: 'days' }, variants: [{ subject: '', body: 'Three' }] },
    ]);
    expect(res.response.status).toBe(201);
    const steps = res.data!.data.steps;
    expect(steps.map((s) => [s.delay, s.delayDays])).toEqual([
      [{ value: 0, unit: 'days' }, 0],
      [{ value: 90, unit: 'minutes' }, 0],
      [{ value: 2, unit: 'days' }, 2],
    ]);
    const updated = await ws.client.PUT('/v2/campaign/sequences/{id}', {
      params: { path: { id: steps[1].id } },
      body: { delay: { value: 36, unit: 'hours' } },
    });
    expect(updated.response.status).toBe(200);
    expect(updated.data!.data.step).toMatchObject({ delay: { value: 36, unit: 'hours' }, delayDays: 1 });
  });

  it('refuses a delay given twice, missing, too long, or not 0 on the first step, naming the field', async () => {
    const id = await draft();
    const res = await addSteps(id, [
      { delay: { value: 5, unit: 'minutes' }, variants: [{ subject: 'One', body: 'Hi' }] },
      { delayDays: 1, delay: { value: 1, unit: 'hours' }, variants: [{ subject: '', body: 'x' }] },
      { variants: [{ subject: '', body: 'x' }] },
      { delay: { value: 9000, unit: 'hours' }, variants: [{ subject: '', body: 'x' }] },
      { delay: { value: 0, unit: 'hours' }, variants: [{ subject: '', body: 'x' }] },
    ]);
    expect(res.response.status).toBe(400);
    const fields = (res.error as { details: { field: string; code: string }[] }).details.map((d) => [d.field, d.code]);
    expect(fields).toEqual(
      expect.arrayContaining([
        ['body.steps.0.delay.value', 'first_step_delay'],
        ['body.steps.1.delay', 'delay_both'],
        ['body.steps.2.delay', 'required'],
        ['body.steps.3.delay.value', 'delay'],
        ['body.steps.4.delay.value', 'delay'],
      ]),
    );
    // Nothing was created: the next step added is the first.
    const next = await addSteps(id, [{ delayDays: 0, variants: [{ subject: 'One', body: 'Hi' }] }]);
    expect(next.data!.data.steps.map((s) => s.order)).toEqual([1]);
  });

  it('sends a follow-up hours after the step before, not a day', async () => {
    const id = await draft();
    expect(
      (
        await addSteps(id, [
          { delayDays: 0, variants: [{ subject: 'Opener', body: 'Hi {{firstName}}' }] },
          { delay: { value: 4, unit: 'hours' }, variants: [{ subject: '', body: 'Nudge' }] },
        ])
      ).response.status,
    ).toBe(201);
    await launch(id, ['hours@globex.test']);
    expect(await t.services.sending.runOnce()).toBe(1);
    t.clock.advance(4 * HOUR - MIN);
    expect(await t.services.sending.runOnce()).toBe(0);
    t.clock.advance(MIN);
    expect(await t.services.sending.runOnce()).toBe(1);
    expect(sink.received.map((m) => m.parsed.text?.trim())).toEqual(['Hi P0', 'Nudge']);
    expect(sink.received[1].parsed.inReplyTo).toBe(sink.received[0].parsed.messageId);
  });

  it('spins each contact its own fixed wording, with variables inside alternatives and escaped braces', async () => {
    const id = await draft();
    const subject = '{Quick question|A thought|One idea} for {{firstName}}';
    const body = '{Hi|Hello|Hey} {{firstName}}, {we {help|support}|our team helps} \\{you\\} <3';
    expect((await addSteps(id, [{ delayDays: 0, variants: [{ subject, body }] }])).response.status).toBe(201);
    const emails = Array.from({ length: 30 }, (_, i) => `spin${i}@initech.test`);
    await launch(id, emails);
    expect(await t.services.sending.runOnce()).toBe(30);
    const texts = sink.received.map((m) => `${m.parsed.subject} / ${m.parsed.text?.trim()}`);
    for (const text of texts) {
      expect(text).toMatch(
        /^(Quick question|A thought|One idea) for P\d+ \/ (Hi|Hello|Hey) P\d+, (we (help|support)|our team helps) \{you\} <3$/,
      );
    }
    // Every alternative of the three-way groups shows up across 30 contacts.
    for (const word of ['Quick question', 'A thought', 'One idea', 'Hi P', 'Hello P', 'Hey P'])
      expect(texts.some((x) => x.includes(word))).toBe(true);
  });

  it('keeps braces with no "|" as written (CSS in HTML) and refuses unbalanced spintax with its position', async () => {
    const id = await draft();
    const css = '<style>p{color:red} @media (x){a{b:c}}</style><p>{Hi|Hello} {{firstName}}</p>';
    expect((await addSteps(id, [{ delayDays: 0, variants: [{ subject: 'CSS', body: css }] }])).response.status).toBe(
      201,
    );
    await launch(id, ['css@umbrella.test']);
    expect(await t.services.sending.runOnce()).toBe(1);
    expect(sink.received[0].parsed.html).toMatch(/p\{color:red\} @media \(x\)\{a\{b:c\}\}/);
    expect(sink.received[0].parsed.html).toMatch(/<p>(Hi|Hello) P0<\/p>/);

    const bad = await draft();
    const res = await addSteps(bad, [
      { delayDays: 0, variants: [{ subject: '{Hi|Hello there', body: 'ok}' }] },
      { delayDays: 1, variants: [{ subject: '', body: '{a|'.repeat(9) + 'z' + '}'.repeat(9) }] },
    ]);
    expect(res.response.status).toBe(400);
    const details = (res.error as { details: { field: string; code: string; message: string }[] }).details;
    expect(details).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          field: 'body.steps.0.variants.0.subject',
          code: 'spintax',
          message: expect.stringContaining('at character 1') as string,
        }),
        expect.objectContaining({
          field: 'body.steps.0.variants.0.body',
          code: 'spintax',
          message: expect.stringContaining('at character 3') as string,
        }),
        expect.objectContaining({ field: 'body.steps.1.variants.0.body', code: 'spintax' }),
      ]),
    );
  });

  it("sends at 09:00 in each lead's own time zone, and says who waits for their hours", async () => {
    const newYork = { timezone: 'America/New_York', days: [1, 2, 3, 4, 5], from: '09:00', to: '17:00' };
    const id = await draft(newYork, { sendInLeadTimezone: true });
    expect((await addSteps(id, [{ delayDays: 0, variants: [{ subject: 'Hi', body: 'Hello' }] }])).response.status).toBe(
      201,
    );
    const sundayNight = monday - 10 * HOUR - MIN; // Sunday 23:59 UTC: no one's Monday has begun
    t.clock.set(new Date(sundayNight));
    const added = await ws.client.POST('/v1/contact/add', {
      body: {
        campaignId: id,
        contacts: [
          { email: 'kenji@tokyo.test', timezone: 'asia/tokyo' },
          { email: 'amy@london.test', timezone: 'Europe/London' },
          { email: 'bob@newyork.test' },
          { email: 'zed@nowhere.test', timezone: 'Mars/Olympus' },
        ],
      } as never,
    });
    expect(added.response.status).toBe(200);
    const result = added.data!.data;
    expect(result.added.map((c: { email: string; timezone: string | null }) => [c.email, c.timezone])).toEqual(
      expect.arrayContaining([
        ['kenji@tokyo.test', 'Asia/Tokyo'],
        ['amy@london.test', 'Europe/London'],
        ['bob@newyork.test', null],
      ]),
    );
    expect(result.invalid).toEqual([expect.objectContaining({ index: 3, reason: 'invalidTimezone' })]);
    expect((await ws.client.POST('/v2/campaign/launch', { body: { campaignId: id } })).response.status).toBe(200);

    expect(await t.services.sending.runOnce()).toBe(0);
    const status = await ws.client.GET('/v2/campaign/sending-status', { params: { query: { campaignId: id } } });
    expect(status.data!.data.reasons).toContain('outside_lead_hours');
    expect(status.data!.data.reasons).not.toContain('outside_schedule');
    const tokyoNine = new Date(monday - 10 * HOUR).toISOString(); // Monday 09:00 in Tokyo
    expect(status.data!.data.nextSendAt).toBe(tokyoNine);

    const sentTo = async (at: number) => {
      t.clock.set(new Date(at));
      sink.received.length = 0;
      await t.services.sending.runOnce();
      return sink.received.map((m) => m.envelope.to[0]);
    };
    expect(await sentTo(monday - 10 * HOUR - MIN)).toEqual([]);
    expect(await sentTo(monday - 10 * HOUR)).toEqual(['kenji@tokyo.test']);
    expect(await sentTo(monday - HOUR - MIN)).toEqual([]); // 08:59 in London
    expect(await sentTo(monday - HOUR)).toEqual(['amy@london.test']); // 09:00 in London
    expect(await sentTo(monday + 4 * HOUR - MIN)).toEqual([]); // 08:59 in New York
    expect(await sentTo(monday + 4 * HOUR)).toEqual(['bob@newyork.test']); // 09:00 in New York
  });
});
