/**
 * The composition root: builds every store and service once from the injected dependencies
 * (config, database, clock, logger), so tests can swap any of them and run the real app.
 */
import type { Config } from './config';
import type { Db } from './db';
import type { Clock } from './clock';
import type { Logger } from './logger';
import { noTelemetry, type Telemetry } from './telemetry';
import { readFromReplica, replicaRouter } from './db/read-replica';
import { QuotaService } from './http/quota';
import type { Route } from './http/route';
import { accountRoutes } from './modules/account/routes';
import { analyticsRoutes } from './modules/analytics/routes';
import { placementRoutes } from './modules/placement/routes';
import { PlacementService } from './modules/placement/service';
import { PlacementStore } from './modules/placement/store';
import { warmupRoutes } from './modules/warmup/routes';
import { DEFAULT_WARMUP_SETTINGS, WarmupService } from './modules/warmup/service';
import { WarmupStore } from './modules/warmup/store';
import { campaignRoutes } from './modules/campaign/routes';
import { contactRoutes } from './modules/contact/routes';
import { inboxRoutes } from './modules/inbox/routes';
import { eventRoutes } from './modules/events/routes';
import { leadRoutes } from './modules/leads/routes';
import { listRoutes } from './modules/list/routes';
import { sendingRoutes } from './modules/sending/routes';
import { suppressionRoutes } from './modules/suppression/routes';
import { verificationRoutes } from './modules/verification/routes';
import { webhookRoutes } from './modules/webhooks/routes';
import { whitelabelRoutes } from './modules/whitelabel/routes';
import { keyRoutes, workspaceRoutes } from './modules/workspace/routes';
import { jobRoutes } from './modules/job/routes';
import { JobService } from './modules/job/service';
import { JobStore } from './modules/job/store';
import { IdempotencyStore } from './http/idempotency';
import { createDnsLookup } from './dns';
import {
  AccountMailAccess,
  AccountService,
  type SentTodayOf,
  type WarmupHealthOf,
  type LinkedCampaigns,
  type MailboxProvidersOf,
  type MailLoginCheck,
} from './modules/account/service';
import { AccountStore } from './modules/account/store';
import { OAuthConnectService } from './modules/account/oauth';
import { OAuthSessionStore } from './modules/account/oauth-sessions';
import { SecretBox } from './secrets';
import { AnalyticsService } from './modules/analytics/service';
import { VerificationService } from './modules/verification/service';
import { VerificationStore } from './modules/verification/store';
import { EnrichmentService } from './modules/leads/enrichment';
import { LeadStore } from './modules/leads/store';
import { CampaignService, type CampaignProgressPort } from './modules/campaign/service';
import { CampaignStore } from './modules/campaign/store';
import { ContactService, type ContactProgressPort } from './modules/contact/service';
import { ContactStore } from './modules/contact/store';
import { ContactLifecycle } from './modules/contact/lifecycle';
import { UNFINISHED_STATUSES } from './modules/contact/statuses';
import { CreditService } from './modules/credits/service';
import { CreditStore } from './modules/credits/store';
import { LeadService } from './modules/leads/service';
import { WorkspaceService } from './modules/workspace/service';
import { KeyService } from './modules/workspace/keys';
import { AuditService } from './modules/audit/service';
import { AuditStore } from './modules/audit/store';
import { auditRoutes } from './modules/audit/routes';
import { knownScopes } from './scopes';
import { readBundledSpec } from './project-root';
import { WorkspaceStore } from './modules/workspace/store';
import { WhitelabelService } from './modules/whitelabel/service';
import { ListService } from './modules/list/service';
import { ListStore } from './modules/list/store';
import { EventService } from './modules/events/service';
import { EventStore } from './modules/events/store';
import { DEFAULT_INBOX_SETTINGS, InboxService } from './modules/inbox/service';
import { SendingService } from './modules/sending/service';
import { SendingStore } from './modules/sending/store';
import { RecipientProviders } from './modules/sending/providers';
import { MailService, OAuthClients } from './modules/mail/service';
import { MailStore } from './modules/mail/store';
import { SuppressionService } from './modules/suppression/service';
import { SuppressionStore } from './modules/suppression/store';
import { TrackingService } from './modules/tracking/service';
import { TokenSigner } from './modules/tracking/tokens';
import { TrackingDomainService } from './modules/tracking/domains';
import { trackingDomainRoutes } from './modules/tracking/routes';
import { TrackingDomainStore } from './modules/tracking/domain-store';

import { WebhookService } from './modules/webhooks/service';
import { WebhookStore } from './modules/webhooks/store';
import { InboxStore } from './modules/inbox/store';
import { ReplyIntentService } from './modules/inbox/reply-intents';
import { IntentStore } from './modules/inbox/intent-store';

export interface Deps {
  config: Config;
  db: Db;
  clock: Clock;
  logger: Logger;
  /** Metrics (and traces' job runs) when METRICS_PORT is set; nothing is reported without it. */
  telemetry?: Telemetry;
  /** A read replica's pool (DATABASE_READ_URL), for the reads `readFromReplica` routes below. */
  readDb?: Db;
}

/** How long reads stay on the primary after the replica could not be reached, before it is tried again. */
const REPLICA_RETRY_MS = 5000;

/**
 * The services whose reads a replica answers (all of them the primary's without one): analytics; list pages and
 * exports; the event feed; job results. A read that must see the caller's own write stays on the primary: a list
 * or a job by its id (read right after creating it), lead search (its reveals charge credits).
 */
function withReplica(deps: Deps, services: ReturnType<typeof buildServices>) {
  const readable = {
    analytics: services.analytics,
    events: services.events,
    lists: services.lists,
    jobs: services.jobs,
  };
  if (!deps.readDb) return readable;
  const replica = buildServices({ ...deps, db: deps.readDb, readDb: undefined, telemetry: undefined });
  const router = replicaRouter({
    clock: deps.clock,
    answeredBy: (deps.telemetry ?? noTelemetry).tally(
      'db_replica_reads_total',
      'Reads meant for the read replica, by the database that answered them (primary: the replica could not be reached).',
      'answered_by',
    ),
    retryAfterMs: REPLICA_RETRY_MS,
    onDown: (err) =>
      deps.logger.warn({ err }, `read replica unreachable: reading from the primary for ${REPLICA_RETRY_MS / 1000} s`),
  });
  return {
    analytics: readFromReplica(
      services.analytics,
      replica.analytics,
      ['campaignSummary', 'campaignSteps', 'campaignCounts', 'sentToday'],
      router,
    ),
    events: readFromReplica(services.events, replica.events, ['feed'], router),
    lists: readFromReplica(services.lists, replica.lists, ['all', 'people', 'companies', 'openExport'], router),
    jobs: readFromReplica(services.jobs, replica.jobs, ['openResults'], router),
  };
}

export function createServices(deps: Deps) {
  const services = buildServices(deps);
  return { ...services, reads: withReplica(deps, services) };
}

function buildServices(deps: Deps) {
  const { db, clock, config } = deps;
  const dns = createDnsLookup(config);
  const accountStore = new AccountStore();

  const events = new EventService(
    db,
    new EventStore(),
    clock,
    config.eventRetentionDays,
    config.emailEventRetentionMonths,
  );
  const trackingDomains = new TrackingDomainService(
    db,
    new TrackingDomainStore(),
    dns,
    events,
    clock,
    config.trackingCnameTarget ?? new URL(config.publicUrl).hostname,
  );
  const credits = new CreditService(new CreditStore(), clock);
  const audit = new AuditService(db, new AuditStore(), clock, config.auditRetentionMonths);
  const workspaceStore = new WorkspaceStore();
  const keys = new KeyService(db, workspaceStore, clock, knownScopes(readBundledSpec()));
  const workspaces = new WorkspaceService(db, workspaceStore, credits, keys, clock);
  const quota = new QuotaService(db, clock);
  const whitelabel = new WhitelabelService(db, workspaces, credits, clock);
  const secrets = new SecretBox(config);
  const idempotency = new IdempotencyStore(
    db,
    clock,
    config.idempotencyLeaseSeconds,
    secrets.available ? secrets : null,
  );
  const oauthClients = new OAuthClients(config.oauth, config.allowPrivateMailHosts);
  const mail = new MailService(
    db,
    new MailStore(),
    clock,
    deps.logger,
    {
      allowPrivate: config.allowPrivateMailHosts,
      smtpTimeoutMs: config.smtpTimeoutMs,
      imapTimeoutMs: config.imapTimeoutMs,
    },
    // A dead grant is the account module's to show (built below).
    { clients: oauthClients, secrets, grantDied: (...args) => accounts.grantDied(...args) },
  );
  const loginCheck: MailLoginCheck = {
    smtp: (login) => mail.verifySmtp(login),
    imap: (login) => mail.verifyImap(login),
  };
  // Campaigns link accounts, and removing an account pauses the campaigns it leaves without one: the
  // account module reaches the campaign module through this interface, resolved once both exist.
  const linkedCampaigns: LinkedCampaigns = {
    lockLinkedTo: (...args) => campaigns.lockLinkedTo(...args),
    pauseWithoutAccounts: (...args) => campaigns.pauseWithoutAccounts(...args),
    pauseWithoutSenders: (...args) => campaigns.pauseWithoutSenders(...args),
  };
  // The account view shows today's warm-up and placement-test sends and vitals the warm-up health, which the
  // warm-up pool and the placement tests count (built below).
  const warmupSentToday: SentTodayOf = (...args) => warmup.sentToday(...args);
  const warmupHealth: WarmupHealthOf = (...args) => warmup.healthScores(...args);
  const placementSentToday: SentTodayOf = (...args) => placement.sentToday(...args);
  // An SMTP account's mailbox provider is the sending engine's look-up of its domain (built below).
  const mailboxProviders: MailboxProvidersOf = (...args) => sending.knownProviders(...args);
  const accounts = new AccountService(
    db,
    accountStore,
    events,
    linkedCampaigns,
    workspaces,
    secrets,
    dns,
    config,
    clock,
    warmupSentToday,
    warmupHealth,
    placementSentToday,
    trackingDomains,
    mailboxProviders,
    config.verifyMailLogins ? loginCheck : null,
  );
  // Progress rows are the sending engine's; campaigns and contacts reach them through ports (sending is built below).
  const progress: CampaignProgressPort & ContactProgressPort = {
    startCampaign: (...args) => sending.startCampaign(...args),
    startContacts: (...args) => sending.startContacts(...args),
    moveProgress: (...args) => sending.moveProgress(...args),
  };
  const campaigns = new CampaignService(
    db,
    new CampaignStore({ unfinished: UNFINISHED_STATUSES }),
    events,
    accounts,
    progress,
    clock,
    trackingDomains,
  );
  const contacts = new ContactService(db, new ContactStore(), events, workspaces, campaigns, progress, clock);
  const leadStore = new LeadStore(clock, config.searchCountCacheSeconds);
  const leads = new LeadService(db, leadStore, clock, credits, config.creditCosts);
  const verification = new VerificationService(db, new VerificationStore(), dns, clock, config);
  const enrichment = new EnrichmentService(db, leadStore, leads);
  const lists = new ListService(db, new ListStore(), leads, contacts, campaigns, credits, clock);
  const mailAccess = new AccountMailAccess(accountStore, secrets, clock);
  const suppression = new SuppressionService(db, new SuppressionStore(), clock);
  const tracking = new TrackingService(
    db,
    new TokenSigner(() => secrets.deriveKey('link-signing', 'emailLinks')),
    config.publicUrl,
    contacts,
    suppression,
    events,
    clock,
    (host) => trackingDomains.workspaceOfHost(host),
  );
  const sending = new SendingService(
    db,
    new SendingStore(),
    mailAccess,
    contacts,
    events,
    suppression,
    tracking,
    mail,
    // The warm-up service is made below; the engine asks it only once running.
    { sentSince: (db, accountIds, since) => warmup.sentSince(db, accountIds, since) },
    clock,
    new RecipientProviders(db, dns, clock),
    campaigns,
  );
  // Resumes and moves change the engine's progress rows: the contact module reaches them through this interface.
  const contactLifecycle = new ContactLifecycle(db, new ContactStore(), campaigns, progress, clock);
  const replyIntents = new ReplyIntentService(
    db,
    new IntentStore(),
    mail,
    campaigns,
    contacts,
    tracking,
    events,
    clock,
  );
  const inboxCollaborators = {
    mail,
    accounts: mailAccess,
    campaigns,
    contacts,
    events,
    suppression,
    bounces: sending,
    intents: replyIntents,
  };
  const inbox = new InboxService(db, new InboxStore(), inboxCollaborators, clock, deps.logger, {
    ...DEFAULT_INBOX_SETTINGS,
    messagesPerRun: config.inboxMessagesPerRun,
    accountsPerRun: config.inboxAccountsPerRun,
    concurrency: config.inboxConcurrency,
  });
  const analytics = new AnalyticsService(db, events, campaigns, contacts, accounts, replyIntents, clock);
  const webhooks = new WebhookService(db, new WebhookStore(), secrets, campaigns, config, clock);
  events.onRecorded(webhooks.enqueue);
  const telemetry = deps.telemetry ?? noTelemetry;
  const messages = telemetry.tally(
    'messages_total',
    'Campaign messages handed to SMTP, by outcome (deferred: retried later).',
    'outcome',
  );
  sending.onOutcome((outcome) => messages.add(outcome));
  const deliveries = telemetry.tally('webhook_deliveries_total', 'Webhook delivery attempts by outcome.', 'outcome');
  webhooks.onAttempt((outcome) => deliveries.add(outcome));
  const warmup = new WarmupService(
    db,
    new WarmupStore(),
    accounts,
    mailAccess,
    mail,
    workspaces,
    events,
    secrets,
    clock,
    deps.logger,
    {
      ...DEFAULT_WARMUP_SETTINGS,
      readIntervalMs: config.warmupReadIntervalSeconds * 1000,
    },
  );
  const placement = new PlacementService(
    db,
    new PlacementStore(),
    accounts,
    mailAccess,
    mail,
    warmup,
    workspaces,
    events,
    clock,
    deps.logger,
  );
  const jobs = new JobService(
    db,
    new JobStore(),
    contacts,
    campaigns,
    suppression,
    verification,
    enrichment,
    leads,
    lists,
    events,
    clock,
    deps.logger,
    config.jobBatchSize,
    config.jobConcurrency,
  );
  const oauth = new OAuthConnectService(
    db,
    new OAuthSessionStore(),
    accounts,
    accountStore,
    { clients: oauthClients, storeGrant: (...args) => mail.storeGrant(...args) },
    secrets,
    events,
    clock,
    config.publicUrl,
  );
  return {
    oauth,
    contactLifecycle,
    placement,
    warmup,
    jobs,
    webhooks,
    sending,
    tracking,
    trackingDomains,
    suppression,
    mail,
    inbox,
    events,
    credits,
    workspaces,
    keys,
    audit,
    quota,
    idempotency,
    whitelabel,
    campaigns,
    contacts,
    accounts,
    analytics,
    leads,
    verification,
    enrichment,
    lists,
  };
}

export type Services = ReturnType<typeof createServices>;

/** Every module's routes, each handed only the services it uses. */
export function createRoutes(services: Services): Route[] {
  return [
    ...workspaceRoutes(),
    ...keyRoutes(services),
    ...auditRoutes(services),
    ...campaignRoutes(services),
    ...accountRoutes(services),
    ...analyticsRoutes(services.reads),
    ...warmupRoutes(services),
    ...placementRoutes(services),
    ...contactRoutes(services),
    ...leadRoutes(services),
    ...verificationRoutes(services),
    ...listRoutes(services.reads),
    ...whitelabelRoutes(services),
    ...inboxRoutes(services),
    ...eventRoutes(services.reads),
    ...sendingRoutes(services),
    ...suppressionRoutes(services),
    ...webhookRoutes(services),
    ...jobRoutes(services.reads),
    ...trackingDomainRoutes(services),
  ];
}
