/**
 * DNS look-ups for account vitals and email verification. One factory builds node's
 * dns.promises.Resolver from the config (DNS_SERVERS, DNS_TIMEOUT_MS), so tests point it at a
 * loopback server (test/helpers/dns-server.ts) and nothing leaves the machine.
 *
 * The look-up helpers never throw for DNS outcomes: they answer `{ ok: true, ... }` or
 * `{ ok: false, reason }`, where reason tells "no such name" from "timeout" from "server failure".
 */
import { promises as dns } from 'node:dns';
import type { Config } from './config';

export type DnsFailure = 'notFound' | 'noData' | 'timeout' | 'refused' | 'serverFailure' | 'error';

export type DnsResult<T> = { ok: true; records: T[] } | { ok: false; reason: DnsFailure; message: string };

export interface MxRecord {
  exchange: string;
  priority: number;
}

export interface DnsLookup {
  mx(domain: string): Promise<DnsResult<MxRecord>>;
  /** TXT records, each one's character-strings joined (a long SPF or DKIM record is split in chunks). */
  txt(name: string): Promise<DnsResult<string>>;
  /** IPv4 addresses (A records). */
  a(name: string): Promise<DnsResult<string>>;
  /** The name's canonical names (CNAME records), lower case without the trailing dot. */
  cname(name: string): Promise<DnsResult<string>>;
}

/** Builds a resolver: the configured servers, or the system's when none is configured. */
export function createResolver(config: Pick<Config, 'dnsServers' | 'dnsTimeoutMs'>): dns.Resolver {
  // tries: 1 so the configured timeout is the whole budget of a look-up, not one attempt of several.
  const resolver = new dns.Resolver({ timeout: config.dnsTimeoutMs, tries: 1 });
  if (config.dnsServers.length) resolver.setServers(config.dnsServers);
  return resolver;
}

const REASONS: Record<string, DnsFailure> = {
  ENOTFOUND: 'notFound',
  ENODATA: 'noData',
  ETIMEOUT: 'timeout',
  ECONNREFUSED: 'refused',
  ESERVFAIL: 'serverFailure',
  EREFUSED: 'refused',
};

const MESSAGES: Record<DnsFailure, string> = {
  notFound: 'The name does not exist (NXDOMAIN).',
  noData: 'The name exists but has no record of this type.',
  timeout: 'The DNS server did not answer in time.',
  refused: 'The DNS server refused the query.',
  serverFailure: 'The DNS server failed to answer (SERVFAIL).',
  error: 'The DNS look-up failed.',
};

function failure(err: unknown): { ok: false; reason: DnsFailure; message: string } {
  const reason = REASONS[(err as { code?: string })?.code ?? ''] ?? 'error';
  return { ok: false, reason, message: MESSAGES[reason] };
}

export function dnsLookup(resolver: dns.Resolver): DnsLookup {
  return {
    async mx(domain) {
      try {
        const records = await resolver.resolveMx(domain);
        return { ok: true, records: records.sort((a, b) => a.priority - b.priority) };
      } catch (err) {
        return failure(err);
      }
    },
    async txt(name) {
      try {
        const records = await resolver.resolveTxt(name);
        return { ok: true, records: records.map((chunks) => chunks.join('')) };
      } catch (err) {
        return failure(err);
      }
    },
    async a(name) {
      try {
        return { ok: true, records: await resolver.resolve4(name) };
      } catch (err) {
        return failure(err);
      }
    },
    async cname(name) {
      try {
        const records = await resolver.resolveCname(name);
        return { ok: true, records: records.map((r) => r.toLowerCase().replace(/\.$/, '')) };
      } catch (err) {
        return failure(err);
      }
    },
  };
}

/** The usual entry point: `createDnsLookup(config).mx('example.com')`. */
export const createDnsLookup = (config: Pick<Config, 'dnsServers' | 'dnsTimeoutMs'>): DnsLookup =>
  dnsLookup(createResolver(config));
