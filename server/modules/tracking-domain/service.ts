/**
 * Custom tracking domains: a workspace's own host (`track.acme.com`) for the open pixel, click links and
 * unsubscribe link, verified by a CNAME record to the service's tracking host through the configurable
 * resolver. A domain is checked when added, on demand, and by the worker (every CHECK_PENDING_MS until it is
 * verified, every CHECK_VERIFIED_MS after), so one that loses its record is noticed and its mail falls back
 * to the default host. A host name is verified in one workspace at most, so one workspace's domain never
 * serves another's links (the tracking paths check the token's workspace against the host's).
 */
import type { components } from '../../../generated/api';
import type { Clock } from '../../platform/clock';
import type { Db, Executor } from '../../db';
import type { DnsLookup } from '../../platform/dns';
import { conflict, detail, notFound } from '../../platform/errors';
import type { Page, Paged } from '../../platform/paging';
import { newId } from '../../platform/ids';
import type { EventService } from '../events';
import type { TrackingDomainRow, TrackingDomainStore } from './store';

type Schemas = components['schemas'];
type Reason = Schemas['TrackingDomainReason'];

/** Checks of a domain not verified (yet, or any more). */
export const CHECK_PENDING_MS = 10 * 60_000;
/** Checks of a verified domain. */
export const CHECK_VERIFIED_MS = 6 * 3600_000;
/** Domains checked per worker run. */
const CHECKS_PER_RUN = 20;

const NOT_FOUND = 'Tracking domain not found.';

/** The answer of one DNS check: the record is right, or why not (`transient`: the resolver did not answer). */
type Check = { ok: true; found: string } | { ok: false; reason: Reason; found: string | null; transient: boolean };

/** A host name as stored and compared: lower case, no trailing dot. */
export const normalizeHost = (host: string): string => host.trim().toLowerCase().replace(/\.$/, '');

function toDomain(row: TrackingDomainRow, cnameTarget: string): Schemas['TrackingDomain'] {
  return {
    id: row.id,
    domain: row.domain,
    cnameTarget,
    status: row.status,
    reason: row.reason ? { code: row.reason as Reason['code'], message: row.reason_message ?? '' } : null,
    verifiedAt: row.verified_at ? row.verified_at.toISOString() : null,
    checkedAt: row.checked_at ? row.checked_at.toISOString() : null,
    nextCheckAt: new Date(row.next_check_at).toISOString(),
    createdAt: row.created_at.toISOString(),
  };
}

/** What TrackingDomainService is built from, by name. */
export interface TrackingDomainServiceDeps {
  db: Db;
  store: TrackingDomainStore;
  dns: Pick<DnsLookup, 'cname' | 'a'>;
  events: EventService;
  clock: Clock;
  /** The host every CNAME must name (TRACKING_CNAME_TARGET, or PUBLIC_URL's host). */
  cnameTarget: string;
}

export class TrackingDomainService {
  private readonly db: Db;
  private readonly store: TrackingDomainStore;
  private readonly dns: Pick<DnsLookup, 'cname' | 'a'>;
  private readonly events: EventService;
  private readonly clock: Clock;
  private readonly cnameTarget: string;

  constructor({ db, store, dns, events, clock, cnameTarget }: TrackingDomainServiceDeps) {
    this.db = db;
    this.store = store;
    this.dns = dns;
    this.events = events;
    this.clock = clock;
    this.cnameTarget = cnameTarget;
  }

  private view = (row: TrackingDomainRow) => toDomain(row, this.cnameTarget);

  private async require(db: Executor, workspaceId: string, id: string, forUpdate = false) {
    const row = await this.store.find(db, workspaceId, id, forUpdate);
    if (!row) throw notFound(NOT_FOUND, [detail('id', NOT_FOUND, 'not_found')]);
    return row;
  }

  /** Adds the domain (409 when it is in this workspace already, or verified in another) and checks it at once. */
  async create(workspaceId: string, rawDomain: string): Promise<Schemas['TrackingDomain']> {
    const domain = normalizeHost(rawDomain);
    const now = this.clock.now();
    const row: TrackingDomainRow = {
      id: newId(),
      workspace_id: workspaceId,
      domain,
      status: 'pending',
      reason: null,
      reason_message: null,
      cname_found: null,
      verified_at: null,
      checked_at: null,
      next_check_at: now,
      created_at: now,
      updated_at: now,
    };
    await this.db.transaction(async (trx) => {
      await this.store.lockName(trx, domain);
      if (await this.store.inWorkspace(trx, workspaceId, domain))
        throw conflict(`${domain} is already a tracking domain of this workspace.`, [
          detail('domain', 'is already a tracking domain of this workspace', 'duplicate'),
        ]);
      if (await this.store.verified(trx, domain))
        throw conflict(`${domain} is verified as a tracking domain of another workspace.`, [
          detail('domain', 'is verified in another workspace', 'in_use'),
        ]);
      await this.store.insert(trx, row);
    });
    return this.view(await this.checkNow(row));
  }

  async list(workspaceId: string, page: Page): Promise<Paged<Schemas['TrackingDomain']>> {
    const { rows, total } = await this.store.list(this.db, workspaceId, page);
    return { items: rows.map(this.view), page, total };
  }

  async get(workspaceId: string, id: string): Promise<Schemas['TrackingDomain']> {
    return this.view(await this.require(this.db, workspaceId, id));
  }

  /** Checks the domain's DNS now (POST /v2/tracking-domain/verify). */
  async verify(workspaceId: string, id: string): Promise<Schemas['TrackingDomain']> {
    return this.view(await this.checkNow(await this.require(this.db, workspaceId, id)));
  }

  async delete(workspaceId: string, id: string): Promise<{ deletedId: string }> {
    return this.db.transaction(async (trx) => {
      if (!(await this.store.delete(trx, workspaceId, id)))
        throw notFound(NOT_FOUND, [detail('id', NOT_FOUND, 'not_found')]);
      return { deletedId: id };
    });
  }

  /** The worker's job: checks the domains whose scheduled check is due. */
  async runOnce(): Promise<number> {
    const now = this.clock.now();
    const due = await this.db.transaction((trx) =>
      this.store.claimDue(trx, now, new Date(now.getTime() + CHECK_PENDING_MS), CHECKS_PER_RUN),
    );
    for (const row of due) await this.checkNow(row);
    return due.length;
  }

  /** Looks the record up (outside any transaction), then stores the outcome with its event; the row as it is now. */
  private async checkNow(row: TrackingDomainRow): Promise<TrackingDomainRow> {
    const check = await this.lookup(row.domain);
    return (await this.db.transaction((trx) => this.apply(trx, row.id, check))) ?? row;
  }

  private async lookup(domain: string): Promise<Check> {
    const target = this.cnameTarget;
    const cname = await this.dns.cname(domain);
    if (cname.ok) {
      if (cname.records.includes(target)) return { ok: true, found: target };
      const found = cname.records[0] ?? null;
      return {
        ok: false,
        found,
        transient: false,
        reason: { code: 'wrong_target', message: `${domain} is a CNAME to ${found}, not to ${target}.` },
      };
    }
    if (cname.reason === 'notFound' || cname.reason === 'noData') {
      const a = await this.dns.a(domain);
      if (a.ok && a.records.length > 0)
        return {
          ok: false,
          found: null,
          transient: false,
          reason: {
            code: 'conflicting_a_record',
            message: `${domain} has A records (${a.records.join(', ')}) instead of a CNAME to ${target}; remove them (or the DNS provider's proxying) and add the CNAME.`,
          },
        };
      return {
        ok: false,
        found: null,
        transient: false,
        reason: { code: 'no_record', message: `${domain} has no CNAME record yet; add one naming ${target}.` },
      };
    }
    return {
      ok: false,
      found: null,
      transient: true,
      reason: { code: 'dns_unavailable', message: `The DNS look-up of ${domain} failed: ${cname.message}` },
    };
  }

  /**
   * The check's outcome on the locked row: `verified` when the record is right and no other workspace has
   * the name verified; `failed` for a wrong record, or no record on a domain that was verified once;
   * otherwise `pending`. A resolver that does not answer changes no status. A change records its event.
   */
  private async apply(trx: Executor, id: string, check: Check): Promise<TrackingDomainRow | undefined> {
    const before = await this.store.lockById(trx, id);
    if (!before) return undefined;
    const now = this.clock.now();
    let outcome = check;
    if (check.ok) {
      await this.store.lockName(trx, before.domain);
      const holder = await this.store.verified(trx, before.domain);
      if (holder && holder.id !== before.id)
        outcome = {
          ok: false,
          found: check.found,
          transient: false,
          reason: {
            code: 'in_use',
            message: `${before.domain} is verified as a tracking domain of another workspace.`,
          },
        };
    }
    const status: TrackingDomainRow['status'] = outcome.ok
      ? 'verified'
      : outcome.transient
        ? before.status
        : outcome.reason.code === 'no_record' && before.verified_at === null
          ? 'pending'
          : 'failed';
    const patch: Partial<TrackingDomainRow> = {
      status,
      reason: outcome.ok ? null : outcome.reason.code,
      reason_message: outcome.ok ? null : outcome.reason.message.slice(0, 500),
      cname_found: outcome.found,
      verified_at: status === 'verified' && before.status !== 'verified' ? now : before.verified_at,
      checked_at: now,
      next_check_at: new Date(now.getTime() + (status === 'verified' ? CHECK_VERIFIED_MS : CHECK_PENDING_MS)),
      updated_at: now,
    };
    await this.store.update(trx, id, patch);
    const after = { ...before, ...patch };
    if (status !== before.status && status !== 'pending')
      await this.events.record(trx, {
        workspaceId: before.workspace_id,
        type: status === 'verified' ? 'tracking.domainVerified' : 'tracking.domainFailed',
        occurredAt: now,
        data: {
          trackingDomainId: id,
          domain: before.domain,
          status,
          reason: outcome.ok ? null : outcome.reason,
        },
      });
    return after;
  }

  // --- for the tracking paths, accounts and campaigns ---

  /** The workspace whose verified domain `host` is, or null when it is none. */
  async workspaceOfHost(host: string): Promise<string | null> {
    return (await this.store.verified(this.db, normalizeHost(host)))?.workspace_id ?? null;
  }

  /** The workspace's domain `id` for an account or campaign to choose: 404 when it is not the workspace's, 409 when it is not verified. */
  async requireVerified(db: Executor, workspaceId: string, id: string, field: string): Promise<void> {
    const row = await this.store.find(db, workspaceId, id);
    if (!row) throw notFound(NOT_FOUND, [detail(field, NOT_FOUND, 'not_found')]);
    if (row.status !== 'verified')
      throw conflict(`${row.domain} is not verified (${row.status}); add its CNAME record and verify it first.`, [
        detail(field, `the tracking domain is ${row.status}`, 'not_verified'),
      ]);
  }

  /** The chosen domains among `ids`, as accounts show them. */
  async choices(
    db: Executor,
    workspaceId: string,
    ids: string[],
  ): Promise<Map<string, Schemas['TrackingDomainChoice']>> {
    const rows = await this.store.findMany(db, workspaceId, [...new Set(ids)]);
    return new Map(
      rows.map((r) => [r.id, { id: r.id, domain: r.domain, status: r.status, inUse: r.status === 'verified' }]),
    );
  }
}
