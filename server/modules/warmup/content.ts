/**
 * Warm-up mail content: business-like subjects and bodies built from @faker-js/faker's company, commerce and
 * person vocabularies in many sentence shapes (plain text, and simple HTML for half of them), and the marker
 * only the pool can recognise.
 *
 * The marker is a short code derived with HMAC-SHA256 from the message's id and a per-deployment key, written
 * as an ordinary reference line whose wording varies: a filter sees a different random-looking code in every
 * message and several phrasings, so there is nothing fixed to key on, while anyone holding the key recomputes
 * it from the Message-ID and checks it.
 */
import { createHmac } from 'node:crypto';
import { faker } from '@faker-js/faker';

export interface WarmupContent {
  subject: string;
  text: string;
  html: string | null;
}

const pick = <T>(items: readonly T[]): T => items[Math.floor(Math.random() * items.length)];

const SUBJECTS: (() => string)[] = [
  () => `Quick question about the ${faker.company.buzzNoun()}`,
  () => `Following up on ${faker.company.buzzPhrase()}`,
  () => `Notes from ${faker.date.weekday()}'s call`,
  () => `${faker.commerce.productName()} order update`,
  () => `Thoughts on ${faker.company.catchPhrase().toLowerCase()}`,
  () => `Can we move our ${faker.date.weekday()} meeting?`,
  () => `Draft proposal for ${faker.company.name()}`,
  () => `${faker.commerce.department()} budget next quarter`,
  () => `Re-checking the ${faker.commerce.productAdjective().toLowerCase()} rollout`,
  () => `Intro: ${faker.person.fullName()} from ${faker.company.name()}`,
  () => `Invoice ${faker.string.numeric(5)} and next steps`,
  () => `Agenda for the ${faker.company.buzzNoun()} review`,
];

const OPENERS = [
  () => `Hi ${faker.person.firstName()},`,
  () => `Hello ${faker.person.firstName()},`,
  () => `Good morning,`,
  () => `Hey ${faker.person.firstName()},`,
  () => `Dear ${faker.person.firstName()},`,
];

const SENTENCES: (() => string)[] = [
  () => `I wanted to check in on how the ${faker.company.buzzNoun()} work is going on your side.`,
  () =>
    `We are looking at ways to ${faker.company.buzzVerb()} ${faker.company.buzzAdjective()} ${faker.company.buzzNoun()} before the end of the month.`,
  () => `The team liked the idea of a ${faker.company.catchPhrase().toLowerCase()}.`,
  () => `Could you send over the latest numbers for the ${faker.commerce.department().toLowerCase()} team?`,
  () =>
    `${faker.person.firstName()} mentioned that the ${faker.commerce.productName().toLowerCase()} shipment arrived ${faker.date.weekday()}.`,
  () => `I have attached my notes below so we can go through them together.`,
  () => `Let me know if ${faker.date.weekday()} at ${faker.number.int({ min: 9, max: 16 })}:00 works for a short call.`,
  () => `We should be able to ${faker.company.buzzVerb()} the plan once ${faker.company.name()} confirms.`,
  () => `Happy to share what worked for us with ${faker.company.buzzNoun()} last quarter.`,
  () =>
    `The pricing for the ${faker.commerce.productAdjective().toLowerCase()} tier is still open, so feedback is welcome.`,
  () => `Thanks again for the quick turnaround on the ${faker.commerce.product().toLowerCase()} samples.`,
  () => `I think a ${faker.company.buzzAdjective()} approach would save us a few weeks.`,
];

const CLOSINGS = ['Best,', 'Thanks,', 'Kind regards,', 'Cheers,', 'Talk soon,', 'All the best,'];

const REPLIES: (() => string)[] = [
  () => `Thanks for the note, that sounds good to me.`,
  () => `Great, ${faker.date.weekday()} works on my side.`,
  () => `Appreciate the update. I will loop in ${faker.person.firstName()} as well.`,
  () => `Makes sense. Let us pick this up after the ${faker.company.buzzNoun()} review.`,
  () => `Got it, I will send the numbers over by ${faker.date.weekday()}.`,
  () => `Thanks! I had a quick look and it all reads well.`,
];

const MARKER_SHAPES = [
  (c: string) => `Ref. ${c}`,
  (c: string) => `Our reference: ${c}`,
  (c: string) => `Case ${c}`,
  (c: string) => `Ticket #${c}`,
  (c: string) => `Internal no. ${c}`,
];

const ALPHABET = 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789';

/** The marker code of a message id under the deployment's key: 10 characters of the HMAC. */
export function markerCode(key: Buffer, messageId: string): string {
  const digest = createHmac('sha256', key).update(`warmup:${messageId}`).digest();
  let code = '';
  for (let i = 0; i < 10; i += 1) code += ALPHABET[digest[i] % ALPHABET.length];
  return code;
}

/** The marker line of a message (the phrasing is chosen by the HMAC too, so it is stable per message). */
export function markerLine(key: Buffer, messageId: string): string {
  const code = markerCode(key, messageId);
  return MARKER_SHAPES[code.charCodeAt(9) % MARKER_SHAPES.length](code);
}

/** Whether `body` carries the marker of `messageId`: only a holder of the key can tell. */
export function hasMarker(key: Buffer, messageId: string, body: string): boolean {
  return body.includes(markerCode(key, messageId));
}

const escapeHtml = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

function render(paragraphs: string[], signature: string, marker: string): { text: string; html: string | null } {
  const text = [...paragraphs, signature, marker].join('\n\n') + '\n';
  const html =
    Math.random() < 0.5
      ? `<div>${[...paragraphs, signature, marker].map((p) => `<p>${escapeHtml(p).replace('\n', '<br>')}</p>`).join('')}</div>`
      : null;
  return { text, html };
}

/** A new warm-up email; its subject differs from `previousSubject` (the sender's last one). */
export function firstMessage(key: Buffer, messageId: string, previousSubject: string | null): WarmupContent {
  let subject = pick(SUBJECTS)();
  for (let i = 0; i < 5 && subject === previousSubject; i += 1) subject = pick(SUBJECTS)();
  const count = faker.number.int({ min: 2, max: 4 });
  const used = new Set<() => string>();
  const body: string[] = [];
  while (body.length < count) {
    const make = pick(SENTENCES);
    if (used.has(make)) continue;
    used.add(make);
    body.push(make());
  }
  const paragraphs = [
    pick(OPENERS)(),
    body.slice(0, 2).join(' '),
    ...(body.length > 2 ? [body.slice(2).join(' ')] : []),
  ];
  return {
    subject,
    ...render(paragraphs, `${pick(CLOSINGS)}\n${faker.person.firstName()}`, markerLine(key, messageId)),
  };
}

/** A short answer in a warm-up thread (its subject comes from the parent). */
export function replyMessage(key: Buffer, messageId: string): Omit<WarmupContent, 'subject'> {
  return render(
    [pick(OPENERS)(), pick(REPLIES)()],
    `${pick(CLOSINGS)}\n${faker.person.firstName()}`,
    markerLine(key, messageId),
  );
}
