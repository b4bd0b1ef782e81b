/** reply_intents: the intent of each reply (one row per inbound reply), and its counts for analytics. */
import type { Executor } from '../../db';
import { addDays } from '../../time/days';

export interface IntentRow {
  message_id: string;
  workspace_id: string;
  campaign_id: string | null;
  step_id: string | null;
  variant_id: string | null;
  contact_id: string | null;
  intent: string;
  source: 'rules' | 'user';
  referral_name: string | null;
  referral_email: string | null;
  replied_at: Date;
  decided_at: Date;
}

export interface IntentCountRow {
  step_id: string | null;
  variant_id: string | null;
  g_step: number;
  g_variant: number;
  intent: string;
  n: number;
}

export class IntentStore {
  async insert(db: Executor, row: IntentRow): Promise<void> {
    await db('reply_intents').insert(row).onConflict('message_id').ignore();
  }

  async forMessages(db: Executor, workspaceId: string, messageIds: string[]): Promise<IntentRow[]> {
    if (messageIds.length === 0) return [];
    return db('reply_intents').where('workspace_id', workspaceId).whereIn('message_id', messageIds);
  }

  async update(
    db: Executor,
    workspaceId: string,
    messageId: string,
    patch: Pick<IntentRow, 'intent' | 'source' | 'referral_name' | 'referral_email' | 'decided_at'>,
  ): Promise<IntentRow | undefined> {
    const [row] = await db('reply_intents')
      .where({ workspace_id: workspaceId, message_id: messageId })
      .update(patch)
      .returning<IntentRow[]>('*');
    return row;
  }

  /** Replies of one campaign per intent and (step, variant), per step and in all, replied within the days. */
  async countsByVariant(
    db: Executor,
    scope: { workspaceId: string; campaignId: string; days: { startDate: string; endDate: string; timezone: string } },
  ): Promise<IntentCountRow[]> {
    const { startDate, endDate, timezone } = scope.days;
    return db('reply_intents')
      .where({ workspace_id: scope.workspaceId, campaign_id: scope.campaignId })
      .andWhereRaw('replied_at >= (?::timestamp AT TIME ZONE ?)', [startDate, timezone])
      .andWhereRaw('replied_at < (?::timestamp AT TIME ZONE ?)', [addDays(endDate, 1), timezone])
      .groupByRaw('intent, GROUPING SETS ((step_id, variant_id), (step_id), ())')
      .select(
        'step_id',
        'variant_id',
        'intent',
        db.raw('GROUPING(step_id)::int AS g_step'),
        db.raw('GROUPING(variant_id)::int AS g_variant'),
        db.raw('count(*)::int AS n'),
      );
  }
}
