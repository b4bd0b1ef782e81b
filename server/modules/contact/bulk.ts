/**
 * `POST /v2/contact/bulk`: one action on every contact a filter selects. The job module stores the selection as a
 * job's rows and applies them in batches through `apply`, which gives each contact the rules of its
 * single-contact operation (pause, resume, move, delete, lead status) but reports each one instead of failing
 * the whole batch.
 */
import type { components } from '../../../generated/api';
import type { Db, Executor } from '../../db';
import { invalid, detail } from '../../platform/errors';
import type { CampaignService } from '../campaign';
import type { ContactLifecycle } from './lifecycle';
import type { ContactListing } from './listing';
import type { Outcomes } from './outcomes';
import type { ContactService } from './service';

export type ContactBulkRequest = components['schemas']['ContactBulkRequest'];

/** Fields only one action takes. */
const ONLY_FOR: Record<'toCampaignId' | 'keepProgress' | 'leadStatus', ContactBulkRequest['action']> = {
  toCampaignId: 'move',
  keepProgress: 'move',
  leadStatus: 'setLeadStatus',
};

export interface ContactBulkDeps {
  db: Db;
  listing: ContactListing;
  contacts: ContactService;
  lifecycle: ContactLifecycle;
  campaigns: CampaignService;
}

export class ContactBulk {
  private readonly db: Db;
  private readonly listing: ContactListing;
  private readonly contacts: ContactService;
  private readonly lifecycle: ContactLifecycle;
  private readonly campaigns: CampaignService;

  constructor({ db, listing, contacts, lifecycle, campaigns }: ContactBulkDeps) {
    this.db = db;
    this.listing = listing;
    this.contacts = contacts;
    this.lifecycle = lifecycle;
    this.campaigns = campaigns;
  }

  /** The request's 400 (a field the action needs or does not take) and 404 (a campaign not the workspace's). */
  async check(workspaceId: string, request: ContactBulkRequest): Promise<void> {
    for (const [field, action] of Object.entries(ONLY_FOR))
      if (field in request && request.action !== action)
        throw invalid(`${field} is only for the ${action} action.`, [
          detail(field, `must not be sent with action ${request.action}`, 'oneOf'),
        ]);
    const needed =
      request.action === 'move' ? 'toCampaignId' : request.action === 'setLeadStatus' ? 'leadStatus' : null;
    if (needed && !(needed in request))
      throw invalid(`${needed} is required with the ${request.action} action.`, [
        detail(needed, `must have required property '${needed}'`, 'required'),
      ]);
    await this.listing.assertCampaign(this.db, workspaceId, request.filter);
    if (request.toCampaignId) await this.campaigns.assertExists(this.db, workspaceId, request.toCampaignId);
  }

  /** The contacts the request's filter selects now, oldest first. */
  select(workspaceId: string, request: ContactBulkRequest) {
    return this.listing.select(workspaceId, request.filter);
  }

  /** Applies the action to the contacts of `ids` in the job's transaction; a contact deleted meanwhile has no outcome. */
  async apply(trx: Executor, workspaceId: string, request: ContactBulkRequest, ids: string[]): Promise<Outcomes> {
    switch (request.action) {
      case 'pause':
        return this.lifecycle.changeEach(trx, workspaceId, ids, 'paused');
      case 'resume':
        return this.lifecycle.changeEach(trx, workspaceId, ids, 'active');
      case 'move':
        // The target may have been deleted since the job was accepted: the job then fails with the 404's message.
        await this.campaigns.assertExists(trx, workspaceId, request.toCampaignId!);
        return this.lifecycle.moveEach(trx, workspaceId, ids, request.toCampaignId!, request.keepProgress ?? false);
      case 'delete':
        return this.contacts.deleteEach(trx, workspaceId, ids);
      case 'setLeadStatus':
        return this.contacts.setLeadStatusEach(trx, workspaceId, ids, request.leadStatus ?? null);
    }
  }
}
