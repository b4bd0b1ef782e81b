/**
 * The loop of the product, end to end on loopback servers: launch -> the engine's mail arrives in the SMTP
 * sink -> the prospect's reply lands in the account's mailbox (dovecot) -> the reader stops the contact,
 * analytics count the reply, the unibox shows it -> the answer from the API lands in the thread.
 */
import { startSmtpSink, type SmtpSink } from '../helpers/smtp-sink';
import { startTestServer, type TestServer, type TestWorkspace } from '../helpers/server';
import { describeWithDovecot, replyMessage, startImapServer, type ImapTestServer } from '../helpers/imap-server';

const SDR = 'maya@acme-mail.io';
const DAY = 86_400_000;

describeWithDovecot('the loop: launch, send, reply, stop, count, answer', () => {
  let imap: ImapTestServer;
  let sink: SmtpSink;
  let t: TestServer;
  let ws: TestWorkspace;

  beforeAll(async () => {
    imap = await startImapServer({ users: [{ user: SDR, password: 'imap-pw' }] });
    sink = await startSmtpSink();
    // Connect verifies both logins against the loopback servers, as in production.
    t = await startTestServer({
      config: {
        secretKey: '44'.repeat(32),
        allowPrivateMailHosts: true,
        publicUrl: 'https://links.example.test',
        verifyMailLogins: true,
      },
    });
    t.clock.set('2026-11-23T10:00:00.000Z'); // a Monday
    ws = await t.createWorkspace();
  });
  afterAll(async () => {
    t?.services.mail.close();
    await t?.close();
    await sink?.close();
    await imap?.close();
  });

  it('closes the loop', async () => {
    const account = await ws.client.POST('/v2/account/connect', {
      body: {
        email: SDR,
        provider: 'smtp',
        smtp: { host: '127.0.0.1', port: sink.port, password: 'smtp-pw' },
        imap: { host: '127.0.0.1', port: imap.port, password: 'imap-pw' },
      },
    });
    expect(account.response.status).toBe(201);
    const accountId = account.data!.data.account.id;
    const created = await ws.client.POST('/v2/campaign/create', {
      body: {
        name: 'Loop',
        accountIds: [accountId],
        schedule: { timezone: 'UTC', days: [1, 2, 3, 4, 5], from: '09:00', to: '17:00' },
        options: { stopOnReply: true, emailGapMinutes: 0, randomWaitMaxMinutes: 0 } as never,
      },
    });
    const campaignId = created.data!.data.campaign.id;
    const steps = await ws.client.POST('/v2/campaign/sequence-create', {
      body: {
        campaignId,
        steps: [
          {
            delayDays: 0,
            variants: [{ subject: 'Quick question, {{firstName}}', body: 'Hi {{firstName}}, worth a call?' }],
          },
          { delayDays: 2, variants: [{ subject: '', body: 'Following up, {{firstName}}.' }] },
        ],
      },
    });
    const [step1] = steps.data!.data.steps;
    const added = await ws.client.POST('/v1/contact/add', {
      body: {
        campaignId,
        contacts: [
          { email: 'tom@globex.test', firstName: 'Tom' },
          { email: 'ann@initech.test', firstName: 'Ann' },
        ],
      },
    });
    const ids = Object.fromEntries(added.data!.data.added.map((c) => [c.email, c.id]));
    expect((await ws.client.POST('/v2/campaign/launch', { body: { campaignId } })).response.status).toBe(200);

    // Launch -> mail in the sink.
    expect(await t.services.sending.runOnce()).toBe(2);
    const toTom = sink.received.find((m) => m.envelope.to[0] === 'tom@globex.test')!;
    expect(toTom.parsed.subject).toBe('Quick question, Tom');
    const sentId = toTom.parsed.messageId!;

    // The prospect answers from a mail client: the reply lands in the account's mailbox.
    t.clock.set('2026-11-23T11:00:00.000Z');
    await imap.deliver(
      SDR,
      replyMessage({
        from: 'Tom <tom@globex.test>',
        to: SDR,
        subject: 'Re: Quick question, Tom',
        messageId: '<tom-1@globex.test>',
        inReplyTo: sentId,
        date: 'Mon, 23 Nov 2026 11:00:00 +0000',
        text: 'Yes, Thursday?\r\n\r\n> Hi Tom, worth a call?',
      }),
    );
    expect(await t.services.inbox.runOnce()).toBe(1);

    // The contact stops: no follow-up for Tom, Ann gets hers.
    const tom = await ws.client.GET('/v1/contact/get', { params: { query: { contactId: ids['tom@globex.test'] } } });
    expect(tom.data!.data.contact.status).not.toBe('active');
    t.clock.set(new Date(Date.parse('2026-11-23T11:00:00.000Z') + 2 * DAY + 3600_000).toISOString());
    sink.received.length = 0;
    await t.services.sending.runOnce();
    expect(sink.received.map((m) => m.envelope.to[0])).toEqual(['ann@initech.test']);

    // Analytics count it, per campaign and per step.
    const summary = await ws.client.GET('/v1/analytics/campaign/summary', { params: { query: { campaignId } } });
    expect(summary.data!.data.unique).toMatchObject({ sent: 2, replied: 1 });
    expect(summary.data!.data.rates.replyRate).toBe(50);
    const bySteps = await ws.client.GET('/v2/analytics/campaign/steps', { params: { query: { campaignId } } });
    expect(bySteps.data!.data.steps[0]).toMatchObject({
      stepId: step1.id,
      counts: { contactsSent: 2, uniqueReplies: 1, replyRate: 50 },
    });

    // The unibox shows it, unread, in its thread.
    const unread = await ws.client.GET('/v2/email/list', { params: { query: { unread: true } } });
    expect(unread.data!.data.items).toHaveLength(1);
    const reply = unread.data!.data.items[0];
    expect(reply).toMatchObject({
      kind: 'reply',
      from: 'tom@globex.test',
      contactId: ids['tom@globex.test'],
      campaignId,
      stepId: step1.id,
      inReplyTo: sentId,
    });
    const thread = await ws.client.GET('/v2/email/get', { params: { query: { id: reply.id } } });
    expect(thread.data!.data.thread.map((m) => [m.kind, m.direction])).toEqual([
      ['campaign', 'outbound'],
      ['reply', 'inbound'],
    ]);

    // The answer from the API lands in the thread: in the sink with the threading headers, and in Sent.
    sink.received.length = 0;
    const answer = await ws.client.POST('/v2/email/reply', { body: { id: reply.id, text: 'Thursday 3 pm it is.' } });
    expect(answer.response.status).toBe(201);
    expect(answer.data!.data.appendedToSent).toBe(true);
    expect(sink.received).toHaveLength(1);
    const got = sink.received[0];
    expect(got.envelope).toEqual({ from: SDR, to: ['tom@globex.test'] });
    expect(got.parsed.subject).toBe('Re: Quick question, Tom');
    expect(got.parsed.inReplyTo).toBe('<tom-1@globex.test>');
    expect(got.parsed.references).toEqual([sentId, '<tom-1@globex.test>']);
    expect((await imap.messages(SDR, 'Sent')).some((m) => m.source.includes(answer.data!.data.message.messageId))).toBe(
      true,
    );
    const after = await ws.client.GET('/v2/email/get', { params: { query: { id: reply.id } } });
    expect(after.data!.data.thread.map((m) => m.kind)).toEqual(['campaign', 'reply', 'manual']);
    // A manual answer is no campaign step: sends stay at the engine's three.
    const sent = await ws.client.GET('/v1/analytics/campaign/summary', { params: { query: { campaignId } } });
    expect(sent.data!.data.totals.sent).toBe(3);

    // Connecting with a wrong IMAP password is refused at connect (dovecot answers the login).
    imap.addUser('bad@acme-mail.io', 'right');
    const refused = await ws.client.POST('/v2/account/connect', {
      body: {
        email: 'bad@acme-mail.io',
        provider: 'smtp',
        smtp: { host: '127.0.0.1', port: sink.port, password: 'x' },
        imap: { host: '127.0.0.1', port: imap.port, password: 'wrong' },
      },
    });
    expect(refused.response.status).toBe(400);
  });
});
