/**
 * The mail module on loopback servers (smtp-server sink, dovecot): one message sent with extra headers and
 * recorded, an answer in its thread appended to Sent, and a mailbox session that finds \Junk, searches by
 * header, moves, flags, fetches with a size bound and appends. What warm-up and placement tests build on.
 */
import { expect } from '@jest/globals';
import { startSmtpSink, type SmtpSink } from '../helpers/smtp-sink';
import { startTestServer, type TestServer, type TestWorkspace } from '../helpers/server';
import { describeWithDovecot, startImapServer, type ImapTestServer } from '../helpers/imap-server';
import type { MailLogin } from '../../server/modules/mail/service';

const A = 'ana@acme-mail.io';
const B = 'ben@pool-mail.io';

const raw = (headers: Record<string, string>, body: string) =>
  Buffer.from(
    [
      ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`),
      'Date: Mon, 23 Nov 2026 09:00:00 +0000',
      '',
      body,
      '',
    ].join('\r\n'),
  );

describeWithDovecot('mail module', () => {
  let imap: ImapTestServer;
  let sink: SmtpSink;
  let t: TestServer;
  let ws: TestWorkspace;
  let smtpA: MailLogin;
  let imapA: MailLogin;
  let imapB: MailLogin;

  beforeAll(async () => {
    imap = await startImapServer({
      users: [
        { user: A, password: 'a-pw' },
        { user: B, password: 'b-pw' },
      ],
    });
    sink = await startSmtpSink();
    t = await startTestServer({ config: { secretKey: '45'.repeat(32), allowPrivateMailHosts: true } });
    t.clock.set('2026-11-23T10:00:00.000Z');
    ws = await t.createWorkspace();
    const connected = await ws.client.POST('/v2/account/connect', {
      body: {
        email: A,
        provider: 'smtp',
        smtp: { host: '127.0.0.1', port: sink.port, password: 'smtp-pw' },
        imap: { host: '127.0.0.1', port: imap.port, password: 'a-pw' },
      },
    });
    expect(connected.response.status).toBe(201);
    const accountId = connected.data!.data.account.id;
    const base = { accountId, workspaceId: ws.workspaceId, email: A, host: '127.0.0.1', username: A };
    smtpA = { ...base, port: sink.port, password: 'smtp-pw' };
    imapA = { ...base, port: imap.port, password: 'a-pw' };
    imapB = {
      accountId: 'pool-b',
      workspaceId: ws.workspaceId,
      email: B,
      host: '127.0.0.1',
      port: imap.port,
      username: B,
      password: 'b-pw',
    };
  });
  afterAll(async () => {
    t?.services.mail.close();
    await t?.close();
    await sink?.close();
    await imap?.close();
  });

  it('sends with extra headers, records the message apart from the unibox, and answers in its thread', async () => {
    const mail = t.services.mail;
    const first = await mail.send({
      login: smtpA,
      draft: {
        to: B,
        subject: 'Checking in',
        text: 'Hello Ben',
        html: '<p>Hello Ben</p>',
        headers: { 'X-Pool-Mark': 'w-123' },
      },
      record: { workspaceId: ws.workspaceId, accountId: smtpA.accountId, kind: 'warmup' },
    });
    expect(first.outcome.kind).toBe('sent');
    expect(first.row).toMatchObject({
      kind: 'warmup',
      status: 'sent',
      direction: 'outbound',
      subject: 'Checking in',
      message_id: first.composed.messageId,
      thread_id: first.row.id,
    });
    expect(first.composed.messageId).toMatch(/^<[0-9a-f-]{36}@acme-mail\.io>$/);
    const got = sink.received.at(-1)!;
    expect(got.envelope).toEqual({ from: A, to: [B] });
    expect(got.parsed.headers.get('x-pool-mark')).toBe('w-123');
    expect(got.parsed.messageId).toBe(first.composed.messageId);
    expect(got.parsed.html).toContain('<p>Hello Ben</p>');
    // Warm-up mail is the mail system's own: never in the unibox.
    const listed = await ws.client.GET('/v2/email/list', { params: { query: {} } });
    expect(listed.data!.data.items).toEqual([]);

    const parent = await mail.threadParent(t.db, first.row.id);
    const answer = await mail.send({
      login: smtpA,
      draft: { to: B, text: 'Any news?', parent },
      record: { workspaceId: ws.workspaceId, accountId: smtpA.accountId, kind: 'warmup' },
      appendToSent: imapA,
    });
    expect(answer.appendedToSent).toBe(true);
    expect(answer.row).toMatchObject({
      subject: 'Re: Checking in',
      in_reply_to: first.composed.messageId,
      references: [first.composed.messageId],
      thread_id: first.row.thread_id,
    });
    const threaded = sink.received.at(-1)!.parsed;
    expect(threaded.subject).toBe('Re: Checking in');
    expect(threaded.inReplyTo).toBe(first.composed.messageId);
    expect(threaded.references).toBe(first.composed.messageId);
    const sent = await imap.messages(A, 'Sent');
    expect(sent).toHaveLength(1);
    expect(sent[0].flags).toContain('\\Seen');
    expect(sent[0].source).toContain(`In-Reply-To: ${first.composed.messageId}`);

    // Unrecorded: nothing stored, the mail still goes out.
    const before = await t.db('email_messages').count<{ count: string }[]>('* as count');
    const loose = await mail.send({ login: smtpA, draft: { to: B, subject: 'Loose', text: 'x' } });
    expect(loose.row).toBeNull();
    expect(loose.outcome.kind).toBe('sent');
    expect(await t.db('email_messages').count<{ count: string }[]>('* as count')).toEqual(before);
  });

  it('opens a session: finds \\Junk, searches by header, moves, flags, fetches with a size bound, appends', async () => {
    const mail = t.services.mail;
    await mail.withMailbox(imapB, (s) => s.ensureFolder('Junk'));
    await imap.deliver(
      B,
      raw(
        { From: A, To: B, Subject: 'Ours', 'Message-ID': '<m1@acme-mail.io>', 'X-Pool-Mark': 'w-1' },
        'x'.repeat(5000),
      ),
      { mailbox: 'Junk' },
    );
    await imap.deliver(
      B,
      raw({ From: 'x@else.test', To: B, Subject: 'Other', 'Message-ID': '<m2@else.test>' }, 'other'),
      { mailbox: 'Junk' },
    );

    await mail.withMailbox(imapB, async (session) => {
      const junk = await session.specialUse('\\Junk');
      expect(junk).toBe('Junk');
      expect((await session.folders()).map((f) => f.path)).toEqual(expect.arrayContaining(['INBOX', 'Junk', 'Sent']));
      const box = await session.select(junk!);
      expect(box.exists).toBe(2);
      const [uid, ...rest] = await session.search({ header: { 'X-Pool-Mark': 'w-1' } });
      expect(rest).toEqual([]);
      const [head] = await session.fetch([uid], { maxBytes: 1000 });
      expect(head).toMatchObject({ uid, truncated: true });
      expect(head.size).toBeGreaterThan(5000);
      expect(head.source.length).toBe(1000);
      expect(head.source.toString()).toContain('X-Pool-Mark: w-1');

      const moved = await session.move([uid], 'INBOX');
      const inboxUid = moved.get(uid)!;
      expect(inboxUid).toBeGreaterThan(0);
      await session.select('INBOX');
      await session.addFlags([inboxUid], ['\\Seen', '\\Flagged']);
      const [whole] = await session.fetch([inboxUid]);
      expect(whole.truncated).toBe(false);
      expect(whole.source.length).toBe(whole.size);
      expect(whole.flags).toEqual(expect.arrayContaining(['\\Seen', '\\Flagged']));
      await session.removeFlags([inboxUid], ['\\Flagged']);

      await session.ensureFolder('Warmup');
      await session.move([inboxUid], 'Warmup');
      const appended = await session.append(
        'Warmup',
        raw({ From: B, To: A, Subject: 'Appended', 'Message-ID': '<m3@pool-mail.io>' }, 'hi'),
        ['\\Seen'],
      );
      expect(appended).not.toBeNull();
    });

    expect((await imap.messages(B, 'Junk')).map((m) => m.source)).toEqual([expect.stringContaining('<m2@else.test>')]);
    expect(await imap.messages(B, 'INBOX')).toEqual([]);
    const warmup = await imap.messages(B, 'Warmup');
    expect(warmup.map((m) => m.flags.filter((f) => f !== '\\Recent').sort())).toEqual([['\\Seen'], ['\\Seen']]);
    expect(warmup.map((m) => /Message-ID: (\S+)/.exec(m.source)![1])).toEqual([
      '<m1@acme-mail.io>',
      '<m3@pool-mail.io>',
    ]);
  });

  it('reports a wrong IMAP password as a permanent MailboxError', async () => {
    await expect(t.services.mail.openMailbox({ ...imapB, password: 'wrong' })).rejects.toMatchObject({
      permanent: true,
      message: expect.stringMatching(/^IMAP authentication failed for ben@pool-mail.io/),
    });
  });
});
