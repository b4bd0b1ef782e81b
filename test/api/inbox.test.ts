/**
 * The inbox against a real IMAP server (a private dovecot on loopback): replies, automatic replies, bounces,
 * unrelated and malformed mail; checkpoints across reader instances; a UIDVALIDITY reset; an IMAP login
 * failure; the unibox operations; and answers through SMTP (a loopback sink) filed in the Sent mailbox.
 */
import { expect } from '@jest/globals';
import { startSmtpSink, type SmtpSink } from '../helpers/smtp-sink';
import { startTestServer, type TestServer, type TestWorkspace } from '../helpers/server';
import { describeWithDovecot, startImapServer, type ImapTestServer } from '../helpers/imap-server';
import { createServices } from '../../server/services';
import { newId } from '../../server/platform/ids';
import type { Event } from '../../server/modules/events/service';
import type { EmailEventRow } from '../../server/modules/events/store';
import type { AccountRow } from '../../server/modules/account/store';
import type { ContactRow } from '../../server/modules/contact/store';
import type { CheckpointRow } from '../../server/modules/inbox/store';
import type { MessageRow } from '../../server/modules/mail/store';
import type { SuppressionRow } from '../../server/modules/suppression/store';
import { readJson, type ErrorBody } from '../helpers/bodies';
import { found } from '../helpers/rows';

const SDR = 'sdr@acme-mail.io';
const OTHER = 'other@acme-mail.io';

function mail(headers: Record<string, string>, body = 'Hello there.'): string {
  const lines = Object.entries({
    Date: 'Mon, 23 Nov 2026 10:30:00 +0000',
    'MIME-Version': '1.0',
    'Content-Type': 'text/plain; charset=utf-8',
    ...headers,
  }).map(([k, v]) => `${k}: ${v}`);
  return `${lines.join('\r\n')}\r\n\r\n${body}\r\n`;
}

function dsn(recipient: string, status: string, originalMessageId: string): string {
  return [
    'From: Mail Delivery System <MAILER-DAEMON@mx.globex.com>',
    `To: ${SDR}`,
    'Subject: Undelivered Mail Returned to Sender',
    `Message-ID: <dsn-${status}-${recipient}@mx.globex.com>`,
    'Auto-Submitted: auto-replied',
    'MIME-Version: 1.0',
    'Content-Type: multipart/report; report-type=delivery-status; boundary="BOUNDARY"',
    '',
    '--BOUNDARY',
    'Content-Type: text/plain',
    '',
    'Your message could not be delivered.',
    '--BOUNDARY',
    'Content-Type: message/delivery-status',
    '',
    'Reporting-MTA: dns; mx.globex.com',
    '',
    `Final-Recipient: rfc822; ${recipient}`,
    `Action: ${status.startsWith('5') ? 'failed' : 'delayed'}`,
    `Status: ${status}`,
    `Diagnostic-Code: smtp; ${status.startsWith('5') ? '550' : '451'} ${status} mailbox unavailable`,
    '',
    '--BOUNDARY',
    'Content-Type: text/rfc822-headers',
    '',
    `From: ${SDR}`,
    `To: ${recipient}`,
    'Subject: Quick question',
    `Message-ID: ${originalMessageId}`,
    '',
    '--BOUNDARY--',
    '',
  ].join('\r\n');
}

describeWithDovecot('inbox: reading mailboxes over IMAP', () => {
  let imap: ImapTestServer;
  let sink: SmtpSink;
  let t: TestServer;
  let ws: TestWorkspace;
  let accountId: string;
  let campaignId: string;
  let stepId: string;
  let variantId: string;
  let variantB: string;
  const contacts: Record<string, string> = {};
  const sentIds: Record<string, string> = {};
  const recorded: Event[] = [];
  let tomFirst = '';
  const suppressed = async () =>
    (
      await t
        .db('suppressions')
        .where({ workspace_id: ws.workspaceId })
        .orderBy('value')
        .select<SuppressionRow[]>('value', 'reason')
    ).map((r) => `${r.value}:${r.reason}`);

  const contactRow = (email: string) =>
    found(t.db<ContactRow>('contacts').where({ id: contacts[email] }).first(), `contact ${email}`);
  const inbound = () =>
    t
      .db<MessageRow>('email_messages')
      .where({ direction: 'inbound', workspace_id: ws.workspaceId })
      .orderBy('created_at');

  /** Stores what the sending engine stores when a campaign step goes out. */
  async function sent(email: string, subject = 'Quick question') {
    const id = newId();
    const variant = ['bob@initech.com', 'eve@hooli.com', 'kim@gmail.com'].includes(email) ? variantB : variantId;
    const messageId = `<${id}@acme-mail.io>`;
    await t.db('email_messages').insert({
      id,
      workspace_id: ws.workspaceId,
      account_id: accountId,
      campaign_id: campaignId,
      contact_id: contacts[email],
      step_id: stepId,
      variant_id: variant,
      direction: 'outbound',
      kind: 'campaign',
      message_id: messageId,
      references: [],
      thread_id: id,
      from_address: SDR,
      to_address: email,
      subject,
      text_body: 'Hi, quick question.',
      status: 'sent',
      sent_at: t.clock.now(),
      created_at: t.clock.now(),
    });
    await t.db.transaction((trx) =>
      t.services.events.record(trx, {
        workspaceId: ws.workspaceId,
        type: 'email.sent',
        mail: { campaignId, stepId, variantId: variant, accountId, contactId: contacts[email], messageId: id },
        data: { messageId: id, campaignId, contactId: contacts[email], accountId, stepId, variantId: variant, email },
      }),
    );
    sentIds[email] = id;
    return messageId;
  }

  beforeAll(async () => {
    imap = await startImapServer({
      users: [
        { user: SDR, password: 'imap-pw' },
        { user: OTHER, password: 'right' },
      ],
    });
    sink = await startSmtpSink();
    t = await startTestServer({ config: { secretKey: '22'.repeat(32), allowPrivateMailHosts: true } });
    t.clock.set('2026-11-23T10:00:00.000Z');
    t.services.events.onRecorded((_db, e) => {
      recorded.push(e);
      return Promise.resolve();
    });
    ws = await t.createWorkspace();
    const connected = await ws.client.POST('/v2/account/connect', {
      body: {
        email: SDR,
        provider: 'smtp',
        smtp: { host: '127.0.0.1', port: sink.port, password: 'smtp-pw' },
        imap: { host: '127.0.0.1', port: imap.port, password: 'imap-pw' },
      },
    });
    expect(connected.response.status).toBe(201);
    accountId = connected.data!.data.account.id;
    const created = await ws.client.POST('/v2/campaign/create', {
      body: { name: 'Inbox loop', accountIds: [accountId], options: { stopOnReply: true, stopForCompany: true } },
    });
    campaignId = created.data!.data.campaign.id;
    const steps = await ws.client.POST('/v2/campaign/sequence-create', {
      body: {
        campaignId,
        steps: [
          {
            delayDays: 0,
            variants: [
              { subject: 'Quick question', body: 'Hi' },
              { subject: 'Quick question', body: 'Hello' },
            ],
          },
        ],
      },
    });
    stepId = steps.data!.data.steps[0].id;
    variantId = steps.data!.data.steps[0].variants[0].id;
    variantB = steps.data!.data.steps[0].variants[1].id;
    const added = await ws.client.POST('/v1/contact/add', {
      body: {
        campaignId,
        contacts: [
          'tom@globex.com',
          'ann@globex.com',
          'bob@initech.com',
          'eve@hooli.com',
          'sam@umbrella.com',
          'kim@gmail.com',
        ].map((email) => ({ email })),
      },
    });
    for (const c of added.data!.data.added) contacts[c.email] = c.id;
  });

  afterAll(async () => {
    t?.services.mail.close();
    await t?.close();
    await sink?.close();
    await imap?.close();
  });

  it('reads a reply, an out-of-office, a bounce, an unrelated and a malformed message', async () => {
    const tomMsg = await sent('tom@globex.com');
    tomFirst = sentIds['tom@globex.com'];
    const bobMsg = await sent('bob@initech.com');
    const eveMsg = await sent('eve@hooli.com');
    await sent('ann@globex.com');
    await sent('sam@umbrella.com');
    t.clock.set('2026-11-23T11:00:00.000Z');

    await imap.deliverMany(SDR, [
      mail(
        {
          From: 'Tom <Tom@Globex.com>',
          To: SDR,
          Subject: 'Re: Quick question',
          'Message-ID': '<reply-tom@globex.com>',
          'In-Reply-To': tomMsg,
          References: tomMsg,
        },
        'Sounds good, call me.\r\n\r\n> Hi, quick question.',
      ),
      mail(
        {
          From: 'bob@initech.com',
          To: SDR,
          Subject: 'Out of Office: Quick question',
          'Message-ID': '<oof-bob@initech.com>',
          'In-Reply-To': bobMsg,
          'Auto-Submitted': 'auto-replied',
        },
        'I am away until Monday.',
      ),
      dsn('eve@hooli.com', '5.1.1', eveMsg),
      mail({
        From: 'newsletter@vendor.com',
        To: SDR,
        Subject: 'Our November deals',
        'Message-ID': '<news-1@vendor.com>',
      }),
      '\x00\x01 this is not an email at all',
      // Threaded only by sender and subject (a client that dropped the headers).
      mail(
        { From: 'sam@umbrella.com', To: SDR, Subject: 'RE: Quick question', 'Message-ID': '<reply-sam@umbrella.com>' },
        'Not interested.',
      ),
      // A soft bounce: stored, nothing else.
      dsn('eve@hooli.com', '4.2.2', eveMsg),
    ]);

    expect(await t.services.inbox.runOnce()).toBe(7);

    const rows = await inbound();
    expect(rows.map((r) => [r.kind, r.from_address])).toEqual([
      ['reply', 'tom@globex.com'],
      ['autoReply', 'bob@initech.com'],
      ['bounce', 'mailer-daemon@mx.globex.com'],
      ['reply', 'sam@umbrella.com'],
      ['bounce', 'mailer-daemon@mx.globex.com'],
    ]);
    expect(rows[0].thread_id).toBe(sentIds['tom@globex.com']);
    expect(rows[0].contact_id).toBe(contacts['tom@globex.com']);
    expect(rows[0].campaign_id).toBe(campaignId);
    expect(rows[0].step_id).toBe(stepId);

    // The reply stops Tom, and (stopForCompany) Ann at the same company; the fallback match stops Sam.
    expect((await contactRow('tom@globex.com')).status).toBe('completed');
    expect((await contactRow('ann@globex.com')).status).toBe('completed');
    expect((await contactRow('sam@umbrella.com')).status).toBe('completed');
    // The out-of-office does not stop Bob (stopOnAutoReply off) but sets his lead status.
    const bob = await contactRow('bob@initech.com');
    expect(bob.status).toBe('active');
    expect(bob.lead_status).toBe('outOfOffice');
    // The hard bounce marks Eve bounced and suppresses her address.
    expect((await contactRow('eve@hooli.com')).status).toBe('bounced');
    expect(
      (await found(t.db<MessageRow>('email_messages').where({ id: sentIds['eve@hooli.com'] }).first())).status,
    ).toBe('bounced');
    expect(await suppressed()).toEqual(['eve@hooli.com:bounced']);
    expect((await contactRow('kim@gmail.com')).status).toBe('active');

    const types = recorded.map((e) => e.type);
    expect(types.filter((x) => x === 'email.replied')).toHaveLength(2);
    expect(types.filter((x) => x === 'email.autoReplied')).toHaveLength(1);
    expect(types.filter((x) => x === 'email.bounced')).toHaveLength(1);
    // Bob's out-of-office, and the intents of Tom's ("call me": meetingRequest) and Sam's ("Not interested.") replies.
    expect(
      recorded.filter((e) => e.type === 'contact.leadStatusChanged').map((e) => [e.data.email, e.data.leadStatus]),
    ).toEqual([
      ['tom@globex.com', 'interested'],
      ['bob@initech.com', 'outOfOffice'],
      ['sam@umbrella.com', 'notInterested'],
    ]);
    const replied = recorded.find((e) => e.type === 'email.replied')!;
    expect(replied.data).toMatchObject({
      messageId: sentIds['tom@globex.com'],
      campaignId,
      contactId: contacts['tom@globex.com'],
      accountId,
      stepId,
      variantId,
      email: 'tom@globex.com',
      inboundMessageId: rows[0].id,
      subject: 'Re: Quick question',
      intent: 'meetingRequest',
    });
    const bounced = recorded.find((e) => e.type === 'email.bounced')!;
    expect(bounced.data).toMatchObject({
      bounceType: 'hard',
      email: 'eve@hooli.com',
      smtpResponse: '550 5.1.1 mailbox unavailable',
    });
    expect(
      recorded.find((e) => e.type === 'contact.leadStatusChanged' && e.data.leadStatus === 'outOfOffice')!.data,
    ).toMatchObject({ contactId: contacts['bob@initech.com'], previous: null, leadStatus: 'outOfOffice' });

    const analytics = await t
      .db<EmailEventRow>('email_events')
      .where({ workspace_id: ws.workspaceId })
      .select('type', 'contact_id', 'message_id', 'step_id', 'variant_id');
    expect(analytics.map((e) => e.type).sort()).toEqual([
      'autoReplied',
      'bounced',
      'replied',
      'replied',
      'sent',
      'sent',
      'sent',
      'sent',
      'sent',
    ]);
    expect(analytics.find((e) => e.type === 'replied' && e.contact_id === contacts['tom@globex.com'])).toMatchObject({
      message_id: sentIds['tom@globex.com'],
      step_id: stepId,
      variant_id: variantId,
    });

    const checkpoint = await found(t.db<CheckpointRow>('mailbox_checkpoints').where({ account_id: accountId }).first());
    expect(Number(checkpoint.last_uid)).toBe(7);
    expect(checkpoint.claimed_until).toBeNull();
  });

  it('never processes a message twice: a new reader instance resumes from the checkpoint', async () => {
    const before = recorded.length;
    const fresh = createServices(t.deps);
    fresh.events.onRecorded((_db, e) => {
      recorded.push(e);
      return Promise.resolve();
    });
    expect(await fresh.inbox.runOnce()).toBe(0);
    expect(await t.services.inbox.runOnce()).toBe(0);
    expect((await inbound()).length).toBe(5);
    expect(recorded.length).toBe(before);
  });

  it('reads the mailbox again after a UIDVALIDITY change without storing or counting anything twice', async () => {
    const before = recorded.length;
    const old = await found(t.db<CheckpointRow>('mailbox_checkpoints').where({ account_id: accountId }).first());
    await imap.resetUidValidity(SDR);
    const kimMsg = await sent('kim@gmail.com');
    await imap.deliver(
      SDR,
      mail(
        {
          From: 'kim@gmail.com',
          To: SDR,
          Subject: 'Re: Quick question',
          'Message-ID': '<reply-kim@gmail.com>',
          'In-Reply-To': kimMsg,
        },
        'Yes please',
      ),
    );
    expect(await t.services.inbox.runOnce()).toBe(8);
    const now = await found(t.db<CheckpointRow>('mailbox_checkpoints').where({ account_id: accountId }).first());
    expect(now.uid_validity).not.toBe(old.uid_validity);
    expect(Number(now.last_uid)).toBe(8);
    const rows = await inbound();
    expect(rows.length).toBe(6);
    // Kim's "Yes please" is interested, which sets her lead status.
    expect(recorded.slice(before).map((e) => e.type)).toEqual([
      'email.sent',
      'email.replied',
      'contact.leadStatusChanged',
    ]);
    // gmail.com is no company: stopForCompany stops Kim only.
    expect((await contactRow('kim@gmail.com')).status).toBe('completed');
  });

  it('counts replies, auto-replies and bounces per campaign, step and variant (A/B by reply rate)', async () => {
    const res = await ws.client.GET('/v2/analytics/campaign/steps', { params: { query: { campaignId } } });
    expect(res.response.status).toBe(200);
    const data = res.data!.data;
    expect(data.campaign).toEqual({
      sent: 6,
      contactsSent: 6,
      replies: 3,
      uniqueReplies: 3,
      replyRate: 50,
      repliesByIntent: {
        interested: 1,
        meetingRequest: 1,
        notInterested: 1,
        wrongPerson: 0,
        unsubscribeRequest: 0,
        question: 0,
        other: 0,
      },
      autoReplies: 1,
      bounces: 1,
      bounceRate: 16.67,
    });
    expect(data.steps).toHaveLength(1);
    expect(data.steps[0].counts).toEqual(data.campaign);
    const [a, b] = data.steps[0].variants;
    expect(a).toMatchObject({
      variantId,
      label: 'A',
      counts: {
        sent: 3,
        contactsSent: 3,
        replies: 2,
        uniqueReplies: 2,
        replyRate: 66.67,
        repliesByIntent: {
          interested: 0,
          meetingRequest: 1,
          notInterested: 1,
          wrongPerson: 0,
          unsubscribeRequest: 0,
          question: 0,
          other: 0,
        },
        autoReplies: 0,
        bounces: 0,
        bounceRate: 0,
      },
    });
    expect(b).toMatchObject({
      variantId: variantB,
      label: 'B',
      counts: {
        sent: 3,
        contactsSent: 3,
        replies: 1,
        uniqueReplies: 1,
        replyRate: 33.33,
        repliesByIntent: {
          interested: 1,
          meetingRequest: 0,
          notInterested: 0,
          wrongPerson: 0,
          unsubscribeRequest: 0,
          question: 0,
          other: 0,
        },
        autoReplies: 1,
        bounces: 1,
        bounceRate: 33.33,
      },
    });
    // The campaign summary counts the same replies and bounces.
    const summary = await ws.client.GET('/v1/analytics/campaign/summary', { params: { query: { campaignId } } });
    expect(summary.data!.data.unique).toMatchObject({ sent: 6, replied: 3, bounced: 1 });
    const other = await t.createWorkspace();
    expect(
      (await other.client.GET('/v2/analytics/campaign/steps', { params: { query: { campaignId } } })).response.status,
    ).toBe(404);
  });

  it('puts an account whose IMAP login fails in connectionError with a reason, once', async () => {
    const connected = await ws.client.POST('/v2/account/connect', {
      body: {
        email: OTHER,
        provider: 'smtp',
        smtp: { host: '127.0.0.1', port: sink.port, password: 'x' },
        imap: { host: '127.0.0.1', port: imap.port, password: 'wrong' },
      },
    });
    const otherId = connected.data!.data.account.id;
    const before = recorded.length;
    await t.services.inbox.runOnce();
    const status = await ws.client.GET('/v1/account/status', { params: { query: { accountId: otherId } } });
    expect(status.data!.data.status).toBe('connectionError');
    expect(status.data!.data.statusReason).toMatch(
      /^IMAP authentication failed for other@acme-mail.io at 127.0.0.1:\d+/,
    );
    const row = await found(t.db<AccountRow>('email_accounts').where({ id: otherId }).first());
    expect(row.status_reason).toMatch(/IMAP authentication failed for other@acme-mail.io/);
    const changes = recorded.slice(before).filter((e) => e.type === 'account.statusChanged');
    expect(changes).toHaveLength(1);
    expect(changes[0].data).toMatchObject({
      accountId: otherId,
      email: OTHER,
      previous: 'active',
      status: 'connectionError',
    });
    // Not read again while in connectionError.
    await t.services.inbox.runOnce();
    expect(recorded.slice(before).filter((e) => e.type === 'account.statusChanged')).toHaveLength(1);
  });

  it('does not reach a loopback IMAP host unless ALLOW_PRIVATE_MAIL_HOSTS is set, and marks no account', async () => {
    const strict = createServices({ ...t.deps, config: { ...t.deps.config, allowPrivateMailHosts: false } });
    strict.events.onRecorded((_db, e) => {
      recorded.push(e);
      return Promise.resolve();
    });
    const before = recorded.length;
    await t.db('mailbox_checkpoints').where({ account_id: accountId }).update({ last_read_at: null });
    await strict.inbox.runOnce();
    expect(recorded.slice(before).filter((e) => e.type === 'account.statusChanged')).toEqual([]);
    const status = await ws.client.GET('/v1/account/status', { params: { query: { accountId } } });
    expect(status.data!.data).toMatchObject({ status: 'active' });
    expect(status.data!.data.retries).toEqual([
      expect.objectContaining({ protocol: 'imap', reason: expect.stringMatching(/loopback, private or link-local/) }),
    ]);
    // Clear the retry for the next tests.
    await t.db('mail_connection_retries').where({ account_id: accountId }).delete();
  });

  describe('unibox', () => {
    it('lists newest first with filters and a cursor that stays stable while mail arrives', async () => {
      const all = await ws.client.GET('/v2/email/list', { params: { query: { limit: 100 } } });
      expect(all.response.status).toBe(200);
      const items = all.data!.data.items;
      expect(items.length).toBe(12); // 6 sent + 6 received
      const keys = items.map((m) => `${m.createdAt}|${m.id}`);
      expect([...keys].sort().reverse()).toEqual(keys);

      const unread = await ws.client.GET('/v2/email/list', { params: { query: { unread: true } } });
      expect(unread.data!.data.items.every((m) => m.direction === 'inbound' && !m.read)).toBe(true);
      expect(unread.data!.data.items.length).toBe(6);
      const tom = await ws.client.GET('/v2/email/list', {
        params: { query: { contactId: contacts['tom@globex.com'] } },
      });
      expect(tom.data!.data.items.map((m) => m.kind)).toEqual(['reply', 'campaign']);
      const outbound = await ws.client.GET('/v2/email/list', {
        params: { query: { direction: 'outbound', accountId, campaignId } },
      });
      expect(outbound.data!.data.items.every((m) => m.direction === 'outbound')).toBe(true);

      const page1 = await ws.client.GET('/v2/email/list', { params: { query: { limit: 5 } } });
      expect(page1.data!.data.pagination).toMatchObject({ limit: 5, hasMore: true });
      // New mail arrives between two pages.
      t.clock.set('2026-11-23T12:00:00.000Z');
      await sent('tom@globex.com', 'Another one');
      const page2 = await ws.client.GET('/v2/email/list', {
        params: { query: { limit: 5, cursor: page1.data!.data.pagination.nextCursor! } },
      });
      const page3 = await ws.client.GET('/v2/email/list', {
        params: { query: { limit: 5, cursor: page2.data!.data.pagination.nextCursor! } },
      });
      expect(page3.data!.data.pagination).toMatchObject({ hasMore: false, nextCursor: null });
      const paged = [...page1.data!.data.items, ...page2.data!.data.items, ...page3.data!.data.items].map((m) => m.id);
      expect(paged).toEqual(items.map((m) => m.id));

      const bad = await t.fetch('/v2/email/list?cursor=nonsense', { apiKey: ws.apiKey });
      expect(bad.status).toBe(400);
    });

    it('gets a message with its thread, marks it read and unread, and hides other workspaces', async () => {
      const [reply] = await t
        .db<MessageRow>('email_messages')
        .where({ direction: 'inbound', contact_id: contacts['tom@globex.com'] });
      const got = await ws.client.GET('/v2/email/get', { params: { query: { id: reply.id } } });
      expect(got.data!.data.message).toMatchObject({
        id: reply.id,
        kind: 'reply',
        direction: 'inbound',
        read: false,
        from: 'tom@globex.com',
        inReplyTo: expect.stringMatching(/@acme-mail.io>$/),
      });
      expect(got.data!.data.thread.map((m) => m.kind)).toEqual(['campaign', 'reply']);

      const unknown = newId();
      const marked = await ws.client.POST('/v2/email/mark-read', { body: { ids: [reply.id, unknown] } });
      expect(marked.data!.data).toEqual({ read: true, updated: [reply.id], notFound: [unknown] });
      expect(marked.data!.message).toBe('1 message marked read');
      expect(
        (await ws.client.GET('/v2/email/get', { params: { query: { id: reply.id } } })).data!.data.message.read,
      ).toBe(true);
      await ws.client.POST('/v2/email/mark-read', { body: { ids: [reply.id], read: false } });
      expect(
        (await ws.client.GET('/v2/email/get', { params: { query: { id: reply.id } } })).data!.data.message.read,
      ).toBe(false);

      const other = await t.createWorkspace();
      expect((await other.client.GET('/v2/email/get', { params: { query: { id: reply.id } } })).response.status).toBe(
        404,
      );
      expect(
        (await other.client.POST('/v2/email/mark-read', { body: { ids: [reply.id] } })).data!.data.notFound,
      ).toEqual([reply.id]);
      expect((await other.client.POST('/v2/email/reply', { body: { id: reply.id, text: 'x' } })).response.status).toBe(
        404,
      );
      expect((await other.client.GET('/v2/email/list', {})).data!.data.items).toEqual([]);
    });

    it('answers in the thread through SMTP with threading headers, files it in Sent, and stores it as manual', async () => {
      const [reply] = await t
        .db<MessageRow>('email_messages')
        .where({ direction: 'inbound', contact_id: contacts['tom@globex.com'] });
      const res = await ws.client.POST('/v2/email/reply', { body: { id: reply.id, text: 'Thursday at 3 works.' } });
      expect(res.response.status).toBe(201);
      const answer = res.data!.data.message;
      expect(answer).toMatchObject({
        kind: 'manual',
        direction: 'outbound',
        status: 'sent',
        to: 'tom@globex.com',
        from: SDR,
        subject: 'Re: Quick question',
        threadId: reply.thread_id,
        stepId: null,
        inReplyTo: '<reply-tom@globex.com>',
      });
      expect(res.data!.data.appendedToSent).toBe(true);

      const got = sink.received.find((m) => m.parsed.messageId === answer.messageId)!.parsed;
      expect(got).toBeDefined();
      expect(got.inReplyTo).toBe('<reply-tom@globex.com>');
      const refs = Array.isArray(got.references) ? got.references : [got.references];
      expect(refs).toEqual([`<${tomFirst}@acme-mail.io>`, '<reply-tom@globex.com>']);
      expect(got.subject).toBe('Re: Quick question');
      expect(got.text?.trim()).toBe('Thursday at 3 works.');

      const sentBox = await imap.messages(SDR, 'Sent');
      expect(sentBox.some((m) => m.source.includes(answer.messageId))).toBe(true);

      const thread = await ws.client.GET('/v2/email/get', { params: { query: { id: answer.id } } });
      expect(thread.data!.data.thread.map((m) => m.kind)).toEqual(['campaign', 'reply', 'manual']);
      // A manual answer is no campaign step: it records no analytics event (7 = the campaign sends).
      expect(await t.db('email_events').where({ workspace_id: ws.workspaceId, type: 'sent' })).toHaveLength(7);
    });

    it('never answers a suppressed address (409)', async () => {
      const [bounce] = await t
        .db<MessageRow>('email_messages')
        .where({ direction: 'outbound', contact_id: contacts['eve@hooli.com'] });
      const res = await t.fetch('/v2/email/reply', {
        method: 'POST',
        apiKey: ws.apiKey,
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ id: bounce.id, text: 'Still there?' }),
      });
      expect(res.status).toBe(409);
      const body = await readJson<ErrorBody>(res);
      expect(body.error).toMatch(/eve@hooli.com is on the suppression list/);
      expect(sink.received.some((m) => m.parsed.text?.includes('Still there?'))).toBe(false);
    });
  });

  it('two workers never read one mailbox at once: every message is processed exactly once', async () => {
    const before = await inbound();
    const beforeEvents = recorded.filter((e) => e.type === 'email.replied').length;
    const raws = Array.from({ length: 20 }, (_, i) =>
      mail(
        {
          From: 'tom@globex.com',
          To: SDR,
          Subject: 'Re: Quick question',
          'Message-ID': `<burst-${i}@globex.com>`,
          'In-Reply-To': `<${tomFirst}@acme-mail.io>`,
        },
        `Message ${i}`,
      ),
    );
    await imap.deliverMany(SDR, raws);
    const second = createServices(t.deps);
    second.events.onRecorded((_db, e) => {
      recorded.push(e);
      return Promise.resolve();
    });
    const [a, b] = await Promise.all([t.services.inbox.runOnce(), second.inbox.runOnce()]);
    expect(a + b).toBe(20);
    expect(Math.min(a, b)).toBe(0);
    const after = await inbound();
    expect(after.length - before.length).toBe(20);
    expect(new Set(after.map((r) => r.message_id)).size).toBe(after.length);
    expect(recorded.filter((e) => e.type === 'email.replied').length - beforeEvents).toBe(20);
  });

  it('a message the processor cannot handle is retried, then skipped, and never puts the account in error', async () => {
    const inbox = t.services.inbox;
    const original = inbox.processMessage.bind(inbox);
    inbox.processMessage = async (trx, account, raw) => {
      if (raw.toString().includes('POISON')) throw new Error('cannot handle this one');
      return original(trx, account, raw);
    };
    try {
      const before = (await inbound()).length;
      await imap.deliverMany(SDR, [
        mail(
          {
            From: 'tom@globex.com',
            To: SDR,
            Subject: 'Re: Quick question',
            'Message-ID': '<poison@globex.com>',
            'In-Reply-To': `<${tomFirst}@acme-mail.io>`,
          },
          'POISON',
        ),
        mail(
          {
            From: 'tom@globex.com',
            To: SDR,
            Subject: 'Re: Quick question',
            'Message-ID': '<after-poison@globex.com>',
            'In-Reply-To': `<${tomFirst}@acme-mail.io>`,
          },
          'fine',
        ),
      ]);
      expect(await inbox.runOnce()).toBe(0);
      expect(await inbox.runOnce()).toBe(0);
      const held = await found(t.db<CheckpointRow>('mailbox_checkpoints').where({ account_id: accountId }).first());
      expect(held.stuck_count).toBe(2);
      expect(held.last_error).toMatch(/could not be processed: cannot handle this one/);
      expect((await found(t.db<AccountRow>('email_accounts').where({ id: accountId }).first())).status).toBe('active');
      expect(await inbox.runOnce()).toBe(1);
      const rows = await inbound();
      expect(rows.length - before).toBe(1);
      expect(rows[rows.length - 1].message_id).toBe('<after-poison@globex.com>');
      const after = await found(t.db<CheckpointRow>('mailbox_checkpoints').where({ account_id: accountId }).first());
      expect(after.stuck_uid).toBeNull();
    } finally {
      inbox.processMessage = original;
    }
  });

  it('hard bounces read from the mailbox count toward bounce protection (the account pauses)', async () => {
    const BP = 'bp@acme-mail.io';
    imap.addUser(BP, 'bp-pw');
    const connected = await ws.client.POST('/v2/account/connect', {
      body: {
        email: BP,
        provider: 'smtp',
        smtp: { host: '127.0.0.1', port: sink.port, password: 'x' },
        imap: { host: '127.0.0.1', port: imap.port, password: 'bp-pw' },
      },
    });
    const bpId = connected.data!.data.account.id;
    const ids: string[] = [];
    for (let i = 0; i < 40; i++) {
      const id = newId();
      ids.push(id);
      await t.db('email_messages').insert({
        id,
        workspace_id: ws.workspaceId,
        account_id: bpId,
        campaign_id: campaignId,
        direction: 'outbound',
        kind: 'campaign',
        message_id: `<${id}@acme-mail.io>`,
        references: [],
        thread_id: id,
        from_address: BP,
        to_address: `lead${i}@far.example`,
        subject: 'Quick question',
        text_body: 'Hi',
        status: 'sent',
        sent_at: t.clock.now(),
        created_at: t.clock.now(),
      });
    }
    await imap.deliverMany(
      BP,
      [0, 1, 2].map((i) =>
        dsn(`lead${i}@far.example`, '5.1.1', `<${ids[i]}@acme-mail.io>`).replace(`To: ${SDR}`, `To: ${BP}`),
      ),
    );
    await t.services.inbox.runOnce();
    const status = await ws.client.GET('/v1/account/status', { params: { query: { accountId: bpId } } });
    expect(status.data!.data.status).toBe('paused');
    expect(status.data!.data.statusReason).toBe('bounce_rate: 3 hard bounces in the last 40 sends (more than 5%)');
    expect(await suppressed()).toEqual(
      expect.arrayContaining(['lead0@far.example:bounced', 'lead2@far.example:bounced']),
    );
  });
});
