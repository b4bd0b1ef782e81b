/**
 * The rule for every connection the service opens on a user's behalf (SMTP, IMAP, webhooks): a
 * host that resolves to a loopback, private, link-local or otherwise non-public address is refused
 * unless a setting allows it (tests, self-hosted relays). Callers connect to the address that was
 * checked, not to the name again, so a second DNS answer cannot point the connection elsewhere, and an IP
 * literal is checked like a name's answer.
 */
import { promises as dns } from 'node:dns';
import ipaddr from 'ipaddr.js';

export class OutboundRefusedError extends Error {
  readonly code = 'private_destination';
}

/**
 * Only global unicast addresses are public; ipaddr.js names every special range otherwise, and turns an
 * IPv4-mapped IPv6 address into its IPv4 one. It calls the deprecated IPv4-compatible range (::/96,
 * `[::127.0.0.1]`) unicast, so that range is refused here.
 */
export function isPublicAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return false;
  const parsed = ipaddr.process(address);
  if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).parts.slice(0, 6).every((part) => part === 0)) return false;
  return parsed.range() === 'unicast';
}

function refuseUnlessPublic(host: string, addresses: string[]): void {
  const bad = addresses.find((a) => !isPublicAddress(a));
  if (bad !== undefined) {
    throw new OutboundRefusedError(
      `${host} resolves to ${bad}, a loopback, private or link-local address; such destinations are not allowed.`,
    );
  }
}

/**
 * Resolves `host` (a name, or an IP literal in any form, bracketed or not) and returns an address to
 * connect to, refusing non-public ones unless allowed.
 */
export async function resolveAllowedAddress(host: string, options: { allowPrivate: boolean }): Promise<string> {
  const bare = host.replace(/^\[(.*)\]$/, '$1');
  const addresses = ipaddr.isValid(bare)
    ? [bare]
    : (await dns.lookup(bare, { all: true, verbatim: true })).map((a) => a.address);
  if (addresses.length === 0) throw new OutboundRefusedError(`${host} has no address.`);
  if (!options.allowPrivate) refuseUnlessPublic(host, addresses);
  return ipaddr.process(addresses[0]).toString();
}
