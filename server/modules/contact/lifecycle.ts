/**
 * A contact's life after its first email: pause and resume (by ids or by address, in one campaign or in
 * every campaign of the workspace) and moves between campaigns. Each request is all or nothing: unknown
 * contacts (404) and contacts in a state that forbids the change (409) are reported one detail each, and
 * then nothing changes. Sequence progress belongs to the sending module and is reached through
 * `ContactProgressPort`.
 */
import type { components } from '../../../generated/api';
import type { Clock } from '../../platform/clock';
import { isUniqueViolation, type Db, type Executor } from '../../db';
import { invalid, conflict, detail, notFound, type FieldProblem } from '../../platform/errors';
import { plural } from '../../text/plural';
import type { CampaignService } from '../campaign';
import { toContact, type ContactProgressPort } from './service';
import type { ContactRow, ContactStore } from './store';
import { CHANGED, skipped, type Outcomes } from './outcomes';

type Schemas = components['schemas'];
type Selection = Schemas['ContactSelection'];

const CONTACT_NOT_FOUND = 'Contact not found.';

/** What ContactLifecycle is built from, by name. */
export interface ContactLifecycleDeps {
  db: Db;
  store: ContactStore;
  campaigns: CampaignService;
  progress: ContactProgressPort;
  clock: Clock;
}

export class ContactLifecycle {
  private readonly db: Db;
  private readonly store: ContactStore;
  private readonly campaigns: CampaignService;
  private readonly progress: ContactProgressPort;
  private readonly clock: Clock;

  constructor({ db, store, campaigns, progress, clock }: ContactLifecycleDeps) {
    this.db = db;
    this.store = store;
    this.campaigns = campaigns;
    this.progress = progress;
    this.clock = clock;
  }

  /** POST /v2/contact/pause */
  pause(workspaceId: string, selection: Selection) {
    return this.change(workspaceId, selection, 'active', 'paused');
  }

  /** POST /v2/contact/resume: the progress row is untouched, so the contact goes on where it stopped. */
  resume(workspaceId: string, selection: Selection) {
    return this.change(workspaceId, selection, 'paused', 'active');
  }

  private async change(
    workspaceId: string,
    selection: Selection,
    from: 'active' | 'paused',
    to: 'active' | 'paused',
  ): Promise<Schemas['ContactLifecycleResult']> {
    const byIds = selection.contactIds !== undefined;
    if (byIds === (selection.emails !== undefined)) {
      const both = byIds;
      throw invalid(
        both
          ? 'Name contacts by contactIds or by emails, not both.'
          : 'Send contactIds or emails to name the contacts.',
        [
          detail(
            both ? 'emails' : 'contactIds',
            both ? 'must not be sent with contactIds' : "must have required property 'contactIds' or 'emails'",
            both ? 'oneOf' : 'required',
          ),
        ],
      );
    }
    return this.db.transaction(async (trx) => {
      if (selection.campaignId) await this.campaigns.assertExists(trx, workspaceId, selection.campaignId);
      const rows = byIds
        ? await this.locked(trx, workspaceId, selection.contactIds!, selection.campaignId)
        : await this.lockedByEmails(trx, workspaceId, selection.emails!, selection.campaignId);
      const fieldOf = (row: ContactRow) =>
        byIds
          ? `contactIds.${selection.contactIds!.indexOf(row.id)}`
          : `emails.${selection.emails!.findIndex((e) => e.toLowerCase() === row.email.toLowerCase())}`;
      const blocked = rows.filter((r) => r.status !== from && r.status !== to);
      if (blocked.length) {
        const verb = to === 'paused' ? 'paused' : 'resumed';
        throw conflict(
          `${plural(blocked.length, 'contact', 'contacts')} cannot be ${verb}: ${blocked
            .slice(0, 5)
            .map((r) => `${r.email} is ${r.status}`)
            .join(', ')}${blocked.length > 5 ? ', ...' : ''}.`,
          blocked.map((r) => detail(fieldOf(r), `${r.email} (campaign ${r.campaign_id}) is ${r.status}`, r.status)),
        );
      }
      const changed = await this.switchStatus(trx, workspaceId, rows, from, to);
      return {
        changed: changed.map(toContact),
        unchanged: rows
          .filter((r) => r.status === to)
          .map((r) => ({
            contactId: r.id,
            campaignId: r.campaign_id,
            email: r.email,
            status: r.status as 'active' | 'paused',
          })),
      };
    });
  }

  /** Sets `to` on those of the (locked) rows whose status is `from`; returns the rows changed. */
  private async switchStatus(
    trx: Executor,
    workspaceId: string,
    rows: ContactRow[],
    from: 'active' | 'paused',
    to: 'active' | 'paused',
  ): Promise<ContactRow[]> {
    const changed = await this.store.changeStatus(
      trx,
      workspaceId,
      rows.filter((r) => r.status === from).map((r) => r.id),
      from,
      to,
      this.clock.now(),
    );
    // A contact paused before its campaign went active has no progress row yet.
    if (to === 'active')
      await this.progress.startContacts(
        trx,
        changed.map((r) => r.id),
      );
    return changed;
  }

  /**
   * A bulk job's pause or resume, in its transaction: the rules of `pause` and `resume`, but each contact on its
   * own (one that is already so, or finished, is skipped and the others change).
   */
  async changeEach(trx: Executor, workspaceId: string, ids: string[], to: 'active' | 'paused'): Promise<Outcomes> {
    const rows = await this.store.lockByIds(trx, workspaceId, ids);
    const changed = new Set(
      (await this.switchStatus(trx, workspaceId, rows, to === 'paused' ? 'active' : 'paused', to)).map((r) => r.id),
    );
    const outcomes: Outcomes = new Map();
    for (const row of rows) {
      if (changed.has(row.id)) outcomes.set(row.id, CHANGED);
      else
        outcomes.set(
          row.id,
          skipped(row.status !== to ? row.status : to === 'paused' ? 'alreadyPaused' : 'alreadyActive'),
        );
    }
    return outcomes;
  }

  /** A bulk job's move, in its transaction: the rules of `move`, for the contacts of `ids` that still exist. */
  async moveEach(
    trx: Executor,
    workspaceId: string,
    ids: string[],
    target: string,
    keepProgress: boolean,
  ): Promise<Outcomes> {
    const { moved, alreadyInTarget } = await this.moveRows(
      trx,
      workspaceId,
      await this.store.lockByIds(trx, workspaceId, ids),
      target,
      keepProgress,
    );
    const outcomes: Outcomes = new Map(moved.map((r) => [r.id, CHANGED]));
    for (const held of alreadyInTarget)
      outcomes.set(held.contactId, skipped('alreadyInTarget', { existingContactId: held.existingContactId }));
    return outcomes;
  }

  /**
   * POST /v2/contact/move. An address added to the target by another request after this one looked (contact
   * add inserts without locking the campaign) makes the move's update meet the unique index; the move then
   * runs again once, and that time reports the address as already in the target.
   */
  async move(workspaceId: string, body: Schemas['ContactMoveRequest']): Promise<Schemas['ContactMoveResult']> {
    try {
      return await this.moveOnce(workspaceId, body);
    } catch (err) {
      if (!isUniqueViolation(err)) throw err;
      return this.moveOnce(workspaceId, body);
    }
  }

  private moveOnce(workspaceId: string, body: Schemas['ContactMoveRequest']): Promise<Schemas['ContactMoveResult']> {
    const target = body.toCampaignId;
    return this.db.transaction(async (trx) => {
      await this.campaigns.assertExists(trx, workspaceId, target);
      const locked = await this.locked(trx, workspaceId, body.contactIds);
      // Request order: of two contacts with one address, the first moves and the second is reported.
      const rows = body.contactIds.map((id) => locked.find((r) => r.id === id)!);
      return {
        toCampaignId: target,
        ...(await this.moveRows(trx, workspaceId, rows, target, body.keepProgress ?? false)),
      };
    });
  }

  /** Moves the (locked) rows to `target` in their order, but those whose address the target already holds. */
  private async moveRows(
    trx: Executor,
    workspaceId: string,
    rows: ContactRow[],
    target: string,
    keep: boolean,
  ): Promise<Omit<Schemas['ContactMoveResult'], 'toCampaignId'>> {
    const holders = new Map<string, string>();
    for (const held of await this.store.findByEmails(
      trx,
      target,
      rows.map((r) => r.email.toLowerCase()),
    ))
      holders.set(held.email, held.id);
    const alreadyInTarget: Schemas['ContactMoveResult']['alreadyInTarget'] = [];
    const moving: ContactRow[] = [];
    for (const row of rows) {
      const email = row.email.toLowerCase();
      const holder = row.campaign_id === target ? row.id : holders.get(email);
      if (holder) {
        alreadyInTarget.push({ contactId: row.id, email: row.email, existingContactId: holder });
        continue;
      }
      holders.set(email, row.id);
      moving.push(row);
    }
    const past = await this.progress.moveProgress(
      trx,
      moving.map((r) => r.id),
      target,
      keep,
    );
    const moved = await this.store.moveTo(
      trx,
      workspaceId,
      moving.map((r) => ({ id: r.id, status: statusAfterMove(r.status, past.has(r.id)) })),
      target,
      this.clock.now(),
    );
    // Dropped progress, or none yet: an active contact in an active target starts at step 1.
    await this.progress.startContacts(
      trx,
      moved.map((r) => r.id),
    );
    return { moved: moved.map(toContact), alreadyInTarget };
  }

  /** The contacts named by id, locked; 404 naming every id that is not the workspace's (of `campaignId`). */
  private async locked(trx: Executor, workspaceId: string, ids: string[], campaignId?: string): Promise<ContactRow[]> {
    const rows = await this.store.lockByIds(trx, workspaceId, ids, campaignId);
    const found = new Set(rows.map((r) => r.id));
    const missing: FieldProblem[] = ids.flatMap((id, i) =>
      found.has(id)
        ? []
        : [
            detail(
              `contactIds.${i}`,
              `${id} names no contact of this workspace${campaignId ? ' in this campaign' : ''}`,
              'notFound',
            ),
          ],
    );
    if (missing.length) throw notFound(CONTACT_NOT_FOUND, missing);
    return rows;
  }

  private async lockedByEmails(
    trx: Executor,
    workspaceId: string,
    emails: string[],
    campaignId?: string,
  ): Promise<ContactRow[]> {
    const lower = emails.map((e) => e.toLowerCase());
    const rows = await this.store.lockByEmails(trx, workspaceId, lower, campaignId);
    const found = new Set(rows.map((r) => r.email.toLowerCase()));
    const missing: FieldProblem[] = lower.flatMap((e, i) =>
      found.has(e)
        ? []
        : [
            detail(
              `emails.${i}`,
              `${emails[i]} names no contact of this workspace${campaignId ? ' in this campaign' : ''}`,
              'notFound',
            ),
          ],
    );
    if (missing.length) throw notFound(CONTACT_NOT_FOUND, missing);
    return rows;
  }
}

/**
 * The status a moved contact has in the target: one that had finished becomes active again unless its kept
 * step is past the target's last; one still going that is past it is completed. Paused, unsubscribed and
 * bounced contacts keep their status.
 */
function statusAfterMove(status: string, pastLastStep: boolean): string {
  if (status === 'completed') return pastLastStep ? 'completed' : 'active';
  if (status === 'active' && pastLastStep) return 'completed';
  return status;
}
