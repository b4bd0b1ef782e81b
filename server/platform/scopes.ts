/**
 * What an API key may call. Every operation of the spec names the scope it needs in `x-required-scope`
 * (`campaigns:read`, `campaigns:write`, `credits:spend`, `keys:manage`, ...); the app reads them once at
 * start-up and the route helper checks the key's scopes, which came with the key in its one database call.
 *
 * A key holds a scope when it holds `all`, the scope itself, or the write scope of the same area for a read
 * (`campaigns:write` lets a key read campaigns too). `platform:read`
 * (checking the key, reading the quota limits) is held by every key.
 */
import type { BundledSpec } from './project-root';

export const ALL_SCOPES = 'all';
const EVERY_KEY = 'platform:read';

const METHODS = ['get', 'post', 'put', 'delete', 'patch'] as const;

/** The scope each operation needs, by `METHOD /path` of the bundle; throws when an operation declares none. */
export function requiredScopes(spec: BundledSpec): Map<string, string> {
  const scopes = new Map<string, string>();
  for (const [path, item] of Object.entries(spec.paths)) {
    for (const method of METHODS) {
      const op = (item as Record<string, unknown> | undefined)?.[method] as Record<string, unknown> | undefined;
      if (!op) continue;
      const scope = op['x-required-scope'];
      if (typeof scope !== 'string') throw new Error(`${method.toUpperCase()} ${path} declares no x-required-scope`);
      scopes.set(`${method.toUpperCase()} ${path}`, scope);
    }
  }
  return scopes;
}

/** Each operation's scope and operationId, by `METHOD /path` of the bundle. */
export function routeOperations(spec: BundledSpec): Map<string, { scope: string; operationId: string }> {
  const operations = new Map<string, { scope: string; operationId: string }>();
  for (const [key, scope] of requiredScopes(spec)) {
    const [method, path] = key.split(' ');
    const op = (spec.paths[path] as Record<string, { operationId?: string }>)[method.toLowerCase()];
    operations.set(key, { scope, operationId: op.operationId ?? key });
  }
  return operations;
}

/** Every scope a key can be given: those the operations need, and `all`. */
export function knownScopes(spec: BundledSpec): string[] {
  return [...new Set([...requiredScopes(spec).values(), ALL_SCOPES])].filter((s) => s !== EVERY_KEY).sort();
}

export function holds(held: readonly string[], needed: string): boolean {
  if (needed === EVERY_KEY || held.includes(ALL_SCOPES) || held.includes(needed)) return true;
  const [area, access] = needed.split(':');
  return access === 'read' && held.includes(`${area}:write`);
}

/** What a key can do: its scopes, and when it stops working (null: never). */
export interface KeyReach {
  scopes: readonly string[];
  expiresAt: Date | null;
}

/**
 * Key management is least privilege: a key may create, rotate or revoke only a key that can do no more than
 * itself, for no longer. Every scope of `key` must be held by `manager` (`all` only by `all`), and an expiring
 * manager reaches only keys that expire no later than it does. Answers why `manager` may not, or null.
 */
export function beyondReach(manager: KeyReach, key: KeyReach): string | null {
  const notHeld = key.scopes.filter((s) => !holds(manager.scopes, s));
  if (notHeld.length) return `This API key can manage only keys within its own scopes; it lacks ${notHeld.join(', ')}.`;
  if (manager.expiresAt && (!key.expiresAt || key.expiresAt > manager.expiresAt)) {
    return (
      `This API key expires at ${manager.expiresAt.toISOString()}; it can manage only keys that expire ` +
      'by then (an expiresAt no later than that).'
    );
  }
  return null;
}
