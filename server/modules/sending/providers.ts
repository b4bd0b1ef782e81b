/**
 * Who runs a mail domain (google, microsoft, other), from its MX records through the configured resolver,
 * kept in `recipient_providers` for PROVIDER_TTL_MS. The sending engine looks up the domains of a
 * campaign's due contacts and accounts before it claims (never inside a transaction), and matches them.
 */
import type { components } from '../../../generated/api';
import type { Clock } from '../../platform/clock';
import type { Db, Executor } from '../../db';
import type { DnsLookup } from '../../platform/dns';
import { domainOf } from '../../platform/email-address';

export type MailboxProvider = components['schemas']['MailboxProvider'];

/** How long a domain's provider is kept before it is looked up again. */
export const PROVIDER_TTL_MS = 7 * 86_400_000;

const GOOGLE = /(^|\.)(google\.com|googlemail\.com)$/;
const MICROSOFT = /(^|\.)(outlook\.com|hotmail\.com|outlook\.de|office365\.us)$/;

/** The provider that MX hosts belong to: the most preferred host that names one, else `other`. */
export function providerOfMx(exchanges: string[]): MailboxProvider {
  for (const raw of exchanges) {
    const host = raw.toLowerCase().replace(/\.$/, '');
    if (GOOGLE.test(host)) return 'google';
    if (MICROSOFT.test(host)) return 'microsoft';
  }
  return 'other';
}

/** The domain of an address, in lower case (how domains are stored and compared here). */
export const mailDomainOf = (email: string) => domainOf(email).toLowerCase();

/** What RecipientProviders is built from, by name. */
interface RecipientProvidersDeps {
  db: Db;
  dns: Pick<DnsLookup, 'mx'>;
  clock: Clock;
}

export class RecipientProviders {
  private readonly db: Db;
  private readonly dns: Pick<DnsLookup, 'mx'>;
  private readonly clock: Clock;

  constructor({ db, dns, clock }: RecipientProvidersDeps) {
    this.db = db;
    this.dns = dns;
    this.clock = clock;
  }

  /** The known providers of `domains` (however old); unknown ones are absent. */
  async known(db: Executor, domains: string[]): Promise<Map<string, MailboxProvider>> {
    if (domains.length === 0) return new Map();
    const rows: { domain: string; provider: MailboxProvider }[] = await db('recipient_providers')
      .whereIn('domain', [...new Set(domains)])
      .select('domain', 'provider');
    return new Map(rows.map((r) => [r.domain, r.provider]));
  }

  /**
   * Looks up those of `domains` not known or older than PROVIDER_TTL_MS and stores them. A resolver that
   * does not answer stores nothing (the next run asks again); a domain without MX is `other`.
   */
  async refresh(domains: string[]): Promise<void> {
    if (domains.length === 0) return;
    const now = this.clock.now();
    const fresh = new Set(
      (
        await this.db('recipient_providers')
          .whereIn('domain', [...new Set(domains)])
          .andWhere('checked_at', '>', new Date(now.getTime() - PROVIDER_TTL_MS))
          .select('domain')
      ).map((r: { domain: string }) => r.domain),
    );
    const stale = [...new Set(domains)].filter((d) => !fresh.has(d));
    const found = await Promise.all(
      stale.map(async (domain) => {
        const mx = await this.dns.mx(domain);
        if (mx.ok) return { domain, provider: providerOfMx(mx.records.map((r) => r.exchange)), checked_at: now };
        if (mx.reason === 'notFound' || mx.reason === 'noData') return { domain, provider: 'other', checked_at: now };
        return null;
      }),
    );
    const rows = found.filter((r) => r !== null);
    if (rows.length) await this.db('recipient_providers').insert(rows).onConflict('domain').merge();
  }
}
