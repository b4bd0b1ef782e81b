/** Prompts that chain tools for work an agent is often asked to do. Each names the tools, in order. */
import type { GetPromptResult, Prompt } from '@modelcontextprotocol/sdk/types.js';

interface Recipe extends Prompt {
  text: (args: Record<string, string>) => string;
}

const RECIPES: Recipe[] = [
  {
    name: 'setup-campaign-from-csv',
    title: 'Set up a campaign from a CSV of contacts',
    description: 'Create a draft campaign, its first step and accounts, and import the contacts of a CSV into it.',
    arguments: [
      { name: 'csv', description: 'The contacts as CSV, with a header row (email, firstName, ...).', required: true },
      { name: 'campaignName', description: 'The campaign name (else one is chosen from the CSV).' },
    ],
    text: ({ csv, campaignName }) =>
      [
        `Set up an outreach campaign${campaignName ? ` named "${campaignName}"` : ''} for the contacts below.`,
        '1. Read the guide resource guide://sequences for template variables and delays.',
        '2. createCampaign (pass an idempotencyKey, and reuse it if you retry) with a name and a schedule in the',
        "   contacts' time zone; keep the campaign id from the answer.",
        '3. createSequenceSteps with a first email that uses {{firstName | there}} and {{companyName}}.',
        '4. listAccounts, then setCampaignAccounts with the active accounts.',
        '5. jobContactImport with the campaign id and the rows below as JSON contacts (one per CSV row, the',
        '   header names as fields, other columns as customVariables); poll jobGet until the job is done and',
        '   read jobResults for rows that were skipped and why.',
        '6. Report what was created and what is missing before launchCampaign; do not launch without asking.',
        '',
        'CSV:',
        csv,
      ].join('\n'),
  },
  {
    name: 'summarise-replies-today',
    title: "Summarise today's replies by intent",
    description: 'Read the unibox for replies received today and group them by reply intent.',
    arguments: [{ name: 'date', description: 'The day (YYYY-MM-DD, the workspace time zone); today when left out.' }],
    text: ({ date }) =>
      [
        `Summarise the replies received ${date ? `on ${date}` : 'today'}.`,
        '1. listEmails for received replies of that day, page by page until hasMore is false.',
        '2. Group them by their intent (interested, meetingBooked, notInterested, outOfOffice, ...); getEmail',
        '   where the preview is not enough to tell.',
        '3. Answer with a count per intent, then the interested ones: who, which campaign, what they asked.',
        '4. Suggest a reply for each interested lead, but send nothing (replyToEmail) unless asked.',
      ].join('\n'),
  },
  {
    name: 'check-deliverability',
    title: "Check the mailboxes' deliverability",
    description: "Check each email account's DNS records, warm-up health and sending state, and say what to fix.",
    arguments: [],
    text: () =>
      [
        "Check the deliverability of this workspace's email accounts.",
        '1. listAccounts; for each, getAccountVitals (SPF, DKIM, DMARC, MX) and getAccountStatus.',
        '2. getWarmupSummary for the warm-up health of the accounts that warm up.',
        '3. Answer with one line per account: what passes, what fails and the one thing to fix first.',
      ].join('\n'),
  },
];

export const prompts = (): Prompt[] => RECIPES.map(({ text: _text, ...prompt }) => prompt);

/** The prompt's message, or undefined for a name no prompt has; a missing required argument throws. */
export function getPrompt(name: string, args: Record<string, string> = {}): GetPromptResult | undefined {
  const recipe = RECIPES.find((r) => r.name === name);
  if (!recipe) return undefined;
  for (const a of recipe.arguments ?? []) {
    if (a.required && !args[a.name]) throw new Error(`The prompt ${name} needs the argument ${a.name}.`);
  }
  return {
    description: recipe.description,
    messages: [{ role: 'user', content: { type: 'text', text: recipe.text(args) } }],
  };
}
