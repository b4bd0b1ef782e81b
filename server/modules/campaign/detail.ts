/**
 * A whole campaign: the read of everything written to it (GET /v2/campaign/get) and its copy as a new draft
 * (POST /v2/campaign/duplicate). A copy takes the sequence, subsequences, schedule, options and links; contacts,
 * progress, messages and events stay with the original.
 */
import type { components } from '../../../generated/api';
import type { Clock } from '../../platform/clock';
import { jsonColumn, queryAll, type Db, type Executor } from '../../db';
import { created } from '../../platform/cause';
import { newId } from '../../platform/ids';
import type { CampaignAccounts } from './accounts';
import { checkName, Problems } from './rules';
import type { CampaignRow, CampaignStore, StepRow, VariantRow } from './store';
import type { SubsequenceRow, SubsequenceStore } from './subsequence-store';
import { copiesOf, findCampaign, parseSchedule, readSequence, toCampaign, triggerOf } from './view';

type CampaignDetail = components['schemas']['CampaignDetail'];

const NAME_MAX = 200;
const COPY_SUFFIX = ' (copy)';

/** What CampaignDetails is built from, by name. */
export interface CampaignDetailsDeps {
  db: Db;
  store: CampaignStore;
  subsequences: SubsequenceStore;
  linked: CampaignAccounts;
  clock: Clock;
}

export class CampaignDetails {
  private readonly db: Db;
  private readonly store: CampaignStore;
  private readonly subsequences: SubsequenceStore;
  private readonly linked: CampaignAccounts;
  private readonly clock: Clock;

  constructor({ db, store, subsequences, linked, clock }: CampaignDetailsDeps) {
    this.db = db;
    this.store = store;
    this.subsequences = subsequences;
    this.linked = linked;
    this.clock = clock;
  }

  /** The workspace's campaign whole, or 404; in the caller's transaction when given one. */
  async read(db: Executor, workspaceId: string, campaignId: string): Promise<CampaignDetail> {
    // Independent reads go out together outside a transaction (over several connections), one after another in
    // one; the campaign's own look-up decides the 404, and the others find nothing of another workspace's campaign.
    const [campaign, sequence, subsequences, accounts] = await queryAll(db, [
      () => findCampaign(this.store, db, workspaceId, campaignId),
      () => readSequence(this.store, db, campaignId),
      () => this.subsequences.ofCampaign(db, campaignId),
      () => this.linked.linkedAccounts(db, workspaceId, campaignId),
    ]);
    return {
      ...toCampaign(campaign),
      sequence,
      subsequences: subsequences.map((s) => ({ id: s.id, name: s.name, status: s.status, trigger: triggerOf(s) })),
      accounts,
    };
  }

  async duplicate(workspaceId: string, campaignId: string, name: string | undefined): Promise<CampaignDetail> {
    const p = new Problems();
    const chosenName = name === undefined ? undefined : checkName(p, name);
    p.throwIfAny();
    return this.db.transaction(async (trx) => {
      // Locked so the copy is of one version: sequence edits take the same lock.
      const source = await findCampaign(this.store, trx, workspaceId, campaignId, { forUpdate: true });
      const now = this.clock.now();
      const id = created(newId());
      const { effective_status: _s, step_count: _st, account_count: _a, contact_count: _c, ...row } = source;
      const copy: CampaignRow = {
        ...row,
        id,
        name: chosenName ?? `${source.name.slice(0, NAME_MAX - COPY_SUFFIX.length)}${COPY_SUFFIX}`,
        status: 'draft',
        schedule: parseSchedule(source.schedule),
        copy_to: copiesOf(source.copy_to),
        pause_reason_code: null,
        pause_reason_message: null,
        launched_at: null,
        created_at: now,
        updated_at: now,
      };
      await this.store.insert(trx, copy);
      await this.copySequences(trx, campaignId, id, now);
      await this.store.link(trx, workspaceId, id, await this.store.linkedAccountIds(trx, campaignId), now);
      return this.read(trx, workspaceId, id);
    });
  }

  /**
   * The main sequence and the subsequences with their steps, under new ids. A subsequence is written before its
   * steps and its trigger's step after them, since a trigger may name a step of any of the campaign's sequences.
   */
  private async copySequences(trx: Executor, fromId: string, toId: string, now: Date): Promise<void> {
    const mainSteps = await this.store.steps(trx, fromId);
    const subsequences = await this.subsequences.ofCampaign(trx, fromId);
    const sub = await this.subsequences.steps(
      trx,
      subsequences.map((s) => s.id),
    );
    const steps: (StepRow & { subsequence_id?: string | null })[] = [...mainSteps, ...sub.steps];
    const variants = [
      ...(await this.store.variants(
        trx,
        mainSteps.map((s) => s.id),
      )),
      ...sub.variants,
    ];
    const newIds = new Map<string, string>([...steps, ...subsequences].map((r) => [r.id, newId()]));
    const newIdOf = (old: string) => newIds.get(old)!;
    await this.subsequences.insert(
      trx,
      subsequences.map((s): SubsequenceRow => ({
        ...s,
        id: newIdOf(s.id),
        campaign_id: toId,
        trigger_step_id: null,
        created_at: now,
        updated_at: now,
      })),
    );
    await this.store.insertSteps(
      trx,
      steps.map((s) => ({
        ...s,
        id: newIdOf(s.id),
        campaign_id: toId,
        subsequence_id: s.subsequence_id ? newIdOf(s.subsequence_id) : null,
        auto_winner: jsonColumn(s.auto_winner) as StepRow['auto_winner'],
        created_at: now,
      })),
    );
    await this.store.insertVariants(
      trx,
      variants.map((v): VariantRow => ({
        ...v,
        id: newId(),
        campaign_id: toId,
        step_id: newIdOf(v.step_id),
        created_at: now,
      })),
    );
    for (const s of subsequences) {
      if (s.trigger_step_id && newIds.has(s.trigger_step_id))
        await this.subsequences.update(trx, newIdOf(s.id), { trigger_step_id: newIdOf(s.trigger_step_id) });
    }
  }
}
