/**
 * Account vitals: the domain's DNS records and blocklist listings (vitals.ts), the account's reputation over
 * the last 30 days from its stored events, and its warm-up health, with one score and the reasons it is not 100.
 */
import type { components } from '../../../generated/api';
import type { Db, Executor } from '../../db';
import type { Clock } from '../../platform/clock';
import type { Config } from '../../platform/config';
import type { DnsLookup } from '../../platform/dns';
import { domainOf } from '../../platform/email-address';
import { detail, notFound } from '../../platform/errors';
import { type EventService, percent } from '../events';
import type { ZonedWorkspace } from '../workspace';
import { PROVIDER_SERVERS } from './connect';
import type { AccountRow, AccountStore } from './store';
import { checkBlocklists, checkDomain, memoizedA, scoreOf, type DomainVitals } from './vitals';

type Schemas = components['schemas'];

/** The warm-up health (inbox share of the last 7 days) of each of `accountIds`. */
export type WarmupHealthOf = (db: Executor, accountIds: string[]) => Promise<Map<string, Schemas['WarmupHealth']>>;

const REPUTATION_DAYS = 30;

/** What AccountVitals is built from, by name. */
interface AccountVitalsDeps {
  db: Db;
  store: AccountStore;
  events: EventService;
  dns: DnsLookup;
  config: Pick<Config, 'dkimSelectors' | 'dnsblIpZones' | 'dnsblDomainZones'>;
  clock: Clock;
  /** Warm-up health per account (the warmup module's, wired by the composition root). */
  warmupHealth: WarmupHealthOf;
}

/** Answers POST /v2/account/vitals. */
export class AccountVitals {
  private readonly db: Db;
  private readonly store: AccountStore;
  private readonly events: EventService;
  private readonly dns: DnsLookup;
  private readonly config: Pick<Config, 'dkimSelectors' | 'dnsblIpZones' | 'dnsblDomainZones'>;
  private readonly clock: Clock;
  private readonly warmupHealth: WarmupHealthOf;

  constructor({ db, store, events, dns, config, clock, warmupHealth }: AccountVitalsDeps) {
    this.db = db;
    this.store = store;
    this.events = events;
    this.dns = dns;
    this.config = config;
    this.clock = clock;
    this.warmupHealth = warmupHealth;
  }
  async check(
    workspace: ZonedWorkspace,
    body: Schemas['EmailAccountVitalsRequest'],
  ): Promise<Schemas['EmailAccountVitals'][]> {
    const rows = await this.store.findMany(this.db, workspace.id, body.accountIds);
    const byId = new Map(rows.map((r) => [r.id, r]));
    const unknown = body.accountIds.map((id, i) => ({ id, i })).filter(({ id }) => !byId.has(id));
    if (unknown.length) {
      throw notFound(
        unknown.length === 1 ? 'Email account not found.' : `${unknown.length} email accounts not found.`,
        unknown.map(({ id, i }) => detail(`accountIds.${i}`, `email account ${id} not found`, 'not_found')),
      );
    }
    const selectors = body.dkimSelectors ?? this.config.dkimSelectors;
    // One look-up set per domain, however many accounts share it.
    const domains = new Map<string, Promise<DomainVitals>>();
    const domainOfRow = (row: AccountRow) => domainOf(row.email).toLowerCase();
    for (const row of rows) {
      const domain = domainOfRow(row);
      if (!domains.has(domain)) domains.set(domain, checkDomain(this.dns, domain, selectors));
    }
    const since = new Date(this.clock.now().getTime() - REPUTATION_DAYS * 86_400_000);
    const a = memoizedA(this.dns);
    const zones = { ip: this.config.dnsblIpZones, domain: this.config.dnsblDomainZones };
    const health = await this.warmupHealth(this.db, body.accountIds);
    return Promise.all(
      body.accountIds.map(async (id) => {
        const row = byId.get(id)!;
        const domain = domainOfRow(row);
        const smtpHost = row.smtp_host ?? PROVIDER_SERVERS[row.provider].smtp?.[0] ?? domain;
        const [checks, blocklists, totals] = await Promise.all([
          domains.get(domain)!,
          checkBlocklists(a, domain, smtpHost, zones),
          this.events.accountCountsSince(this.db, {
            workspaceId: workspace.id,
            accountId: id,
            since,
            timezone: workspace.timezone,
          }),
        ]);
        const reputation = {
          days: REPUTATION_DAYS,
          sent: totals.sent,
          bounced: totals.bounced,
          replied: totals.replied,
          unsubscribed: totals.unsubscribed,
          bounceRatePercent: percent(totals.bounced, totals.sent),
          replyRatePercent: percent(totals.replied, totals.sent),
          unsubscribeRatePercent: percent(totals.unsubscribed, totals.sent),
        } as const;
        return {
          accountId: row.id,
          email: row.email,
          domain,
          ...checks,
          blocklists,
          reputation,
          warmupHealth: health.get(id)!,
          ...scoreOf({
            domain,
            checks,
            blocklists,
            bounceRatePercent: reputation.bounceRatePercent,
            unsubscribeRatePercent: reputation.unsubscribeRatePercent,
            warmupHealth: health.get(id)!,
          }),
        };
      }),
    );
  }
}
