/**
 * The workspace's suppression list: an address there (or any address at a listed domain) is never mailed
 * by any campaign again. Unsubscribes and hard bounces add to it; the engine checks it before each send.
 */
import type { components } from '../../../generated/api';
import type { Clock } from '../../platform/clock';
import type { Db, Executor } from '../../db';
import type { SuppressionReason, SuppressionStore } from './store';
import type { Page } from '../../platform/paging';
import { domainOf, isValidEmail } from '../../platform/email-address';

type Schemas = components['schemas'];

const DOMAIN = /^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)+$/;

/** What SuppressionService is built from, by name. */
export interface SuppressionServiceDeps {
  db: Db;
  store: SuppressionStore;
  clock: Clock;
}

export class SuppressionService {
  private readonly db: Db;
  private readonly store: SuppressionStore;
  private readonly clock: Clock;

  constructor({ db, store, clock }: SuppressionServiceDeps) {
    this.db = db;
    this.store = store;
    this.clock = clock;
  }

  /** The suppressed ones among `emails` (lower-cased): listed themselves, or at a listed domain. */
  async filterSuppressed(db: Executor, workspaceId: string, emails: string[]): Promise<Set<string>> {
    const lower = [...new Set(emails.map((e) => e.toLowerCase()))];
    const listed = await this.store.present(db, workspaceId, [...lower, ...new Set(lower.map(domainOf))]);
    return new Set(lower.filter((e) => listed.has(e) || listed.has(domainOf(e))));
  }

  async isSuppressed(db: Executor, workspaceId: string, email: string): Promise<boolean> {
    return (await this.filterSuppressed(db, workspaceId, [email])).size > 0;
  }

  async suppress(
    db: Executor,
    workspaceId: string,
    entries: { value: string; reason: SuppressionReason }[],
  ): Promise<void> {
    const at = this.clock.now();
    await this.store.insert(
      db,
      entries.map((e) => ({
        workspace_id: workspaceId,
        value: e.value.toLowerCase(),
        reason: e.reason,
        created_at: at,
      })),
    );
  }

  // --- the API's operations ---

  async add(workspaceId: string, values: string[]): Promise<Schemas['SuppressionAddResult']> {
    const invalid: Schemas['SuppressionAddResult']['invalid'] = [];
    const wanted: string[] = [];
    values.forEach((raw, index) => {
      const value = raw.trim().toLowerCase();
      if (isValidEmail(value) || DOMAIN.test(value)) {
        if (!wanted.includes(value)) wanted.push(value);
      } else invalid.push({ index, value: raw, message: 'Not an email address or a domain.' });
    });
    return this.db.transaction(async (trx) => {
      const listed = await this.store.present(trx, workspaceId, wanted);
      const added = wanted.filter((v) => !listed.has(v));
      await this.suppress(
        trx,
        workspaceId,
        added.map((value) => ({ value, reason: 'manual' as const })),
      );
      return { added, alreadyListed: wanted.filter((v) => listed.has(v)), invalid };
    });
  }

  async remove(workspaceId: string, values: string[]): Promise<{ removed: string[]; notListed: string[] }> {
    const wanted = [...new Set(values.map((v) => v.trim().toLowerCase()))];
    const removed = await this.db.transaction((trx) => this.store.remove(trx, workspaceId, wanted));
    return { removed, notListed: wanted.filter((v) => !removed.includes(v)) };
  }

  async list(workspaceId: string, page: Page & { search?: string }) {
    const { rows, total } = await this.store.page(this.db, workspaceId, page);
    const items = rows.map((r): Schemas['SuppressionEntry'] => ({
      value: r.value,
      kind: r.value.includes('@') ? 'address' : 'domain',
      reason: r.reason,
      createdAt: r.created_at.toISOString(),
    }));
    return { items, page, total };
  }
}
