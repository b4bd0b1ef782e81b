/**
 * The email accounts linked to a campaign: listing, linking and unlinking them (an active campaign keeps at least
 * one), how many may send, and what happens to campaigns when an account is removed.
 */
import type { components } from '../../../generated/api';
import type { Clock } from '../../platform/clock';
import type { Db, Executor } from '../../db';
import { conflict, detail, notFound } from '../../platform/errors';
import type { Page } from '../../platform/paging';
import type { AccountService } from '../account';
import type { CampaignStore } from './store';
import { findCampaign, iso } from './view';

type Schemas = components['schemas'];
type CampaignAccount = Schemas['CampaignAccount'];
type AccountsChange = Schemas['CampaignAccountsChange'];

/** What the campaign module asks of the account module: which of a campaign's accounts exist and may send. */
export type CampaignAccountsOf = Pick<AccountService, 'summaries' | 'countActive' | 'existingIds'>;

/** What CampaignAccounts is built from, by name. */
interface CampaignAccountsDeps {
  db: Db;
  store: CampaignStore;
  accounts: CampaignAccountsOf;
  clock: Clock;
}

export class CampaignAccounts {
  private readonly db: Db;
  private readonly store: CampaignStore;
  private readonly accounts: CampaignAccountsOf;
  private readonly clock: Clock;

  constructor({ db, store, accounts, clock }: CampaignAccountsDeps) {
    this.db = db;
    this.store = store;
    this.accounts = accounts;
    this.clock = clock;
  }

  async listAccounts(workspaceId: string, campaignId: string, page: Page) {
    const campaign = await findCampaign(this.store, this.db, workspaceId, campaignId);
    const links = await this.store.links(this.db, campaignId, page);
    const accounts = await this.accounts.summaries(
      this.db,
      workspaceId,
      links.map((l) => l.account_id),
    );
    // A link whose account went between the two reads (the link goes with it) is left out.
    const items: CampaignAccount[] = links.flatMap((l) => {
      const account = accounts.get(l.account_id);
      return account ? [{ ...account, linkedAt: iso(l.created_at) }] : [];
    });
    return { campaignId, items, page, total: campaign.account_count };
  }

  /** How many of the campaign's linked accounts may send (status active). */
  async sendableAccounts(db: Executor, workspaceId: string, campaignId: string): Promise<number> {
    return this.accounts.countActive(db, workspaceId, await this.store.linkedAccountIds(db, campaignId));
  }

  // Removing an account (LinkedCampaigns, injected into the account module) ---------------------------

  lockLinkedTo(trx: Executor, workspaceId: string, accountId: string): Promise<{ id: string; name: string }[]> {
    return this.store.lockLinkedTo(trx, workspaceId, accountId);
  }

  /** An active campaign without any account has nothing to send from: it is paused, and the caller says so. */
  async pauseWithoutAccounts(trx: Executor, campaignIds: string[]): Promise<string[]> {
    const orphaned = await this.store.activeWithoutAccounts(trx, campaignIds);
    await this.store.pause(trx, orphaned, this.clock.now());
    return orphaned;
  }

  /** An active campaign whose accounts all stopped sending for good (a dead OAuth grant) is paused. */
  async pauseWithoutSenders(trx: Executor, campaignIds: string[]): Promise<string[]> {
    const orphaned = await this.store.activeWithoutSenders(trx, campaignIds);
    await this.store.pause(trx, orphaned, this.clock.now());
    return orphaned;
  }

  // Linking and unlinking ----------------------------------------------------------------------------

  async setAccounts(workspaceId: string, campaignId: string, accountIds: string[]): Promise<AccountsChange> {
    return this.changeAccounts(workspaceId, campaignId, accountIds, 'accountIds', (current) => ({
      added: accountIds.filter((id) => !current.includes(id)),
      removed: current.filter((id) => !accountIds.includes(id)),
    }));
  }

  async addAccount(workspaceId: string, campaignId: string, accountId: string): Promise<AccountsChange> {
    return this.changeAccounts(workspaceId, campaignId, [accountId], 'accountId', (current) => ({
      added: current.includes(accountId) ? [] : [accountId],
      removed: [],
    }));
  }

  async removeAccounts(workspaceId: string, campaignId: string, accountIds: string[]): Promise<AccountsChange> {
    return this.changeAccounts(workspaceId, campaignId, accountIds, 'accountIds', (current) => ({
      added: [],
      removed: current.filter((id) => accountIds.includes(id)),
    }));
  }

  /**
   * Checks that every id is one of the workspace's email accounts, or throws 404 naming each unknown
   * one (`field.<index>`, or `field` itself for a single id).
   */
  async assertAccounts(db: Executor, workspaceId: string, ids: string[], field: string): Promise<void> {
    const known = await this.accounts.existingIds(db, workspaceId, ids);
    const unknown = ids.map((id, index) => ({ id, index })).filter(({ id }) => !known.has(id));
    if (unknown.length === 0) return;
    throw notFound(
      `Email account not found: ${unknown.map((u) => u.id).join(', ')}.`,
      unknown.map((u) =>
        detail(
          field === 'accountId' ? field : `${field}.${u.index}`,
          `Email account ${u.id} not found in this workspace.`,
          'not_found',
        ),
      ),
    );
  }

  private async changeAccounts(
    workspaceId: string,
    campaignId: string,
    ids: string[],
    field: string,
    plan: (current: string[]) => { added: string[]; removed: string[] },
  ): Promise<AccountsChange> {
    return this.db.transaction(async (trx) => {
      const campaign = await findCampaign(this.store, trx, workspaceId, campaignId, { forUpdate: true });
      await this.assertAccounts(trx, workspaceId, ids, field);
      const current = await this.store.linkedAccountIds(trx, campaignId);
      const { added, removed } = plan(current);
      // An active campaign (also one that reads completed: new contacts resume it) keeps a sender.
      if (campaign.status === 'active' && current.length + added.length - removed.length === 0) {
        throw conflict(
          'An active campaign keeps at least one linked email account: pause it first, or link another account.',
          [detail(field, 'would leave the active campaign without an email account.', 'last_account')],
        );
      }
      const now = this.clock.now();
      await this.store.link(trx, workspaceId, campaignId, added, now);
      await this.store.unlink(trx, campaignId, removed);
      if (added.length || removed.length) await this.store.update(trx, workspaceId, campaignId, { updated_at: now });
      return { campaignId, accountIds: await this.store.linkedAccountIds(trx, campaignId), added, removed };
    });
  }
}
