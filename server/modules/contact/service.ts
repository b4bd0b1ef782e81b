/**
 * Contacts (leads) of campaigns: batch add with per-row outcomes, look-up by id or by campaign and
 * address, delete, lead status and custom variables. Addresses are stored trimmed and in lower
 * case; a campaign holds an address at most once (a unique index on lower(email) backs this).
 */
import type { components } from '../../../generated/api';
import type { Db, Executor } from '../../db';
import type { Clock } from '../../platform/clock';
import type { EventService } from '../events';
import { newId } from '../../platform/ids';
import { isValidEmail } from '../../platform/email-address';
import { canonicalTimeZone } from '../../platform/time-zone';
import { invalid, detail, forbidden, notFound, type FieldProblem } from '../../platform/errors';
import type { ContactRow, ContactStore, CustomValue } from './store';
import { UNFINISHED_STATUSES } from './statuses';
import { CHANGED, skipped, type Outcomes } from './outcomes';
import type { WorkspaceService } from '../workspace';
import type { CampaignService, SubsequenceTriggers } from '../campaign';
import { plural } from '../../text/plural';

type Schemas = components['schemas'];
export type Contact = Schemas['Contact'];
export type LeadStatus = Schemas['ContactLeadStatus'];
export type CustomVariables = Schemas['ContactCustomVariables'];
export type AddContactsResult = Schemas['ContactAddResult'];
/** A contact as stored, which the mail modules read. */
export type { ContactRow } from './store';
/** A row to add; `personId` links it to the lead-database person it came from (lists' send-to-campaign). */
export type NewContact = Schemas['ContactInput'] & { personId?: string | null };

/** How a request names one contact: by id, or by campaign and address. */
export interface ContactLocator {
  contactId?: string;
  campaignId?: string;
  email?: string;
}

/** The sending engine's progress rows, as contacts joining, resuming or moving change them (in the caller's transaction). */
export interface ContactProgressPort {
  /** Progress rows (step 1, due now) for those of the contacts active in an active campaign that have none. */
  startContacts(trx: Executor, contactIds: string[]): Promise<void>;
  /**
   * Moves the contacts' progress to `toCampaignId`: kept (same step, due time, account and thread) or dropped
   * (the target's step 1). Returns the contacts whose kept step is past the target's last step.
   */
  moveProgress(trx: Executor, contactIds: string[], toCampaignId: string, keepProgress: boolean): Promise<Set<string>>;
}

export const MAX_CUSTOM_VARIABLES = 50;

/** Lead statuses a reply may replace: none, an automatic guess, or what an earlier reply said. */
const REPLY_SETTABLE = new Set<string | null>([null, 'outOfOffice', 'interested', 'notInterested', 'wrongPerson']);

/** Built-in template variables: a custom variable of the same name would be ambiguous in `{{...}}`. */
const RESERVED_KEYS = new Set([
  'email',
  'firstName',
  'lastName',
  'companyName',
  'jobTitle',
  'phone',
  'website',
  'linkedinUrl',
]);

/** Trimmed text, or null when nothing is left. */
function text(value: string | null | undefined): string | null {
  const trimmed = value?.trim();
  return trimmed ? trimmed : null;
}

/** `1 contact added, 2 duplicates, 1 invalid` */
export function addedMessage({ counts }: AddContactsResult): string {
  return `${plural(counts.added, 'contact', 'contacts')} added, ${plural(counts.duplicates, 'duplicate', 'duplicates')}, ${counts.invalid} invalid`;
}

export function toContact(row: ContactRow): Contact {
  return {
    id: row.id,
    campaignId: row.campaign_id,
    email: row.email,
    firstName: row.first_name,
    lastName: row.last_name,
    companyName: row.company_name,
    jobTitle: row.job_title,
    phone: row.phone,
    website: row.website,
    linkedinUrl: row.linkedin_url,
    timezone: row.timezone,
    customVariables: row.custom_variables ?? {},
    status: row.status as Contact['status'],
    leadStatus: row.lead_status as LeadStatus,
    createdAt: new Date(row.created_at).toISOString(),
    updatedAt: new Date(row.updated_at).toISOString(),
  };
}

/** The rule the schema cannot state: no built-in field name. `field` is the object's path, e.g. `contacts.3.customVariables`. */
function reservedKeys(variables: Record<string, CustomValue>, field: string): FieldProblem[] {
  return Object.keys(variables)
    .filter((key) => RESERVED_KEYS.has(key))
    .map((key) =>
      detail(`${field}.${key}`, `"${key}" is a built-in contact field and cannot be a custom variable`, 'reserved'),
    );
}

function assertNoReservedKeys(problems: FieldProblem[]): void {
  if (!problems.length) return;
  const names = [...new Set(problems.map((p) => p.field.split('.').pop()))];
  throw invalid(`Custom variable names cannot be built-in contact fields: ${names.join(', ')}.`, problems);
}

/** What ContactService is built from, by name. */
export interface ContactServiceDeps {
  db: Db;
  store: ContactStore;
  events: EventService;
  workspaces: WorkspaceService;
  campaigns: CampaignService;
  progress: Pick<ContactProgressPort, 'startContacts'>;
  clock: Clock;
  triggers: SubsequenceTriggers;
}

export class ContactService {
  private readonly db: Db;
  private readonly store: ContactStore;
  private readonly events: EventService;
  private readonly workspaces: WorkspaceService;
  private readonly campaigns: CampaignService;
  private readonly progress: Pick<ContactProgressPort, 'startContacts'>;
  private readonly clock: Clock;
  private readonly triggers: SubsequenceTriggers;

  constructor({ db, store, events, workspaces, campaigns, progress, clock, triggers }: ContactServiceDeps) {
    this.db = db;
    this.store = store;
    this.events = events;
    this.workspaces = workspaces;
    this.campaigns = campaigns;
    this.progress = progress;
    this.clock = clock;
    this.triggers = triggers;
  }

  /** POST /v1/contact/add: one transaction around addContacts. */
  add(workspaceId: string, campaignId: string, inputs: NewContact[]): Promise<AddContactsResult> {
    return this.db.transaction((trx) => this.addContacts(trx, workspaceId, campaignId, inputs));
  }

  /**
   * Adds contacts to a campaign inside the caller's transaction (`trx` is used for everything).
   * Rows with an invalid address or an address the campaign already holds (or an earlier row has)
   * are reported, not failed. Throws 404 when the campaign is not the workspace's, 400 for a
   * reserved custom variable name, and 403 when the plan's contact cap would be exceeded; then
   * nothing is added.
   */
  async addContacts(
    trx: Executor,
    workspaceId: string,
    campaignId: string,
    inputs: NewContact[],
  ): Promise<AddContactsResult> {
    await this.campaigns.assertExists(trx, workspaceId, campaignId);
    this.checkVariables(inputs);

    const invalid: AddContactsResult['invalid'] = [];
    const duplicates: AddContactsResult['duplicates'] = [];
    /** First row of each address, in request order. */
    const firstRowByEmail = new Map<string, number>();
    const repeats: { index: number; email: string }[] = [];
    /** Each row's zone in its canonical spelling. */
    const zones = new Map<number, string>();
    inputs.forEach((input, index) => {
      const email = input.email.trim().toLowerCase();
      const zone = text(input.timezone);
      const canonical = zone === null ? null : canonicalTimeZone(zone);
      if (!isValidEmail(email)) {
        invalid.push({ index, email: input.email, reason: 'invalidEmail', message: 'is not a valid email address' });
      } else if (zone !== null && canonical === null) {
        invalid.push({
          index,
          email: input.email,
          reason: 'invalidTimezone',
          message: `"${zone}" is not an IANA time zone name (such as Asia/Tokyo)`,
        });
      } else if (firstRowByEmail.has(email)) {
        repeats.push({ index, email });
      } else {
        firstRowByEmail.set(email, index);
        if (canonical) zones.set(index, canonical);
      }
    });

    const holderByEmail = new Map<string, string>();
    for (const existing of await this.store.findByEmails(trx, campaignId, [...firstRowByEmail.keys()])) {
      holderByEmail.set(existing.email, existing.id);
    }
    const now = this.clock.now();
    const rows: ContactRow[] = [];
    for (const [email, index] of firstRowByEmail) {
      if (holderByEmail.has(email)) continue;
      const input = inputs[index];
      rows.push({
        id: newId(),
        workspace_id: workspaceId,
        campaign_id: campaignId,
        email,
        first_name: text(input.firstName),
        last_name: text(input.lastName),
        company_name: text(input.companyName),
        job_title: text(input.jobTitle),
        phone: text(input.phone),
        website: text(input.website),
        linkedin_url: text(input.linkedinUrl),
        timezone: zones.get(index) ?? null,
        custom_variables: input.customVariables ?? {},
        status: 'active',
        lead_status: null,
        person_id: input.personId ?? null,
        created_at: now,
        updated_at: now,
      });
    }
    await this.enforceContactCap(trx, workspaceId, rows.length);
    // One insertion order for every request, so two that race for the same addresses wait on each
    // other instead of deadlocking.
    rows.sort((a, b) => (a.email < b.email ? -1 : a.email > b.email ? 1 : 0));

    const inserted = await this.store.insertNew(trx, rows);
    await this.progress.startContacts(
      trx,
      inserted.map((r) => r.id),
    );
    const insertedIds = new Set(inserted.map((r) => r.id));
    const lost = rows.filter((r) => !insertedIds.has(r.id)).map((r) => r.email);
    // Addresses a concurrent request took between our read and our insert: find their holders now.
    for (const taken of await this.store.findByEmails(trx, campaignId, lost)) holderByEmail.set(taken.email, taken.id);

    for (const [email, index] of firstRowByEmail) {
      const holder = holderByEmail.get(email);
      if (holder) duplicates.push({ index, email, reason: 'alreadyInCampaign', contactId: holder });
    }
    const addedIdByEmail = new Map(inserted.map((r) => [r.email, r.id]));
    for (const { index, email } of repeats) {
      // The earlier row with this address was either added or already held: there is always a holder.
      duplicates.push({
        index,
        email,
        reason: 'repeatedInRequest',
        contactId: holderByEmail.get(email) ?? addedIdByEmail.get(email)!,
      });
    }
    duplicates.sort((a, b) => a.index - b.index);

    const added = inserted.sort((a, b) => firstRowByEmail.get(a.email)! - firstRowByEmail.get(b.email)!).map(toContact);
    return {
      campaignId,
      added,
      duplicates,
      invalid,
      counts: { received: inputs.length, added: added.length, duplicates: duplicates.length, invalid: invalid.length },
    };
  }

  /** Throws the 400 of a custom variable named like a built-in field (`contacts.N.customVariables.key`); a bulk import checks up front. */
  checkVariables(inputs: NewContact[]): void {
    assertNoReservedKeys(
      inputs.flatMap((input, i) => reservedKeys(input.customVariables ?? {}, `contacts.${i}.customVariables`)),
    );
  }

  /** For each of these (lower-case) addresses that a campaign of the workspace holds, the campaigns holding it. */
  async campaignsHolding(db: Executor, workspaceId: string, emails: string[]): Promise<Map<string, string[]>> {
    const held = new Map<string, string[]>();
    for (const { email, campaign_id } of await this.store.campaignsHolding(db, workspaceId, emails))
      held.set(email, [...(held.get(email) ?? []), campaign_id]);
    return held;
  }

  async get(workspaceId: string, locator: ContactLocator): Promise<Contact> {
    return toContact(await this.locate(this.db, workspaceId, locator, 'query', false));
  }

  /** Deletes the contact and answers it as it was. */
  delete(workspaceId: string, locator: ContactLocator): Promise<Contact> {
    return this.db.transaction(async (trx) => {
      const row = await this.locate(trx, workspaceId, locator, 'body', true);
      await this.store.delete(trx, workspaceId, row.id);
      return toContact(row);
    });
  }

  setLeadStatus(workspaceId: string, locator: ContactLocator, leadStatus: LeadStatus): Promise<Contact> {
    return this.db.transaction(async (trx) =>
      this.applyLeadStatus(trx, workspaceId, await this.locate(trx, workspaceId, locator, 'body', true), leadStatus),
    );
  }

  /** A bulk job's delete, in its transaction: the contacts of `ids` that still exist. */
  async deleteEach(trx: Executor, workspaceId: string, ids: string[]): Promise<Outcomes> {
    const rows = await this.store.lockByIds(trx, workspaceId, ids);
    for (const row of rows) await this.store.delete(trx, workspaceId, row.id);
    return new Map(rows.map((r) => [r.id, CHANGED]));
  }

  /** A bulk job's lead status, in its transaction: each contact as `setLeadStatus` sets it (its event, its triggers). */
  async setLeadStatusEach(
    trx: Executor,
    workspaceId: string,
    ids: string[],
    leadStatus: LeadStatus,
  ): Promise<Outcomes> {
    const outcomes: Outcomes = new Map();
    for (const row of await this.store.lockByIds(trx, workspaceId, ids)) {
      if (row.lead_status === leadStatus) outcomes.set(row.id, skipped('unchanged'));
      else {
        await this.applyLeadStatus(trx, workspaceId, row, leadStatus);
        outcomes.set(row.id, CHANGED);
      }
    }
    return outcomes;
  }

  /** Sets the (locked) contact's lead status; a change records its event and fires the subsequence triggers. */
  private async applyLeadStatus(
    trx: Executor,
    workspaceId: string,
    row: ContactRow,
    leadStatus: LeadStatus,
  ): Promise<Contact> {
    const updated = await this.store.update(trx, workspaceId, row.id, {
      lead_status: leadStatus,
      updated_at: this.clock.now(),
    });
    if (row.lead_status !== leadStatus) {
      await this.events.record(trx, {
        workspaceId,
        type: 'contact.leadStatusChanged',
        data: {
          campaignId: row.campaign_id,
          contactId: row.id,
          email: row.email,
          previous: row.lead_status,
          leadStatus,
        },
      });
      if (
        leadStatus !== null &&
        (await this.triggers.fire(trx, {
          type: 'leadStatus',
          workspaceId,
          campaignId: row.campaign_id,
          contactId: row.id,
          leadStatus,
        }))
      )
        return toContact(await this.locate(trx, workspaceId, { contactId: row.id }, 'body', false));
    }
    return toContact(updated);
  }

  /** Replaces every custom variable. */
  setVariables(workspaceId: string, locator: ContactLocator, variables: CustomVariables): Promise<Contact> {
    assertNoReservedKeys(reservedKeys(variables, 'customVariables'));
    return this.db.transaction(async (trx) => {
      const row = await this.locate(trx, workspaceId, locator, 'body', true);
      return toContact(
        await this.store.update(trx, workspaceId, row.id, {
          custom_variables: variables,
          updated_at: this.clock.now(),
        }),
      );
    });
  }

  /** Adds or overwrites the given custom variables and keeps the others. */
  mergeVariables(workspaceId: string, locator: ContactLocator, variables: CustomVariables): Promise<Contact> {
    assertNoReservedKeys(reservedKeys(variables, 'customVariables'));
    return this.db.transaction(async (trx) => {
      const row = await this.locate(trx, workspaceId, locator, 'body', true);
      const merged = { ...row.custom_variables, ...variables };
      const count = Object.keys(merged).length;
      if (count > MAX_CUSTOM_VARIABLES) {
        throw invalid(
          `The contact would have ${count} custom variables; at most ${MAX_CUSTOM_VARIABLES} are allowed.`,
          [
            detail(
              'customVariables',
              `must NOT have more than ${MAX_CUSTOM_VARIABLES} properties once merged (would have ${count})`,
              'maxProperties',
            ),
          ],
        );
      }
      return toContact(
        await this.store.update(trx, workspaceId, row.id, { custom_variables: merged, updated_at: this.clock.now() }),
      );
    });
  }

  /** Deletes the named custom variables; keys the contact lacks are reported, not an error. */
  removeVariables(
    workspaceId: string,
    locator: ContactLocator,
    keys: string[],
  ): Promise<{ contact: Contact; removed: string[]; notFound: string[] }> {
    return this.db.transaction(async (trx) => {
      const row = await this.locate(trx, workspaceId, locator, 'body', true);
      const unique = [...new Set(keys)];
      const has = (key: string) => Object.prototype.hasOwnProperty.call(row.custom_variables, key);
      const removed = unique.filter(has);
      const missing = unique.filter((key) => !has(key));
      if (!removed.length) return { contact: toContact(row), removed, notFound: missing };
      const kept = Object.fromEntries(Object.entries(row.custom_variables).filter(([key]) => !removed.includes(key)));
      const updated = await this.store.update(trx, workspaceId, row.id, {
        custom_variables: kept,
        updated_at: this.clock.now(),
      });
      return { contact: toContact(updated), removed, notFound: missing };
    });
  }

  /**
   * Finds the contact named by `contactId`, or by `campaignId` and `email`, in the workspace (locked
   * for update when `forUpdate`). Another workspace's contact or campaign is a 404 like a missing one.
   */
  private async locate(
    db: Executor,
    workspaceId: string,
    locator: ContactLocator,
    location: FieldProblem['location'],
    forUpdate: boolean,
  ): Promise<ContactRow> {
    const { contactId, campaignId, email } = locator;
    if (contactId !== undefined) {
      if (campaignId !== undefined || email !== undefined) {
        const extra = campaignId !== undefined ? 'campaignId' : 'email';
        throw invalid('Name the contact by contactId, or by campaignId and email, not both.', [
          detail(extra, 'must not be sent with contactId', 'oneOf', location),
        ]);
      }
      const row = await this.store.findById(db, workspaceId, contactId, forUpdate);
      if (!row) throw notFound('Contact not found.');
      return row;
    }
    if (campaignId === undefined || email === undefined) {
      const missing =
        campaignId === undefined && email === undefined
          ? 'contactId'
          : campaignId === undefined
            ? 'campaignId'
            : 'email';
      throw invalid(
        missing === 'contactId'
          ? 'Send contactId, or campaignId and email, to name the contact.'
          : `${missing} is required with ${missing === 'email' ? 'campaignId' : 'email'}.`,
        [detail(missing, `must have required property '${missing}'`, 'required', location)],
      );
    }
    await this.campaigns.assertExists(db, workspaceId, campaignId);
    const row = await this.store.findByEmail(db, workspaceId, campaignId, email, forUpdate);
    if (!row) throw notFound('Contact not found.');
    return row;
  }

  private async enforceContactCap(trx: Executor, workspaceId: string, adding: number): Promise<void> {
    if (!adding) return;
    const { maxContacts: cap } = await this.workspaces.planCaps(trx, workspaceId);
    if (cap === null) return;
    // Serializes the requests that add contacts to one capped workspace, so two cannot both pass the cap.
    await this.workspaces.lock(trx, workspaceId);
    const held = await this.store.countInWorkspace(trx, workspaceId);
    if (held + adding > cap) {
      throw forbidden(
        `Your plan allows ${plural(cap, 'contact', 'contacts')}; the workspace holds ${held} and this request would add ${adding}.`,
      );
    }
  }

  /** Contacts in every campaign of the workspace (the plan's cap counts these). */
  countInWorkspace(db: Executor, workspaceId: string): Promise<number> {
    return this.store.countInWorkspace(db, workspaceId);
  }

  /** Contacts of the campaign still to be mailed (active or paused). */
  unfinishedInCampaign(db: Executor, campaignId: string): Promise<number> {
    return this.store.unfinishedInCampaign(db, campaignId);
  }

  /** Contacts per status (of one campaign). */
  async countByStatus(db: Executor, workspaceId: string, campaignId?: string): Promise<Record<string, number>> {
    return this.store.countByStatus(db, workspaceId, campaignId);
  }

  // --- what mail does to contacts (inbox reader; each in the caller's transaction) ---

  /** The contact row, locked (null when gone). */
  async lockForMail(db: Executor, workspaceId: string, contactId: string): Promise<ContactRow | null> {
    return (await this.store.findById(db, workspaceId, contactId, true)) ?? null;
  }

  /**
   * Ends the contact's sequence with `status` (completed after a reply, bounced after a hard bounce) when it
   * is still active or paused; a contact already finished keeps its status. Returns whether it changed.
   */
  async finishForMail(
    db: Executor,
    workspaceId: string,
    contactId: string,
    status: 'completed' | 'bounced',
  ): Promise<boolean> {
    const changed = await this.store.setStatusIf(
      db,
      workspaceId,
      [contactId],
      status,
      status === 'bounced' ? [...UNFINISHED_STATUSES, 'completed'] : [...UNFINISHED_STATUSES],
      this.clock.now(),
    );
    return changed.length > 0;
  }

  /**
   * A contact entering a subsequence: a finished one (`completed`) is active again; an active or paused one
   * stays as it is; a bounced or unsubscribed one never enters (null).
   */
  async reopenForSubsequence(db: Executor, workspaceId: string, contactId: string): Promise<{ email: string } | null> {
    const row = await this.store.findById(db, workspaceId, contactId, true);
    if (!row || !(UNFINISHED_STATUSES as readonly string[]).concat('completed').includes(row.status)) return null;
    if (row.status === 'completed')
      await this.store.setStatusIf(db, workspaceId, [contactId], 'active', ['completed'], this.clock.now());
    return { email: row.email };
  }

  /** Unsubscribes the contact (from any status but unsubscribed); the row before, or null when nothing changed. */
  async unsubscribeForMail(db: Executor, workspaceId: string, contactId: string): Promise<ContactRow | null> {
    const row = await this.store.findById(db, workspaceId, contactId, true);
    if (!row || row.status === 'unsubscribed') return null;
    await this.store.setStatusIf(db, workspaceId, [contactId], 'unsubscribed', [row.status], this.clock.now());
    return row;
  }

  /** Stops (completed) every active or paused contact of the campaign at `domain`; returns their ids. */
  async finishCompany(db: Executor, workspaceId: string, campaignId: string, domain: string): Promise<string[]> {
    return this.store.finishDomain(db, workspaceId, campaignId, domain.toLowerCase(), this.clock.now());
  }

  /**
   * Sets the lead status a reply's intent implies, unless a person already moved the lead further
   * (meetingBooked, meetingCompleted, closed, lost); returns the change, or null when nothing changed.
   */
  async setLeadStatusFromReply(
    db: Executor,
    workspaceId: string,
    contactId: string,
    leadStatus: 'interested' | 'notInterested' | 'wrongPerson',
  ): Promise<{ row: ContactRow; previous: LeadStatus; leadStatus: NonNullable<LeadStatus> } | null> {
    const row = await this.store.findById(db, workspaceId, contactId, true);
    if (!row || row.lead_status === leadStatus || !REPLY_SETTABLE.has(row.lead_status)) return null;
    await this.store.update(db, workspaceId, contactId, { lead_status: leadStatus, updated_at: this.clock.now() });
    return { row, previous: row.lead_status as LeadStatus, leadStatus };
  }

  /** Sets the lead status when the contact has none; returns the change, or null. */
  async setLeadStatusIfNone(
    db: Executor,
    workspaceId: string,
    contactId: string,
    leadStatus: NonNullable<LeadStatus>,
  ): Promise<{ previous: null; leadStatus: NonNullable<LeadStatus> } | null> {
    const row = await this.store.findById(db, workspaceId, contactId, true);
    if (!row || row.lead_status !== null) return null;
    await this.store.update(db, workspaceId, contactId, { lead_status: leadStatus, updated_at: this.clock.now() });
    return { previous: null, leadStatus };
  }
}
