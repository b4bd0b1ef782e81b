/**
 * The workspace's suppression list: an address there (or any address at a listed domain) is never mailed
 * by any campaign again. Unsubscribes and hard bounces add to it; the engine checks it before each send.
 */
import type { Clock } from '../../clock';
import type { Executor } from '../../db';
import type { SuppressionReason, SuppressionStore } from './store';

const domainOf = (email: string) => email.slice(email.lastIndexOf('@') + 1);

export class SuppressionService {
  constructor(
    private readonly store: SuppressionStore,
    private readonly clock: Clock,
  ) {}

  /** The suppressed ones among `emails` (lower-cased): listed themselves, or at a listed domain. */
  async filterSuppressed(db: Executor, workspaceId: string, emails: string[]): Promise<Set<string>> {
    const lower = [...new Set(emails.map((e) => e.toLowerCase()))];
    const listed = await this.store.present(db, workspaceId, [...lower, ...new Set(lower.map(domainOf))]);
    return new Set(lower.filter((e) => listed.has(e) || listed.has(domainOf(e))));
  }

  async isSuppressed(db: Executor, workspaceId: string, email: string): Promise<boolean> {
    return (await this.filterSuppressed(db, workspaceId, [email])).size > 0;
  }

  async suppress(db: Executor, workspaceId: string, entries: { value: string; reason: SuppressionReason }[]): Promise<void> {
    const at = this.clock.now();
    await this.store.insert(db, entries.map((e) => ({ workspace_id: workspaceId, value: e.value.toLowerCase(), reason: e.reason, created_at: at })));
  }
}
