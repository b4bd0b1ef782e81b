/** The one composing rule set: Message-ID, threading headers and the subject of an answer. */
import { compose, composeRaw, replySubject, threadReferences } from '../../server/modules/mail/compose';

const at = new Date('2026-11-23T10:00:00.000Z');

describe('replySubject', () => {
  it('adds one Re: and keeps one that is there in any case', () => {
    expect(replySubject('Quick question')).toBe('Re: Quick question');
    expect(replySubject('  Quick question ')).toBe('Re: Quick question');
    expect(replySubject('Re: Quick question')).toBe('Re: Quick question');
    expect(replySubject('RE: Quick question')).toBe('RE: Quick question');
    expect(replySubject('re:Quick')).toBe('re:Quick');
    expect(replySubject('Rejoice')).toBe('Re: Rejoice');
  });
});

describe('threadReferences', () => {
  it('appends the parent once and keeps the newest 20', () => {
    expect(threadReferences({ message_id: '<p@x>', references: [] })).toEqual(['<p@x>']);
    expect(threadReferences({ message_id: '<p@x>', references: ['<a@x>', '<p@x>'] })).toEqual(['<a@x>', '<p@x>']);
    const long = Array.from({ length: 30 }, (_, i) => `<${i}@x>`);
    const refs = threadReferences({ message_id: '<p@x>', references: long });
    expect(refs).toHaveLength(20);
    expect(refs.at(-1)).toBe('<p@x>');
    expect(refs[0]).toBe('<11@x>');
  });
});

describe('compose', () => {
  it('names a new message on the sender domain, in a thread of its own', () => {
    const c = compose({
      id: '0192f0d1-2b3c-7d4e-8f5a-6b7c8d9e0f1a',
      from: 'ana@acme-mail.io',
      to: 'x@y.test',
      subject: 'Hi',
      text: 'x',
      date: at,
    });
    expect(c).toMatchObject({
      messageId: '<0192f0d1-2b3c-7d4e-8f5a-6b7c8d9e0f1a@acme-mail.io>',
      threadId: c.id,
      inReplyTo: null,
      references: [],
      subject: 'Hi',
    });
    expect(c.message.references).toBeUndefined();
  });

  it('answers a parent in its thread with the reply subject unless one is given', async () => {
    const parent = { id: 'p', subject: 'Quick question', message_id: '<p@x>', references: ['<a@x>'], thread_id: 't-1' };
    const c = compose({
      from: 'ana@acme-mail.io',
      to: 'x@y.test',
      text: 'x',
      parent,
      headers: { 'X-Mark': '1' },
      date: at,
    });
    expect(c).toMatchObject({
      threadId: 't-1',
      inReplyTo: '<p@x>',
      references: ['<a@x>', '<p@x>'],
      subject: 'Re: Quick question',
    });
    expect(
      compose({ from: 'ana@acme-mail.io', to: 'x@y.test', subject: 'Own', text: 'x', parent, date: at }).subject,
    ).toBe('Own');
    const raw = (await composeRaw(c.message)).toString();
    expect(raw).toContain('In-Reply-To: <p@x>');
    expect(raw).toContain('References: <a@x> <p@x>');
    expect(raw).toContain('X-Mark: 1');
    expect(raw).toContain(`Message-ID: ${c.messageId}`);
  });
});
