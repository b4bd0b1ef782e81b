/** What an incoming message is, from its headers and structure: reply, automatic reply or delivery report. */
import { simpleParser } from 'mailparser';
import { classify, parseDeliveryStatus, threadSubject, toIncoming } from '../../server/modules/inbox/classify';

async function kindOf(headers: Record<string, string>, body = 'Hi') {
  const raw = Buffer.from(
    `${Object.entries({ From: 'a@b.com', To: 'c@d.com', ...headers })
      .map(([k, v]) => `${k}: ${v}`)
      .join('\r\n')}\r\n\r\n${body}\r\n`,
  );
  const parsed = await simpleParser(raw);
  return classify(parsed, raw, toIncoming(parsed, raw));
}

describe('classify', () => {
  it('a person writing back is a reply, also when the subject says so or the headers say "no"', async () => {
    expect(await kindOf({ Subject: 'Re: Quick question' })).toEqual({ kind: 'reply' });
    expect(await kindOf({ Subject: 'Re: Quick question', 'Auto-Submitted': 'no', 'X-Autoreply': 'no' })).toEqual({
      kind: 'reply',
    });
    expect(await kindOf({ Subject: 'Re: Quick question', Precedence: 'list' })).toEqual({ kind: 'reply' });
  });

  it.each([
    [{ 'Auto-Submitted': 'auto-replied' }],
    [{ 'Auto-Submitted': 'auto-generated; type=vacation' }],
    [{ 'X-Autoreply': 'yes' }],
    [{ 'X-Autorespond': 'Out of office' }],
    [{ Precedence: 'auto_reply' }],
    [{ Precedence: 'bulk' }],
    [{ Precedence: 'junk' }],
    [{ 'X-Auto-Response-Suppress': 'All' }],
  ])('headers %p make an automatic reply', async (headers) => {
    expect((await kindOf({ Subject: 'Re: Quick question', ...headers })).kind).toBe('autoReply');
  });

  it.each([
    'Out of Office: Quick question',
    'Automatic reply: Quick question',
    'Autoreply: Quick question',
    'Abwesenheitsnotiz: Quick question',
    'Automatische Antwort: Quick question',
    'Réponse automatique : Quick question',
    'Absent du bureau jusqu’au 3 décembre',
    'Respuesta automática: Quick question',
    'Fuera de la oficina',
    'Risposta automatica: Quick question',
    'Resposta automática: Quick question',
    'Automatisch antwoord: Quick question',
    'Automatiskt svar: Quick question',
    'Odpowiedź automatyczna: Quick question',
  ])('subject "%s" makes an automatic reply', async (subject) => {
    expect((await kindOf({ Subject: subject })).kind).toBe('autoReply');
  });

  it('a multipart/report delivery-status is a bounce: 5.x.x hard, 4.x.x soft', async () => {
    const report = (status: string, extra = '') =>
      Buffer.from(
        [
          'From: MAILER-DAEMON@mx.x.com',
          'Subject: Delivery Status Notification (Failure)',
          'Content-Type: multipart/report; report-type=delivery-status; boundary="b"',
          '',
          '--b',
          'Content-Type: text/plain',
          '',
          'failed',
          '--b',
          'Content-Type: message/delivery-status',
          '',
          'Reporting-MTA: dns; mx.x.com',
          '',
          'Final-Recipient: rfc822; <Bob@Acme.com>',
          status ? `Status: ${status}` : 'Action: failed',
          extra,
          '--b--',
          '',
        ].join('\r\n'),
      );
    const hard = report('5.1.1', 'Diagnostic-Code: smtp; 550-5.1.1 The email account\r\n  does not exist');
    const parsed = await simpleParser(hard);
    expect(classify(parsed, hard, toIncoming(parsed, hard))).toEqual({
      kind: 'bounce',
      dsn: {
        recipient: 'bob@acme.com',
        recipients: ['bob@acme.com'],
        status: '5.1.1',
        action: null,
        diagnostic: '550-5.1.1 The email account does not exist',
        bounceType: 'hard',
      },
    });
    expect(parseDeliveryStatus(report('4.4.1')).bounceType).toBe('soft');
    expect(parseDeliveryStatus(report('')).bounceType).toBe('hard');
    expect(parseDeliveryStatus(Buffer.from('Subject: x\r\n\r\nno report')).bounceType).toBeNull();
  });

  it('threadSubject strips reply and forward prefixes in several languages', () => {
    expect(threadSubject('Re: RE: Fwd: AW: Quick  question')).toBe('quick question');
    expect(threadSubject('SV: VS: Quick question')).toBe('quick question');
    expect(threadSubject('Re[2]: Quick question')).toBe('quick question');
    expect(threadSubject('Quick question')).toBe('quick question');
  });
});
