/**
 * GET /v2/campaign/preview: a contact's next message as the engine would render it now, and when it goes or the
 * reason it will not. It reads what the claim reads (step, A/Z winner, spintax key, values, thread) and changes
 * nothing. The reason given is the one closest to the contact: its own state first, then what the campaign lacks.
 */
import type { components } from '../../../generated/api';
import type { Clock } from '../../platform/clock';
import type { Db } from '../../db';
import { notFound } from '../../platform/errors';
import { nextOpenMoment } from '../../time/schedule';
import type { MailService } from '../mail';
import type { SuppressionService } from '../suppression';
import { renderVariant, templateValues } from './message';
import type { PreviewStore } from './preview-store';
import { pickVariant } from './render';
import type { SendingStore } from './store';
import type { VariantWinners } from './winner';
import type { ContactGates } from './gates';
import type { ScheduleJson } from '../campaign';

type Preview = components['schemas']['CampaignPreview'];
type Reason = components['schemas']['PreviewReason'];

/** What the campaign module tells of the campaign (its sending view). */
export interface PreviewedCampaign {
  id: string;
  status: 'draft' | 'active' | 'paused' | 'completed';
  schedule: ScheduleJson | null;
  sendInLeadTimezone: boolean;
}

/** Where the preview shows `{{unsubscribeUrl}}`: a real link would be a signed token for a message never sent. */
const UNSUBSCRIBE_PLACEHOLDER = '[unsubscribe link]';

/** What MessagePreview is built from, by name. */
interface MessagePreviewDeps {
  db: Db;
  store: SendingStore;
  previewStore: PreviewStore;
  winners: VariantWinners;
  gates: ContactGates;
  mail: MailService;
  suppression: SuppressionService;
  clock: Clock;
}

export class MessagePreview {
  private readonly db: Db;
  private readonly store: SendingStore;
  private readonly previewStore: PreviewStore;
  private readonly winners: VariantWinners;
  private readonly gates: ContactGates;
  private readonly mail: MailService;
  private readonly suppression: SuppressionService;
  private readonly clock: Clock;

  constructor({ db, store, previewStore, winners, gates, mail, suppression, clock }: MessagePreviewDeps) {
    this.db = db;
    this.store = store;
    this.previewStore = previewStore;
    this.winners = winners;
    this.gates = gates;
    this.mail = mail;
    this.suppression = suppression;
    this.clock = clock;
  }

  async preview(workspaceId: string, campaign: PreviewedCampaign, contactId: string): Promise<Preview> {
    const now = this.clock.now();
    const contact = await this.previewStore.contact(this.db, workspaceId, campaign.id, contactId);
    if (!contact) throw notFound('Contact not found.');
    const [options, steps, winners, suppressed] = await Promise.all([
      this.previewStore.campaign(this.db, campaign.id),
      // A contact in a subsequence gets that subsequence's next step.
      contact.subsequence_id
        ? this.store
            .subsequenceSteps(this.db, campaign.id)
            .then((subs) => subs.get(contact.subsequence_id!)?.steps ?? [])
        : this.store.steps(this.db, campaign.id),
      this.winners.winners(this.db, campaign.id),
      this.suppression.filterSuppressed(this.db, workspaceId, [contact.email]),
    ]);
    const stepNumber = contact.step_number ?? 1;
    const step = contact.state === 'done' ? undefined : steps[stepNumber - 1];
    const gated = { contact_id: contact.id, email: contact.email, step_number: stepNumber };
    const gates = await this.gates.read(this.db, options, [gated]);
    let reason: Reason | null = null;
    let missingVariable: string | null = null;
    if (contact.state === 'done' && (contact.reason === 'stopped_on_open' || contact.reason === 'stopped_on_click'))
      reason = contact.reason;
    else if (contact.status === 'paused') reason = 'contact_paused';
    else if (contact.status !== 'active') reason = 'contact_finished';
    else if (contact.state === 'done')
      reason = contact.reason === 'suppressed' ? 'suppressed' : contact.reason ? 'contact_finished' : 'no_more_steps';
    else if (!step || step.variants.length === 0) reason = 'no_more_steps';
    else if (contact.state === 'unknown') reason = 'unknown_outcome';
    else if (suppressed.size > 0) reason = 'suppressed';
    else if (gates.stopped(gated)) reason = gates.stopped(gated)!;
    else if (gates.unverified(gated)) reason = 'not_verified';

    let shown: Preview['step'] = null;
    let message: Preview['message'] = null;
    if (step && step.variants.length > 0) {
      const winner = winners.get(step.id);
      const variant =
        step.variants.find((v) => v.id === winner) ?? pickVariant(step.variants, `${contact.id}:${step.id}`);
      shown = { stepId: step.id, order: stepNumber, variantId: variant.id, label: variant.label };
      const previous =
        variant.subject.trim() === '' && contact.last_message_id
          ? await this.mail.threadParent(this.db, contact.last_message_id)
          : undefined;
      const values = { ...templateValues(contact), unsubscribeUrl: UNSUBSCRIBE_PLACEHOLDER };
      const rendered = renderVariant(variant, { contactId: contact.id, stepId: step.id }, values, !!previous);
      if (!rendered.ok) {
        reason ??= 'missing_variable';
        missingVariable = rendered.missing;
      } else {
        // Composed as the engine composes it, so an answer's subject follows the one reply rule.
        const composed = this.mail.compose({
          from: contact.email,
          to: contact.email,
          cc: options.copy_to.cc,
          bcc: options.copy_to.bcc,
          subject: rendered.subject,
          text: rendered.body.text,
          parent: previous,
          date: now,
        });
        message = {
          subject: composed.subject,
          inThread: previous !== undefined,
          text: rendered.body.text,
          html: options.text_only || (options.first_email_text_only && stepNumber === 1) ? null : rendered.body.html,
          cc: options.copy_to.cc,
          bcc: options.copy_to.bcc,
        };
      }
    }

    if (!reason && campaign.status === 'draft') reason = 'not_launched';
    if (!reason && campaign.status === 'paused') reason = 'paused';
    if (!reason && !campaign.schedule) reason = 'no_schedule';
    let sendAt: string | null = null;
    if (!reason && campaign.schedule) {
      const due = contact.state === 'waiting' && contact.due_at && contact.due_at > now ? contact.due_at : now;
      const schedule =
        campaign.sendInLeadTimezone && contact.timezone
          ? { ...campaign.schedule, timezone: contact.timezone }
          : campaign.schedule;
      const open = nextOpenMoment(schedule, new Date(due));
      if (open) sendAt = open.toISOString();
      else reason = 'schedule_ended';
    }
    return {
      campaignId: campaign.id,
      contactId: contact.id,
      email: contact.email,
      step: shown,
      message,
      sendAt,
      reason,
      missingVariable,
    };
  }
}
