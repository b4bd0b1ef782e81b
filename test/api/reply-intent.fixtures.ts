/**
 * A labelled set of replies written for the intent tests: several phrasings per intent and language (English,
 * German, French, Spanish), each sent with a signature and the quoted campaign email in that language's mail
 * client format. The quoted campaign text deliberately contains words of other intents ("interested",
 * "call", "remove", "unsubscribe"), so only a reply whose quote and signature are stripped can be right.
 */
import type { ReplyIntent } from '../../server/modules/inbox/intent';

export type Lang = 'en' | 'de' | 'fr' | 'es';

export interface LabelledReply {
  lang: Lang;
  intent: ReplyIntent;
  body: string;
  /** For wrongPerson replies that name someone. */
  referral?: { name?: string; email?: string };
}

type Phrasings = Record<ReplyIntent, (string | [string, { name?: string; email?: string }])[]>;

const en: Phrasings = {
  interested: [
    'Sounds interesting. Tell me more.',
    'Hi Jane, yes, this is relevant for us. Please send more information.',
    "I'd love to learn more about how this works for teams like ours.",
    'Interested! Send me the deck.',
    "We're looking at exactly this problem right now, so the timing is good. Share some details?",
    'Yes please, this could be useful for our SDR team.',
    'Curious about this. What you describe sounds like a fit.',
    'Thanks for reaching out, this looks great. Keen to see more.',
  ],
  meetingRequest: [
    "Let's talk. Does Tuesday at 3pm work for you?",
    'Happy to chat, can we set up a call next week?',
    'Sure, book a time here: calendly.com/tom-baker/30min',
    "I'm free on Thursday afternoon, send me an invite.",
    'Give me a call tomorrow morning, my number is below.',
    'How about Monday at 10? We can do a quick demo.',
    "Let's schedule a meeting with my team to go through it.",
    'Could we meet next Wednesday? I will bring our head of ops.',
  ],
  notInterested: [
    'Not interested, thanks.',
    "No thanks, we're all set.",
    'We already use a similar tool and are happy with it.',
    "This isn't a priority for us this year.",
    "Thanks, but we'll pass.",
    "We don't need this at the moment.",
    'Not a fit for our business, sorry.',
    'No thank you.',
  ],
  wrongPerson: [
    [
      "I'm not the right person for this. Please reach out to Maria Lopez (maria.lopez@globex.com).",
      { name: 'Maria Lopez', email: 'maria.lopez@globex.com' },
    ],
    ['Wrong person, sorry. You should talk to our CTO, David Kim.', { name: 'David Kim' }],
    ['Tom no longer works here. Try peter.hall@globex.com instead.', { email: 'peter.hall@globex.com' }],
    "I'm not responsible for purchasing. Contact Sarah Jones in procurement.",
    'Wrong contact - this is handled by our marketing department.',
    ['Tom has left the company. Please email sales-ops@globex.com.', { email: 'sales-ops@globex.com' }],
    'Not my area. Our IT manager handles these things.',
    ['You may want to get in touch with Laura Chen, she is the right person.', { name: 'Laura Chen' }],
  ],
  unsubscribeRequest: [
    'Please remove me from your list.',
    'Unsubscribe',
    'Stop emailing me.',
    'Take me off your mailing list, thanks.',
    "Not interested. Don't contact me again.",
    'Please delete my data and do not write to me again.',
    'Opt me out of these emails please.',
    'No more emails please.',
  ],
  question: [
    'How much does it cost for a team of 12?',
    'Does it integrate with HubSpot?',
    'What does the onboarding look like?',
    'Is there a free trial?',
    'Can you tell me which customers in logistics use it?',
    'How does pricing work, per seat or per account?',
    'Do you support SSO with Okta?',
    'Where is the data hosted?',
  ],
  other: [
    "I'm out on parental leave until March, will read this then.",
    'Got it.',
    'Forwarding this to my colleague.',
    'Thanks for the email.',
    'Received, thank you.',
    'Noted.',
    'Happy holidays to you too!',
    'See attached.',
  ],
};

const de: Phrasings = {
  interested: [
    'Klingt spannend, schicken Sie mir gerne mehr Informationen.',
    'Das klingt interessant. Erzählen Sie mehr!',
    'Hallo Jane, grundsätzlich haben wir Interesse.',
    'Ja, das könnte für uns passen. Senden Sie mir gerne weitere Unterlagen.',
    'Wir sind interessiert.',
    'Klingt gut! Gerne mehr dazu.',
    'Das Thema ist für uns gerade sehr relevant, gerne weitere Details.',
    'Spannend, genau das suchen wir.',
  ],
  meetingRequest: [
    'Lassen Sie uns telefonieren. Passt Ihnen Dienstag um 14 Uhr?',
    'Gerne, schlagen Sie einen Termin vor.',
    'Können wir nächste Woche ein kurzes Gespräch vereinbaren?',
    'Rufen Sie mich morgen an, die Nummer steht unten.',
    'Mittwoch um 10 Uhr würde mir passen.',
    'Schicken Sie mir eine Kalendereinladung für Donnerstag.',
    'Gern ein kurzes Telefonat, wann haben Sie Zeit?',
    'Lassen Sie uns einen Termin für eine Demo ausmachen.',
  ],
  notInterested: [
    'Kein Interesse, danke.',
    'Nein danke.',
    'Wir sind nicht interessiert.',
    'Das brauchen wir nicht.',
    'Wir haben bereits einen Anbieter und sind zufrieden.',
    'Aktuell kein Bedarf.',
    'Danke, aber das ist kein Thema für uns.',
    'Leider kein Interesse.',
  ],
  wrongPerson: [
    [
      'Ich bin nicht der richtige Ansprechpartner. Wenden Sie sich bitte an Herrn Klaus Weber (k.weber@globex.de).',
      { name: 'Klaus Weber', email: 'k.weber@globex.de' },
    ],
    'Dafür bin ich nicht zuständig.',
    ['Frau Müller arbeitet nicht mehr bei uns. Schreiben Sie an info@globex.de.', { email: 'info@globex.de' }],
    'Zuständig ist unser Einkauf.',
    ['Wenden Sie sich an Julia Schneider, sie ist für den Vertrieb zuständig.', { name: 'Julia Schneider' }],
    'Herr Braun hat das Unternehmen verlassen.',
    'Da sind Sie bei mir falsch, ich bin nicht zuständig.',
    ['Ich bin nicht die richtige Person, bitte kontaktieren Sie stattdessen Stefan Wolf.', { name: 'Stefan Wolf' }],
  ],
  unsubscribeRequest: [
    'Bitte nehmen Sie mich aus Ihrem Verteiler.',
    'Abmelden.',
    'Bitte tragen Sie mich aus.',
    'Ich möchte keine weiteren E-Mails erhalten.',
    'Löschen Sie bitte meine Daten.',
    'Kontaktieren Sie mich nicht mehr.',
    'Bitte streichen Sie mich von Ihrer Liste.',
    'Kein Interesse, bitte keine E-Mails mehr.',
  ],
  question: [
    'Was kostet das für 20 Nutzer?',
    'Gibt es eine Testversion?',
    'Wie funktioniert die Integration mit Salesforce?',
    'Wo werden die Daten gespeichert?',
    'Haben Sie Referenzkunden in der Logistik?',
    'Ist das DSGVO-konform?',
    'Wie lange dauert die Einführung?',
    'Können Sie auch mehrere Postfächer verwalten?',
  ],
  other: [
    'Ich bin bis Ende Januar in Elternzeit.',
    'Danke für Ihre Nachricht.',
    'Erhalten.',
    'Ich leite das intern weiter.',
    'Frohe Weihnachten!',
    'Anbei die Unterlagen.',
    'Ok.',
    'Habe ich gelesen.',
  ],
};

const fr: Phrasings = {
  interested: [
    'Ça a l’air intéressant, envoyez-moi plus d’informations.',
    'Oui, cela nous intéresse.',
    'Je suis intéressé, pouvez-vous m’en dire plus ?',
    'Volontiers, envoyez-moi la documentation.',
    "J'aimerais en savoir plus.",
    'Bonjour Jane, le sujet nous intéresse beaucoup.',
    'Intéressant ! Transmettez-moi des détails.',
    'Nous sommes intéressés par votre offre.',
  ],
  meetingRequest: [
    'On peut s’appeler mardi à 14h ?',
    'Proposez-moi un créneau la semaine prochaine.',
    'Je suis disponible jeudi après-midi pour un appel.',
    'Prenons rendez-vous pour une démo.',
    'Appelez-moi demain matin.',
    'Organisons une réunion avec mon équipe.',
    'Un petit appel lundi vers 10h ?',
    'Envoyez-moi une invitation pour une visio vendredi.',
  ],
  notInterested: [
    'Pas intéressé, merci.',
    'Non merci.',
    'Ça ne nous intéresse pas.',
    'Nous avons déjà un outil similaire.',
    'Pas besoin pour le moment.',
    'Nous ne sommes pas intéressés.',
    'Merci mais ce n’est pas pertinent pour nous.',
    'Non, merci, pas pour nous.',
  ],
  wrongPerson: [
    [
      'Je ne suis pas la bonne personne, contactez plutôt Marie Dubois (marie.dubois@globex.fr).',
      { name: 'Marie Dubois', email: 'marie.dubois@globex.fr' },
    ],
    'Je ne suis pas en charge de ce sujet.',
    ['M. Martin ne travaille plus chez nous. Écrivez à contact@globex.fr.', { email: 'contact@globex.fr' }],
    ['Adressez-vous à Claire Petit, elle s’occupe de ce sujet.', { name: 'Claire Petit' }],
    'Ce n’est pas le bon interlocuteur, voyez avec le service achats.',
    'Sophie a quitté l’entreprise.',
    'Je ne suis pas le bon contact pour cela.',
    ['Voyez avec Luc Bernard, il est la personne à contacter.', { name: 'Luc Bernard' }],
  ],
  unsubscribeRequest: [
    'Merci de me désinscrire.',
    'Retirez-moi de votre liste.',
    'Ne me contactez plus.',
    'Je souhaite me désabonner.',
    'Supprimez mes données s’il vous plaît.',
    'Arrêtez de m’écrire.',
    'Plus d’e-mails svp.',
    'Pas intéressé, merci de ne plus me contacter.',
  ],
  question: [
    'Combien cela coûte-t-il pour 10 utilisateurs ?',
    'Est-ce compatible avec Salesforce ?',
    'Où sont hébergées les données ?',
    'Avez-vous une version d’essai ?',
    'Comment se passe la mise en place ?',
    'Quel est le délai de déploiement ?',
    'Pouvez-vous gérer plusieurs boîtes mail ?',
    'Est-ce conforme au RGPD ?',
  ],
  other: [
    'Je suis en congé maternité jusqu’en mars.',
    'Bien reçu.',
    'Je transmets à mon collègue.',
    'Merci pour votre message.',
    'Bonnes fêtes !',
    'Ci-joint le document.',
    'Ok, noté.',
    'Lu.',
  ],
};

const es: Phrasings = {
  interested: [
    'Suena interesante, envíeme más información.',
    'Me interesa, cuénteme más.',
    'Sí, nos interesa mucho.',
    'Estamos interesados en su propuesta.',
    'Me gustaría saber más sobre el producto.',
    'Suena bien, ¿me manda más detalles? Nos interesa.',
    'Interesante. Envíenos más información.',
    'Hola Jane, estoy interesado.',
  ],
  meetingRequest: [
    '¿Podemos tener una llamada el martes a las 11?',
    'Agendemos una reunión la próxima semana.',
    'Estoy disponible el jueves por la tarde para hablar.',
    'Llámeme mañana por la mañana.',
    'Hablamos el lunes, ¿le va bien?',
    'Me gustaría una videollamada con mi equipo.',
    'Pongamos una cita para ver una demo.',
    'Viernes a las 10 me viene bien para una reunión.',
  ],
  notInterested: [
    'No me interesa, gracias.',
    'No, gracias.',
    'No estamos interesados.',
    'Ya tenemos una herramienta para eso.',
    'No lo necesitamos por ahora.',
    'No es el momento para nosotros.',
    'Gracias, pero no es para nosotros.',
    'No nos interesa.',
  ],
  wrongPerson: [
    [
      'No soy la persona adecuada. Contacte con Ana García (ana.garcia@globex.es).',
      { name: 'Ana García', email: 'ana.garcia@globex.es' },
    ],
    'Ese tema no es de mi área.',
    ['Carlos ya no trabaja aquí. Escríbale a ventas@globex.es.', { email: 'ventas@globex.es' }],
    ['Debería hablar con Lucía Torres, ella se encarga de eso.', { name: 'Lucía Torres' }],
    'No soy quien decide sobre esto.',
    'Se equivocó de persona, no es mi competencia.',
    'Pedro ya no está en la empresa.',
    ['No soy el contacto correcto; contacte a Javier Ruiz.', { name: 'Javier Ruiz' }],
  ],
  unsubscribeRequest: [
    'Por favor, denme de baja.',
    'Quiero darme de baja de su lista.',
    'No me vuelvan a escribir.',
    'Elimínenme de su lista.',
    'Dejen de enviarme correos.',
    'Borren mis datos, por favor.',
    'No quiero recibir más correos.',
    'No me interesa, y no me escriban más.',
  ],
  question: [
    '¿Cuánto cuesta para un equipo de 10 personas?',
    '¿Se integra con HubSpot?',
    '¿Dónde se alojan los datos?',
    '¿Tienen una prueba gratuita?',
    '¿Cómo funciona la facturación?',
    '¿Qué clientes tienen en el sector logístico?',
    '¿Cumple con el RGPD?',
    '¿Cuál es el plazo de implementación?',
  ],
  other: [
    'Estoy de baja por maternidad hasta marzo.',
    'Recibido.',
    'Se lo reenvío a mi compañero.',
    'Gracias por su mensaje.',
    '¡Felices fiestas!',
    'Adjunto el documento.',
    'Ok.',
    'Leído.',
  ],
};

/** The campaign email as each language's mail client quotes it: the words of every intent are in there. */
const QUOTES: Record<Lang, string[]> = {
  en: [
    'On Mon, Nov 23, 2026 at 10:00 AM Jane Doe <jane@acme-mail.io> wrote:\n> Hi Tom, would you be interested in a quick call next week?\n> If this is not relevant, reply "remove" and I will take you off my list.\n> Jane',
    '-----Original Message-----\nFrom: Jane Doe <jane@acme-mail.io>\nSent: Monday, November 23, 2026 10:00 AM\nTo: Tom Baker <tom@globex.com>\nSubject: Quick question\n\nHi Tom, are you interested in a demo? Let me know if you are not interested or want to unsubscribe.',
  ],
  de: [
    'Am 23.11.2026 um 10:00 schrieb Jane Doe <jane@acme-mail.io>:\n> Hallo Anna, hätten Sie Interesse an einem kurzen Termin?\n> Falls nicht, antworten Sie mit "abmelden".',
    'Von: Jane Doe <jane@acme-mail.io>\nGesendet: Montag, 23. November 2026 10:00\nAn: Anna Schmidt <anna@globex.de>\nBetreff: Kurze Frage\n\nHallo Anna, sind Sie interessiert? Wenn Sie keine E-Mails mehr möchten, sagen Sie Bescheid.',
  ],
  fr: [
    'Le lun. 23 nov. 2026 à 10:00, Jane Doe <jane@acme-mail.io> a écrit :\n> Bonjour Paul, seriez-vous intéressé par un appel mardi ?\n> Sinon, répondez "désinscrire".',
    'De : Jane Doe <jane@acme-mail.io>\nEnvoyé : lundi 23 novembre 2026 10:00\nÀ : Paul Martin <paul@globex.fr>\nObjet : Petite question\n\nBonjour Paul, un rendez-vous vous intéresserait ? Si vous n’êtes pas intéressé, dites-le-moi.',
  ],
  es: [
    'El lun, 23 nov 2026 a las 10:00, Jane Doe (<jane@acme-mail.io>) escribió:\n> Hola Ana, ¿le interesaría una reunión la próxima semana?\n> Si no, responda "baja" y le daré de baja.',
    'De: Jane Doe <jane@acme-mail.io>\nEnviado: lunes, 23 de noviembre de 2026 10:00\nPara: Ana García <ana@globex.es>\nAsunto: Pregunta rápida\n\nHola Ana, ¿está interesada en una llamada? Si no le interesa, dígamelo.',
  ],
};

const SIGNATURES: Record<Lang, string[]> = {
  en: [
    'Best regards,\nTom Baker\nHead of Sales | Globex\n+1 555 0100',
    'Thanks,\nTom',
    '--\nTom Baker\nGlobex Inc. - Interested in logistics? Visit globex.com',
    'Sent from my iPhone',
  ],
  de: [
    'Mit freundlichen Grüßen\nAnna Schmidt\nLeiterin Vertrieb\nGlobex GmbH',
    'Viele Grüße\nAnna',
    '--\nAnna Schmidt | Globex GmbH | Tel. +49 30 1234567',
    'Von meinem iPhone gesendet',
  ],
  fr: [
    'Cordialement,\nPaul Martin\nDirecteur commercial, Globex',
    'Bien à vous,\nPaul',
    '--\nPaul Martin - Globex SAS - 01 23 45 67 89',
    'Envoyé de mon iPhone',
  ],
  es: [
    'Saludos cordiales,\nAna García\nDirectora de Ventas | Globex',
    'Un saludo,\nAna',
    '--\nAna García · Globex S.L. · +34 91 123 45 67',
    'Enviado desde mi iPhone',
  ],
};

/** Every phrasing, each with one signature and one quoted thread of its language (rotating through them). */
export function labelledReplies(): LabelledReply[] {
  const out: LabelledReply[] = [];
  const sets: [Lang, Phrasings][] = [
    ['en', en],
    ['de', de],
    ['fr', fr],
    ['es', es],
  ];
  for (const [lang, set] of sets) {
    let n = 0;
    for (const [intent, phrasings] of Object.entries(set) as [ReplyIntent, Phrasings[ReplyIntent]][]) {
      for (const p of phrasings) {
        const [text, referral] = typeof p === 'string' ? [p, undefined] : p;
        const signature = SIGNATURES[lang][n % SIGNATURES[lang].length];
        const quote = QUOTES[lang][Math.floor(n / SIGNATURES[lang].length) % QUOTES[lang].length];
        n += 1;
        out.push({ lang, intent, body: `${text}\n\n${signature}\n\n${quote}\n`, referral });
      }
    }
  }
  return out;
}
