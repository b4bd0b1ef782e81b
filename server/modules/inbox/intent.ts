/**
 * Reply intent: what a person's answer asks for, decided by rules from the reply's own words, in English,
 * German, French and Spanish. Rules rather than a model: they run offline in microseconds, every decision
 * can be explained by the phrase that matched, and the labelled set in test/api/reply-intent.test.ts
 * measures them.
 *
 * The quoted thread and the signature are removed first (node-email-reply-parser, with quote headers and
 * mobile signatures of the four languages added), then the sign-off and everything under it, so the
 * campaign's own words ("reply 'remove' to opt out", "interested in a call?") never decide the answer.
 *
 * Order matters when a reply says several things: a removal request is never outweighed ("not interested,
 * remove me" removes), then wrong person, a refusal, a meeting, interest, a question, and other.
 */
import Parser from 'node-email-reply-parser/lib/Parser';
import type { components } from '../../../generated/api';

export type ReplyIntent = components['schemas']['ReplyIntent'];
export type Referral = components['schemas']['ReplyReferral'];

export const REPLY_INTENTS: ReplyIntent[] = [
  'interested',
  'meetingRequest',
  'notInterested',
  'wrongPerson',
  'unsubscribeRequest',
  'question',
  'other',
];

/** The library's quote headers plus the forms it lacks (German without "um", Outlook blocks, "Original Message" rules). */
const QUOTE_HEADERS: RegExp[] = [
  /^\s*(On(?:(?!.*On\b|\bwrote:)[\s\S])+wrote:)$/m,
  /^\s*(Le\s[\s\S]{1,200}?a\s+écrit\s?:)$/m,
  /^\s*(El\s[\s\S]{1,200}?escribi(ó|eron)\s?:)$/m,
  /^\s*(Am\s[\s\S]{1,200}?schrieb[\s\S]{0,200}?:)$/m,
  /^(.+\s<.+>\sschrieb:)$/m,
  /^\s*((From|Von|De|Da)\s?:.+\s?(\[|<).+(\]|>))/mu,
  /^\s*((From|Von|De)\s?:\s.+)$/m,
  /^\s*(-{2,}\s*(Original Message|Ursprüngliche Nachricht|Message d'origine|Mensaje original|Forwarded message|Weitergeleitete Nachricht)\s*-{2,})$/im,
];

/** Separators and mobile signatures ("Sent from my iPhone" in the four languages). */
const SIGNATURE =
  /^\s*--\s*$|^\s*__+\s*$|^-- $|^\s*(Sent from my|Sent from Outlook|Get Outlook for|Von meinem|Gesendet von|Envoyé de mon|Envoyé depuis mon|Enviado desde mi)\b.*$/i;

/** A line that is only a sign-off: it and everything under it is the signature. */
const SIGN_OFF =
  /^(best( regards| wishes)?|kind regards|warm regards|regards|cheers|thanks( again)?|thank you|many thanks|all the best|sincerely|mit freundlichen grüßen|mfg|viele grüße|beste grüße|liebe grüße|freundliche grüße|herzliche grüße|grüße|gruß|danke|vielen dank|cordialement|bien cordialement|bien à vous|salutations|bonne journée|merci|merci beaucoup|saludos|un saludo|saludos cordiales|atentamente|gracias|muchas gracias|un abrazo)\s*[,.!]*\s*$/i;

/** The person's own words: no quoted thread, no signature, no sign-off and what follows it. */
export function visibleReply(text: string): string {
  const normalized = text.replace(/\r\n?/g, '\n');
  const visible = new Parser(SIGNATURE, undefined, QUOTE_HEADERS).parse(normalized).getVisibleText();
  const lines = visible.split('\n');
  const out: string[] = [];
  for (const line of lines) {
    const trimmed = line.trim();
    if (trimmed.startsWith('>')) continue;
    // A sign-off ends the reply, unless it is the only thing said so far ("Thanks!" alone is the reply).
    if (SIGN_OFF.test(trimmed) && out.some((l) => l.trim() !== '')) break;
    out.push(line);
  }
  return out.join('\n').trim();
}

/** JavaScript's \\b knows ASCII letters only ("intéressé," has no \\b after the é): rules get a Unicode one. */
const WORD_EDGE = '(?:(?<=[\\p{L}\\p{N}])(?![\\p{L}\\p{N}])|(?<![\\p{L}\\p{N}])(?=[\\p{L}\\p{N}]))';
const unicode = (rules: RegExp[]) => rules.map((r) => new RegExp(r.source.replace(/\\b/g, WORD_EDGE), 'u'));

const UNSUBSCRIBE = unicode([
  // English
  /\bunsubscribe\b/,
  /\bremove (me|us|my (e-?mail|address|details|data))\b/,
  /\btake (me|us|my (e-?mail|address)) off\b/,
  /\b(opt|opting) (me )?out\b/,
  /\bstop (e-?mailing|emailing|contacting|writing|sending|messaging)\b/,
  /\b(do not|don't|never) (contact|e-?mail|email|write to|message) (me|us)\b/,
  /\bno (more|further) (e-?mails|emails|messages)\b/,
  /\b(delete|erase) (my|our) (data|details|e-?mail|information|address)\b/,
  /\boff (your|the) (mailing )?list\b/,
  /\bout of your (list|database|system)\b/,
  // German
  /abmelden/,
  /austragen/,
  /\btragen sie (mich|uns) (bitte )?(\S+ ){0,4}aus\b/,
  /\baus (ihrem|dem|eurem|deinem) verteiler\b/,
  /keine (weiteren |e-?mails |nachrichten )*(e-?mails|nachrichten|mails)\b/,
  /\b(löschen|entfernen) sie (bitte )?(mich|meine (daten|adresse|e-?mail))/,
  /\bmeine daten (löschen|entfernen)/,
  /nicht (mehr|wieder) (kontaktieren|anschreiben|schreiben)/,
  /\b(streichen|nehmen) sie mich\b/,
  /\bkontaktieren sie mich nicht\b/,
  // French
  /désinscri/,
  /désabonn/,
  /\bretirez[- ](moi|nous|mon adresse)\b/,
  /\b(supprimez|effacez)[- ](moi|mes (données|coordonnées)|mon adresse)\b/,
  /\bne (plus |pas )?(me|nous) (plus |pas |re)?(contacter|écrire|recontacter|envoyer)\b/,
  /\bne m'écrivez plus\b/,
  /\bne me contactez plus\b/,
  /\bplus (aucun|d')e?-?mails?\b/,
  /\bde votre liste\b/,
  /\barrêtez (de m'|de nous |vos )(écrire|envoyer|e-?mails|mails|messages)/,
  // Spanish
  /\bdar(me|nos)? de baja\b/,
  /\bden(me)? de baja\b/,
  /\bdadme de baja\b/,
  /\b(elimínenme|eliminenme|elimíname|quítenme|quitenme|sáquenme|saquenme)\b/,
  /\b(eliminen|borren|supriman) (mis datos|mi (correo|dirección|email))\b/,
  /\bno (me|nos) (vuelvan a |vuelva a )?(escriban|escriba|contacten|contacte|envíen|envíe)\b/,
  /\bno (me|nos) (vuelvan?|vuelva) a (escribir|contactar|enviar)/,
  /\bdejen de (escribirme|enviarme|contactarme|escribir|enviar)\b/,
  /\b(de|desde) su lista\b/,
  /\bno quiero recibir (más )?(correos|emails|mensajes)\b/,
]);

const WRONG_PERSON = unicode([
  // English
  /\bwrong (person|contact|guy|department)\b/,
  /\bnot the (right|correct|best|appropriate) (person|contact|one)\b/,
  /\b(no longer|not) (works?|working) (here|at|for|with)\b/,
  /\b(has|have) left the company\b/,
  /\bleft (the company|[a-z]+ (in|last))\b/,
  /\bi'?m not (responsible|in charge|the decision maker)\b/,
  /\bnot my (area|department|responsibility)\b/,
  /\b(you should|please|better to|you'd better|you may want to|you might want to|try) (reach out to|contact|talk to|speak (to|with)|email|write to|get in touch with)\b/,
  /\b(is|would be) the (right|better|best) person\b/,
  /\bhandles (this|that|these)\b/,
  // German
  /nicht (der|die) (richtige|passende) (ansprechpartner|ansprechpartnerin|person|kontakt)/,
  /nicht zuständig/,
  /\bwenden sie sich (bitte )?an\b/,
  /\barbeitet nicht mehr\b/,
  /\b(hat|ist) (das unternehmen|die firma) verlassen\b/,
  /\bzuständig ist\b/,
  /\bist (dafür )?zuständig\b/,
  /\bnicht mehr (bei|im unternehmen|in der firma)\b/,
  // French
  /pas (la|le) (bonne|bon) (personne|interlocuteur|interlocutrice|contact)/,
  /\bne (suis|sommes) pas (en charge|responsable|concerné)/,
  /\b(contactez|écrivez à|adressez-vous à|voyez avec)\b/,
  /\bne travaille plus\b/,
  /\ba quitté (l'entreprise|la société)\b/,
  /\bs'occupe de (ce sujet|cela|ces sujets|ça)\b/,
  /\best (la personne|l'interlocuteur) (à contacter|adéquat)/,
  // Spanish
  /no soy (la persona|el contacto|quien)/,
  /persona (adecuada|indicada|correcta)/,
  /\bno (trabaja|trabajo) (aquí|ya|más)\b/,
  /\bya no (trabaja|está) (aquí|en la empresa|con nosotros)\b/,
  /\bcontacte (con|a)\b/,
  /\b(escríbale|escribale|escriba) a\b/,
  /\bse encarga (de eso|de esto|de ese tema)\b/,
  /\bdeberían? (hablar|contactar) con\b/,
  /\bno (es|está) (de )?mi (área|competencia)\b/,
]);

const NOT_INTERESTED = unicode([
  // English
  /\bnot (interested|a fit|a good fit|a priority|looking|in the market|for us|relevant)\b/,
  /\b(isn't|is not|not) (a|our) (priority|focus)\b/,
  /\bno (thanks|thank you|interest|need)\b/,
  /\bwe'?re (good|all set|fine|covered)\b/,
  /\b(already|happy with) (have|use|using|work with|working with|our)\b/,
  /\bdon'?t (need|want) (it|this|that|your|any)\b/,
  /\bno,? (thanks|thank you)\b/,
  /\bplease pass\b/,
  /\bwe('ll| will) pass\b/,
  /\bnot (at this time|right now|now)\b/,
  /\bdecline\b/,
  /\bnot going to (move|go) forward\b/,
  // German
  /\bkein(e|en)? (interesse|bedarf)\b/,
  /\bnicht interessiert\b/,
  /\bbrauchen (wir|ich) nicht\b/,
  /\bhaben (bereits|schon) (einen|eine|ein)\b/,
  /\bnein,? danke\b/,
  /\bkein thema für uns\b/,
  // French
  /\bpas intéressée?s?\b/,
  /\bne (m'|nous )intéresse pas\b/,
  /\bnon,? merci\b/,
  /\bpas (besoin|pour nous|le moment|de besoin)\b/,
  /\b(avons|ai) déjà (un|une|des)\b/,
  /\bpas pertinent\b/,
  // Spanish
  /\bno (me|nos) interesa\b/,
  /\bno (estoy|estamos) interesad[oa]s?\b/,
  /\bno,? gracias\b/,
  /\bya (tenemos|trabajamos con|contamos con)\b/,
  /\bno (necesitamos|lo necesitamos|es para nosotros)\b/,
  /\bno es (el momento|prioridad)\b/,
]);

const MEETING = unicode([
  // English
  /\b(schedule|book|set up|arrange|find) (a |some )?(time|call|meeting|demo|chat)\b/,
  /\b(call|meet|chat|talk|speak) (on|next|tomorrow|this|monday|tuesday|wednesday|thursday|friday|at \d)/,
  /\b(let'?s|can we|could we|shall we) (talk|meet|chat|speak|hop on|jump on|have a call|set up)\b/,
  /\bcalendly\b/,
  /\bsend (me |us )?(an? )?(calendar )?invite\b/,
  /\b(free|available) (on|next|tomorrow|this|monday|tuesday|wednesday|thursday|friday|at)\b/,
  /\bhow about (monday|tuesday|wednesday|thursday|friday|tomorrow|next)\b/,
  /\bgive me a call\b/,
  /\bcall me\b/,
  /\bdoes (monday|tuesday|wednesday|thursday|friday|tomorrow|next week) work\b/,
  /\b(a|the) demo\b/,
  // German
  /termin/,
  /\btelefonieren\b/,
  /\brufen sie (mich|uns) (\S+ ){0,3}an\b/,
  /\b(gespräch|call|telefonat|meeting|treffen)( kurz)? (vereinbaren|ausmachen|einplanen)\b/,
  /kalender/,
  /\brufen sie (mich )?an\b/,
  /\b(montag|dienstag|mittwoch|donnerstag|freitag|morgen|nächste woche) (um|passt|vormittag|nachmittag)/,
  /\bpasst (ihnen|dir|es) (am|um|nächste)/,
  /\b(kurzes|kurzen) (gespräch|telefonat|call|austausch)\b/,
  // French
  /\brendez-vous\b/,
  /\b(un|d'un|petit) (appel|échange téléphonique|call)\b/,
  /\bcréneau\b/,
  /\b(réunion|visio)\b/,
  /\bon (peut|pourrait) (s'appeler|échanger|en parler)\b/,
  /\bappelez-moi\b/,
  /\bdisponible (lundi|mardi|mercredi|jeudi|vendredi|demain|la semaine)\b/,
  /\b(lundi|mardi|mercredi|jeudi|vendredi|demain) (à|vers|matin|après-midi) /,
  // Spanish
  /\breuni[oó]n\b/,
  /\bllamada\b/,
  /\bagendar\b/,
  /\b(disponible|libre) (el|este|mañana|la próxima)\b/,
  /\bhablamos (el|este|mañana)\b/,
  /\b(una|la) cita\b/,
  /\bllámame\b|\bllámeme\b/,
  /\b(lunes|martes|miércoles|jueves|viernes|mañana) (a las|por la)\b/,
  /\bvideollamada\b/,
]);

const INTERESTED = unicode([
  // English
  /\binterested\b/,
  /\bsounds (good|great|interesting|promising|like)\b/,
  /\btell me more\b/,
  /\b(send|share) (me |us )?(more )?(info|information|details|a deck|the deck|pricing|a proposal)\b/,
  /\bkeen\b/,
  /\b(i'?d|we'?d) (love|like) to (learn|hear|know|see|try)\b/,
  /\byes,? please\b/,
  /\blet'?s do it\b/,
  /\bcount (me|us) in\b/,
  /\bcurious\b/,
  /\bthis (looks|seems) (great|interesting|relevant)\b/,
  /\bwe('re| are) (open|looking)\b/,
  // German
  /\binteressiert\b/,
  /\binteresse\b/,
  /\bklingt (gut|spannend|interessant|vielversprechend)\b/,
  /\bgerne? (mehr|weitere)\b/,
  /\b(schicken|senden) sie (mir|uns) (gerne )?(mehr |weitere )?(infos|informationen|unterlagen|details)\b/,
  /\bspannend\b/,
  // French
  /\bintéressée?s?\b/,
  /\bm'intéresse\b|\bnous intéresse\b/,
  /\bvolontiers\b/,
  /\b(envoyez|transmettez)-(moi|nous) (plus d'|des |davantage d')?(informations|infos|détails|documentation)\b/,
  /\ben savoir plus\b/,
  /\bça a l'air (intéressant|bien)\b/,
  // Spanish
  /\bme interesa\b|\bnos interesa\b/,
  /\binteresad[oa]s?\b/,
  /\bsuena (bien|interesante)\b/,
  /\bmás información\b/,
  /\bcuénte(me|nos) más\b/,
  /\benvíe(me|nos) (más )?(información|detalles)\b/,
  /\bme gustaría (saber|conocer)\b/,
]);

const QUESTION = unicode([
  /\?/,
  /¿/,
  /\b(how much|what does|what is|what's|how does|how do|do you|does it|can you|could you|is there|are there|which)\b/,
  /\b(wie viel|was kostet|wie funktioniert|gibt es|können sie|haben sie)\b/,
  /\b(combien|comment|est-ce que|quel|quelle|pouvez-vous)\b/,
  /\b(cuánto|cómo|qué|cuál|pueden|puede usted)\b/,
]);

const EMAIL_ADDRESS = /[a-z0-9._%+-]+@[a-z0-9.-]+\.[a-z]{2,}/i;
/** What points to the right person ("contact", "wenden Sie sich an Herrn", "contacte con"), matched on lower-cased text. */
const REFERRAL_POINTER =
  /(?:reach out to|kontaktieren sie|schreiben sie an|contact|talk to|speak (?:to|with)|email|write to|get in touch with|wenden sie sich (?:bitte )?an|zuständig ist|contactez|écrivez à|adressez-vous à|voyez avec|contacte (?:con|a)|escríbale a|escribale a|hablar con|contactar con)\s+(?:(?:herrn|herr|frau|mr\.?|mrs\.?|ms\.?|m\.|mme|monsieur|madame|el señor|la señora|señor|señora|our|my|unserem|unserer|notre|nuestro|nuestra|colleague|kollegen|kollegin|collègue|compañer[oa]|cto|ceo|coo|cfo|head of [a-z]+|plutôt|instead|directly|lieber|stattdessen|mejor|directamente)[,:]?\s+)*/g;
/** The name right after the pointer: one to three capitalised words, read from the original text. */
const NAME_AT = /^(\p{Lu}[\p{L}'-]+(?:\s+\p{Lu}[\p{L}'-]+){0,2})/u;

export interface IntentDecision {
  intent: ReplyIntent;
  referral: Referral | null;
}

const matches = (text: string, rules: RegExp[]) => rules.some((r) => r.test(text));

/** The intent of a reply from its text part; `senderEmail` is left out of referrals. */
export function decideIntent(replyText: string, senderEmail?: string | null): IntentDecision {
  const visible = visibleReply(replyText);
  const text = visible.toLowerCase().replace(/[’`´]/g, "'").replace(/\s+/g, ' ');
  if (!text) return { intent: 'other', referral: null };
  if (matches(text, UNSUBSCRIBE)) return { intent: 'unsubscribeRequest', referral: null };
  if (matches(text, WRONG_PERSON)) return { intent: 'wrongPerson', referral: referralIn(visible, senderEmail) };
  if (matches(text, NOT_INTERESTED)) return { intent: 'notInterested', referral: null };
  if (matches(text, MEETING)) return { intent: 'meetingRequest', referral: null };
  if (matches(text, INTERESTED)) return { intent: 'interested', referral: null };
  if (matches(text, QUESTION)) return { intent: 'question', referral: null };
  return { intent: 'other', referral: null };
}

function referralIn(visible: string, senderEmail?: string | null): Referral | null {
  const sender = senderEmail?.toLowerCase();
  const email =
    [...visible.matchAll(new RegExp(EMAIL_ADDRESS.source, 'gi'))]
      .map((m) => m[0].toLowerCase().replace(/\.$/, ''))
      .find((e) => e !== sender) ?? null;
  const flat = visible.replace(/\s+/g, ' ');
  let name: string | null = null;
  for (const m of flat.toLowerCase().matchAll(REFERRAL_POINTER)) {
    name = NAME_AT.exec(flat.slice(m.index + m[0].length))?.[1] ?? null;
    if (name) break;
  }
  if (!email && !name) return null;
  return { name: name ? name.slice(0, 200) : null, email: email ? email.slice(0, 320) : null };
}
