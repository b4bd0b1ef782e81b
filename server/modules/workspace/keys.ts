/**
 * A workspace's API keys as the workspace manages them itself: create with scopes and an optional expiry,
 * list, revoke, rotate with an overlap. Secrets are 256 random bits, shown once, stored as SHA-256 hashes
 * (requests find them by hash in server/http/quota.ts, which reads revocations and expiries from the
 * database on every request, so a change holds in every process at once).
 */
import { randomBytes } from 'node:crypto';
import type { Db, Executor } from '../../db';
import type { Clock } from '../../platform/clock';
import { newId } from '../../platform/ids';
import { conflict, detail, forbidden, invalid, notFound } from '../../platform/errors';
import { hashKey } from '../../platform/key-hash';
import { ALL_SCOPES, holds } from '../../platform/scopes';
import type { AuditTrail } from '../../platform/audit';
import type { Page, Paged } from '../../platform/paging';
import type { ApiKeyView, WorkspaceStore } from './store';

const KEY_PREFIX = 'lr_';
/** Scopes that can manage keys: a workspace always keeps one live key holding one of them. */
const MANAGING = [ALL_SCOPES, 'keys:manage'];

export interface IssuedKey {
  keyId: string;
  apiKey: string;
}

export interface NewKey {
  name: string | null;
  scopes: string[];
  expiresAt?: Date | null;
}

/** The key making a request: what it holds. */
export interface Caller {
  workspaceId: string;
  scopes: string[];
}

function newSecret(): { apiKey: string; key_hash: string; key_prefix: string } {
  const apiKey = KEY_PREFIX + randomBytes(32).toString('base64url');
  return { apiKey, key_hash: hashKey(apiKey), key_prefix: apiKey.slice(0, 10) };
}

export function keyView(row: ApiKeyView) {
  return {
    id: row.id,
    name: row.name,
    prefix: row.key_prefix,
    scopes: row.scopes,
    createdAt: row.created_at.toISOString(),
    lastUsedAt: row.last_used_at?.toISOString() ?? null,
    expiresAt: row.expires_at?.toISOString() ?? null,
    revokedAt: row.revoked_at?.toISOString() ?? null,
    previousSecretExpiresAt: row.previous_expires_at?.toISOString() ?? null,
  };
}

/** What KeyService is built from, by name. */
export interface KeyServiceDeps {
  db: Db;
  store: WorkspaceStore;
  clock: Clock;
  /** Every scope a key can be given (server/platform/scopes.ts `knownScopes`). */
  known: readonly string[];
  audit: AuditTrail;
}

export class KeyService {
  private readonly db: Db;
  private readonly store: WorkspaceStore;
  private readonly clock: Clock;
  private readonly known: readonly string[];
  private readonly audit: AuditTrail;

  constructor({ db, store, clock, known, audit }: KeyServiceDeps) {
    this.db = db;
    this.store = store;
    this.clock = clock;
    this.known = known;
    this.audit = audit;
  }

  /**
   * Writes a key and its audit entry in the caller's transaction and answers its secret (the only time it
   * exists in clear).
   */
  async issue(db: Executor, workspaceId: string, key: NewKey): Promise<IssuedKey & { row: ApiKeyView }> {
    const { apiKey, ...secret } = newSecret();
    const row: ApiKeyView = {
      id: newId(),
      workspace_id: workspaceId,
      name: key.name,
      key_prefix: secret.key_prefix,
      scopes: key.scopes,
      created_at: this.clock.now(),
      revoked_at: null,
      expires_at: key.expiresAt ?? null,
      last_used_at: null,
      previous_expires_at: null,
    };
    await this.store.insertKey(db, { ...row, key_hash: secret.key_hash, previous_key_hash: null });
    await this.audit.recordChange(db, workspaceId, { targetIds: [row.id], fields: ['name', 'scopes', 'expiresAt'] });
    return { keyId: row.id, apiKey, row };
  }

  /** POST /v2/api-key/create: only known scopes (400 naming the others), only scopes the caller holds (403). */
  async create(caller: Caller, input: { name: string; scopes: string[]; expiresAt?: string }) {
    const unknown = input.scopes.filter((s) => !this.known.includes(s));
    if (unknown.length) {
      throw invalid(
        `Unknown scopes: ${unknown.join(', ')}.`,
        unknown.map((s) => detail(`scopes.${input.scopes.indexOf(s)}`, `unknown scope ${s}`, 'unknown_scope')),
      );
    }
    const notHeld = input.scopes.filter((s) => !holds(caller.scopes, s));
    if (notHeld.length) throw forbidden(`This API key cannot give scopes it does not hold: ${notHeld.join(', ')}.`);
    const expiresAt = input.expiresAt ? new Date(input.expiresAt) : null;
    if (expiresAt && expiresAt <= this.clock.now()) {
      throw invalid('expiresAt must be in the future.', [detail('expiresAt', 'must be in the future', 'future')]);
    }
    const issued = await this.db.transaction((trx) =>
      this.issue(trx, caller.workspaceId, { name: input.name, scopes: input.scopes, expiresAt }),
    );
    return { key: keyView(issued.row), apiKey: issued.apiKey };
  }

  async list(workspaceId: string | null, page: Page): Promise<Paged<ApiKeyView>> {
    const { rows, total } = await this.store.listKeys(this.db, workspaceId, page);
    return { items: rows, page, total };
  }

  /**
   * Revokes a key of the workspace. Through the API the workspace's last live key that can manage keys stays
   * (409); the admin CLI (`fromApi` false) may revoke any key. The workspace row is locked so that two
   * concurrent revocations cannot each leave the other as the last one.
   */
  revoke(workspaceId: string, keyId: string, options: { fromApi: boolean }): Promise<ApiKeyView> {
    return this.db.transaction(async (trx) => {
      await this.store.lockWorkspace(trx, workspaceId);
      const key = await this.ownKey(trx, workspaceId, keyId);
      if (key.revoked_at) return key;
      const now = this.clock.now();
      if (options.fromApi && this.live(key, now) && key.scopes.some((s) => MANAGING.includes(s))) {
        const managing = await this.store.countLiveKeysWith(trx, workspaceId, MANAGING, now);
        if (managing <= 1) {
          throw conflict(
            'This is the last API key of the workspace that can manage keys (keys:manage); create another first.',
          );
        }
      }
      await this.store.revokeKey(trx, keyId, now);
      await this.audit.recordChange(trx, workspaceId, { targetIds: [keyId] });
      return { ...key, revoked_at: now };
    });
  }

  /** A new secret for a live key; the current one keeps working for `overlapSeconds`. */
  async rotate(workspaceId: string, keyId: string, overlapSeconds: number) {
    return this.db.transaction(async (trx) => {
      await this.store.lockWorkspace(trx, workspaceId);
      const key = await this.ownKey(trx, workspaceId, keyId);
      const now = this.clock.now();
      if (!this.live(key, now)) throw conflict('This API key is revoked or expired; create a new key instead.');
      const { apiKey, ...secret } = newSecret();
      const overlapEnd = overlapSeconds > 0 ? new Date(now.getTime() + overlapSeconds * 1000) : null;
      const row = await this.store.rotateKey(trx, keyId, secret, overlapEnd);
      await this.audit.recordChange(trx, workspaceId, { targetIds: [keyId] });
      return { key: keyView(row), apiKey };
    });
  }

  /** The admin CLI's look-up: one key by id or prefix. */
  async findForAdmin(idOrPrefix: string): Promise<ApiKeyView> {
    const rows = await this.store.findKeysByIdOrPrefix(this.db, idOrPrefix);
    if (rows.length === 0) throw notFound(`API key not found: no key has the id or prefix ${idOrPrefix}.`);
    if (rows.length > 1) throw conflict(`${rows.length} API keys have the prefix ${idOrPrefix}; give the key id.`);
    return rows[0];
  }

  private async ownKey(db: Executor, workspaceId: string, keyId: string): Promise<ApiKeyView> {
    const key = await this.store.findKey(db, keyId);
    if (!key || key.workspace_id !== workspaceId) throw notFound('API key not found.');
    return key;
  }

  private live(key: ApiKeyView, now: Date): boolean {
    return !key.revoked_at && (!key.expires_at || key.expires_at > now);
  }
}
