/** How a campaign reads: the stored row as the API's `Campaign`, and the one look-up that answers 404 for it. */
import type { components } from '../../../generated/api';
import { jsonColumn, type Executor } from '../../db';
import { notFound } from '../../platform/errors';
import { delayOf } from './rules';
import type { CampaignStore, CampaignView, ScheduleJson, StepRow, VariantRow } from './store';
import type { SubsequenceRow } from './subsequence-store';
import { variantVariables } from './templates';

type Campaign = components['schemas']['Campaign'];
type Trigger = components['schemas']['SubsequenceTrigger'];

export const CAMPAIGN_NOT_FOUND = 'Campaign not found.';

export const iso = (d: Date) => new Date(d).toISOString();

/** A stored schedule (a JSON string on some drivers, an object on others). */
export function parseSchedule(raw: unknown): ScheduleJson | null {
  if (raw === null || raw === undefined) return null;
  return (typeof raw === 'string' ? JSON.parse(raw) : raw) as ScheduleJson;
}

/** The stored cc and bcc (a JSON string on some drivers, an object on others). */
export const copiesOf = (raw: unknown) => jsonColumn(raw) as CampaignView['copy_to'];

export function toCampaign(v: CampaignView): Campaign {
  const schedule = parseSchedule(v.schedule);
  return {
    id: v.id,
    name: v.name,
    status: v.effective_status,
    pauseReason:
      v.effective_status === 'paused' && v.pause_reason_code
        ? {
            code: v.pause_reason_code as NonNullable<Campaign['pauseReason']>['code'],
            message: v.pause_reason_message ?? '',
          }
        : null,
    schedule: schedule && { ...schedule, startDate: schedule.startDate ?? null, endDate: schedule.endDate ?? null },
    options: {
      dailyLimit: v.daily_limit,
      emailGapMinutes: v.email_gap_minutes,
      randomWaitMaxMinutes: v.random_wait_max_minutes,
      dailyNewContacts: v.daily_new_contacts,
      stopOnReply: v.stop_on_reply,
      stopForCompany: v.stop_for_company,
      stopOnAutoReply: v.stop_on_auto_reply,
      intentSetsLeadStatus: v.intent_sets_lead_status,
      trackOpens: v.track_opens,
      trackClicks: v.track_clicks,
      textOnly: v.text_only,
      sendInLeadTimezone: v.send_in_lead_timezone,
      trackingDomainId: v.tracking_domain_id,
      recipientDomainDailyLimit: v.recipient_domain_daily_limit,
      matchProvider: v.match_provider,
      matchProviderStrict: v.match_provider_strict,
      sendPriority: v.send_priority,
      firstEmailTextOnly: v.first_email_text_only,
      cc: copiesOf(v.copy_to).cc,
      bcc: copiesOf(v.copy_to).bcc,
      stopOnOpen: v.stop_on_open,
      stopOnClick: v.stop_on_click,
      verifiedOnly: v.verified_only,
    },
    counts: { steps: v.step_count, accounts: v.account_count, contacts: v.contact_count },
    launchedAt: v.launched_at ? iso(v.launched_at) : null,
    createdAt: iso(v.created_at),
    updatedAt: iso(v.updated_at),
  };
}

/**
 * The workspace's campaign, or 404 "Campaign not found." (also for another workspace's); `forUpdate` locks the row
 * until the transaction ends.
 */
export async function findCampaign(
  store: CampaignStore,
  db: Executor,
  workspaceId: string,
  campaignId: string,
  options: { forUpdate?: boolean } = {},
): Promise<CampaignView> {
  const campaign = await store.find(db, workspaceId, campaignId, options);
  if (!campaign) throw notFound(CAMPAIGN_NOT_FOUND);
  return campaign;
}

/** The campaign's main sequence as the API's `SequenceStep`s, in order. */
export async function readSequence(
  store: CampaignStore,
  db: Executor,
  campaignId: string,
): Promise<components['schemas']['SequenceStep'][]> {
  const steps = await store.steps(db, campaignId);
  const variants = await store.variants(
    db,
    steps.map((s) => s.id),
  );
  return steps.map((s) => toSequenceStep(s, variants));
}

/** A stored step with its variants (any of the campaign's: the step's own are picked) as the API's `SequenceStep`. */
export function toSequenceStep(step: StepRow, variants: VariantRow[]): components['schemas']['SequenceStep'] {
  return {
    id: step.id,
    campaignId: step.campaign_id,
    order: step.step_order,
    ...delayOf(step),
    autoWinner: (jsonColumn(step.auto_winner) as StepRow['auto_winner']) ?? null,
    variants: variants
      .filter((v) => v.step_id === step.id)
      .map((v) => ({
        id: v.id,
        label: v.label,
        subject: v.subject,
        body: v.body,
        weight: v.weight,
        variables: variantVariables(v.subject, v.body),
      })),
  };
}

/** A subsequence's stored trigger as the API's `SubsequenceTrigger`. */
export function triggerOf(s: SubsequenceRow): Trigger {
  switch (s.trigger_type) {
    case 'replyIntent':
      return { type: s.trigger_type, intent: s.trigger_value as Trigger['intent'] };
    case 'leadStatus':
      return { type: s.trigger_type, leadStatus: s.trigger_value as Trigger['leadStatus'] };
    case 'replyContains':
      return { type: s.trigger_type, phrase: s.trigger_value ?? '' };
    case 'opened':
    case 'clicked':
      return { type: s.trigger_type, stepId: s.trigger_step_id };
    case 'noReply':
      return { type: s.trigger_type };
  }
}
