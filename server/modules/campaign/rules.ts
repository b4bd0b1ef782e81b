/**
 * The campaign module's request rules, checked before anything is written: the name, the schedule (IANA zone,
 * calendar dates, ranges), step delays, variant templates and weights. Each check adds to one `Problems`, so one
 * 400 names every problem of a request.
 */
import type { components } from '../../../generated/api';
import { detail, fieldName, invalid, type FieldProblem } from '../../platform/errors';
import { canonicalTimeZone } from '../../platform/time-zone';
import { parseVariantText } from './templates';
import type { CampaignRow, ScheduleJson, StepRow } from './store';

type Schemas = components['schemas'];
type Schedule = Schemas['CampaignSchedule'];
type OptionsInput = Schemas['CampaignOptionsInput'];

export const MAX_STEPS = 20;
export const MAX_VARIANTS = 26;

/** Collects every domain problem of a request, so one 400 names them all. */
export class Problems {
  readonly details: FieldProblem[] = [];
  add(field: string, message: string, code: string): void {
    this.details.push(detail(field, message, code));
  }
  throwIfAny(): void {
    if (this.details.length === 0) return;
    const [first] = this.details;
    const more = this.details.length > 1 ? ` (and ${this.details.length - 1} more problems)` : '';
    throw invalid(`${fieldName(first)}: ${first.message}${more}`, this.details);
  }
}

/** A variant's label by its position in the step: A, B, ... */
export const label = (index: number) => String.fromCharCode(65 + index);

/** `n` weights that add up to 100, the first ones taking the remainder (34/33/33). */
function evenWeights(n: number): number[] {
  const base = Math.floor(100 / n);
  return Array.from({ length: n }, (_, i) => base + (i < 100 - base * n ? 1 : 0));
}

/** Scales weights to add up to 100 keeping their proportions (largest remainder); all zero -> even. */
export function rescaleWeights(weights: number[]): number[] {
  const sum = weights.reduce((a, b) => a + b, 0);
  if (sum === 0) return evenWeights(weights.length);
  const exact = weights.map((w) => (w * 100) / sum);
  const result = exact.map(Math.floor);
  const order = exact.map((x, i) => ({ i, frac: x - Math.floor(x) })).sort((a, b) => b.frac - a.frac || a.i - b.i);
  const remainder = 100 - result.reduce((a, b) => a + b, 0);
  for (let k = 0; k < remainder; k++) result[order[k].i] += 1;
  return result;
}

/** The options given, as row columns (only those given); cc and bcc share a column, so a change of one keeps the other. */
export function optionsToRow(
  options: OptionsInput | undefined,
  copies: CampaignRow['copy_to'] = { cc: [], bcc: [] },
): Partial<CampaignRow> {
  const row: Partial<CampaignRow> = {};
  if (!options) return row;
  if (options.dailyLimit !== undefined) row.daily_limit = options.dailyLimit;
  if (options.emailGapMinutes !== undefined) row.email_gap_minutes = options.emailGapMinutes;
  if (options.randomWaitMaxMinutes !== undefined) row.random_wait_max_minutes = options.randomWaitMaxMinutes;
  if (options.dailyNewContacts !== undefined) row.daily_new_contacts = options.dailyNewContacts;
  if (options.stopOnReply !== undefined) row.stop_on_reply = options.stopOnReply;
  if (options.stopForCompany !== undefined) row.stop_for_company = options.stopForCompany;
  if (options.stopOnAutoReply !== undefined) row.stop_on_auto_reply = options.stopOnAutoReply;
  if (options.intentSetsLeadStatus !== undefined) row.intent_sets_lead_status = options.intentSetsLeadStatus;
  if (options.trackOpens !== undefined) row.track_opens = options.trackOpens;
  if (options.trackClicks !== undefined) row.track_clicks = options.trackClicks;
  if (options.textOnly !== undefined) row.text_only = options.textOnly;
  if (options.sendInLeadTimezone !== undefined) row.send_in_lead_timezone = options.sendInLeadTimezone;
  if (options.trackingDomainId !== undefined) row.tracking_domain_id = options.trackingDomainId;
  if (options.recipientDomainDailyLimit !== undefined)
    row.recipient_domain_daily_limit = options.recipientDomainDailyLimit;
  if (options.matchProvider !== undefined) row.match_provider = options.matchProvider;
  if (options.matchProviderStrict !== undefined) row.match_provider_strict = options.matchProviderStrict;
  if (options.sendPriority !== undefined) row.send_priority = options.sendPriority;
  if (options.firstEmailTextOnly !== undefined) row.first_email_text_only = options.firstEmailTextOnly;
  if (options.cc !== undefined || options.bcc !== undefined)
    row.copy_to = { cc: options.cc ?? copies.cc, bcc: options.bcc ?? copies.bcc };
  if (options.stopOnOpen !== undefined) row.stop_on_open = options.stopOnOpen;
  if (options.stopOnClick !== undefined) row.stop_on_click = options.stopOnClick;
  if (options.verifiedOnly !== undefined) row.verified_only = options.verifiedOnly;
  return row;
}

export function checkName(p: Problems, name: string): string {
  const trimmed = name.trim();
  if (!trimmed) p.add('name', 'must not be blank.', 'blank');
  return trimmed;
}

function isCalendarDate(value: string): boolean {
  const date = new Date(`${value}T00:00:00Z`);
  return !Number.isNaN(date.getTime()) && date.toISOString().slice(0, 10) === value;
}

/** Validates a schedule (IANA zone, from < to, end after start) and returns it as stored. */
export function checkSchedule(p: Problems, s: Schedule, prefix: string): ScheduleJson {
  const canonical = canonicalTimeZone(s.timezone);
  const timezone = canonical ?? s.timezone;
  if (canonical === null) {
    p.add(
      `${prefix}.timezone`,
      `"${s.timezone}" is not an IANA time zone name (such as America/New_York or UTC).`,
      'timezone',
    );
  }
  if (s.from >= s.to) p.add(`${prefix}.to`, `must be after from (${s.from}).`, 'time_range');
  const startDate = s.startDate ?? null;
  const endDate = s.endDate ?? null;
  // The schema's `format: date` checks the shape only: 2026-02-30 passes it.
  for (const [key, value] of [
    ['startDate', startDate],
    ['endDate', endDate],
  ] as const) {
    if (value && !isCalendarDate(value)) p.add(`${prefix}.${key}`, `"${value}" is not a calendar date.`, 'format');
  }
  if (startDate && endDate && endDate <= startDate)
    p.add(`${prefix}.endDate`, `must be after startDate (${startDate}).`, 'date_range');
  return { timezone, days: [...s.days].sort((a, b) => a - b), from: s.from, to: s.to, startDate, endDate };
}

/** Template and thread rules for a variant's subject and body (only the fields given). */
export function checkVariantText(
  p: Problems,
  field: string,
  v: { subject?: string; body?: string },
  firstStep: boolean,
): void {
  if (v.subject === '' && firstStep) {
    p.add(
      `${field}.subject`,
      'must not be empty on the first step (an empty subject replies in the thread of the step before).',
      'subject_required',
    );
  }
  for (const key of ['subject', 'body'] as const) {
    const text = v[key];
    if (text === undefined) continue;
    const parsed = parseVariantText(text);
    if (!parsed.ok) p.add(`${field}.${key}`, parsed.error, parsed.code);
  }
}

type StepDelay = components['schemas']['StepDelay'];
const UNIT_MINUTES: Record<StepDelay['unit'], number> = { minutes: 1, hours: 60, days: 1440 };
/** The longest wait in any unit: a year. */
const MAX_DELAY_MINUTES = 365 * 1440;

/** A step's wait in minutes and the unit it was written in, as stored. */
export type DelayColumns = Pick<StepRow, 'delay_minutes' | 'delay_unit'>;

/**
 * A step's wait from `delay` or `delayDays` (exactly one; neither is fine on an update, where `required` is false):
 * 0 on the first step, at least 1 of its unit after it, at most a year.
 */
export function checkDelay(
  p: Problems,
  prefix: string,
  input: { delay?: StepDelay; delayDays?: number },
  order: number,
  required: boolean,
): DelayColumns | undefined {
  const at = (name: string) => (prefix ? `${prefix}.${name}` : name);
  if (input.delay && input.delayDays !== undefined) {
    p.add(at('delay'), 'give delay or delayDays, not both.', 'delay_both');
    return undefined;
  }
  const delay = input.delay ?? (input.delayDays !== undefined ? { value: input.delayDays, unit: 'days' } : undefined);
  if (!delay) {
    if (required) p.add(at('delay'), 'give delay ({ value, unit }) or delayDays.', 'required');
    return undefined;
  }
  const field = input.delay ? at('delay.value') : at('delayDays');
  const minutes = delay.value * UNIT_MINUTES[delay.unit];
  if (order === 1 && delay.value !== 0) p.add(field, 'must be 0 on the first step.', 'first_step_delay');
  if (order > 1 && delay.value < 1) p.add(field, `must be at least 1 ${delay.unit} after the first step.`, 'delay');
  if (minutes > MAX_DELAY_MINUTES)
    p.add(field, `must be at most 365 days (${MAX_DELAY_MINUTES / UNIT_MINUTES[delay.unit]} ${delay.unit}).`, 'delay');
  return { delay_minutes: minutes, delay_unit: delay.unit };
}

/** A stored wait as the API answers it: in its unit, and in whole days. */
export function delayOf(row: DelayColumns): { delay: StepDelay; delayDays: number } {
  return {
    delay: { value: row.delay_minutes / UNIT_MINUTES[row.delay_unit], unit: row.delay_unit },
    delayDays: Math.floor(row.delay_minutes / 1440),
  };
}

/**
 * The weights of a step after adding `incoming` variants to `existing` ones: none given -> split
 * evenly over all; all given -> old and new must add up to 100.
 */
export function resolveWeights(
  p: Problems,
  field: string,
  existing: number[],
  incoming: (number | undefined)[],
): number[] {
  const given = incoming.filter((w): w is number => w !== undefined);
  if (given.length === 0) return evenWeights(existing.length + incoming.length);
  if (given.length < incoming.length) {
    const missing = incoming.findIndex((w) => w === undefined);
    p.add(
      `${field}.${missing}.weight`,
      'give a weight on every new variant or on none (none splits the step evenly).',
      'weight_missing',
    );
    return [...existing, ...incoming.map((w) => w ?? 0)];
  }
  const all = [...existing, ...given];
  const sum = all.reduce((a, b) => a + b, 0);
  if (sum !== 100) p.add(field, `the step's variant weights must add up to 100, not ${sum}.`, 'weight_sum');
  return all;
}
