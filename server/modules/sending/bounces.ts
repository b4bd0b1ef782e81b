/**
 * Bounce accounting: an account whose recent hard-bounce rate passes its threshold is paused before it harms
 * its domain, and so is a campaign past the campaign threshold when the workspace turned that rule on. Hard
 * bounces count whether SMTP refused the message or a delivery status notification reported it later.
 */
import type { Executor } from '../../db';
import type { Clock } from '../../platform/clock';
import type { AccountMailAccess } from '../account';
import type { MailService } from '../mail';
import type { WorkspaceSendingSettings } from './settings';
import type { SendingStore } from './store';

/** The campaign module's bounce protection: pauses an active campaign with the reason `bounce_rate` and its event. */
export interface CampaignBounces {
  pauseForBounces(db: Executor, workspaceId: string, campaignId: string, message: string): Promise<void>;
}

/** What BounceProtection is built from, by name. */
interface BounceProtectionDeps {
  store: SendingStore;
  accounts: AccountMailAccess;
  mail: MailService;
  campaigns: CampaignBounces;
  settings: WorkspaceSendingSettings;
  clock: Clock;
}

/** Counts hard bounces against the account's and the campaign's rules. */
export class BounceProtection {
  private readonly store: SendingStore;
  private readonly accounts: AccountMailAccess;
  private readonly mail: MailService;
  private readonly campaigns: CampaignBounces;
  private readonly settings: WorkspaceSendingSettings;
  private readonly clock: Clock;

  constructor({ store, accounts, mail, campaigns, settings, clock }: BounceProtectionDeps) {
    this.store = store;
    this.accounts = accounts;
    this.mail = mail;
    this.campaigns = campaigns;
    this.settings = settings;
    this.clock = clock;
  }
  /**
   * A hard bounce reported after SMTP accepted the message (a delivery status notification the inbox read),
   * in the caller's transaction: the message reads `bounced`, the contact's progress ends, and bounce
   * protection counts it like an SMTP 5xx. The inbox marks the contact, suppresses and records the event.
   */
  async recordLateHardBounce(trx: Executor, workspaceId: string, messageId: string): Promise<void> {
    const message = await this.mail.markLateBounce(trx, messageId);
    if (!message) return;
    if (message.contact_id)
      await this.store.updateProgress(trx, message.contact_id, {
        state: 'done',
        reason: 'bounced',
        updated_at: this.clock.now(),
      });
    if (message.account_id && message.kind === 'campaign')
      await this.protect(trx, workspaceId, message.account_id, message.campaign_id);
  }

  /**
   * Bounce protection after a hard bounce: an account whose recent hard-bounce rate passes its threshold is
   * paused before it harms its domain, and, when the workspace turned the campaign rule on, so is a campaign
   * whose recent rate passes the campaign threshold. Each pause carries its reason and event.
   */
  async protect(trx: Executor, workspaceId: string, accountId: string, campaignId: string | null): Promise<void> {
    const settings = await this.settings.read(trx, workspaceId);
    const own = await this.accounts.bounceRule(trx, accountId);
    const window = own.window ?? settings.bounceWindow;
    const rate = own.ratePercent ?? settings.bounceRatePercent;
    const account = await this.mail.recentOutcomes(trx, accountId, window);
    if (tripped(account, window, rate))
      await this.accounts.changeStatus(
        trx,
        accountId,
        'paused',
        `bounce_rate: ${account.bounced} hard bounces in the last ${account.total} sends (more than ${rate}%)`,
      );
    if (campaignId === null || settings.campaignBounceRatePercent === null) return;
    const campaign = await this.mail.recentCampaignOutcomes(trx, campaignId, settings.campaignBounceWindow);
    if (tripped(campaign, settings.campaignBounceWindow, settings.campaignBounceRatePercent))
      await this.campaigns.pauseForBounces(
        trx,
        workspaceId,
        campaignId,
        `${campaign.bounced} hard bounces in the last ${campaign.total} sends (more than ${settings.campaignBounceRatePercent}%).`,
      );
  }
}

/** More than `ratePercent` of the last `window` sends hard-bounced (never before `window` sends). */
function tripped(recent: { total: number; bounced: number }, window: number, ratePercent: number): boolean {
  return recent.total >= window && recent.bounced * 100 > recent.total * ratePercent;
}
