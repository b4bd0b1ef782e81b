/**
 * Email verification: the offline checks (checks.ts), the MX look-up through the configured
 * resolver, the optional SMTP probe (the mail module's probeMailbox), and the per-address cache (store.ts).
 * The order of the checks and what each outcome means is documented in
 * spec/paths/people_verification/verify.yaml; keep the two in step.
 */
import type { components } from '../../../generated/api';
import { LRUCache } from 'lru-cache';
import type { Clock } from '../../platform/clock';
import type { Config } from '../../platform/config';
import type { Db, Executor } from '../../db';
import type { DnsLookup, DnsResult, MxRecord } from '../../platform/dns';
import { isDisposableDomain, isFreeProviderDomain, isRoleLocalPart, parseAddress } from './checks';
import { type ProbeOutcome, probeMailbox } from '../mail';
import type { VerificationRow, VerificationStore } from './store';

type VerificationResult = components['schemas']['VerificationResult'];
type VerificationSummary = components['schemas']['VerificationSummary'];
type Status = VerificationResult['status'];
type SubStatus = VerificationResult['subStatus'];
type Flags = Pick<VerificationResult, 'isRoleAccount' | 'isFreeProvider' | 'isDisposable'>;

export type VerificationConfig = Pick<
  Config,
  | 'verificationCacheTtlSeconds'
  | 'smtpProbeEnabled'
  | 'smtpProbeHost'
  | 'smtpProbePort'
  | 'smtpProbeTimeoutMs'
  | 'smtpProbeHelo'
  | 'smtpProbeFrom'
>;

interface Verdict extends Flags {
  status: Status;
  subStatus: SubStatus;
  score: number;
  mxFound: boolean;
  checkedAt: Date;
  /** Worth caching: a definite answer that needed the network (never `unknown`, never bad syntax). */
  cacheable: boolean;
}

/** How many addresses of one request are checked at once (each may hold a DNS look-up and an SMTP probe). */
const CONCURRENCY = 10;

const FIXED_SCORES: Record<Exclude<Status, 'valid'>, number> = {
  catchAll: 50,
  unknown: 40,
  disposable: 10,
  invalid: 0,
};

const PROBE_VERDICTS: Record<Exclude<ProbeOutcome, 'accepted'>, [Status, SubStatus]> = {
  rejected: ['invalid', 'mailboxNotFound'],
  catchAll: ['catchAll', 'catchAllDomain'],
  timeout: ['unknown', 'smtpTimeout'],
  unavailable: ['unknown', 'smtpUnavailable'],
  temporaryFailure: ['unknown', 'smtpTemporaryFailure'],
};

/**
 * MX answers kept across calls for one bulk job (its batches ask for the same domains again): definite
 * answers only, each for MX_CACHE_SECONDS (node's resolver does not report a record's TTL; 5 minutes is the
 * low end of the TTLs MX records are usually given), at most MX_CACHE_DOMAINS.
 */
export type MxCache = LRUCache<string, Promise<DnsResult<MxRecord>>>;
const MX_CACHE_SECONDS = 300;
const MX_CACHE_DOMAINS = 10_000;

/** An answer that holds until the record changes: records, no such domain, or no MX (not a timeout or a failure). */
const isDefinite = (mx: DnsResult<MxRecord>) => mx.ok || mx.reason === 'notFound' || mx.reason === 'noData';

/** The cache key: the trimmed address, lower-cased (mail servers treat local parts case-insensitively in practice). */
const cacheKey = (email: string) => email.trim().toLowerCase();

async function forEachLimit<T>(items: T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await work(items[next++]);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

/** What VerificationService is built from, by name. */
export interface VerificationServiceDeps {
  db: Db;
  store: VerificationStore;
  dns: DnsLookup;
  clock: Clock;
  config: VerificationConfig;
}

export class VerificationService {
  private readonly db: Db;
  private readonly store: VerificationStore;
  private readonly dns: DnsLookup;
  private readonly clock: Clock;
  private readonly config: VerificationConfig;

  constructor({ db, store, dns, clock, config }: VerificationServiceDeps) {
    this.db = db;
    this.store = store;
    this.dns = dns;
    this.clock = clock;
    this.config = config;
  }

  /** A cache of MX answers for the calls of one bulk job (timed by the injected clock). */
  newMxCache(): MxCache {
    // ttlResolution 0: the clock is read at every look-up (by default lru-cache reuses a reading until a timer
    // fires, which may not happen between two batches on the embedded database).
    return new LRUCache({
      max: MX_CACHE_DOMAINS,
      ttl: MX_CACHE_SECONDS * 1000,
      ttlResolution: 0,
      perf: { now: () => this.clock.now().getTime() },
    });
  }

  /** Those of these addresses (lower-cased) whose verification, still fresh in the cache, says `valid`. */
  async validAmong(db: Executor, emails: string[]): Promise<Set<string>> {
    const rows = await this.store.fresh(db, [...new Set(emails.map(cacheKey))], this.clock.now());
    return new Set(rows.filter((r) => r.status === 'valid').map((r) => r.email));
  }

  /**
   * One result per address, in order; each distinct address is checked (or read from the cache) once.
   * `db` is the caller's transaction when it has one (a bulk job's batch); `mxCache` the job's MX answers.
   */
  async verify(
    emails: string[],
    db: Executor = this.db,
    mxCache?: MxCache,
  ): Promise<{ results: VerificationResult[]; summary: VerificationSummary }> {
    const now = this.clock.now();
    const keys = [...new Set(emails.map(cacheKey))];
    const verdicts = new Map<string, Verdict>();
    for (const row of await this.store.fresh(db, keys, now)) verdicts.set(row.email, fromRow(row));

    // One MX look-up per domain per request, however many of its addresses are sent (none when the job's cache knows it).
    const mxByDomain = new Map<string, Promise<DnsResult<MxRecord>>>();
    // The job's cache holds the look-up itself, so batches running at once share one query; it is dropped when
    // the answer is not definite.
    const lookupMx = (domain: string) => {
      let answer = mxByDomain.get(domain) ?? mxCache?.get(domain);
      if (!answer) {
        const asked = this.dns.mx(domain);
        answer = asked;
        if (mxCache) {
          mxCache.set(domain, asked);
          void asked.then((mx) => {
            if (!isDefinite(mx) && mxCache.peek(domain) === asked) mxCache.delete(domain);
          });
        }
      }
      mxByDomain.set(domain, answer);
      return answer;
    };
    const checked: [string, Verdict][] = [];
    await forEachLimit(
      keys.filter((key) => !verdicts.has(key)),
      CONCURRENCY,
      async (key) => {
        const verdict = await this.check(key, lookupMx, now);
        verdicts.set(key, verdict);
        checked.push([key, verdict]);
      },
    );

    const expiresAt = new Date(now.getTime() + this.config.verificationCacheTtlSeconds * 1000);
    await this.store.save(
      db,
      checked.filter(([, v]) => v.cacheable).map(([email, v]) => toRow(email, v, expiresAt)),
    );

    const results = emails.map((email): VerificationResult => {
      const { cacheable: _cacheable, checkedAt, ...verdict } = verdicts.get(cacheKey(email))!;
      return { email, ...verdict, checkedAt: checkedAt.toISOString() };
    });
    const summary: VerificationSummary = {
      total: results.length,
      valid: 0,
      invalid: 0,
      catchAll: 0,
      unknown: 0,
      disposable: 0,
    };
    for (const r of results) summary[r.status] += 1;
    return { results, summary };
  }

  private async check(
    email: string,
    lookupMx: (domain: string) => Promise<DnsResult<MxRecord>>,
    now: Date,
  ): Promise<Verdict> {
    const parsed = parseAddress(email);
    if (!parsed) {
      const flags = { isRoleAccount: false, isFreeProvider: false, isDisposable: false };
      return {
        ...flags,
        ...this.outcome('invalid', 'invalidSyntax', flags),
        mxFound: false,
        checkedAt: now,
        cacheable: false,
      };
    }
    const flags: Flags = {
      isRoleAccount: isRoleLocalPart(parsed.local),
      isFreeProvider: isFreeProviderDomain(parsed.domain),
      isDisposable: isDisposableDomain(parsed.domain),
    };
    const mx = await lookupMx(parsed.domain);
    // A null MX (RFC 7505: a single "." exchange) says the domain accepts no mail.
    const exchanges = mx.ok ? mx.records.filter((r) => r.exchange && r.exchange !== '.') : [];
    const verdict = (status: Status, subStatus: SubStatus, cacheable = isDefinite(mx)): Verdict => ({
      ...flags,
      ...this.outcome(status, subStatus, flags),
      mxFound: exchanges.length > 0,
      checkedAt: now,
      cacheable: cacheable && status !== 'unknown',
    });

    if (flags.isDisposable) return verdict('disposable', 'disposableDomain');
    if (!mx.ok) {
      if (mx.reason === 'notFound') return verdict('invalid', 'domainNotFound');
      if (mx.reason === 'noData') return verdict('invalid', 'noMxRecord');
      return verdict('unknown', mx.reason === 'timeout' ? 'dnsTimeout' : 'dnsError');
    }
    if (!exchanges.length) return verdict('invalid', 'noMxRecord');
    if (!this.config.smtpProbeEnabled) return verdict('valid', null);

    // parseAddress admits no CR, LF, space or angle bracket, so the address is safe inside an SMTP command.
    const probe = await probeMailbox(
      {
        host: this.config.smtpProbeHost ?? exchanges[0].exchange,
        port: this.config.smtpProbePort,
        timeoutMs: this.config.smtpProbeTimeoutMs,
        helo: this.config.smtpProbeHelo,
        from: this.config.smtpProbeFrom,
      },
      email,
      parsed.domain,
    );
    return probe === 'accepted' ? verdict('valid', null) : verdict(...PROBE_VERDICTS[probe]);
  }

  /** Status, reason and score: a valid address scores 100 with a mailbox probe, 85 without, less for a role or free-mail address. */
  private outcome(status: Status, subStatus: SubStatus, flags: Flags): Pick<Verdict, 'status' | 'subStatus' | 'score'> {
    if (status !== 'valid') return { status, subStatus, score: FIXED_SCORES[status] };
    const base = this.config.smtpProbeEnabled ? 100 : 85;
    return { status, subStatus, score: base - (flags.isRoleAccount ? 15 : 0) - (flags.isFreeProvider ? 5 : 0) };
  }
}

function fromRow(row: VerificationRow): Verdict {
  return {
    status: row.status as Status,
    subStatus: row.sub_status as SubStatus,
    score: row.score,
    isRoleAccount: row.is_role_account,
    isFreeProvider: row.is_free_provider,
    isDisposable: row.is_disposable,
    mxFound: row.mx_found,
    checkedAt: new Date(row.checked_at),
    cacheable: true,
  };
}

function toRow(email: string, v: Verdict, expiresAt: Date): VerificationRow {
  return {
    email,
    status: v.status,
    sub_status: v.subStatus,
    score: v.score,
    is_role_account: v.isRoleAccount,
    is_free_provider: v.isFreeProvider,
    is_disposable: v.isDisposable,
    mx_found: v.mxFound,
    checked_at: v.checkedAt,
    expires_at: expiresAt,
  };
}
