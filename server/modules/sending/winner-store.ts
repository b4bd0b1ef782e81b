/** step_tests: the engine's record of each A/Z test with an automatic winner (when it started, what it picked). */
import { jsonColumn, type Executor } from '../../db';

export interface StepTestRow {
  step_id: string;
  workspace_id: string;
  campaign_id: string;
  started_at: Date;
  winner_variant_id: string | null;
  decided_at: Date | null;
  figures: unknown;
}

export class StepTestStore {
  async ofCampaign(db: Executor, campaignId: string): Promise<StepTestRow[]> {
    const rows = await db('step_tests').where({ campaign_id: campaignId }).select<StepTestRow[]>('*');
    return rows.map((r) => ({ ...r, figures: jsonColumn(r.figures) }));
  }

  /** The test's start, once: the first claim of the step. */
  async start(db: Executor, row: Pick<StepTestRow, 'step_id' | 'workspace_id' | 'campaign_id' | 'started_at'>) {
    await db('step_tests').insert(row).onConflict('step_id').ignore();
  }

  async decide(db: Executor, stepId: string, winner: { variantId: string; at: Date; figures: unknown }) {
    await db('step_tests')
      .where({ step_id: stepId })
      .update({ winner_variant_id: winner.variantId, decided_at: winner.at, figures: JSON.stringify(winner.figures) });
  }
}
