/**
 * What a preview reads of one contact: its fields, status and place in the sequence (the engine's read model,
 * joined like the claim's, for one contact), and the campaign options that change what is sent.
 */
import { jsonColumn, type Executor } from '../../db';
import { MESSAGE_CONTACT_COLUMNS, type ProgressRow } from './store';
import type { ContactFields } from './message';

export type PreviewContact = ContactFields & {
  id: string;
  status: string;
  timezone: string | null;
} & {
  [K in 'step_number' | 'state' | 'due_at' | 'reason' | 'last_message_id' | 'subsequence_id']: ProgressRow[K] | null;
};

export interface PreviewCampaign {
  id: string;
  workspace_id: string;
  text_only: boolean;
  first_email_text_only: boolean;
  copy_to: { cc: string[]; bcc: string[] };
  stop_on_open: boolean;
  stop_on_click: boolean;
  verified_only: boolean;
}

export class PreviewStore {
  async contact(
    db: Executor,
    workspaceId: string,
    campaignId: string,
    contactId: string,
  ): Promise<PreviewContact | undefined> {
    return db('contacts as c')
      .leftJoin('sending_progress as p', 'p.contact_id', 'c.id')
      .where({ 'c.id': contactId, 'c.workspace_id': workspaceId, 'c.campaign_id': campaignId })
      .first<PreviewContact | undefined>(
        'c.id',
        'c.status',
        ...MESSAGE_CONTACT_COLUMNS,
        'p.step_number',
        'p.state',
        'p.due_at',
        'p.reason',
        'p.last_message_id',
        'p.subsequence_id',
      );
  }

  async campaign(db: Executor, campaignId: string): Promise<PreviewCampaign> {
    const row = await db('campaigns')
      .where({ id: campaignId })
      .first<PreviewCampaign>(
        'id',
        'workspace_id',
        'text_only',
        'first_email_text_only',
        'copy_to',
        'stop_on_open',
        'stop_on_click',
        'verified_only',
      );
    return { ...row, copy_to: jsonColumn(row.copy_to) as PreviewCampaign['copy_to'] };
  }
}
