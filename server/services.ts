/**
 * The composition root: builds every store and service once from the injected dependencies
 * (config, database, clock, logger), so tests can swap any of them and run the real app.
 */
import type { Config } from './platform/config';
import type { Db } from './db';
import type { Clock } from './platform/clock';
import type { Logger } from './platform/logger';
import { noTelemetry, type Telemetry } from './observability/telemetry';
import { notingShown, readFromReplica, replicaRouter } from './db/read-replica';
import { QuotaService } from './http/quota';
import type { Route } from './http/route';
import { accountRoutes } from './modules/account/routes';
import { analyticsRoutes } from './modules/analytics/routes';
import { placementRoutes } from './modules/placement/routes';
import { PlacementStore } from './modules/placement/store';
import { warmupRoutes } from './modules/warmup/routes';
import { DEFAULT_WARMUP_SETTINGS } from './modules/warmup/service';
import { WarmupStore } from './modules/warmup/store';
import { campaignRoutes, subsequenceRoutes } from './modules/campaign/routes';
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
import { JobStore } from './modules/job/store';
import { IdempotencyStore } from './http/idempotency';
import { createDnsLookup } from './platform/dns';
import type {
  SentTodayOf,
  WarmupHealthOf,
  LinkedCampaigns,
  MailboxProvidersOf,
  MailLoginCheck,
} from './modules/account/service';
import { AccountStore } from './modules/account/store';
import { OAuthSessionStore } from './modules/account/oauth-sessions';
import { createAccountModule, createMailAccessModule, createOAuthConnectModule } from './modules/account';
import { createJobModule } from './modules/job';
import { createWarmupModule } from './modules/warmup';
import { createPlacementModule } from './modules/placement';
import { createSendingModule } from './modules/sending';
import { createTrackingModule } from './modules/tracking';
import { createInboxModule, createReplyIntentModule } from './modules/inbox';
import { createAnalyticsModule } from './modules/analytics';
import {
  createContactBulkModule,
  createContactLifecycleModule,
  createContactListingModule,
  createContactModule,
} from './modules/contact';
import { createCampaignModule, createSubsequenceModule } from './modules/campaign';
import { createListModule } from './modules/list';
import { createUsageModule } from './modules/usage';
import { createMailModule } from './modules/mail';
import { createTrackingDomainModule } from './modules/tracking-domain';
import { createWebhookModule } from './modules/webhooks';
import { createKeyModule, createWorkspaceModule } from './modules/workspace';
import { createEnrichmentModule, createLeadModule } from './modules/leads';
import { createEventModule } from './modules/events';
import { createAuditModule } from './modules/audit';
import { createCreditModule } from './modules/credits';
import { createWhitelabelModule } from './modules/whitelabel';
import { createVerificationModule } from './modules/verification';
import { createSuppressionModule } from './modules/suppression';
import { SecretBox } from './platform/secrets';
import { VerificationStore } from './modules/verification/store';
import { LeadStore } from './modules/leads/store';
import type { CampaignProgressPort } from './modules/campaign/service';
import { CampaignStore } from './modules/campaign/store';
import type { SubsequenceContacts, SubsequenceProgress } from './modules/campaign/subsequences';
import { SubsequenceStore } from './modules/campaign/subsequence-store';
import type { ContactProgressPort } from './modules/contact/service';
import { ContactStore } from './modules/contact/store';
import { UNFINISHED_STATUSES } from './modules/contact/statuses';
import { CreditStore } from './modules/credits/store';
import { AuditStore } from './modules/audit/store';
import { auditRoutes } from './modules/audit/routes';
import { usageRoutes } from './modules/usage/routes';
import { creditRoutes } from './modules/credits/routes';
import { knownScopes } from './platform/scopes';
import { readBundledSpec } from './platform/project-root';
import { WorkspaceStore } from './modules/workspace/store';
import { ListStore } from './modules/list/store';
import { EventStore } from './modules/events/store';
import { DEFAULT_INBOX_SETTINGS } from './modules/inbox/service';
import { SendingStore } from './modules/sending/store';
import { RecipientProviders } from './modules/sending/providers';
import { OAuthClients } from './modules/mail/service';
import { MailStore } from './modules/mail/store';
import { SuppressionStore } from './modules/suppression/store';
import { TokenSigner } from './modules/tracking/tokens';
import { trackingDomainRoutes } from './modules/tracking-domain/routes';
import { TrackingDomainStore } from './modules/tracking-domain/store';

import { WebhookStore } from './modules/webhooks/store';
import { InboxStore } from './modules/inbox/store';
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
/** How long the replica's replay position is taken as known, while a workspace waits for the replica to pass a point. */
const REPLAY_CHECK_MS = 250;

/**
 * The services whose reads a replica answers (all of them the primary's without one): analytics; list pages and
 * exports; the event feed; job results. A read that names an object stays on the primary and notes what the
 * workspace was shown (a list or a job by its id, the job list: the worker changes jobs), as does every change
 * (`noteChange`, after each request that is not a GET), so that the replica answers the workspace only once it has
 * replayed that far. Lead search stays on the primary (its reveals charge credits).
 */
function withReplica(deps: Deps, services: ReturnType<typeof buildServices>) {
  const readable = {
    analytics: services.analytics,
    events: services.events,
    lists: services.lists,
    jobs: services.jobs,
  };
  if (!deps.readDb) return { reads: readable, noteChange: undefined };
  const replica = buildServices({ ...deps, db: deps.readDb, readDb: undefined, telemetry: undefined });
  const router = replicaRouter({
    primary: deps.db,
    replica: deps.readDb,
    clock: deps.clock,
    answeredBy: (deps.telemetry ?? noTelemetry).tally(
      'db_replica_reads_total',
      'Reads meant for the read replica, by the database that answered them (primary: the replica could not be reached, was behind the workspace, or the read had to write).',
      'answered_by',
    ),
    retryAfterMs: REPLICA_RETRY_MS,
    replayCheckMs: REPLAY_CHECK_MS,
    onDown: (err) =>
      deps.logger.warn({ err }, `read replica unreachable: reading from the primary for ${REPLICA_RETRY_MS / 1000} s`),
  });
  return {
    reads: {
      analytics: readFromReplica(
        services.analytics,
        replica.analytics,
        ['campaignSummary', 'campaignSteps', 'campaignCounts', 'sentToday'],
        router,
      ),
      events: readFromReplica(services.events, replica.events, ['feed'], router),
      lists: notingShown(
        readFromReplica(services.lists, replica.lists, ['all', 'people', 'companies', 'openExport'], router),
        ['get'],
        router,
      ),
      jobs: notingShown(readFromReplica(services.jobs, replica.jobs, ['openResults'], router), ['get', 'list'], router),
    },
    noteChange: (workspaceId: string) => router.noteShown(workspaceId),
  };
}

export function createServices(deps: Deps) {
  const services = buildServices(deps);
  return { ...services, ...withReplica(deps, services) };
}

function buildServices(deps: Deps) {
  const { db, clock, config } = deps;
  const dns = createDnsLookup(config);
  const accountStore = new AccountStore();

  const events = createEventModule({
    db,
    store: new EventStore(),
    clock,
    retentionDays: config.eventRetentionDays,
    emailEventRetentionMonths: config.emailEventRetentionMonths,
  });
  const trackingDomains = createTrackingDomainModule({
    db,
    store: new TrackingDomainStore(),
    dns,
    events,
    clock,
    cnameTarget: config.trackingCnameTarget ?? new URL(config.publicUrl).hostname,
  });
  const audit = createAuditModule({ db, store: new AuditStore(), clock, retentionMonths: config.auditRetentionMonths });
  const credits = createCreditModule({ db, store: new CreditStore(), clock, audit });
  const workspaceStore = new WorkspaceStore();
  const keys = createKeyModule({ db, store: workspaceStore, clock, known: knownScopes(readBundledSpec()), audit });
  const workspaces = createWorkspaceModule({ db, store: workspaceStore, credits, keys, clock, audit });
  const quota = new QuotaService({ db, clock });
  const whitelabel = createWhitelabelModule({ db, workspaces, credits, clock, audit });
  const secrets = new SecretBox(config);
  const idempotency = new IdempotencyStore({
    db,
    clock,
    leaseSeconds: config.idempotencyLeaseSeconds,
    cipher: secrets.available ? secrets : null,
  });
  const oauthClients = new OAuthClients({ settings: config.oauth, allowPrivate: config.allowPrivateMailHosts });
  const mail = createMailModule({
    db,
    store: new MailStore(),
    clock,
    logger: deps.logger,
    settings: {
      allowPrivate: config.allowPrivateMailHosts,
      smtpTimeoutMs: config.smtpTimeoutMs,
      imapTimeoutMs: config.imapTimeoutMs,
    },
    // A dead grant is the account module's to show (built below).
    oauth: { clients: oauthClients, secrets, grantDied: (...args) => accounts.grantDied(...args) },
  });
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
  const accounts = createAccountModule({
    db,
    store: accountStore,
    events,
    campaigns: linkedCampaigns,
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
    loginCheck: config.verifyMailLogins ? loginCheck : null,
  });
  // Progress rows are the sending engine's; campaigns and contacts reach them through ports (sending is built below).
  const progress: CampaignProgressPort & ContactProgressPort = {
    startCampaign: (...args) => sending.startCampaign(...args),
    startContacts: (...args) => sending.startContacts(...args),
    moveProgress: (...args) => sending.moveProgress(...args),
  };
  const campaignStore = new CampaignStore({ unfinished: UNFINISHED_STATUSES });
  const campaigns = createCampaignModule({
    db,
    store: campaignStore,
    events,
    accounts,
    progress,
    clock,
    trackingDomains,
  });
  // Contacts, tracking, the inbox and the engine fire triggers; the subsequences move contacts through the engine.
  const subsequenceProgress: SubsequenceProgress = {
    enterSubsequence: (...args) => sending.enterSubsequence(...args),
    contactsInSubsequences: (...args) => sending.contactsInSubsequences(...args),
    moveOutOfSubsequence: (...args) => sending.moveOutOfSubsequence(...args),
    releaseSubsequence: (...args) => sending.releaseSubsequence(...args),
  };
  const subsequenceContacts: SubsequenceContacts = {
    reopenForSubsequence: (...args) => contacts.reopenForSubsequence(...args),
  };
  const subsequences = createSubsequenceModule({
    db,
    store: new SubsequenceStore(),
    campaigns: campaignStore,
    progress: subsequenceProgress,
    contacts: subsequenceContacts,
    totals: events,
    events,
    clock,
  });
  const contacts = createContactModule({
    db,
    store: new ContactStore(),
    events,
    workspaces,
    campaigns,
    progress,
    clock,
    triggers: subsequences,
  });
  const leadStore = new LeadStore(clock, config.searchCountCacheSeconds);
  const leads = createLeadModule({ db, store: leadStore, clock, credits, costs: config.creditCosts });
  const verification = createVerificationModule({ db, store: new VerificationStore(), dns, clock, config });
  const enrichment = createEnrichmentModule({ db, store: leadStore, leads });
  const lists = createListModule({ db, store: new ListStore(), leads, contacts, campaigns, credits, clock });
  const usage = createUsageModule({ db, clock, credits, leads, workspaces, accounts, contacts, lists });
  const mailAccess = createMailAccessModule({ store: accountStore, secrets, clock, events });
  const suppression = createSuppressionModule({ db, store: new SuppressionStore(), clock });
  const tracking = createTrackingModule({
    db,
    signer: new TokenSigner(() => secrets.deriveKey('link-signing', 'emailLinks')),
    publicUrl: config.publicUrl,
    contacts,
    suppression,
    events,
    clock,
    hostOwner: (host) => trackingDomains.workspaceOfHost(host),
    triggers: subsequences,
  });
  const sending = createSendingModule({
    db,
    store: new SendingStore(),
    accounts: mailAccess,
    contacts,
    events,
    suppression,
    links: tracking,
    mail,
    // The warm-up service is made below; the engine asks it only once running.
    warmup: { sentSince: (db, accountIds, since) => warmup.sentSince(db, accountIds, since) },
    clock,
    providers: new RecipientProviders({ db, dns, clock }),
    campaigns,
    triggers: subsequences,
    verified: verification,
  });
  // Resumes and moves change the engine's progress rows: the contact module reaches them through this interface.
  const contactLifecycle = createContactLifecycleModule({ db, store: new ContactStore(), campaigns, progress, clock });
  const contactListing = createContactListingModule({ db, store: new ContactStore(), campaigns });
  const replyIntents = createReplyIntentModule({
    db,
    store: new IntentStore(),
    mail,
    campaigns,
    contacts,
    removal: tracking,
    events,
    clock,
  });
  const inboxCollaborators = {
    mail,
    accounts: mailAccess,
    campaigns,
    contacts,
    events,
    suppression,
    bounces: sending,
    intents: replyIntents,
    subsequences,
  };
  const inbox = createInboxModule({
    db,
    store: new InboxStore(),
    collaborators: inboxCollaborators,
    clock,
    logger: deps.logger,
    settings: {
      ...DEFAULT_INBOX_SETTINGS,
      messagesPerRun: config.inboxMessagesPerRun,
      accountsPerRun: config.inboxAccountsPerRun,
      concurrency: config.inboxConcurrency,
    },
  });
  const analytics = createAnalyticsModule({
    db,
    events,
    campaigns,
    contacts,
    accounts,
    intents: replyIntents,
    clock,
    winners: sending,
  });
  const webhooks = createWebhookModule({ db, store: new WebhookStore(), secrets, campaigns, config, clock, audit });
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
  const warmup = createWarmupModule({
    db,
    store: new WarmupStore(),
    accounts,
    mailAccess,
    mail,
    workspaces,
    secrets,
    clock,
    logger: deps.logger,
    settings: {
      ...DEFAULT_WARMUP_SETTINGS,
      readIntervalMs: config.warmupReadIntervalSeconds * 1000,
    },
  });
  const placement = createPlacementModule({
    db,
    store: new PlacementStore(),
    accounts,
    mailAccess,
    mail,
    pool: warmup,
    workspaces,
    events,
    clock,
    logger: deps.logger,
  });
  const jobs = createJobModule({
    db,
    store: new JobStore(),
    contacts,
    campaigns,
    suppression,
    verification,
    enrichment,
    leads,
    lists,
    events,
    clock,
    logger: deps.logger,
    batchSize: config.jobBatchSize,
    concurrency: config.jobConcurrency,
    contactBulk: createContactBulkModule({
      db,
      listing: contactListing,
      contacts,
      lifecycle: contactLifecycle,
      campaigns,
    }),
  });
  const oauth = createOAuthConnectModule({
    db,
    sessions: new OAuthSessionStore(),
    accounts,
    store: accountStore,
    mail: { clients: oauthClients, storeGrant: (...args) => mail.storeGrant(...args) },
    secrets,
    events,
    clock,
    publicUrl: config.publicUrl,
  });
  return {
    oauth,
    contactLifecycle,
    contactListing,
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
    usage,
    quota,
    idempotency,
    whitelabel,
    campaigns,
    subsequences,
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
    ...usageRoutes(services),
    ...creditRoutes(services),
    ...campaignRoutes(services),
    ...subsequenceRoutes(services),
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
