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
      const rows = await this.locked(trx, workspaceId, body.contactIds);
      const holders = new Map<string, string>();
      for (const held of await this.store.findByEmails(
        trx,
        target,
        rows.map((r) => r.email.toLowerCase()),
      ))
        holders.set(held.email, held.id);
      const alreadyInTarget: Schemas['ContactMoveResult']['alreadyInTarget'] = [];
      const moving: ContactRow[] = [];
      // Request order: of two contacts with one address, the first moves and the second is reported.
      for (const id of body.contactIds) {
        const row = rows.find((r) => r.id === id)!;
        const email = row.email.toLowerCase();
        const holder = row.campaign_id === target ? row.id : holders.get(email);
        if (holder) {
          alreadyInTarget.push({ contactId: row.id, email: row.email, existingContactId: holder });
          continue;
        }
        holders.set(email, row.id);
        moving.push(row);
      }
      const keep = body.keepProgress ?? false;
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
      return { toCampaignId: target, moved: moved.map(toContact), alreadyInTarget };
    });
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
