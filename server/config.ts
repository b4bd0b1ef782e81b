/**
 * All configuration, read from the environment once at start-up. Every variable is documented in
 * the README; tests build a Config directly with `loadConfig({...overrides})`.
 */
import { resolve } from 'node:path';

export interface Config {
  port: number;
  /** Serve Prometheus metrics at /metrics on this port (METRICS_PORT; unset: no metrics, prom-client not loaded). */
  metricsPort: number | undefined;
  /** PostgreSQL connection string; without it the embedded PGlite database in `dataDir` is used. */
  databaseUrl: string | undefined;
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
  /** How often the worker looks for due work, in seconds. */
  workerTickSeconds: number;
  /** Rows per batch of a background job (one transaction each). */
  jobBatchSize: number;
  /** Batches one worker applies at once (each in its own transaction). */
  jobConcurrency: number;
  /** Days the event feed keeps an event (the worker deletes older ones). */
  eventRetentionDays: number;
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
  /** Credits per revealed item in lead searches (a person or company already revealed is free). */
  creditCosts: {
    workEmailReveal: number;
    fullContactAndCompany: number;
    mobilePhoneReveal: number;
    companyFull: number;
  };
}

/** A comma-separated list of names, lower-case; an empty value is an empty list. */
function names(raw: string): string[] {
  return raw
    .split(',')
    .map((s) => s.trim().toLowerCase())
    .filter(Boolean);
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
    metricsPort: env.METRICS_PORT ? int('METRICS_PORT', 0, env) : undefined,
    databaseUrl: env.DATABASE_URL || undefined,
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
    workerTickSeconds: int(renamed('WORKER_TICK_SECONDS', env), 5, env),
    jobBatchSize: Math.min(5000, Math.max(1, int('JOB_BATCH_SIZE', 1000, env))),
    jobConcurrency: Math.min(8, Math.max(1, int('JOB_CONCURRENCY', 2, env))),
    eventRetentionDays: Math.max(1, int('EVENT_RETENTION_DAYS', 30, env)),
    emailEventRetentionMonths: int('EMAIL_EVENT_RETENTION_MONTHS', 0, env),
    jobBodyLimitBytes: int('JOB_BODY_LIMIT_BYTES', 50 * 1024 * 1024, env),
    publicUrl: (env.PUBLIC_URL || `http://localhost:${int('PORT', 3000, env)}`).replace(/\/+$/, ''),
    trackingCnameTarget: env.TRACKING_CNAME_TARGET?.trim().toLowerCase().replace(/\.$/, '') || undefined,
    verifyMailLogins: bool('VERIFY_MAIL_LOGINS', true, env),
    smtpTimeoutMs: int('SMTP_TIMEOUT_MS', 15000, env),
    allowPrivateMailHosts: bool('ALLOW_PRIVATE_MAIL_HOSTS', false, env),
    allowPrivateWebhooks: bool('ALLOW_PRIVATE_WEBHOOKS', false, env),
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
