/**
 * All configuration, read from the environment once at start-up. Every variable is documented in
 * the README; tests build a Config directly with `loadConfig({...overrides})`.
 */
import { resolve } from 'node:path';

/** The jobs a worker process may run, by the names WORKER_JOBS takes. */
export const WORKER_ROLES = ['sending', 'inbox', 'warmup', 'webhooks', 'jobs', 'placement', 'maintenance'] as const;
export type WorkerRole = (typeof WORKER_ROLES)[number];

export interface Config {
  port: number;
  /** The address the API listens on (HOST; unset: every interface). */
  host: string | undefined;
  /** Serve Prometheus metrics at /metrics on this port (METRICS_PORT; unset: no metrics, prom-client not loaded). */
  metricsPort: number | undefined;
  /** The address the metrics listener binds (METRICS_HOST): loopback unless set, since /metrics has no key. */
  metricsHost: string;
  /** PostgreSQL connection string; without it the embedded PGlite database in `dataDir` is used. */
  databaseUrl: string | undefined;
  /**
   * A read replica of it (DATABASE_READ_URL): analytics, list pages and exports, the event feed and job results are
   * read there, and from the primary while it cannot be reached or has not replayed what the workspace last changed
   * or was shown (server/db/read-replica.ts).
   */
  databaseReadUrl: string | undefined;
  dataDir: string;
  logLevel: string;
  /** Validate every response against the spec (on in tests; a mismatch becomes a 500). */
  validateResponses: boolean;
  /** Maximum JSON body size, in bytes. */
  bodyLimitBytes: number;
  /** Which proxies may set the client address (Express `trust proxy`): false, a hop count, or addresses/names. */
  trustProxy: boolean | number | string;
  /** Failed authentications allowed per client address per minute before 429. */
  authFailuresPerMinute: number;
  /** How long a running request holds its Idempotency-Key before a retry may take it over (its process is presumed dead). */
  idempotencyLeaseSeconds: number;
  /** How long a search's totalEntries is reused for the same filters, in seconds (0: counted every time). */
  searchCountCacheSeconds: number;
  /** Key that encrypts email-account secrets at rest (32 bytes, hex or base64). */
  secretKey: string | undefined;
  /** DNS server(s) for vitals and verification look-ups, `host` or `host:port`; empty = system resolver. */
  dnsServers: string[];
  dnsTimeoutMs: number;
  /** DKIM selectors account vitals try when a request names none (DKIM_SELECTORS, comma-separated). */
  dkimSelectors: string[];
  /** DNS blocklists asked for the sending hosts' IPv4 addresses (DNSBL_IP_ZONES, comma-separated; empty: none). */
  dnsblIpZones: string[];
  /** DNS blocklists asked for account domains (DNSBL_DOMAIN_ZONES, comma-separated; empty: none). */
  dnsblDomainZones: string[];
  /** How long a verification result that needed the network is served from the cache. */
  verificationCacheTtlSeconds: number;
  /** SMTP mailbox probe in email verification (RCPT TO against the domain's MX); off by default. */
  smtpProbeEnabled: boolean;
  /** Probe this host instead of the domain's MX (a relay, or a loopback server in tests). */
  smtpProbeHost: string | undefined;
  smtpProbePort: number;
  smtpProbeTimeoutMs: number;
  /** The probe's HELO name and MAIL FROM address. */
  smtpProbeHelo: string;
  smtpProbeFrom: string;
  /** Create a demo workspace on the first start (npm start). */
  seedDemo: boolean;
  /** Serve the browser example page (dist/examples, `npm run build:examples`) at /examples/ (SERVE_EXAMPLES). */
  serveExamples: boolean;
  /** Browser origins allowed to call the API (CORS_ORIGINS, comma-separated; none by default). */
  corsOrigins: string[];
  /** After SIGTERM, requests still open after this many seconds are cut (SHUTDOWN_GRACE_SECONDS). */
  shutdownGraceSeconds: number;
  /** Run the background worker (every job: sending, inbox, webhooks, bulk jobs, ...) inside this process (WORKER_ENABLED, default on). */
  workerEnabled: boolean;
  /** The jobs this process's worker runs (WORKER_JOBS, comma-separated; default every one). */
  workerJobs: WorkerRole[];
  /** The worker process (`npm run worker`) answers /healthz and /readyz on this port (WORKER_HEALTH_PORT; unset: none). */
  workerHealthPort: number | undefined;
  /** Apply pending migrations at start-up (MIGRATE_ON_START, default on); off when `npm run migrate` is a step of its own. */
  migrateOnStart: boolean;
  /**
   * Run hot reads as named prepared statements (DATABASE_PREPARED_STATEMENTS, default on); off behind a pooler in
   * transaction mode that does not carry them (PgBouncer before 1.21).
   */
  preparedStatements: boolean;
  /** How often the worker looks for due work, in seconds. */
  workerTickSeconds: number;
  /** Rows per batch of a background job (one transaction each). */
  jobBatchSize: number;
  /** Batches one worker applies at once (each in its own transaction). */
  jobConcurrency: number;
  /** Days the event feed keeps an event (the worker deletes older ones). */
  eventRetentionDays: number;
  /** Whole months of audit entries kept before the current one (AUDIT_RETENTION_MONTHS); 0 keeps everything. */
  auditRetentionMonths: number;
  /**
   * Whole months of raw mail events (email_events) kept before the current one (EMAIL_EVENT_RETENTION_MONTHS);
   * the worker drops older month partitions. 0 keeps everything. Analytics answer from rollups either way.
   */
  emailEventRetentionMonths: number;
  /** Largest JSON body of the job operations (`/v2/job/...`); CSV uploads have their own 50 MB limit. */
  jobBodyLimitBytes: number;
  /** The public base URL of this service, for unsubscribe, open and click links in emails. */
  publicUrl: string;
  /** The host custom tracking domains' CNAME records must name (TRACKING_CNAME_TARGET; unset: PUBLIC_URL's host). */
  trackingCnameTarget: string | undefined;
  /** Log in to SMTP (and IMAP) before storing a connected account (VERIFY_MAIL_LOGINS, default on). */
  verifyMailLogins: boolean;
  /** Timeout of one SMTP connection step when sending. */
  smtpTimeoutMs: number;
  /** Allow SMTP/IMAP hosts on loopback, private or link-local addresses (tests, self-hosted relays). */
  allowPrivateMailHosts: boolean;
  /** Inbox reader: messages read per account per run, mailboxes claimed per run, mailboxes read at once, IMAP timeout. */
  inboxMessagesPerRun: number;
  inboxAccountsPerRun: number;
  inboxConcurrency: number;
  /** How often the warm-up reader reads each pool mailbox. */
  warmupReadIntervalSeconds: number;
  imapTimeoutMs: number;
  /** Allow webhook URLs on loopback, private or link-local addresses, and plain http. */
  allowPrivateWebhooks: boolean;
  /** The operator's OAuth clients for connecting mailboxes (OAUTH_*; a provider without its client id is off). */
  oauth: OAuthSettings;
  /** Credits per revealed item in lead searches (a person or company already revealed is free). */
  creditCosts: {
    workEmailReveal: number;
    fullContactAndCompany: number;
    mobilePhoneReveal: number;
    companyFull: number;
  };
}

/** One OAuth client of the operator: the app registered with an identity provider. */
export interface OAuthClientSettings {
  clientId: string;
  clientSecret: string;
}

/**
 * A provider defined by its endpoints (OAUTH_GENERIC_*): any identity provider whose mail servers take
 * XOAUTH2, and the loopback provider of the tests.
 */
export interface GenericOAuthSettings extends OAuthClientSettings {
  authorizeUrl: string;
  tokenUrl: string;
  userInfoUrl: string;
  scopes: string[];
  smtp: { host: string; port: number };
  imap: { host: string; port: number };
}

export interface OAuthSettings {
  google: OAuthClientSettings | null;
  microsoft: (OAuthClientSettings & { tenant: string }) | null;
  generic: GenericOAuthSettings | null;
  /** Where the callback may send the person afterwards (OAUTH_RETURN_URLS: URL prefixes, comma-separated). */
  returnUrls: string[];
  /** Total deadline of one call to a token or user-info endpoint (OAUTH_TIMEOUT_MS). */
  timeoutMs: number;
}

/**
 * A PostgreSQL URL setting (DATABASE_URL, DATABASE_READ_URL), or undefined when unset; throws naming the setting,
 * without the value, which may hold a password.
 */
function postgresUrl(name: string, env: NodeJS.ProcessEnv): string | undefined {
  const raw = env[name];
  if (!raw) return undefined;
  let protocol: string;
  try {
    protocol = new URL(raw).protocol;
  } catch {
    protocol = '';
  }
  if (protocol !== 'postgres:' && protocol !== 'postgresql:')
    throw new Error(`${name} must be a PostgreSQL URL, such as postgres://user:password@host:5432/database`);
  return raw;
}

/** `host:port` of a mail server setting; throws naming the setting. */
function hostPort(name: string, raw: string): { host: string; port: number } {
  const match = /^([A-Za-z0-9.-]+):(\d{1,5})$/.exec(raw.trim());
  if (!match) throw new Error(`${name} must be host:port, got "${raw}"`);
  return { host: match[1], port: Number(match[2]) };
}

function oauthSettings(env: NodeJS.ProcessEnv): OAuthSettings {
  const client = (prefix: string): OAuthClientSettings | null =>
    env[`${prefix}_CLIENT_ID`]
      ? { clientId: env[`${prefix}_CLIENT_ID`]!, clientSecret: env[`${prefix}_CLIENT_SECRET`] ?? '' }
      : null;
  const google = client('OAUTH_GOOGLE');
  const microsoft = client('OAUTH_MICROSOFT');
  const generic = client('OAUTH_GENERIC');
  const list = (raw: string | undefined) =>
    (raw ?? '')
      .split(/[ ,]+/)
      .map((s) => s.trim())
      .filter(Boolean);
  return {
    google,
    microsoft: microsoft && { ...microsoft, tenant: env.OAUTH_MICROSOFT_TENANT || 'common' },
    generic: generic && {
      ...generic,
      authorizeUrl: env.OAUTH_GENERIC_AUTHORIZE_URL ?? '',
      tokenUrl: env.OAUTH_GENERIC_TOKEN_URL ?? '',
      userInfoUrl: env.OAUTH_GENERIC_USERINFO_URL ?? '',
      scopes: list(env.OAUTH_GENERIC_SCOPES),
      smtp: hostPort('OAUTH_GENERIC_SMTP', env.OAUTH_GENERIC_SMTP ?? ''),
      imap: hostPort('OAUTH_GENERIC_IMAP', env.OAUTH_GENERIC_IMAP ?? ''),
    },
    returnUrls: list(env.OAUTH_RETURN_URLS).map(returnUrl),
    timeoutMs: Math.max(1000, int('OAUTH_TIMEOUT_MS', 10000, env)),
  };
}

/** A comma-separated list of names, lower-case; an empty value is an empty list. */
function names(raw: string): string[] {
  return raw
    .split(',')
    .map((s) => s.trim().toLowerCase())
    .filter(Boolean);
}

/** WORKER_JOBS: a list of role names; unset or empty runs every job, an unknown name stops the start. */
function workerJobs(raw: string | undefined): WorkerRole[] {
  const given = names(raw ?? '');
  if (!given.length) return [...WORKER_ROLES];
  const unknown = given.filter((name) => !(WORKER_ROLES as readonly string[]).includes(name));
  if (unknown.length)
    throw new Error(`WORKER_JOBS names unknown jobs: ${unknown.join(', ')} (known: ${WORKER_ROLES.join(', ')})`);
  return WORKER_ROLES.filter((role) => given.includes(role));
}

/** On or off: 1/true/on and 0/false/off. */
function onOff(name: string, fallback: boolean, env: NodeJS.ProcessEnv): boolean {
  const raw = env[name]?.trim().toLowerCase();
  if (raw === undefined || raw === '') return fallback;
  if (['1', 'true', 'on'].includes(raw)) return true;
  if (['0', 'false', 'off'].includes(raw)) return false;
  throw new Error(`${name} must be on or off, got "${env[name]}"`);
}

/** Settings renamed when they outgrew their first name: the new name, and the old one still read. */
const RENAMED: Record<string, string> = {
  WORKER_ENABLED: 'SENDING_ENABLED',
  WORKER_TICK_SECONDS: 'SENDING_TICK_SECONDS',
};

/** The variable to read: the new name, or the old one when only that is set. */
function renamed(name: string, env: NodeJS.ProcessEnv): string {
  const old = RENAMED[name];
  return env[name] === undefined && env[old] !== undefined ? old : name;
}

/** One log line per old setting name still in use (the server logs them at start-up). */
export function deprecatedSettings(env: NodeJS.ProcessEnv = process.env): string[] {
  return Object.entries(RENAMED)
    .filter(([, old]) => env[old] !== undefined)
    .map(
      ([name, old]) =>
        `${old} is deprecated: it governs every worker job, not sending alone; set ${name} instead${env[name] === undefined ? '' : ` (${name} is set and wins)`}.`,
    );
}

/** An allowed OAuth return URL: an absolute http(s) URL without user info; throws naming the setting. */
function returnUrl(raw: string): string {
  const url = URL.canParse(raw) ? new URL(raw) : null;
  if (!url || !['http:', 'https:'].includes(url.protocol) || url.username || url.password) {
    throw new Error(`OAUTH_RETURN_URLS must list http(s) URLs without user info, got "${raw}"`);
  }
  return raw;
}

function int(name: string, fallback: number, env: NodeJS.ProcessEnv): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0) throw new Error(`${name} must be a non-negative integer, got "${raw}"`);
  return value;
}

function bool(name: string, fallback: boolean, env: NodeJS.ProcessEnv): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  return raw === '1' || raw.toLowerCase() === 'true';
}

/** TRUST_PROXY: unset or `false` trusts no proxy; `true`, a hop count, or a list such as `loopback, 10.0.0.0/8`. */
function parseTrustProxy(raw: string | undefined): boolean | number | string {
  if (!raw || raw === 'false' || raw === '0') return false;
  if (raw === 'true') return true;
  return /^\d+$/.test(raw) ? Number(raw) : raw;
}

export function loadConfig(overrides: Partial<Config> = {}, env: NodeJS.ProcessEnv = process.env): Config {
  return {
    port: int('PORT', 3000, env),
    host: env.HOST || undefined,
    metricsPort: env.METRICS_PORT ? int('METRICS_PORT', 0, env) : undefined,
    metricsHost: env.METRICS_HOST || '127.0.0.1',
    databaseUrl: postgresUrl('DATABASE_URL', env),
    databaseReadUrl: postgresUrl('DATABASE_READ_URL', env),
    dataDir: resolve(env.DATA_DIR || './data'),
    logLevel: env.LOG_LEVEL || 'info',
    validateResponses: bool('VALIDATE_RESPONSES', false, env),
    bodyLimitBytes: int('BODY_LIMIT_BYTES', 1024 * 1024, env),
    trustProxy: parseTrustProxy(env.TRUST_PROXY),
    authFailuresPerMinute: int('AUTH_FAILURES_PER_MINUTE', 30, env),
    idempotencyLeaseSeconds: Math.max(1, int('IDEMPOTENCY_LEASE_SECONDS', 300, env)),
    searchCountCacheSeconds: Math.max(0, int('SEARCH_COUNT_CACHE_SECONDS', 60, env)),
    secretKey: env.SECRET_KEY || undefined,
    dnsServers: (env.DNS_SERVERS || '')
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean),
    dnsTimeoutMs: int('DNS_TIMEOUT_MS', 3000, env),
    dkimSelectors: (env.DKIM_SELECTORS || 'google,selector1,selector2,default,k1')
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean),
    dnsblIpZones: names(env.DNSBL_IP_ZONES ?? 'zen.spamhaus.org,bl.spamcop.net,b.barracudacentral.org'),
    dnsblDomainZones: names(env.DNSBL_DOMAIN_ZONES ?? 'dbl.spamhaus.org'),
    verificationCacheTtlSeconds: int('VERIFICATION_CACHE_TTL_SECONDS', 7 * 24 * 3600, env),
    smtpProbeEnabled: bool('SMTP_PROBE_ENABLED', false, env),
    smtpProbeHost: env.SMTP_PROBE_HOST || undefined,
    smtpProbePort: int('SMTP_PROBE_PORT', 25, env),
    smtpProbeTimeoutMs: int('SMTP_PROBE_TIMEOUT_MS', 10000, env),
    smtpProbeHelo: env.SMTP_PROBE_HELO || 'verify.leadreach.io',
    smtpProbeFrom: env.SMTP_PROBE_FROM || 'verify@leadreach.io',
    seedDemo: bool('SEED_DEMO', true, env),
    serveExamples: bool('SERVE_EXAMPLES', false, env),
    corsOrigins: (env.CORS_ORIGINS || '')
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean),
    shutdownGraceSeconds: int('SHUTDOWN_GRACE_SECONDS', 10, env),
    workerEnabled: bool(renamed('WORKER_ENABLED', env), true, env),
    workerJobs: workerJobs(env.WORKER_JOBS),
    workerHealthPort: env.WORKER_HEALTH_PORT ? int('WORKER_HEALTH_PORT', 0, env) : undefined,
    migrateOnStart: onOff('MIGRATE_ON_START', true, env),
    preparedStatements: onOff('DATABASE_PREPARED_STATEMENTS', true, env),
    workerTickSeconds: int(renamed('WORKER_TICK_SECONDS', env), 5, env),
    jobBatchSize: Math.min(5000, Math.max(1, int('JOB_BATCH_SIZE', 1000, env))),
    jobConcurrency: Math.min(8, Math.max(1, int('JOB_CONCURRENCY', 2, env))),
    eventRetentionDays: Math.max(1, int('EVENT_RETENTION_DAYS', 30, env)),
    auditRetentionMonths: Math.max(0, int('AUDIT_RETENTION_MONTHS', 0, env)),
    emailEventRetentionMonths: int('EMAIL_EVENT_RETENTION_MONTHS', 0, env),
    jobBodyLimitBytes: int('JOB_BODY_LIMIT_BYTES', 50 * 1024 * 1024, env),
    publicUrl: (env.PUBLIC_URL || `http://localhost:${int('PORT', 3000, env)}`).replace(/\/+$/, ''),
    trackingCnameTarget: env.TRACKING_CNAME_TARGET?.trim().toLowerCase().replace(/\.$/, '') || undefined,
    verifyMailLogins: bool('VERIFY_MAIL_LOGINS', true, env),
    smtpTimeoutMs: int('SMTP_TIMEOUT_MS', 15000, env),
    allowPrivateMailHosts: bool('ALLOW_PRIVATE_MAIL_HOSTS', false, env),
    allowPrivateWebhooks: bool('ALLOW_PRIVATE_WEBHOOKS', false, env),
    oauth: oauthSettings(env),
    inboxMessagesPerRun: Math.max(1, int('INBOX_MESSAGES_PER_RUN', 200, env)),
    inboxAccountsPerRun: Math.max(1, int('INBOX_ACCOUNTS_PER_RUN', 50, env)),
    inboxConcurrency: Math.max(1, int('INBOX_CONCURRENCY', 8, env)),
    warmupReadIntervalSeconds: Math.max(1, int('WARMUP_READ_INTERVAL_SECONDS', 60, env)),
    imapTimeoutMs: Math.max(1000, int('IMAP_TIMEOUT_MS', 15000, env)),
    creditCosts: {
      workEmailReveal: int('CREDIT_COST_WORK_EMAIL', 1, env),
      fullContactAndCompany: int('CREDIT_COST_FULL_CONTACT', 1, env),
      mobilePhoneReveal: int('CREDIT_COST_MOBILE_PHONE', 5, env),
      companyFull: int('CREDIT_COST_COMPANY_FULL', 1, env),
    },
    ...overrides,
  };
}
