/** The private dovecot test instance: logins, delivery by APPEND, the Sent mailbox, UIDVALIDITY resets. */
import { describeWithDovecot, startImapServer, type ImapTestServer } from '../helpers/imap-server';

const raw = (n: number) =>
  `From: Ann <ann@example.org>\r\nTo: sdr@example.com\r\nSubject: Test ${n}\r\nMessage-ID: <t${n}@example.org>\r\nDate: Mon, 23 Nov 2026 10:00:00 +0000\r\n\r\nBody ${n}\r\n`;

describeWithDovecot('private dovecot instance', () => {
  let imap: ImapTestServer;
  beforeAll(async () => {
    imap = await startImapServer({ users: [{ user: 'sdr@example.com', password: 'pw1' }] });
  });
  afterAll(async () => {
    await imap?.close();
  });

  it('delivers with APPEND and lists INBOX and the special-use Sent mailbox', async () => {
    const first = await imap.deliver('sdr@example.com', raw(1));
    expect(first.uid).toBe(1);
    await imap.deliverMany('sdr@example.com', [raw(2), raw(3)]);
    const messages = await imap.messages('sdr@example.com');
    expect(messages.map((m) => m.uid)).toEqual([1, 2, 3]);
    expect(messages[2].source).toContain('Subject: Test 3');
    const c = await imap.client('sdr@example.com');
    try {
      const sent = (await c.list()).find((m) => m.specialUse === '\\Sent');
      expect(sent?.path).toBe('Sent');
    } finally {
      await c.logout();
    }
  });

  it('refuses a wrong password and accepts users added later', async () => {
    imap.addUser('other@example.com', 'pw2');
    await imap.deliver('other@example.com', raw(9));
    const { ImapFlow } = await import('imapflow');
    const bad = new ImapFlow({
      host: '127.0.0.1',
      port: imap.port,
      secure: false,
      auth: { user: 'sdr@example.com', pass: 'wrong' },
      logger: false,
    });
    await expect(bad.connect()).rejects.toThrow();
  });

  it('resets UIDVALIDITY keeping the messages, or recreates INBOX empty', async () => {
    const before = await imap.deliver('sdr@example.com', raw(4));
    await imap.resetUidValidity('sdr@example.com');
    const after = await imap.deliver('sdr@example.com', raw(5));
    expect(after.uidValidity).not.toBe(before.uidValidity);
    expect((await imap.messages('sdr@example.com')).length).toBe(5);
    await imap.recreateInbox('sdr@example.com');
    const fresh = await imap.deliver('sdr@example.com', raw(6));
    expect(fresh.uid).toBe(1);
    expect(fresh.uidValidity).not.toBe(after.uidValidity);
    expect((await imap.messages('sdr@example.com')).length).toBe(1);
  });
});
