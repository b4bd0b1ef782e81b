/**
 * A campaign's sequence: steps (order, delay) and their variants (label, subject, body, weight). Edits need a
 * campaign that is not sending; each runs in one transaction that first locks the campaign row, so an edit and a
 * launch of the same campaign never interleave.
 */
import type { components, operations } from '../../../generated/api';
import type { Clock } from '../../platform/clock';
import type { Db, Executor } from '../../db';
import { conflict, detail, notFound } from '../../platform/errors';
import { newId } from '../../platform/ids';
import {
  checkDelay,
  checkVariantText,
  label,
  MAX_STEPS,
  MAX_VARIANTS,
  Problems,
  rescaleWeights,
  resolveWeights,
} from './rules';
import type { CampaignStore, CampaignView, StepRow, VariantRow } from './store';
import { findCampaign, toSequenceStep } from './view';

type Schemas = components['schemas'];
type SequenceStep = Schemas['SequenceStep'];
type StepInput = Schemas['SequenceStepInput'];
type VariantInput = Schemas['SequenceVariantInput'];
export type StepUpdate = operations['updateSequenceStep']['requestBody']['content']['application/json'];

const STEP_NOT_FOUND = 'Sequence step not found.';
const VARIANT_NOT_FOUND = 'Variant not found.';

/** What CampaignSequence is built from, by name. */
interface CampaignSequenceDeps {
  db: Db;
  store: CampaignStore;
  clock: Clock;
}

export class CampaignSequence {
  private readonly db: Db;
  private readonly store: CampaignStore;
  private readonly clock: Clock;

  constructor({ db, store, clock }: CampaignSequenceDeps) {
    this.db = db;
    this.store = store;
    this.clock = clock;
  }

  async createSteps(workspaceId: string, campaignId: string, inputs: StepInput[]) {
    return this.db.transaction(async (trx) => {
      const campaign = await findCampaign(this.store, trx, workspaceId, campaignId, { forUpdate: true });
      this.assertEditable(campaign);
      // Counted after the lock, in a statement of its own: the locked read's count is from before the wait.
      const existing = (await this.store.steps(trx, campaignId)).length;
      const p = new Problems();
      if (existing + inputs.length > MAX_STEPS) {
        p.add(
          'steps',
          `a campaign has at most ${MAX_STEPS} steps; it has ${existing} and this adds ${inputs.length}.`,
          'max_steps',
        );
      }
      const now = this.clock.now();
      const steps: StepRow[] = [];
      const variants: VariantRow[] = [];
      inputs.forEach((input, i) => {
        const order = existing + i + 1;
        const delay = checkDelay(p, `steps.${i}`, input, order, true);
        input.variants.forEach((v, j) => checkVariantText(p, `steps.${i}.variants.${j}`, v, order === 1));
        const weights = resolveWeights(
          p,
          `steps.${i}.variants`,
          [],
          input.variants.map((v) => v.weight),
        );
        const step: StepRow = {
          id: newId(),
          workspace_id: workspaceId,
          campaign_id: campaignId,
          step_order: order,
          delay_minutes: delay?.delay_minutes ?? 0,
          delay_unit: delay?.delay_unit ?? 'days',
          auto_winner: input.autoWinner ?? null,
          created_at: now,
        };
        steps.push(step);
        input.variants.forEach((v, j) => variants.push(this.newVariant(step, j, v, weights[j], now)));
      });
      p.throwIfAny();
      await this.store.insertSteps(trx, steps);
      await this.store.insertVariants(trx, variants);
      await this.touch(trx, workspaceId, campaignId);
      return { campaignId, steps: await this.sequence(trx, campaignId) };
    });
  }

  async updateStep(workspaceId: string, stepId: string, input: StepUpdate) {
    return this.db.transaction(async (trx) => {
      const step = await this.lockStep(trx, workspaceId, stepId);
      const current = await this.store.variants(trx, [step.id]);
      const updates = input.variants ?? [];
      const p = new Problems();
      const seen = new Set<string>();
      updates.forEach((u, i) => {
        if (seen.has(u.id)) p.add(`variants.${i}.id`, `variant ${u.id} is listed twice.`, 'duplicate');
        seen.add(u.id);
      });
      p.throwIfAny();
      const unknown = updates.map((u, i) => ({ id: u.id, i })).filter(({ id }) => !current.some((v) => v.id === id));
      if (unknown.length) {
        throw notFound(
          `Variant not found in this step: ${unknown.map((u) => u.id).join(', ')}.`,
          unknown.map((u) =>
            detail(`variants.${u.i}.id`, `Variant ${u.id} is not a variant of step ${stepId}.`, 'not_found'),
          ),
        );
      }
      const delay = checkDelay(p, '', input, step.step_order, false);
      updates.forEach((u, i) => checkVariantText(p, `variants.${i}`, u, step.step_order === 1));
      const weightOf = (v: VariantRow) => updates.find((u) => u.id === v.id)?.weight ?? v.weight;
      const sum = current.reduce((total, v) => total + weightOf(v), 0);
      if (sum !== 100) p.add('variants', `the step's variant weights must add up to 100, not ${sum}.`, 'weight_sum');
      p.throwIfAny();
      if (delay || input.autoWinner !== undefined)
        await this.store.updateStep(trx, step.id, {
          ...delay,
          ...(input.autoWinner !== undefined ? { auto_winner: input.autoWinner } : {}),
        });
      for (const u of updates) {
        const { id, ...changes } = u;
        await this.store.updateVariant(trx, id, changes);
      }
      await this.touch(trx, workspaceId, step.campaign_id);
      return { step: await this.oneStep(trx, step) };
    });
  }

  async deleteStep(workspaceId: string, stepId: string) {
    return this.db.transaction(async (trx) => {
      const step = await this.lockStep(trx, workspaceId, stepId);
      const steps = await this.store.steps(trx, step.campaign_id);
      const after = steps.filter((s) => s.step_order > step.step_order);
      if (step.step_order === 1 && after.length) {
        const next = await this.store.variants(trx, [after[0].id]);
        const threaded = next.filter((v) => v.subject === '').map((v) => v.label);
        if (threaded.length) {
          throw conflict(
            `The next step would become the first, but its variant ${threaded.join(', ')} replies in the thread of this one: give it a subject first.`,
            [detail('stepId', 'the next step has a variant with an empty subject.', 'subject_required', 'query')],
          );
        }
      }
      await this.store.deleteStep(trx, step.id);
      for (const s of after) {
        await this.store.updateStep(trx, s.id, {
          step_order: s.step_order - 1,
          ...(s.step_order === 2 ? { delay_minutes: 0 } : {}),
        });
      }
      await this.touch(trx, workspaceId, step.campaign_id);
      return {
        campaignId: step.campaign_id,
        deletedStepId: step.id,
        steps: await this.sequence(trx, step.campaign_id),
      };
    });
  }

  async createVariants(workspaceId: string, stepId: string, inputs: VariantInput[]) {
    return this.db.transaction(async (trx) => {
      const step = await this.lockStep(trx, workspaceId, stepId);
      const current = await this.store.variants(trx, [step.id]);
      const p = new Problems();
      if (current.length + inputs.length > MAX_VARIANTS) {
        p.add(
          'variants',
          `a step has at most ${MAX_VARIANTS} variants (A-Z); it has ${current.length} and this adds ${inputs.length}.`,
          'max_variants',
        );
      }
      inputs.forEach((v, i) => checkVariantText(p, `variants.${i}`, v, step.step_order === 1));
      const weights = resolveWeights(
        p,
        'variants',
        current.map((v) => v.weight),
        inputs.map((v) => v.weight),
      );
      p.throwIfAny();
      const now = this.clock.now();
      for (const [i, v] of current.entries()) {
        if (weights[i] !== v.weight) await this.store.updateVariant(trx, v.id, { weight: weights[i] });
      }
      await this.store.insertVariants(
        trx,
        inputs.map((v, i) => this.newVariant(step, current.length + i, v, weights[current.length + i], now)),
      );
      await this.touch(trx, workspaceId, step.campaign_id);
      return { step: await this.oneStep(trx, step) };
    });
  }

  async deleteVariant(workspaceId: string, variantId: string) {
    return this.db.transaction(async (trx) => {
      const found = await this.store.findVariant(trx, workspaceId, variantId);
      if (!found) throw notFound(VARIANT_NOT_FOUND);
      const step = await this.lockStep(trx, workspaceId, found.step_id);
      const siblings = await this.store.variants(trx, [step.id]);
      if (!siblings.some((v) => v.id === variantId)) throw notFound(VARIANT_NOT_FOUND);
      if (siblings.length === 1) {
        throw conflict(
          'A step keeps at least one variant: delete the step instead (DELETE /v2/campaign/sequences-delete).',
          [detail('variantId', 'is the only variant of its step.', 'last_variant', 'query')],
        );
      }
      await this.store.deleteVariant(trx, variantId);
      const rest = siblings.filter((v) => v.id !== variantId);
      const weights = rescaleWeights(rest.map((v) => v.weight));
      // Ascending order: each new label was freed by the delete or by the update before it.
      for (const [i, v] of rest.entries()) {
        if (v.label !== label(i) || v.weight !== weights[i])
          await this.store.updateVariant(trx, v.id, { label: label(i), weight: weights[i] });
      }
      await this.touch(trx, workspaceId, step.campaign_id);
      return { deletedVariantId: variantId, step: await this.oneStep(trx, step) };
    });
  }

  // Helpers ----------------------------------------------------------------------------------------

  private async touch(trx: Executor, workspaceId: string, campaignId: string): Promise<void> {
    await this.store.update(trx, workspaceId, campaignId, { updated_at: this.clock.now() });
  }

  /** Sequence edits need a campaign that is not sending; a completed one may be edited. */
  private assertEditable(campaign: CampaignView): void {
    if (campaign.effective_status === 'active') {
      throw conflict('Campaign is active: pause it before editing its sequence.', [
        detail('campaignId', 'the campaign is active.', 'invalid_status'),
      ]);
    }
  }

  /** Finds the workspace's step, locks its campaign, re-reads the step under the lock, checks editability. */
  private async lockStep(trx: Executor, workspaceId: string, stepId: string): Promise<StepRow> {
    const found = await this.store.findStep(trx, workspaceId, stepId);
    if (!found) throw notFound(STEP_NOT_FOUND);
    const campaign = await findCampaign(this.store, trx, workspaceId, found.campaign_id, { forUpdate: true });
    const step = await this.store.findStep(trx, workspaceId, stepId);
    if (!step) throw notFound(STEP_NOT_FOUND);
    this.assertEditable(campaign);
    return step;
  }

  private newVariant(step: StepRow, index: number, v: VariantInput, weight: number, now: Date): VariantRow {
    return {
      id: newId(),
      workspace_id: step.workspace_id,
      campaign_id: step.campaign_id,
      step_id: step.id,
      label: label(index),
      subject: v.subject,
      body: v.body,
      weight,
      created_at: now,
    };
  }

  private async sequence(db: Executor, campaignId: string): Promise<SequenceStep[]> {
    const steps = await this.store.steps(db, campaignId);
    const variants = await this.store.variants(
      db,
      steps.map((s) => s.id),
    );
    return steps.map((s) => toSequenceStep(s, variants));
  }

  private async oneStep(db: Executor, step: StepRow): Promise<SequenceStep> {
    return (await this.sequence(db, step.campaign_id)).find((s) => s.id === step.id)!;
  }
}
