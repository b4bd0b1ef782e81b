/**
 * What each job type does to its rows: a contact import adds contacts (or list members), a verify job verifies
 * addresses, an enrich job reports the matches it revealed at acceptance, a contact bulk job applies its action.
 * JobService claims a batch and hands its rows here inside the batch's transaction.
 */
import { LRUCache } from 'lru-cache';
import type { components } from '../../../generated/api';
import type { Executor } from '../../db';
import { isValidEmail } from '../../platform/email-address';
import { readBundledSpec } from '../../platform/project-root';
import type { ContactBulk, ContactBulkRequest, ContactService, NewContact } from '../contact';
import type { LeadService } from '../leads';
import type { ListService } from '../list';
import type { SuppressionService } from '../suppression';
import type { MxCache, VerificationService } from '../verification';
import type { InputRow, JobRow, JobStore, ResultRow } from './store';

type ImportOptions = components['schemas']['JobImportOptions'];
type JobType = components['schemas']['JobType'];

/** The contact input limits of the spec (maxLength per field), read from the bundle the validator uses. */
function contactLimits(): { field: Record<string, number>; variable: number } {
  const schemas = readBundledSpec().components.schemas ?? {};
  // The bundle inlines these schemas' properties (no $ref), as the validator reads them.
  const maxLength = (s: unknown) =>
    typeof s === 'object' && s !== null && 'maxLength' in s && typeof s.maxLength === 'number'
      ? s.maxLength
      : undefined;
  const input = schemas.ContactInput;
  const variables = schemas.ContactCustomVariables;
  const props = input && 'properties' in input ? (input.properties ?? {}) : {};
  const variable = maxLength(
    variables && 'additionalProperties' in variables ? variables.additionalProperties : undefined,
  );
  if (variable === undefined) throw new Error('the bundled spec gives ContactCustomVariables values no maxLength');
  return {
    field: Object.fromEntries(
      Object.entries(props).flatMap(([name, p]) => {
        const n = maxLength(p);
        return n ? [[name, n]] : [];
      }),
    ),
    variable,
  };
}

/** What JobRowEffects is built from, by name. */
export interface JobRowEffectsDeps {
  store: JobStore;
  contacts: ContactService;
  suppression: SuppressionService;
  verification: VerificationService;
  leads: LeadService;
  lists: ListService;
  contactBulk: ContactBulk;
}

export class JobRowEffects {
  private readonly limits = contactLimits();
  /** MX answers per job (verify jobs and imports that verify), so its batches do not ask DNS again; the 8 latest jobs'. */
  private readonly mxCaches = new LRUCache<string, MxCache>({ max: 8 });
  private readonly store: JobStore;
  private readonly contacts: ContactService;
  private readonly suppression: SuppressionService;
  private readonly verification: VerificationService;
  private readonly leads: LeadService;
  private readonly lists: ListService;
  private readonly contactBulk: ContactBulk;

  constructor({ store, contacts, suppression, verification, leads, lists, contactBulk }: JobRowEffectsDeps) {
    this.store = store;
    this.contacts = contacts;
    this.suppression = suppression;
    this.verification = verification;
    this.leads = leads;
    this.lists = lists;
    this.contactBulk = contactBulk;
  }

  apply(trx: Executor, job: JobRow, rows: InputRow[]): Promise<ResultRow[]> {
    switch (job.type as JobType) {
      case 'contactImport':
        return this.importBatch(trx, job, rows);
      case 'verify':
        return this.verifyBatch(trx, job, rows);
      case 'enrich':
        return this.enrichBatch(trx, job, rows);
      case 'contactBulk':
        return this.contactBulkBatch(trx, job, rows);
    }
  }

  private async contactBulkBatch(trx: Executor, job: JobRow, rows: InputRow[]): Promise<ResultRow[]> {
    const ids = rows.map((r) => (r.data as { contactId: string }).contactId);
    const outcomes = await this.contactBulk.apply(trx, job.workspace_id, job.contact_bulk as ContactBulkRequest, ids);
    return rows.map((row, i) => ({
      row_no: row.row_no,
      ...(outcomes.get(ids[i]) ?? { outcome: 'skipped', reason: 'notFound', detail: null }),
    }));
  }

  private async importBatch(trx: Executor, job: JobRow, rows: InputRow[]): Promise<ResultRow[]> {
    const options = job.options as ImportOptions;
    const campaignId = job.campaign_id;
    const results = new Map<number, ResultRow>();
    const skip = (row: InputRow, reason: string) =>
      results.set(row.row_no, { row_no: row.row_no, outcome: 'skipped', reason, detail: null });

    let open = rows.filter((row) => {
      if (!row.email || !isValidEmail(row.email)) {
        results.set(row.row_no, { row_no: row.row_no, outcome: 'invalid', reason: 'invalidEmail', detail: null });
        return false;
      }
      const tooLong = this.tooLong(row.data as NewContact);
      if (tooLong)
        results.set(row.row_no, {
          row_no: row.row_no,
          outcome: 'invalid',
          reason: 'fieldTooLong',
          detail: { field: tooLong },
        });
      return !tooLong;
    });
    const firstRow = await this.store.firstRows(trx, job.id, [...new Set(open.map((r) => r.email!))]);
    open = open.filter((row) => firstRow.get(row.email!) === row.row_no || !skip(row, 'duplicateInFile'));
    const emails = () => open.map((r) => r.email!);

    if (options.skipSuppressed) {
      const suppressed = await this.suppression.filterSuppressed(trx, job.workspace_id, emails());
      open = open.filter((row) => !suppressed.has(row.email!) || !skip(row, 'suppressed'));
    }
    if (options.skipInWorkspace) {
      const held = await this.contacts.campaignsHolding(trx, job.workspace_id, emails());
      open = open.filter((row) => {
        const campaigns = held.get(row.email!);
        return (
          !campaigns ||
          !skip(row, campaignId && campaigns.includes(campaignId) ? 'alreadyInCampaign' : 'alreadyInWorkspace')
        );
      });
    }
    // Lists hold lead-database people: an address counts as listed, or is added, through the person whose work email it is.
    const people =
      (options.skipInAnyList || job.list_id) && open.length
        ? await this.leads.peopleIdsByWorkEmail(trx, emails())
        : new Map<string, string[]>();
    if (options.skipInAnyList) {
      const listed = await this.lists.listedPeople(trx, job.workspace_id, [...people.values()].flat());
      open = open.filter(
        (row) => !(people.get(row.email!) ?? []).some((id) => listed.has(id)) || !skip(row, 'alreadyInList'),
      );
    }
    if (job.list_id) {
      open = open.filter((row) => {
        const ids = people.get(row.email!) ?? [];
        return ids.length === 1 || !skip(row, ids.length ? 'ambiguousMatch' : 'notInLeadDatabase');
      });
    }
    if (options.verify && open.length) {
      const { results: verdicts } = await this.verification.verify(emails(), trx, this.mxCache(job.id));
      const status = new Map(verdicts.map((v) => [v.email, v.status]));
      open = open.filter((row) => {
        const s = status.get(row.email!);
        return (
          (s !== 'invalid' && s !== 'disposable') ||
          !skip(row, s === 'invalid' ? 'verifiedInvalid' : 'verifiedDisposable')
        );
      });
    }
    if (open.length && job.list_id) {
      const added = await this.lists.addPeople(
        trx,
        job.workspace_id,
        job.list_id,
        open.map((r) => people.get(r.email!)![0]),
      );
      for (const row of open) {
        const personId = people.get(row.email!)![0];
        if (added.has(personId))
          results.set(row.row_no, { row_no: row.row_no, outcome: 'created', reason: null, detail: { personId } });
        else skip(row, 'alreadyInList');
      }
    } else if (open.length) {
      const added = await this.contacts.addContacts(
        trx,
        job.workspace_id,
        campaignId!,
        open.map((r) => r.data as NewContact),
      );
      const rowByEmail = new Map(open.map((r) => [r.email!, r]));
      for (const contact of added.added) {
        const row = rowByEmail.get(contact.email)!;
        results.set(row.row_no, {
          row_no: row.row_no,
          outcome: 'created',
          reason: null,
          detail: { contactId: contact.id },
        });
      }
      for (const d of added.duplicates) skip(open[d.index], 'alreadyInCampaign');
      for (const d of added.invalid)
        results.set(open[d.index].row_no, {
          row_no: open[d.index].row_no,
          outcome: 'invalid',
          reason: d.reason,
          detail: null,
        });
    }
    return rows.map((r) => results.get(r.row_no)!);
  }

  /** The first field of a contact longer than the spec allows (CSV cells are not checked by the validator). */
  private tooLong(contact: NewContact): string | null {
    for (const [field, max] of Object.entries(this.limits.field)) {
      const value = (contact as unknown as Record<string, unknown>)[field];
      if (typeof value === 'string' && value.length > max) return field;
    }
    for (const [key, value] of Object.entries(contact.customVariables ?? {})) {
      if (typeof value === 'string' && value.length > this.limits.variable) return `customVariables.${key}`;
    }
    return null;
  }

  private mxCache(jobId: string): MxCache {
    let cache = this.mxCaches.get(jobId);
    if (!cache) this.mxCaches.set(jobId, (cache = this.verification.newMxCache()));
    return cache;
  }

  private async verifyBatch(trx: Executor, job: JobRow, rows: InputRow[]): Promise<ResultRow[]> {
    const { results } = await this.verification.verify(
      rows.map((r) => String((r.data as { email: string }).email ?? '')),
      trx,
      this.mxCache(job.id),
    );
    return results.map((v, i) => ({
      row_no: rows[i].row_no,
      outcome: v.status,
      reason: v.subStatus,
      detail: {
        score: v.score,
        isRoleAccount: v.isRoleAccount,
        isFreeProvider: v.isFreeProvider,
        isDisposable: v.isDisposable,
        mxFound: v.mxFound,
      },
    }));
  }

  private async enrichBatch(trx: Executor, job: JobRow, rows: InputRow[]): Promise<ResultRow[]> {
    type Stored = { personId: string | null; matchedBy: string | null; reason: string | null };
    const data = rows.map((r) => r.data as Stored);
    const people = await this.leads.showPeople(trx, job.workspace_id, [
      ...new Set(data.flatMap((d) => (d.personId ? [d.personId] : []))),
    ]);
    return rows.map((row, i) => {
      const d = data[i];
      const person = d.personId ? people.get(d.personId) : undefined;
      if (!person) return { row_no: row.row_no, outcome: 'unmatched', reason: d.reason ?? 'noMatch', detail: null };
      return {
        row_no: row.row_no,
        outcome: 'matched',
        reason: d.matchedBy,
        detail: {
          personId: person.id,
          workEmail: person.email ?? null,
          mobilePhone: person.mobilePhone ?? null,
          title: person.title ?? null,
          linkedinUrl: person.linkedinUrl ?? null,
          companyName: person.company?.name ?? null,
          companyDomain: person.company?.domain ?? null,
        },
      };
    });
  }
}
