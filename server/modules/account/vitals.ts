/**
 * The DNS half of account vitals: MX, SPF, DKIM and DMARC checks of a domain and its listings on DNS
 * blocklists, through the configured resolver (server/platform/dns.ts), and the overall score. Every look-up runs
 * at once; a DNS failure (timeout, NXDOMAIN, ...) is a failed check with its reason, never an error of the
 * request.
 */
import { isIPv4 } from 'node:net';
import type { components } from '../../../generated/api';
import type { DnsFailure, DnsLookup, DnsResult } from '../../platform/dns';

type Check = components['schemas']['DnsRecordCheck'];
type DkimCheck = components['schemas']['DkimCheck'];

export interface DomainVitals {
  mx: Check;
  spf: Check;
  dkim: DkimCheck;
  dmarc: Check;
  allPass: boolean;
}

const pass = (name: string, records: string[]): Check => ({ pass: true, name, records, reason: null, message: null });
const fail = (name: string, records: string[], reason: Check['reason'], message: string): Check => ({
  pass: false,
  name,
  records,
  reason,
  message,
});
const lookupFailed = (name: string, result: { reason: DnsFailure; message: string }): Check =>
  fail(name, [], result.reason, result.message);

async function checkMx(dns: DnsLookup, domain: string): Promise<Check> {
  const result = await dns.mx(domain);
  if (!result.ok) return lookupFailed(domain, result);
  const records = result.records.map((r) => `${r.priority} ${r.exchange}`);
  // RFC 7505 "null MX" (`0 .`): the domain states it accepts no mail at all.
  if (result.records.every((r) => r.exchange === '' || r.exchange === '.')) {
    return fail(domain, records, 'noMatchingRecord', 'The domain publishes a null MX: it accepts no mail.');
  }
  return pass(domain, records);
}

const SPF = { what: 'SPF', tag: 'v=spf1', pattern: /^v=spf1(\s|$)/i };
const DMARC = { what: 'DMARC', tag: 'v=DMARC1', pattern: /^v=DMARC1\s*(;|$)/i };

/** Exactly one TXT record with the kind's version tag (SPF and DMARC: receivers reject several). */
function singleTagged(name: string, result: DnsResult<string>, kind: typeof SPF): Check {
  const { what, tag, pattern } = kind;
  if (!result.ok) return lookupFailed(name, result);
  const tagged = result.records.filter((r) => pattern.test(r.trim()));
  if (tagged.length === 0)
    return fail(
      name,
      result.records,
      'noMatchingRecord',
      `No ${what} record (TXT starting with "${tag}") among the TXT records.`,
    );
  if (tagged.length > 1)
    return fail(
      name,
      tagged,
      'multipleRecords',
      `${tagged.length} ${what} records: receivers treat more than one as an error.`,
    );
  return pass(name, tagged);
}

/** A DKIM key record: its public key `p=` is not empty (RFC 6376: an empty one means revoked). */
const isDkimKey = (record: string): boolean => /(^|;)\s*p\s*=\s*[A-Za-z0-9+/]/.test(record);

const FAILURE_PRIORITY: DnsFailure[] = ['timeout', 'serverFailure', 'refused', 'error'];

async function checkDkim(dns: DnsLookup, domain: string, selectors: string[]): Promise<DkimCheck> {
  const names = selectors.map((s) => `${s}._domainkey.${domain}`);
  const results = await Promise.all(names.map((name) => dns.txt(name)));
  const extra = { checkedSelectors: selectors };
  const found = results.findIndex((r) => r.ok && r.records.some(isDkimKey));
  if (found >= 0) {
    const records = (results[found] as { records: string[] }).records.filter(isDkimKey);
    return { ...pass(names[found], records), selector: selectors[found], ...extra };
  }
  // No key: report the most telling reason (a timeout says more than "not found").
  const failures = results.filter((r): r is Extract<DnsResult<string>, { ok: false }> => !r.ok);
  const worst = FAILURE_PRIORITY.map((reason) => failures.find((f) => f.reason === reason)).find(Boolean);
  const base = worst
    ? lookupFailed(names[0], worst)
    : results.some((r) => r.ok && r.records.length)
      ? fail(names[0], [], 'noMatchingRecord', 'TXT records exist at the selectors tried, but none is a DKIM key.')
      : fail(names[0], [], 'notFound', `No DKIM key at any of the selectors tried (${selectors.join(', ')}).`);
  return { ...base, selector: null, ...extra };
}

export async function checkDomain(dns: DnsLookup, domain: string, dkimSelectors: string[]): Promise<DomainVitals> {
  const [mx, spfTxt, dkim, dmarcTxt] = await Promise.all([
    checkMx(dns, domain),
    dns.txt(domain),
    checkDkim(dns, domain, dkimSelectors),
    dns.txt(`_dmarc.${domain}`),
  ]);
  const spf = singleTagged(domain, spfTxt, SPF);
  const dmarc = singleTagged(`_dmarc.${domain}`, dmarcTxt, DMARC);
  return { mx, spf, dkim, dmarc, allPass: mx.pass && spf.pass && dkim.pass && dmarc.pass };
}

type BlocklistCheck = components['schemas']['BlocklistCheck'];
type SendingHost = components['schemas']['SendingHost'];
type ScoreReason = components['schemas']['ScoreReason'];

export interface Blocklists {
  listedOn: string[];
  sendingHost: SendingHost;
  checks: BlocklistCheck[];
}

/** An A look-up; the caller shares one memoized per request, so accounts on one host ask each list once. */
export type ALookup = (name: string) => Promise<DnsResult<string>>;

async function resolveSendingHost(a: ALookup, host: string): Promise<SendingHost> {
  if (isIPv4(host)) return { host, addresses: [host], reason: null, message: null };
  const result = await a(host);
  if (!result.ok) return { host, addresses: [], reason: result.reason, message: result.message };
  return { host, addresses: [...new Set(result.records)], reason: null, message: null };
}

async function askList(a: ALookup, zone: string, kind: 'ip' | 'domain', target: string): Promise<BlocklistCheck> {
  const query = kind === 'ip' ? `${target.split('.').reverse().join('.')}.${zone}` : `${target}.${zone}`;
  const base = { zone, kind, target, query };
  const result = await a(query);
  if (!result.ok) {
    // NXDOMAIN (or no A record) is how a DNSBL says "not listed".
    if (result.reason === 'notFound' || result.reason === 'noData')
      return { ...base, listed: false, returnCodes: [], reason: null, message: null };
    return { ...base, listed: null, returnCodes: [], reason: result.reason, message: result.message };
  }
  const codes = [...result.records].sort();
  // Spamhaus answers 127.255.255.252-255 for typos, public resolvers and rate limits: no verdict.
  if (codes.some((c) => c.startsWith('127.255.255.'))) {
    return {
      ...base,
      listed: null,
      returnCodes: codes,
      reason: 'listRefused',
      message: `The list refused the query (${codes.join(', ')}): it does not answer this resolver, or its query limit was reached.`,
    };
  }
  // A listing is an answer in 127.0.0.0/8; anything else is a resolver rewriting NXDOMAIN, not the list.
  if (!codes.every((c) => c.startsWith('127.'))) {
    return {
      ...base,
      listed: null,
      returnCodes: codes,
      reason: 'error',
      message: `The answer (${codes.join(', ')}) is not a blocklist code: the resolver may rewrite unknown names.`,
    };
  }
  return { ...base, listed: true, returnCodes: codes, reason: null, message: null };
}

/** The domain on each domain list and each address of the SMTP host on each IP list, all at once. */
export async function checkBlocklists(
  a: ALookup,
  domain: string,
  smtpHost: string,
  zones: { ip: string[]; domain: string[] },
): Promise<Blocklists> {
  const sendingHost = await resolveSendingHost(a, smtpHost);
  const checks = await Promise.all([
    ...zones.domain.map((zone) => askList(a, zone, 'domain', domain)),
    ...sendingHost.addresses.flatMap((ip) => zones.ip.map((zone) => askList(a, zone, 'ip', ip))),
  ]);
  return { listedOn: [...new Set(checks.filter((c) => c.listed).map((c) => c.zone))], sendingHost, checks };
}

/** Memoizes A look-ups for one request. */
export function memoizedA(dns: DnsLookup): ALookup {
  const seen = new Map<string, Promise<DnsResult<string>>>();
  return (name) => {
    const key = name.toLowerCase();
    if (!seen.has(key)) seen.set(key, dns.a(key));
    return seen.get(key)!;
  };
}

export interface ScoreInput {
  domain: string;
  checks: DomainVitals;
  blocklists: Blocklists;
  bounceRatePercent: number;
  unsubscribeRatePercent: number;
  warmupHealth: components['schemas']['WarmupHealth'];
}

/** Points a warm-up health label takes off (the labels below 85). */
const HEALTH_POINTS: Partial<Record<components['schemas']['WarmupHealth']['label'], number>> = { fair: 10, poor: 20 };

const DNS_POINTS = { mx: ['MX', 10], spf: ['SPF', 15], dkim: ['DKIM', 15], dmarc: ['DMARC', 10] } as const;

/** The overall score: 100 less the points of each reason (the table is ScoreReason's in the spec). */
export function scoreOf(input: ScoreInput): { score: number; scoreReasons: ScoreReason[] } {
  const reasons: ScoreReason[] = [];
  for (const key of ['mx', 'spf', 'dkim', 'dmarc'] as const) {
    const check = input.checks[key];
    const [what, points] = DNS_POINTS[key];
    if (!check.pass) reasons.push({ code: `${key}Failed`, points, message: `${what} check failed: ${check.message}` });
  }
  const listedBy = (kind: 'ip' | 'domain') => input.blocklists.checks.filter((c) => c.kind === kind && c.listed);
  const domainListings = listedBy('domain');
  if (domainListings.length) {
    reasons.push({
      code: 'domainListed',
      points: 30,
      message: `The domain ${input.domain} is listed on ${[...new Set(domainListings.map((c) => c.zone))].join(', ')}.`,
    });
  }
  const hostListings = listedBy('ip');
  if (hostListings.length) {
    const ips = [...new Set(hostListings.map((c) => c.target))].join(', ');
    const lists = [...new Set(hostListings.map((c) => c.zone))].join(', ');
    reasons.push({
      code: 'hostListed',
      points: 30,
      message: `The sending host ${input.blocklists.sendingHost.host} (${ips}) is listed on ${lists}.`,
    });
  }
  const bounce = input.bounceRatePercent;
  if (bounce > 2) {
    const over = bounce > 5 ? 5 : 2;
    reasons.push({
      code: 'highBounceRate',
      points: over === 5 ? 25 : 15,
      message: `Bounce rate of the last 30 days is ${bounce}%, over ${over}%.`,
    });
  }
  if (input.unsubscribeRatePercent > 1) {
    reasons.push({
      code: 'highUnsubscribeRate',
      points: 10,
      message: `Unsubscribe rate of the last 30 days is ${input.unsubscribeRatePercent}%, over 1%.`,
    });
  }
  const health = input.warmupHealth;
  const healthPoints = HEALTH_POINTS[health.label];
  if (healthPoints) {
    reasons.push({
      code: 'lowWarmupHealth',
      points: healthPoints,
      message: `Warm-up health is ${health.label} (${health.score}): ${health.landedInbox} of ${health.landedInbox + health.landedSpam} warm-up emails of the last ${health.days} days landed in the inbox.`,
    });
  }
  reasons.sort((x, y) => y.points - x.points);
  return { score: Math.max(0, 100 - reasons.reduce((sum, r) => sum + r.points, 0)), scoreReasons: reasons };
}
