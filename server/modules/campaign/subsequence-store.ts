/**
 * Subsequences (their rows, the contacts that entered each) and their steps, which are campaign_steps and
 * step_variants rows with `subsequence_id` set. Every query is scoped by workspace or by a row found in it.
 */
import type { Executor } from '../../db';
import type { StepRow, VariantRow } from './store';

export type TriggerType = 'replyIntent' | 'leadStatus' | 'opened' | 'clicked' | 'noReply' | 'replyContains';

export interface SubsequenceRow {
  id: string;
  workspace_id: string;
  campaign_id: string;
  name: string;
  status: 'active' | 'paused';
  trigger_type: TriggerType;
  trigger_value: string | null;
  trigger_step_id: string | null;
  created_at: Date;
  updated_at: Date;
}

export interface SubsequenceStepRow extends StepRow {
  subsequence_id: string;
}

export class SubsequenceStore {
  async find(
    db: Executor,
    workspaceId: string,
    id: string,
    options: { forUpdate?: boolean } = {},
  ): Promise<SubsequenceRow | undefined> {
    const q = db('subsequences')
      .where({ workspace_id: workspaceId, id })
      // A deleted campaign's subsequences are gone with it.
      .whereNotExists(
        db('campaigns as c')
          .whereRaw('c.id = subsequences.campaign_id')
          .whereNotNull('c.deleted_at')
          .select(db.raw('1')),
      );
    if (options.forUpdate) q.forUpdate('subsequences');
    return q.first<SubsequenceRow | undefined>();
  }

  /** The campaign's subsequences, oldest first. */
  async ofCampaign(db: Executor, campaignId: string): Promise<SubsequenceRow[]> {
    return db('subsequences')
      .where('campaign_id', campaignId)
      .orderBy([{ column: 'created_at' }, { column: 'id' }])
      .select<SubsequenceRow[]>('*');
  }

  async page(
    db: Executor,
    workspaceId: string,
    campaignId: string,
    page: { limit: number; skip: number },
  ): Promise<{ rows: SubsequenceRow[]; total: number }> {
    const base = () => db('subsequences').where({ workspace_id: workspaceId, campaign_id: campaignId });
    const rows = await base()
      .orderBy([{ column: 'created_at' }, { column: 'id' }])
      .limit(page.limit)
      .offset(page.skip)
      .select<SubsequenceRow[]>('*');
    const [{ n }] = await base().select<{ n: number }[]>(db.raw('count(*)::int AS n'));
    return { rows, total: n };
  }

  async countInCampaign(db: Executor, campaignId: string): Promise<number> {
    const [{ n }] = await db('subsequences')
      .where({ campaign_id: campaignId })
      .select<{ n: number }[]>(db.raw('count(*)::int AS n'));
    return n;
  }

  /**
   * The campaign's active subsequences whose trigger is one of `types` and that the contact has not entered,
   * oldest first (the order triggers are tried in).
   */
  async candidates(
    db: Executor,
    campaignId: string,
    contactId: string,
    types: TriggerType[],
  ): Promise<SubsequenceRow[]> {
    return db('subsequences as s')
      .where({ 's.campaign_id': campaignId, 's.status': 'active' })
      .whereIn('s.trigger_type', types)
      .whereNotExists(
        db('subsequence_entries as e')
          .whereRaw('e.subsequence_id = s.id')
          .andWhere('e.contact_id', contactId)
          .select(db.raw('1')),
      )
      .orderBy([{ column: 's.created_at' }, { column: 's.id' }])
      .select<SubsequenceRow[]>('s.*');
  }

  /** Records the entry; false when the contact had entered this subsequence already (a concurrent trigger). */
  async enter(
    db: Executor,
    row: { subsequence_id: string; contact_id: string; workspace_id: string; entered_at: Date },
  ) {
    const inserted: unknown[] = await db('subsequence_entries')
      .insert(row)
      .onConflict(['subsequence_id', 'contact_id'])
      .ignore()
      .returning('contact_id');
    return inserted.length > 0;
  }

  async entered(db: Executor, subsequenceIds: string[]): Promise<Map<string, number>> {
    if (subsequenceIds.length === 0) return new Map();
    const rows: { subsequence_id: string; n: number }[] = await db('subsequence_entries')
      .whereIn('subsequence_id', subsequenceIds)
      .groupBy('subsequence_id')
      .select('subsequence_id', db.raw('count(*)::int AS n'));
    return new Map(rows.map((r) => [r.subsequence_id, r.n]));
  }

  async insert(db: Executor, rows: SubsequenceRow[]): Promise<void> {
    if (rows.length) await db('subsequences').insert(rows);
  }

  async update(db: Executor, id: string, changes: Partial<Omit<SubsequenceRow, 'id' | 'workspace_id'>>) {
    await db('subsequences').where({ id }).update(changes);
  }

  async delete(db: Executor, id: string): Promise<void> {
    await db('subsequences').where({ id }).delete();
  }

  // Steps -----------------------------------------------------------------------------------------

  /** The subsequences' steps in order, and their variants by label. */
  async steps(
    db: Executor,
    subsequenceIds: string[],
  ): Promise<{ steps: SubsequenceStepRow[]; variants: VariantRow[] }> {
    if (subsequenceIds.length === 0) return { steps: [], variants: [] };
    const steps = await db('campaign_steps')
      .whereIn('subsequence_id', subsequenceIds)
      .orderBy([{ column: 'subsequence_id' }, { column: 'step_order' }])
      .select<SubsequenceStepRow[]>('*');
    const variants = steps.length
      ? await db('step_variants')
          .whereIn(
            'step_id',
            steps.map((s) => s.id),
          )
          .orderBy([{ column: 'step_id' }, { column: 'label' }])
          .select<VariantRow[]>('*')
      : [];
    return { steps, variants };
  }

  /** A step of the campaign (main sequence or a subsequence). */
  async campaignStep(db: Executor, campaignId: string, stepId: string): Promise<{ id: string } | undefined> {
    return db('campaign_steps').where({ campaign_id: campaignId, id: stepId }).first<{ id: string } | undefined>('id');
  }

  async replaceSteps(db: Executor, subsequenceId: string, steps: SubsequenceStepRow[], variants: VariantRow[]) {
    await db('campaign_steps').where({ subsequence_id: subsequenceId }).delete();
    if (steps.length) await db('campaign_steps').insert(steps);
    if (variants.length) await db('step_variants').insert(variants);
  }
}
