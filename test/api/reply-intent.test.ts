/**
 * Reply intent through the reader's message path and HTTP: a labelled set of 224 replies (7 intents x 4
 * languages x 8 phrasings, each with a signature and a quoted thread) is read as raw mail, and the unibox,
 * the `email.replied` events, analytics, lead statuses and the suppression list are checked over the API.
 */
import { found } from '../helpers/rows';
import { readJson, type V1ErrorBody } from '../helpers/bodies';
import { startTestServer, type TestServer, type TestWorkspace } from '../helpers/server';
import { newId } from '../../server/platform/ids';
import type { Event } from '../../server/modules/events/service';
import type { ReplyIntent } from '../../server/modules/inbox/intent';
import { labelledReplies, type LabelledReply } from './reply-intent.fixtures';
import { expectV2Error, post } from './contact.helpers';

const SDR = 'sdr@acme-mail.io';

describe('reply intent', () => {
  let t: TestServer;
  let ws: TestWorkspace;
  let accountId: string;
  let campaignId: string;
  let stepId: string;
  let variantId: string;
  const recorded: Event[] = [];
  const set = labelledReplies();
  /** The reply's inbound message id and its contact, per labelled reply. */
  const stored: { reply: LabelledReply; email: string; contactId: string; inboundId: string }[] = [];

  /** What the sending engine stores when a step goes out; returns its Message-ID. */
  async function sent(
    campaign: string,
    step: string,
    variant: string,
    contactId: string,
    email: string,
  ): Promise<string> {
    const id = newId();
    const messageId = `<${id}@acme-mail.io>`;
    await t.db('email_messages').insert({
      id,
      workspace_id: ws.workspaceId,
      account_id: accountId,
      campaign_id: campaign,
      contact_id: contactId,
      step_id: step,
      variant_id: variant,
      direction: 'outbound',
      kind: 'campaign',
      message_id: messageId,
      references: [],
      thread_id: id,
      from_address: SDR,
      to_address: email,
      subject: 'Quick question',
      text_body: 'Hi',
      status: 'sent',
      sent_at: t.clock.now(),
      created_at: t.clock.now(),
    });
    return messageId;
  }

  /** Delivers a reply as the reader does (one transaction per message) and returns the stored inbound id. */
  async function reply(from: string, inReplyTo: string, body: string): Promise<string> {
    const raw = Buffer.from(
      [
        `From: ${from}`,
        `To: ${SDR}`,
        'Subject: Re: Quick question',
        `Message-ID: <${newId()}@globex.example>`,
        `In-Reply-To: ${inReplyTo}`,
        'Date: Mon, 23 Nov 2026 11:00:00 +0000',
        'MIME-Version: 1.0',
        'Content-Type: text/plain; charset=utf-8',
        'Content-Transfer-Encoding: 8bit',
        '',
        body,
      ].join('\r\n'),
    );
    const outcome = await t.db.transaction((trx) =>
      t.services.inbox.processMessage(trx, { accountId, workspaceId: ws.workspaceId, email: SDR }, raw),
    );
    expect(outcome.outcome).toBe('reply');
    const row = await found(
      t
        .db('email_messages')
        .where({ account_id: accountId, message_id: outcome.messageId, direction: 'inbound' })
        .first<{ id: string } | undefined>('id'),
      'inbound message',
    );
    return row.id;
  }

  async function campaignWithStep(name: string, options: Record<string, unknown> = {}) {
    const created = await ws.client.POST('/v2/campaign/create', { body: { name, accountIds: [accountId], options } });
    const id = created.data!.data.campaign.id;
    const seq = await ws.client.POST('/v2/campaign/sequence-create', {
      body: { campaignId: id, steps: [{ delayDays: 0, variants: [{ subject: 'Quick question', body: 'Hi' }] }] },
    });
    const step = seq.data!.data.steps[0];
    return { id, stepId: step.id, variantId: step.variants[0].id, options: created.data!.data.campaign.options };
  }

  beforeAll(async () => {
    t = await startTestServer({ config: { secretKey: '33'.repeat(32) } });
    t.clock.set('2026-11-23T11:00:00.000Z');
    t.services.events.onRecorded((_db, e) => {
      recorded.push(e);
      return Promise.resolve();
    });
    ws = await t.createWorkspace();
    const connected = await ws.client.POST('/v2/account/connect', {
      body: { email: SDR, provider: 'smtp', smtp: { host: 'smtp.acme-mail.io', port: 587, password: 'pw' } },
    });
    accountId = connected.data!.data.account.id;
    ({ id: campaignId, stepId, variantId } = await campaignWithStep('Intent set'));
    const added = await ws.client.POST('/v2/contact/add', {
      body: { campaignId, contacts: set.map((_, i) => ({ email: `lead${i}@globex.example` })) },
    });
    expect(added.data!.data.counts.added).toBe(set.length);
    for (const [i, r] of set.entries()) {
      const contact = added.data!.data.added.find((c) => c.email === `lead${i}@globex.example`)!;
      const messageId = await sent(campaignId, stepId, variantId, contact.id, contact.email);
      stored.push({
        reply: r,
        email: contact.email,
        contactId: contact.id,
        inboundId: await reply(contact.email, messageId, r.body),
      });
    }
  }, 120_000);

  afterAll(() => t.close());

  it('classifies the labelled set with at least 90% accuracy, per language too, and misses no removal request', async () => {
    const byId = new Map<string, string | null>();
    let cursor: string | undefined;
    do {
      const page = await ws.client.GET('/v2/email/list', {
        params: { query: { direction: 'inbound', limit: 100, cursor } },
      });
      for (const m of page.data!.data.items) byId.set(m.id, m.intent);
      cursor = page.data!.data.pagination.nextCursor ?? undefined;
    } while (cursor);
    expect(byId.size).toBe(set.length);
    const right = stored.filter((s) => byId.get(s.inboundId) === s.reply.intent);
    const accuracy = right.length / stored.length;
    const wrong = stored
      .filter((s) => byId.get(s.inboundId) !== s.reply.intent)
      .map((s) => `${s.reply.lang} ${s.reply.intent} -> ${byId.get(s.inboundId)}: ${s.reply.body.split('\n')[0]}`);
    console.log(
      `reply intent: ${right.length}/${stored.length} right (${(accuracy * 100).toFixed(1)}%)${wrong.length ? `\n${wrong.join('\n')}` : ''}`,
    );
    expect(set.length).toBeGreaterThanOrEqual(200);
    expect(accuracy).toBeGreaterThanOrEqual(0.9);
    for (const lang of ['en', 'de', 'fr', 'es']) {
      const of = stored.filter((s) => s.reply.lang === lang);
      expect(of.filter((s) => byId.get(s.inboundId) === s.reply.intent).length / of.length).toBeGreaterThanOrEqual(0.9);
    }
    const removals = stored.filter((s) => s.reply.intent === 'unsubscribeRequest');
    expect(removals.length).toBeGreaterThanOrEqual(32);
    expect(removals.filter((s) => byId.get(s.inboundId) !== 'unsubscribeRequest')).toEqual([]);
  });

  it('honours every removal request as the unsubscribe link does: unsubscribed, suppressed, contact.unsubscribed', async () => {
    const removals = stored.filter((s) => s.reply.intent === 'unsubscribeRequest');
    for (const s of removals) {
      const got = await ws.client.GET('/v2/contact/get', { params: { query: { contactId: s.contactId } } });
      expect(got.data!.data.contact.status).toBe('unsubscribed');
      const event = recorded.find((e) => e.type === 'contact.unsubscribed' && e.data.contactId === s.contactId);
      expect(event?.data).toEqual({
        campaignId,
        contactId: s.contactId,
        email: s.email,
        source: 'reply',
        inboundMessageId: s.inboundId,
      });
    }
    const suppressed = await t
      .db('suppressions')
      .where({ workspace_id: ws.workspaceId, reason: 'unsubscribed' })
      .pluck('value');
    expect(new Set(suppressed)).toEqual(new Set(removals.map((s) => s.email)));
    // Nobody else was unsubscribed.
    const others = stored.filter((s) => s.reply.intent !== 'unsubscribeRequest').map((s) => s.contactId);
    expect(
      Number((await t.db('contacts').whereIn('id', others).where({ status: 'unsubscribed' }).count({ n: '*' }))[0].n),
    ).toBe(0);
  });

  it('puts the intent (and a referral) in email.replied, and clear intents set the lead status', async () => {
    const referred = stored.find((s) => s.reply.lang === 'en' && s.reply.referral?.email === 'maria.lopez@globex.com')!;
    const event = recorded.find((e) => e.type === 'email.replied' && e.data.inboundMessageId === referred.inboundId)!;
    expect(event.data).toMatchObject({
      intent: 'wrongPerson',
      referral: { name: 'Maria Lopez', email: 'maria.lopez@globex.com' },
      contactId: referred.contactId,
      stepId,
      variantId,
    });
    const got = await ws.client.GET('/v2/email/get', { params: { query: { id: referred.inboundId } } });
    expect(got.data!.data.message).toMatchObject({
      intent: 'wrongPerson',
      intentSource: 'rules',
      referral: { name: 'Maria Lopez', email: 'maria.lopez@globex.com' },
    });
    expect(got.data!.data.thread.find((m) => m.direction === 'outbound')).toMatchObject({
      intent: null,
      intentSource: null,
      referral: null,
    });

    const expected: Partial<Record<ReplyIntent, string>> = {
      interested: 'interested',
      meetingRequest: 'interested',
      notInterested: 'notInterested',
      wrongPerson: 'wrongPerson',
    };
    for (const s of stored.filter((x) => x.reply.lang === 'en')) {
      const contact = (await ws.client.GET('/v2/contact/get', { params: { query: { contactId: s.contactId } } })).data!
        .data.contact;
      expect([s.reply.intent, contact.leadStatus]).toEqual([s.reply.intent, expected[s.reply.intent] ?? null]);
    }
  });

  it('counts replies by intent per campaign, step and variant in analytics', async () => {
    const res = await ws.client.GET('/v2/analytics/campaign/steps', { params: { query: { campaignId } } });
    const data = res.data!.data;
    const want: Record<string, number> = {};
    const list = await t.db('reply_intents').where({ campaign_id: campaignId }).select<{ intent: string }[]>('intent');
    for (const r of list) want[r.intent] = (want[r.intent] ?? 0) + 1;
    for (const counts of [data.campaign, data.steps[0].counts, data.steps[0].variants[0].counts]) {
      expect(Object.values(counts.repliesByIntent).reduce((a, b) => a + b, 0)).toBe(set.length);
      expect(counts.repliesByIntent.unsubscribeRequest).toBe(32);
      for (const [intent, n] of Object.entries(counts.repliesByIntent)) expect(n).toBe(want[intent] ?? 0);
    }
  });

  it('keeps a correction: set-intent changes the reply, analytics, the lead status and honours removal', async () => {
    const q = stored.find((s) => s.reply.lang === 'en' && s.reply.intent === 'question')!;
    const before = (await ws.client.GET('/v2/analytics/campaign/steps', { params: { query: { campaignId } } })).data!
      .data.campaign.repliesByIntent;
    const res = await ws.client.POST('/v2/email/set-intent', { body: { id: q.inboundId, intent: 'interested' } });
    expect(res.response.status).toBe(200);
    expect(res.data!.data.message).toMatchObject({
      id: q.inboundId,
      intent: 'interested',
      intentSource: 'user',
      referral: null,
    });
    const after = (await ws.client.GET('/v2/analytics/campaign/steps', { params: { query: { campaignId } } })).data!
      .data.campaign.repliesByIntent;
    expect(after).toEqual({ ...before, question: before.question - 1, interested: before.interested + 1 });
    expect(
      (await ws.client.GET('/v2/contact/get', { params: { query: { contactId: q.contactId } } })).data!.data.contact
        .leadStatus,
    ).toBe('interested');

    const o = stored.find((s) => s.reply.lang === 'de' && s.reply.intent === 'other')!;
    const referral = { name: 'Maria Lopez', email: 'maria@globex.example' };
    const wp = await ws.client.POST('/v2/email/set-intent', {
      body: { id: o.inboundId, intent: 'wrongPerson', referral },
    });
    expect(wp.data!.data.message).toMatchObject({ intent: 'wrongPerson', intentSource: 'user', referral });

    const x = stored.find((s) => s.reply.lang === 'fr' && s.reply.intent === 'other')!;
    await ws.client.POST('/v2/email/set-intent', { body: { id: x.inboundId, intent: 'unsubscribeRequest' } });
    expect(
      (await ws.client.GET('/v2/contact/get', { params: { query: { contactId: x.contactId } } })).data!.data.contact
        .status,
    ).toBe('unsubscribed');
    expect(await t.db('suppressions').where({ workspace_id: ws.workspaceId, value: x.email }).first()).toBeTruthy();
    // The correction stays: a re-read of the same mailbox would skip the stored message, and the row says user.
    expect(
      (await ws.client.GET('/v2/email/get', { params: { query: { id: q.inboundId } } })).data!.data.message
        .intentSource,
    ).toBe('user');
  });

  it('answers 400, 404 and 409 for bad corrections', async () => {
    const q = stored[0];
    await expectV2Error(
      await post(t, ws, '/v2/email/set-intent', {
        id: q.inboundId,
        intent: 'interested',
        referral: { name: 'X', email: null },
      }),
      400,
      'validation_error',
      'A referral can only be given with the intent wrongPerson.',
      [
        {
          field: 'body.referral',
          location: 'body',
          message: 'is allowed only when intent is wrongPerson',
          code: 'referralWithoutWrongPerson',
        },
      ],
    );
    expect((await post(t, ws, '/v2/email/set-intent', { id: q.inboundId, intent: 'maybe' })).status).toBe(400);
    const other = await t.createWorkspace();
    expect((await post(t, other, '/v2/email/set-intent', { id: q.inboundId, intent: 'interested' })).status).toBe(404);
    const outbound = await found(
      t
        .db('email_messages')
        .where({ workspace_id: ws.workspaceId, direction: 'outbound' })
        .first<{ id: string } | undefined>('id'),
      'outbound message',
    );
    const res = await post(t, ws, '/v2/email/set-intent', { id: outbound.id, intent: 'interested' });
    expect(res.status).toBe(409);
    expect((await readJson<V1ErrorBody>(res)).error).toBe('Only replies have an intent; this message is outbound.');
  });

  it('leaves the lead status alone when the campaign turns intentSetsLeadStatus off, and never downgrades a booked meeting', async () => {
    const off = await campaignWithStep('No lead status', { intentSetsLeadStatus: false });
    expect(off.options.intentSetsLeadStatus).toBe(false);
    const added = await ws.client.POST('/v2/contact/add', {
      body: { campaignId: off.id, contacts: [{ email: 'keen@globex.example' }, { email: 'booked@globex.example' }] },
    });
    const [keen, booked] = added.data!.data.added;
    await reply(
      keen.email,
      await sent(off.id, off.stepId, off.variantId, keen.id, keen.email),
      'Sounds great, tell me more!\n\nThanks,\nKim',
    );
    expect(
      (await ws.client.GET('/v2/contact/get', { params: { query: { contactId: keen.id } } })).data!.data.contact
        .leadStatus,
    ).toBeNull();
    // A removal request is honoured whatever the setting says.
    await reply(
      booked.email,
      await sent(off.id, off.stepId, off.variantId, booked.id, booked.email),
      'Please unsubscribe me.',
    );
    expect(
      (await ws.client.GET('/v2/contact/get', { params: { query: { contactId: booked.id } } })).data!.data.contact
        .status,
    ).toBe('unsubscribed');

    const on = await campaignWithStep('Booked');
    expect(on.options.intentSetsLeadStatus).toBe(true);
    const [lead] = (
      await ws.client.POST('/v2/contact/add', {
        body: { campaignId: on.id, contacts: [{ email: 'met@globex.example' }] },
      })
    ).data!.data.added;
    await ws.client.POST('/v2/contact/update/status', { body: { contactId: lead.id, leadStatus: 'meetingBooked' } });
    await reply(
      lead.email,
      await sent(on.id, on.stepId, on.variantId, lead.id, lead.email),
      'No thanks, not interested anymore.',
    );
    expect(
      (await ws.client.GET('/v2/contact/get', { params: { query: { contactId: lead.id } } })).data!.data.contact
        .leadStatus,
    ).toBe('meetingBooked');
  });
});
