/**
 * Analytics of stored email events, from the rollups the events module keeps as it records them (their
 * cost does not grow with the events stored): campaign summaries with a daily series, step and variant
 * breakdowns, campaign counts and today's sends per account.
 * Days are the workspace's (its time zone). Campaigns, contacts and accounts are read through their
 * modules' services; analytics has no tables of its own.
 */
import type { components } from '../../../generated/api';
import type { Db } from '../../db';
import type { Clock } from '../../platform/clock';
import { pageOf } from '../../platform/paging';
import { type AccountService, accountNotFound } from '../account';
import type { CampaignService } from '../campaign';
import type { ZonedWorkspace } from '../workspace';
import type { ContactService } from '../contact';
import { type IntentCounts, type ReplyIntentService, zeroIntents } from '../inbox';
import { dayIn, resolveRange, type DayRange } from '../../time/days';
import { type EventCounts, type EventService, type ReplyCounts, percent, zeroCounts } from '../events';

type Schemas = components['schemas'];
type Rates = Schemas['AnalyticsRates'];

function rates(counts: EventCounts, base: number): Rates {
  return {
    openRate: percent(counts.opened, base),
    clickRate: percent(counts.clicked, base),
    replyRate: percent(counts.replied, base),
    bounceRate: percent(counts.bounced, base),
    unsubscribeRate: percent(counts.unsubscribed, base),
  };
}

function pick<K extends string>(counts: Record<string, number>, keys: readonly K[]): Record<K | 'total', number> {
  const picked = Object.fromEntries(keys.map((k) => [k, counts[k] ?? 0])) as Record<K, number>;
  return { total: Object.values<number>(counts).reduce((a, b) => a + b, 0), ...picked };
}

/** The A/Z winners the sending engine picked, per step (the sending module implements it). */
export interface StepWinners {
  stepWinners(campaignId: string): Promise<Map<string, string>>;
}

/** What AnalyticsService is built from, by name. */
export interface AnalyticsServiceDeps {
  db: Db;
  events: EventService;
  campaigns: CampaignService;
  contacts: ContactService;
  accounts: AccountService;
  intents: ReplyIntentService;
  clock: Clock;
  winners: StepWinners;
}

export class AnalyticsService {
  private readonly db: Db;
  private readonly events: EventService;
  private readonly campaigns: CampaignService;
  private readonly contacts: ContactService;
  private readonly accounts: AccountService;
  private readonly intents: ReplyIntentService;
  private readonly clock: Clock;
  private readonly winners: StepWinners;

  constructor({ db, events, campaigns, contacts, accounts, intents, clock, winners }: AnalyticsServiceDeps) {
    this.db = db;
    this.events = events;
    this.campaigns = campaigns;
    this.contacts = contacts;
    this.accounts = accounts;
    this.intents = intents;
    this.clock = clock;
    this.winners = winners;
  }

  private range(workspace: ZonedWorkspace, query: { startDate?: string; endDate?: string }): DayRange {
    return resolveRange(query, workspace.timezone, this.clock.now());
  }

  async campaignSummary(
    workspace: ZonedWorkspace,
    query: { campaignId?: string; startDate?: string; endDate?: string },
  ): Promise<Schemas['CampaignAnalyticsSummary']> {
    const range = this.range(workspace, query);
    if (query.campaignId) await this.campaigns.assertExists(this.db, workspace.id, query.campaignId);
    const { totals, unique, byDay } = await this.events.rangeCounts(this.db, {
      workspaceId: workspace.id,
      campaignId: query.campaignId,
      days: range,
    });
    return {
      campaignId: query.campaignId ?? null,
      startDate: range.startDate,
      endDate: range.endDate,
      timezone: range.timezone,
      totals,
      unique,
      rates: rates(unique, unique.sent),
      graph: range.days.map((date) => ({ date, ...(byDay.get(date) ?? zeroCounts()) })),
    };
  }

  /** GET /v2/analytics/campaign/steps: replies, auto-replies and bounces per step and variant, each variant's stats and winner. */
  async campaignSteps(
    workspace: ZonedWorkspace,
    query: { campaignId: string; startDate?: string; endDate?: string },
  ): Promise<Schemas['CampaignStepAnalytics']> {
    const range = this.range(workspace, query);
    await this.campaigns.assertExists(this.db, workspace.id, query.campaignId);
    const layout = await this.campaigns.stepsAndVariants(this.db, query.campaignId);
    const variantIds = layout.flatMap((item) => (item.variant_id ? [item.variant_id] : []));
    const [byScope, intents, stats, winners] = await Promise.all([
      this.events.replyCounts(this.db, {
        workspaceId: workspace.id,
        campaignId: query.campaignId,
        stepIds: [...new Set(layout.map((item) => item.step_id))],
        variantIds,
        days: range,
      }),
      this.intents.countsByVariant(this.db, { workspaceId: workspace.id, campaignId: query.campaignId, days: range }),
      this.events.variantContacts(this.db, { workspaceId: workspace.id, variantIds, days: range }),
      this.winners.stepWinners(query.campaignId),
    ]);
    const counts = (
      c: ReplyCounts | undefined,
      byIntent: IntentCounts = zeroIntents(),
    ): Schemas['ReplyAnalyticsCounts'] => {
      const r = c ?? {
        sent: 0,
        contactsSent: 0,
        replies: 0,
        uniqueReplies: 0,
        autoReplies: 0,
        bounces: 0,
        uniqueBounces: 0,
      };
      return {
        sent: r.sent,
        contactsSent: r.contactsSent,
        replies: r.replies,
        uniqueReplies: r.uniqueReplies,
        replyRate: percent(r.uniqueReplies, r.contactsSent),
        repliesByIntent: byIntent,
        autoReplies: r.autoReplies,
        bounces: r.bounces,
        bounceRate: percent(r.uniqueBounces, r.contactsSent),
      };
    };
    const steps: Schemas['CampaignStepAnalytics']['steps'] = [];
    for (const item of layout) {
      let step = steps[steps.length - 1];
      if (!step || step.stepId !== item.step_id) {
        step = {
          stepId: item.step_id,
          order: item.step_order,
          counts: counts(byScope.get(`step:${item.step_id}`), intents.byStep.get(item.step_id)),
          winnerVariantId: winners.get(item.step_id) ?? null,
          variants: [],
        };
        steps.push(step);
      }
      if (item.variant_id)
        step.variants.push({
          variantId: item.variant_id,
          label: item.label!,
          counts: counts(byScope.get(`variant:${item.variant_id}`), intents.byVariant.get(item.variant_id)),
          stats: stats.get(item.variant_id) ?? zeroCounts(),
          winner: winners.get(item.step_id) === item.variant_id,
        });
    }
    return {
      campaignId: query.campaignId,
      startDate: range.startDate,
      endDate: range.endDate,
      timezone: range.timezone,
      campaign: counts(byScope.get(`campaign:${query.campaignId}`), intents.total),
      steps,
    };
  }

  async campaignCounts(
    workspaceId: string,
    query: { campaignId?: string },
  ): Promise<Schemas['CampaignAnalyticsCounts']> {
    const { campaignId } = query;
    if (campaignId) await this.campaigns.assertExists(this.db, workspaceId, campaignId);
    const [campaigns, contacts, events] = await Promise.all([
      this.campaigns.countByStatus(this.db, workspaceId, campaignId),
      this.contacts.countByStatus(this.db, workspaceId, campaignId),
      this.events.allTimeCounts(this.db, { workspaceId, campaignId }),
    ]);
    return {
      campaignId: campaignId ?? null,
      campaigns: pick(campaigns, ['draft', 'active', 'paused', 'completed'] as const),
      contacts: pick(contacts, ['active', 'paused', 'completed', 'bounced', 'unsubscribed'] as const),
      emails: events.totals,
      uniqueContacts: events.unique,
    };
  }

  async sentToday(workspace: ZonedWorkspace, query: { limit?: number; skip?: number; accountId?: string }) {
    const {
      items: accounts,
      page,
      total,
    } = await this.accounts.list(workspace, {
      ...pageOf(query),
      id: query.accountId,
    });
    if (query.accountId && total === 0) throw accountNotFound();
    const date = dayIn(workspace.timezone, this.clock.now());
    const items: Schemas['AccountSentToday'][] = accounts.map((account) => {
      return {
        accountId: account.id,
        email: account.email,
        status: account.status,
        dailyLimit: account.dailyLimit,
        sentToday: account.sentToday,
        // Warm-up mail shares the daily limit.
        remainingToday: Math.max(0, account.dailyLimit - account.sentToday - account.warmupSentToday),
        warmupSentToday: account.warmupSentToday,
      };
    });
    return { date, timezone: workspace.timezone, items, page, total };
  }
}
