/**
 * The mail module's send over a pooled SMTP connection the server closes for idling: the 421 that meets the
 * next message's MAIL FROM (before any recipient was taken) is retried once on a fresh connection, so the
 * message is not dropped; a second refusal is the send's outcome (one retry, never a loop).
 */
import { startSmtpSink, type SmtpSink } from '../helpers/smtp-sink';
import { startTestServer, type TestServer } from '../helpers/server';
import type { MailLogin } from '../../server/modules/mail/service';

describe('mail send on a dropped pooled connection', () => {
  let sink: SmtpSink;
  let t: TestServer;
  let login: MailLogin;

  beforeAll(async () => {
    sink = await startSmtpSink();
    t = await startTestServer({ config: { secretKey: '46'.repeat(32), allowPrivateMailHosts: true } });
    login = {
      accountId: 'retry-a',
      workspaceId: 'w',
      email: 'ana@acme-mail.io',
      host: '127.0.0.1',
      port: sink.port,
      username: 'ana@acme-mail.io',
      password: 'pw',
    };
  });
  afterAll(async () => {
    t?.services.mail.close();
    await t?.close();
    await sink?.close();
  });

  const send = (subject: string) =>
    t.services.mail.send({ login, draft: { to: 'ben@pool-mail.io', subject, text: 'Hello' } });

  it('sends again on a fresh connection after a 421 before the recipient, once', async () => {
    expect((await send('first')).outcome.kind).toBe('sent');
    // The pooled connection is idle now; the server closes it as the next message's MAIL FROM arrives.
    sink.idleCloses = 1;
    const second = await send('second');
    expect(second.outcome).toMatchObject({ kind: 'sent' });
    expect(sink.idleCloses).toBe(0);
    expect(sink.received.map((m) => m.parsed.subject)).toEqual(['first', 'second']);

    // Refused on the fresh connection too: the outcome is the refusal (transient), no third attempt.
    sink.idleCloses = 3;
    const third = await send('third');
    expect(third.outcome).toMatchObject({ kind: 'transient', response: expect.stringMatching(/^421/) as unknown });
    expect(sink.idleCloses).toBe(1);
    sink.idleCloses = 0;
    expect((await send('fourth')).outcome.kind).toBe('sent');
    expect(sink.received.map((m) => m.parsed.subject)).toEqual(['first', 'second', 'fourth']);
  });
});
