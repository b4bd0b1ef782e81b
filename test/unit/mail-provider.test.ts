/** The loopback mail provider: SMTP in, dovecot maildirs out, the spam rule, refusals and where mail landed. */
import nodemailer from 'nodemailer';
import { describeWithDovecot } from '../helpers/imap-server';
import { startMailProvider, type MailProvider } from '../helpers/mail-provider';

const ANN = 'ann@gmail.test';
const BOB = 'bob@outlook.test';
const CY = 'cy@outlook.test';

describeWithDovecot('loopback mail provider', () => {
  let provider: MailProvider;
  const delivered = new Date('2026-11-23T10:00:00.000Z');
  beforeAll(async () => {
    provider = await startMailProvider({
      mailboxes: [ANN, BOB, { address: CY, password: 'cy-secret' }],
      now: () => delivered,
    });
  });
  afterAll(async () => {
    await provider?.close();
  });
  afterEach(() => {
    provider.clearSpamRules();
    provider.refuse(BOB, null);
  });

  const send = async (from: string, to: string[], messageId: string, password = provider.password(from)) => {
    const transport = nodemailer.createTransport({
      host: '127.0.0.1',
      port: provider.smtpPort,
      secure: false,
      ignoreTLS: true,
      auth: { user: from, pass: password },
    });
    try {
      return await transport.sendMail({ from, to, subject: `Hello ${messageId}`, text: 'Body', messageId });
    } finally {
      transport.close();
    }
  };

  it('gives every mailbox the special-use Sent and Junk folders', async () => {
    const folders = await provider.folders(ANN);
    expect(folders).toEqual(
      expect.arrayContaining([
        { path: 'INBOX', specialUse: '\\Inbox' },
        { path: 'Sent', specialUse: '\\Sent' },
        { path: 'Junk', specialUse: '\\Junk' },
      ]),
    );
  });

  it('delivers to INBOX on several domains, with the delivery headers and the given INTERNALDATE', async () => {
    await send(ANN, [BOB, CY], '<m1@gmail.test>');
    expect(await provider.locate(BOB, '<m1@gmail.test>')).toEqual([{ mailbox: 'INBOX', uid: 1, flags: [] }]);
    expect(await provider.locate(CY, 'm1@gmail.test')).toEqual([{ mailbox: 'INBOX', uid: 1, flags: [] }]);
    expect(await provider.locate(ANN, '<m1@gmail.test>')).toEqual([]);
    const [message] = await provider.imap.messages(BOB);
    expect(message.source).toMatch(/^Return-Path: <ann@gmail\.test>\r\nDelivered-To: bob@outlook\.test\r\n/);
    const c = await provider.imap.client(BOB);
    try {
      await c.mailboxOpen('INBOX');
      const fetched = await c.fetchOne('1', { internalDate: true });
      expect(fetched && new Date(fetched.internalDate!).toISOString()).toBe(delivered.toISOString());
    } finally {
      await c.logout();
    }
    expect(provider.deliveries.filter((d) => d.messageId === '<m1@gmail.test>')).toEqual([
      {
        mailFrom: ANN,
        from: ANN,
        to: BOB,
        subject: 'Hello <m1@gmail.test>',
        messageId: '<m1@gmail.test>',
        folder: 'INBOX',
        refused: null,
        authUser: ANN,
      },
      {
        mailFrom: ANN,
        from: ANN,
        to: CY,
        subject: 'Hello <m1@gmail.test>',
        messageId: '<m1@gmail.test>',
        folder: 'INBOX',
        refused: null,
        authUser: ANN,
      },
    ]);
  });

  it('files mail from a spam sender (address or domain) or matching the rule in Junk', async () => {
    provider.spamFrom('@gmail.test');
    await send(ANN, [BOB], '<m2@gmail.test>');
    expect(await provider.locate(BOB, '<m2@gmail.test>')).toEqual([{ mailbox: 'Junk', uid: 1, flags: [] }]);
    provider.clearSpamRules();
    provider.spamFrom(CY);
    await send(CY, [BOB], '<m3@outlook.test>');
    await send(ANN, [BOB], '<m4@gmail.test>');
    expect((await provider.locate(BOB, '<m3@outlook.test>'))[0].mailbox).toBe('Junk');
    expect((await provider.locate(BOB, '<m4@gmail.test>'))[0].mailbox).toBe('INBOX');
    provider.clearSpamRules();
    // A rule per recipient: one message, two recipients, two folders.
    provider.spamWhen((m) => m.to === CY && m.subject.includes('m5'));
    await send(ANN, [BOB, CY], '<m5@gmail.test>');
    expect((await provider.locate(BOB, '<m5@gmail.test>'))[0].mailbox).toBe('INBOX');
    expect((await provider.locate(CY, '<m5@gmail.test>'))[0].mailbox).toBe('Junk');
  });

  it('sees a message after a client moved it (a rescue from Junk)', async () => {
    provider.spamFrom(ANN);
    await send(ANN, [CY], '<m6@gmail.test>');
    const c = await provider.imap.client(CY);
    try {
      await c.mailboxOpen('Junk');
      const uids = await c.search({ header: { 'message-id': '<m6@gmail.test>' } }, { uid: true });
      await c.messageMove(uids as number[], 'INBOX', { uid: true });
    } finally {
      await c.logout();
    }
    expect((await provider.locate(CY, '<m6@gmail.test>')).map((l) => l.mailbox)).toEqual(['INBOX']);
  });

  it('refuses a full mailbox, an unknown user and a wrong password, and accepts again', async () => {
    provider.refuse(BOB, 'full');
    await expect(send(ANN, [BOB], '<m7@gmail.test>')).rejects.toMatchObject({ responseCode: 552 });
    await expect(send(ANN, ['nobody@outlook.test'], '<m8@gmail.test>')).rejects.toMatchObject({ responseCode: 550 });
    provider.refuse(BOB, { code: 450, message: '4.2.1 Try later' });
    await expect(send(ANN, [BOB], '<m9@gmail.test>')).rejects.toMatchObject({ responseCode: 450 });
    await expect(send(ANN, [CY], '<m10@gmail.test>', 'wrong')).rejects.toMatchObject({ responseCode: 535 });
    expect(provider.deliveries.filter((d) => d.refused).map((d) => [d.to, d.refused!.slice(0, 9)])).toEqual([
      [BOB, '552 5.2.2'],
      ['nobody@outlook.test', '550 5.1.1'],
      [BOB, '450 4.2.1'],
    ]);
    provider.refuse(BOB, null);
    await send(ANN, [BOB], '<m11@gmail.test>');
    expect(await provider.locate(BOB, '<m11@gmail.test>')).toHaveLength(1);
    expect(await provider.locate(BOB, '<m7@gmail.test>')).toEqual([]);
  });

  it('accepts and drops mail for a discarding mailbox', async () => {
    provider.discard(CY);
    await send(ANN, [CY, BOB], '<m13@gmail.test>');
    provider.discard(CY, false);
    expect(await provider.locate(CY, '<m13@gmail.test>')).toEqual([]);
    expect(await provider.locate(BOB, '<m13@gmail.test>')).toHaveLength(1);
    expect(provider.deliveries.filter((d) => d.messageId === '<m13@gmail.test>').map((d) => [d.to, d.folder])).toEqual([
      [CY, null],
      [BOB, 'INBOX'],
    ]);
  });

  it('adds mailboxes later and gives the account connection body', async () => {
    provider.addMailbox('dee@yahoo.test', 'dee-pw');
    expect(provider.connectBody('Dee@yahoo.test')).toEqual({
      email: 'dee@yahoo.test',
      provider: 'smtp',
      smtp: { host: '127.0.0.1', port: provider.smtpPort, password: 'dee-pw' },
      imap: { host: '127.0.0.1', port: provider.imapPort, password: 'dee-pw' },
    });
    await send(CY, ['dee@yahoo.test'], '<m12@outlook.test>');
    expect(await provider.locate('dee@yahoo.test', '<m12@outlook.test>')).toEqual([
      { mailbox: 'INBOX', uid: 1, flags: [] },
    ]);
  });
});
