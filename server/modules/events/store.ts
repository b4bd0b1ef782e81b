/** email_events: the rows analytics count. */
import type { Executor } from '../../db';

export interface EmailEventRow {
  id: string;
  workspace_id: string;
  campaign_id: string | null;
  step_id: string | null;
  variant_id: string | null;
  account_id: string | null;
  contact_id: string | null;
  message_id: string | null;
  type: string;
  is_warmup: boolean;
  flagged: boolean;
  occurred_at: Date;
}

export class EventStore {
  async insertEmailEvent(db: Executor, row: EmailEventRow): Promise<void> {
    await db('email_events').insert(row);
  }
}
