/**
 * The DNS half of account vitals: MX, SPF, DKIM and DMARC checks of a domain through the configured
 * resolver (server/dns.ts). Every look-up of a domain runs at once; a DNS failure (timeout, NXDOMAIN,
 * ...) is a failed check with its reason, never an error of the request.
 */
import type { components } from '../../../generated/api';
import type { DnsFailure, DnsLookup, DnsResult } from '../../dns';

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
const fail = (name: string, records: string[], reason: Check['reason'], message: string): Check => ({ pass: false, name, records, reason, message });
const lookupFailed = (name: string, result: { reason: DnsFailure; message: string }): Check => fail(name, [], result.reason, result.message);

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
  if (tagged.length === 0) return fail(name, result.records, 'noMatchingRecord', `No ${what} record (TXT starting with "${tag}") among the TXT records.`);
  if (tagged.length > 1) return fail(name, tagged, 'multipleRecords', `${tagged.length} ${what} records: receivers treat more than one as an error.`);
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
