/**
 * A/Z tests that pick their winner by themselves (a step's `autoWinner`). The engine asks here, in each claim's
 * transaction (which holds the campaign's lock, so one worker at a time decides), which variant a contact gets:
 * the winner once there is one, else the weighted pick. A test starts at the step's first claim; it is decided at
 * the first claim after `decideAfterHours` have passed by the injected clock and every variant was sent to
 * `minSentPerVariant` contacts, on all-time figures from the event rollups, and the decision is the
 * `campaign.variantWinner` event. Deciding at send time means a step with no one left to send needs no winner.
 */
import type { components } from '../../../generated/api';
import type { Executor } from '../../db';
import { type EventService, percent } from '../events';
import { pickVariant } from './render';
import type { SendingStep } from './store';
import type { StepTestStore } from './winner-store';

type Figures = components['schemas']['VariantWinnerData']['variants'];
type Variant = SendingStep['variants'][number];

const HOUR = 3_600_000;

/** The variants a test compares: those with a weight (a variant weighted 0 never sends, so it could never qualify). */
const contenders = (step: SendingStep) => {
  const weighted = step.variants.filter((v) => v.weight > 0);
  return [...(weighted.length ? weighted : step.variants)].sort((a, b) => a.label.localeCompare(b.label));
};

/** What one claim knows of its campaign's tests. */
export interface ClaimTests {
  /** The variant this contact gets at this step (recording the test's start at its first claim). */
  variantFor(trx: Executor, step: SendingStep, contactId: string): Promise<Variant>;
}

/** What VariantWinners is built from, by name. */
interface VariantWinnersDeps {
  store: StepTestStore;
  events: EventService;
}

export class VariantWinners {
  private readonly store: StepTestStore;
  private readonly events: EventService;

  constructor({ store, events }: VariantWinnersDeps) {
    this.store = store;
    this.events = events;
  }

  /** The campaign's tests for one claim, deciding those whose rule is met at `now`. */
  async forClaim(
    trx: Executor,
    campaign: { id: string; workspace_id: string },
    steps: SendingStep[],
    now: Date,
  ): Promise<ClaimTests> {
    const tested = steps.filter((s) => s.auto_winner && s.variants.length > 1);
    const rows = tested.length ? await this.store.ofCampaign(trx, campaign.id) : [];
    const started = new Set(rows.map((r) => r.step_id));
    const winners = new Map<string, string>();
    for (const r of rows) if (r.winner_variant_id) winners.set(r.step_id, r.winner_variant_id);
    for (const step of tested) {
      const row = rows.find((r) => r.step_id === step.id);
      if (!row || winners.has(step.id)) continue;
      const winner = await this.decide(trx, campaign, step, row.started_at, now);
      if (winner) winners.set(step.id, winner);
    }
    return {
      variantFor: async (db, step, contactId) => {
        const winner = winners.get(step.id);
        const chosen = winner && step.variants.find((v) => v.id === winner);
        if (chosen) return chosen;
        if (step.auto_winner && step.variants.length > 1 && !started.has(step.id)) {
          await this.store.start(db, {
            step_id: step.id,
            workspace_id: campaign.workspace_id,
            campaign_id: campaign.id,
            started_at: now,
          });
          started.add(step.id);
        }
        return pickVariant(step.variants, `${contactId}:${step.id}`);
      },
    };
  }

  /** The winner when the rule is met now (stored, with its event), else undefined. */
  private async decide(
    trx: Executor,
    campaign: { id: string; workspace_id: string },
    step: SendingStep,
    startedAt: Date,
    now: Date,
  ): Promise<string | undefined> {
    const rule = step.auto_winner!;
    if (now.getTime() < startedAt.getTime() + rule.decideAfterHours * HOUR) return undefined;
    const variants = contenders(step);
    const counts = await this.events.variantContacts(trx, {
      workspaceId: campaign.workspace_id,
      variantIds: variants.map((v) => v.id),
    });
    const figures: Figures = variants.map((v) => {
      const c = counts.get(v.id);
      const [sent, opened, clicked, replied] = [c?.sent ?? 0, c?.opened ?? 0, c?.clicked ?? 0, c?.replied ?? 0];
      const metric = { replied, clicked, opened }[rule.metric];
      return { variantId: v.id, label: v.label, sent, opened, clicked, replied, rate: percent(metric, sent) };
    });
    if (figures.some((f) => f.sent < rule.minSentPerVariant)) return undefined;
    // Strictly better only: a tie stays with the earlier label.
    const best = figures.reduce((a, b) => (b.rate > a.rate ? b : a));
    await this.store.decide(trx, step.id, { variantId: best.variantId, at: now, figures });
    await this.events.record(trx, {
      workspaceId: campaign.workspace_id,
      type: 'campaign.variantWinner',
      occurredAt: now,
      data: {
        campaignId: campaign.id,
        stepId: step.id,
        variantId: best.variantId,
        label: best.label,
        metric: rule.metric,
        decidedAt: now.toISOString(),
        variants: figures,
      },
    });
    return best.variantId;
  }

  /** Each step's picked winner, for the step analytics. */
  async winners(db: Executor, campaignId: string): Promise<Map<string, string>> {
    const rows = await this.store.ofCampaign(db, campaignId);
    return new Map(rows.flatMap((r) => (r.winner_variant_id ? [[r.step_id, r.winner_variant_id] as const] : [])));
  }
}
