/**
 * The inbox reader against hostile and heavy mail on a private dovecot: a forged delivery report naming a
 * stranger, a message past the parser's part limit, and 20 MB messages with the process's peak memory
 * measured while they are read.
 */
import { Writable } from 'node:stream';
import pino from 'pino';
import { describeWithDovecot, startImapServer, type ImapTestServer } from '../helpers/imap-server';
import { startSmtpSink, type SmtpSink } from '../helpers/smtp-sink';
import { startTestServer, type TestServer, type TestWorkspace } from '../helpers/server';

jest.setTimeout(180_000);

const SDR = 'sdr@acme-mail.io';

function dsn(finalRecipient: string, quotedTo: string, quotedMessageId: string): string {
  return [
    'From: Mail Delivery System <MAILER-DAEMON@mx.evil.test>',
    `To: ${SDR}`,
    'Subject: Undelivered Mail Returned to Sender',
    `Message-ID: <dsn-${Math.random().toString(36).slice(2)}@mx.evil.test>`,
    'MIME-Version: 1.0',
    'Content-Type: multipart/report; report-type=delivery-status; boundary="B"',
    '',
    '--B',
    'Content-Type: message/delivery-status',
    '',
    'Reporting-MTA: dns; mx.evil.test',
    '',
    `Final-Recipient: rfc822; ${finalRecipient}`,
    'Action: failed',
    'Status: 5.1.1',
    'Diagnostic-Code: smtp; 550 5.1.1 no such user',
    '',
    '--B',
    'Content-Type: text/rfc822-headers',
    '',
    `From: ${SDR}`,
    `To: ${quotedTo}`,
    'Subject: Hello',
    `Message-ID: ${quotedMessageId}`,
    '',
    '--B--',
    '',
  ].join('\r\n');
}

function reply(from: string, inReplyTo: string, extra: string): string {
  return [
    `From: ${from}`,
    `To: ${SDR}`,
    'Subject: Re: Hello',
    `Message-ID: <r-${Math.random().toString(36).slice(2)}@x.test>`,
    `In-Reply-To: ${inReplyTo}`,
    'MIME-Version: 1.0',
    extra,
  ].join('\r\n');
}

describeWithDovecot('inbox against hostile and heavy mail', () => {
  let imap: ImapTestServer;
  let sink: SmtpSink;
  let t: TestServer;
  let ws: TestWorkspace;
  const logLines: Record<string, unknown>[] = [];
  const sentTo = new Map<string, string>();

  beforeAll(async () => {
    imap = await startImapServer({ users: [{ user: SDR, password: 'imap-pw' }] });
    sink = await startSmtpSink();
    const logger = pino(
      { level: 'info' },
      new Writable({
        write(chunk: Buffer, _enc, cb) {
          logLines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
          cb();
        },
      }),
    );
    t = await startTestServer({ config: { secretKey: '99'.repeat(32), allowPrivateMailHosts: true }, logger });
    t.clock.set('2026-11-23T10:00:00.000Z');
    ws = await t.createWorkspace();
    const connected = await ws.client.POST('/v2/account/connect', {
      body: {
        email: SDR,
        provider: 'smtp',
        smtp: { host: '127.0.0.1', port: sink.port, password: 'pw' },
        imap: { host: '127.0.0.1', port: imap.port, password: 'imap-pw' },
      } as never,
    });
    const created = await ws.client.POST('/v2/campaign/create', {
      body: {
        name: 'Hostile',
        accountIds: [connected.data!.data.account.id],
        schedule: { timezone: 'UTC', days: [1, 2, 3, 4, 5], from: '09:00', to: '17:00' },
        options: { emailGapMinutes: 0, randomWaitMaxMinutes: 0, stopOnReply: true },
      } as never,
    });
    const campaignId = created.data!.data.campaign.id;
    await ws.client.POST('/v2/campaign/sequence-create', {
      body: {
        campaignId,
        steps: [
          { delayDays: 0, variants: [{ subject: 'Hello', body: 'Hi' }] },
          { delayDays: 3, variants: [{ subject: '', body: 'Bump' }] },
        ],
      } as never,
    });
    const emails = [
      'victim@globex.test',
      'parts@globex.test',
      ...Array.from({ length: 12 }, (_, i) => `big${i}@globex.test`),
    ];
    await ws.client.POST('/v1/contact/add', {
      body: { campaignId, contacts: emails.map((email) => ({ email })) } as never,
    });
    await ws.client.POST('/v2/campaign/launch', { body: { campaignId } });
    expect(await t.services.sending.runOnce()).toBe(emails.length);
    for (const m of sink.received) sentTo.set(m.envelope.to[0], m.parsed.messageId!);
  });
  afterAll(async () => {
    t?.services.mail.close();
    await t?.close();
    await sink?.close();
    await imap?.close();
  });

  const contactStatus = async (email: string) =>
    (await t.db('contacts').where({ workspace_id: ws.workspaceId, email }).first<{ status: string }>('status')).status;
  const suppressed = async () =>
    (await t.db('suppressions').where({ workspace_id: ws.workspaceId })).map((r: { value: string }) => r.value);

  it('stores a delivery report naming a stranger without acting on it, and applies one naming the recipient', async () => {
    const victimId = sentTo.get('victim@globex.test')!;
    await imap.deliverMany(SDR, [dsn('stranger@elsewhere.test', 'victim@globex.test', victimId)]);
    await t.services.inbox.runOnce();
    expect(await suppressed()).toEqual([]);
    expect(await contactStatus('victim@globex.test')).toBe('active');
    const list = await ws.client.GET('/v2/email/list', { params: { query: { direction: 'inbound' } } });
    expect(list.data!.data.items.map((m) => m.subject)).toContain('Undelivered Mail Returned to Sender');
    expect(logLines.some((l) => String(l.msg).startsWith('bounce report not applied'))).toBe(true);

    await imap.deliverMany(SDR, [dsn('victim@globex.test', 'victim@globex.test', victimId)]);
    await t.services.inbox.runOnce();
    expect(await suppressed()).toEqual(['victim@globex.test']);
    expect(await contactStatus('victim@globex.test')).toBe('bounced');
  });

  it('logs a message past the parser’s part limit with its reason', async () => {
    const parts = Array.from({ length: 1100 }, (_, i) => `--P\r\nContent-Type: text/plain\r\n\r\npart ${i}\r\n`).join(
      '',
    );
    await imap.deliverMany(SDR, [
      reply(
        'parts@globex.test',
        sentTo.get('parts@globex.test')!,
        `Content-Type: multipart/mixed; boundary="P"\r\n\r\n${parts}--P--\r\n`,
      ),
    ]);
    await t.services.inbox.runOnce();
    const line = logLines.find((l) => l.reason === 'parser_limit');
    expect(line).toMatchObject({ level: 40, reason: 'parser_limit', err: 'Max allowed child nodes exceeded' });
  });

  it('reads twelve 20 MB replies with memory bounded by the size limit, matching and classifying each', async () => {
    const attachment = Buffer.alloc(15 * 1024 * 1024, 7)
      .toString('base64')
      .replace(/.{76}/g, '$&\r\n');
    const raws = Array.from({ length: 12 }, (_, i) =>
      reply(
        `big${i}@globex.test`,
        sentTo.get(`big${i}@globex.test`)!,
        `Content-Type: multipart/mixed; boundary="M"\r\n\r\n--M\r\nContent-Type: text/plain\r\n\r\nYes, interested. Here is the deck.\r\n--M\r\nContent-Type: application/pdf; name="deck.pdf"\r\nContent-Transfer-Encoding: base64\r\n\r\n${attachment}\r\n--M--\r\n`,
      ),
    );
    expect(raws[0].length).toBeGreaterThan(20 * 1024 * 1024);
    imap.deliverDirect(SDR, raws);
    // Buffers live outside the JS heap: heap used plus external memory is what reading the mail holds (the
    // test process's RSS keeps what earlier tests freed, so it would hide the growth).
    const held = () => {
      const m = process.memoryUsage();
      return m.heapUsed + m.external;
    };
    const before = held();
    let peak = before;
    const sampler = setInterval(() => {
      peak = Math.max(peak, held());
    }, 5);
    try {
      await t.services.inbox.runOnce();
    } finally {
      clearInterval(sampler);
    }
    peak = Math.max(peak, held());
    const grewMb = Math.round((peak - before) / 1024 / 1024);
    console.log(
      `inbox: twelve 20 MB messages read; heap+external ${Math.round(before / 1048576)} MB before, peak ${Math.round(peak / 1048576)} MB (+${grewMb} MB)`,
    );
    for (let i = 0; i < 12; i += 1) expect(await contactStatus(`big${i}@globex.test`)).toBe('completed');
    expect(logLines.filter((l) => l.reason === 'message_over_size_limit')).toHaveLength(12);
    expect(grewMb).toBeLessThan(120);
  });
});
