/**
 * The offline checks of email verification: syntax, and the disposable, role-account and
 * free-provider classifications, each from a maintained list shipped by an npm package.
 */
import { domainToASCII } from 'node:url';
import emailAddresses from 'email-addresses';
import disposableDomains from 'disposable-email-domains';
import disposableWildcards from 'disposable-email-domains/wildcard.json';
import freeProviders from 'email-providers/common.json';
import roleLocalParts from 'role-based-email-addresses';

export interface ParsedAddress {
  local: string;
  /** Lower-cased, in ASCII (an internationalized domain in its punycode form). */
  domain: string;
}

const LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

/**
 * A plain `local@domain.tld` address, or null. The RFC 5322 parser checks the local part; on top
 * of it the whole input must be the bare address (no display name, comment or quoted local part,
 * which all parse but make `address` differ from the input), and the domain a DNS host name with a
 * non-numeric top-level domain (no IP literal).
 */
export function parseAddress(input: string): ParsedAddress | null {
  const parsed = emailAddresses.parseOneAddress({ input, rejectTLD: true, rfc6532: true });
  if (!parsed || parsed.type !== 'mailbox' || parsed.address !== input) return null;
  const { local, domain } = parsed;
  if (local.length > 64 || input.length > 254) return null;
  const ascii = domainToASCII(domain);
  if (!ascii || ascii.length > 253) return null;
  const labels = ascii.split('.');
  if (labels.length < 2 || !labels.every((label) => LABEL.test(label))) return null;
  if (!/[a-z]/.test(labels[labels.length - 1])) return null;
  return { local, domain: ascii };
}

const disposable = new Set<string>([...disposableDomains, ...disposableWildcards]);
const free = new Set<string>(freeProviders);
const roles = new Set<string>(roleLocalParts.map((r) => r.toLowerCase()));

/** The domain or one of its parent domains is a disposable-mailbox service. */
export function isDisposableDomain(domain: string): boolean {
  const labels = domain.split('.');
  for (let i = 0; i < labels.length - 1; i++) {
    if (disposable.has(labels.slice(i).join('.'))) return true;
  }
  return false;
}

export const isFreeProviderDomain = (domain: string): boolean => free.has(domain);

/** `sales@`, `Sales+emea@`: the local part without its `+tag`, case-insensitively. */
export const isRoleLocalPart = (local: string): boolean => roles.has(local.toLowerCase().split('+')[0]);
