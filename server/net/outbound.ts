/**
 * The rule for every connection the service opens on a user's behalf (SMTP, IMAP, webhooks): a
 * host that resolves to a loopback, private, link-local or otherwise non-public address is refused
 * unless a setting allows it (tests, self-hosted relays). Callers connect to the address that was
 * checked, not to the name again, so a second DNS answer cannot point the connection elsewhere.
 */
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { promises as dns } from 'node:dns';
import type { LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';

export class OutboundRefusedError extends Error {
  readonly code = 'private_destination';
}

/** Only global unicast addresses are public; ipaddr.js names every special range otherwise. */
export function isPublicAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return false;
  return ipaddr.process(address).range() === 'unicast';
}

function refuseUnlessPublic(host: string, addresses: string[]): void {
  const bad = addresses.find((a) => !isPublicAddress(a));
  if (bad !== undefined) {
    throw new OutboundRefusedError(`${host} resolves to ${bad}, a loopback, private or link-local address; such destinations are not allowed.`);
  }
}

/** Resolves `host` and returns an address to connect to, refusing non-public ones unless allowed. */
export async function resolveAllowedAddress(host: string, options: { allowPrivate: boolean }): Promise<string> {
  const addresses = ipaddr.isValid(host) ? [host] : (await dns.lookup(host, { all: true, verbatim: true })).map((a) => a.address);
  if (addresses.length === 0) throw new OutboundRefusedError(`${host} has no address.`);
  if (!options.allowPrivate) refuseUnlessPublic(host, addresses);
  return addresses[0];
}

/** A `lookup` for http.request / net.connect that applies the same rule to what it resolves. */
export function guardedLookup(options: { allowPrivate: boolean }): LookupFunction {
  return (hostname, lookupOptions, callback) => {
    dnsLookup(hostname, { ...lookupOptions, all: true }, (err, results: LookupAddress[]) => {
      if (err) return callback(err, '', 0);
      try {
        if (!options.allowPrivate) refuseUnlessPublic(hostname, results.map((r) => r.address));
      } catch (refused) {
        return callback(refused as NodeJS.ErrnoException, '', 0);
      }
      if (lookupOptions.all) return (callback as unknown as (e: null, r: LookupAddress[]) => void)(null, results);
      callback(null, results[0].address, results[0].family);
    });
  };
}
