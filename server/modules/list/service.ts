/**
 * People and company lists: names unique per workspace and kind, members by lead-database id, member
 * reads that show only what the workspace has revealed (the lead module's masking), export and
 * send-to-campaign. Every list query is scoped to the caller's workspace.
 */
import type { components } from '../../../generated/api';
import type { Clock } from '../../platform/clock';
import { isUniqueViolation, type Db, type Executor } from '../../db';
import { invalid, conflict, detail, notFound } from '../../platform/errors';
import { newId } from '../../platform/ids';
import type { CampaignService } from '../campaign';
import type { ContactService, NewContact } from '../contact';
import type { CreditService } from '../credits';
import type { LeadService } from '../leads';
import type { JoinedMember, ListKind, ListRow, ListStore, MemberJoin } from './store';
import { pageOf } from '../../platform/paging';
import { decodeCursor, encodeCursor, type Position } from '../../platform/cursor';

type Schemas = components['schemas'];
export type List = Schemas['LeadList'];
export type PersonMember = Schemas['LeadListMemberPerson'];
export type CompanyMember = Schemas['LeadListMemberCompany'];

/** Rows per query when a whole list is walked (export, send-to-campaign). */
export const BATCH_SIZE = 1000;

const LIST_NOT_FOUND = 'List not found.';
const NOUN: Record<ListKind, string> = { people: 'leads', company: 'companies' };

/** What to do instead, when an operation meets a list of the other kind (a 409). */
const OTHER_KIND_HINT = {
  delete: (kind: ListKind) => `use POST /v2/list/delete/${kind}`,
  add: (kind: ListKind) => `use POST /v2/list/add/${NOUN[kind]}`,
  remove: (kind: ListKind) => `use POST /v2/list/remove/${NOUN[kind]}`,
  read: (kind: ListKind) => `use GET /v2/list/${NOUN[kind]}`,
  send: () => 'only people lists can be sent to a campaign',
};
type Action = keyof typeof OTHER_KIND_HINT;

/** A members page: `limit`, and `skip` or a `cursor` (a previous page's nextCursor). */
type MembersQuery = { limit?: number; skip?: number; cursor?: string };

function toList(row: ListRow): List {
  return {
    id: row.id,
    name: row.name,
    kind: row.kind,
    memberCount: row.member_count,
    createdAt: new Date(row.created_at).toISOString(),
    updatedAt: new Date(row.updated_at).toISOString(),
  };
}

/** What ListService is built from, by name. */
export interface ListServiceDeps {
  db: Db;
  store: ListStore;
  leads: LeadService;
  contacts: ContactService;
  campaigns: CampaignService;
  credits: CreditService;
  clock: Clock;
}

export class ListService {
  private readonly db: Db;
  private readonly store: ListStore;
  private readonly leads: LeadService;
  private readonly contacts: ContactService;
  private readonly campaigns: CampaignService;
  private readonly credits: CreditService;
  private readonly clock: Clock;

  constructor({ db, store, leads, contacts, campaigns, credits, clock }: ListServiceDeps) {
    this.db = db;
    this.store = store;
    this.leads = leads;
    this.contacts = contacts;
    this.campaigns = campaigns;
    this.credits = credits;
    this.clock = clock;
  }

  async create(workspaceId: string, kind: ListKind, rawName: string): Promise<List> {
    const name = rawName.trim();
    const duplicate = () =>
      conflict(`A ${kind} list named "${name}" already exists.`, [
        detail('name', 'is already used by another list of this kind', 'duplicate'),
      ]);
    const now = this.clock.now();
    const row: ListRow = {
      id: newId(),
      workspace_id: workspaceId,
      kind,
      name,
      member_count: 0,
      created_at: now,
      updated_at: now,
    };
    try {
      await this.db.transaction((trx) => this.store.insert(trx, row));
    } catch (err) {
      if (isUniqueViolation(err)) throw duplicate();
      throw err;
    }
    return toList(row);
  }

  async delete(workspaceId: string, kind: ListKind, listId: string) {
    return this.db.transaction(async (trx) => {
      const list = await this.locked(trx, workspaceId, listId, kind, 'delete');
      await this.store.delete(trx, listId);
      return { list: toList(list), membersRemoved: list.member_count };
    });
  }

  async get(workspaceId: string, listId: string): Promise<List> {
    const list = await this.store.find(this.db, workspaceId, listId);
    if (!list) throw notFound(LIST_NOT_FOUND);
    return toList(list);
  }

  async all(workspaceId: string, query: { limit?: number; skip?: number; kind?: ListKind }) {
    const page = pageOf(query);
    const { rows, total } = await this.store.page(this.db, workspaceId, { ...page, kind: query.kind });
    return { items: rows.map(toList), page, total };
  }

  /** Adds lead-database ids; members already in the list count once, unknown ids are reported. */
  /** How many lists (of both kinds) the workspace has. */
  count(db: Executor, workspaceId: string): Promise<number> {
    return this.store.count(db, workspaceId);
  }

  async addMembers(workspaceId: string, kind: ListKind, listId: string, ids: string[]) {
    return this.db.transaction(async (trx) => {
      const list = await this.locked(trx, workspaceId, listId, kind, 'add');
      const unique = [...new Set(ids)];
      const existing = await this.leads.existingIds(trx, kind, unique);
      const inserted = await this.store.addMembers(
        trx,
        kind,
        listId,
        unique.filter((id) => existing.has(id)),
        this.clock.now(),
      );
      return {
        list: toList(await this.counted(trx, list, inserted.length)),
        added: inserted.length,
        alreadyInList: existing.size - inserted.length,
        notFound: unique.filter((id) => !existing.has(id)),
      };
    });
  }

  /** 404 unless the list is the workspace's, 409 unless it holds people (checked before an import job is queued). */
  async assertPeopleList(workspaceId: string, listId: string): Promise<void> {
    await this.ofKind(workspaceId, listId, 'people');
  }

  /**
   * Adds lead-database people to the workspace's people list inside the caller's transaction (a job's batch;
   * the caller found the ids in the lead database); returns the ids that were not members yet.
   */
  async addPeople(trx: Executor, workspaceId: string, listId: string, personIds: string[]): Promise<Set<string>> {
    const list = await this.locked(trx, workspaceId, listId, 'people', 'add');
    const inserted = await this.store.addMembers(trx, 'people', listId, personIds, this.clock.now());
    await this.counted(trx, list, inserted.length);
    return new Set(inserted);
  }

  /** Which of `personIds` any people list of the workspace holds. */
  async listedPeople(db: Executor, workspaceId: string, personIds: string[]): Promise<Set<string>> {
    return new Set(await this.store.listedPeople(db, workspaceId, personIds));
  }

  async removeMembers(workspaceId: string, kind: ListKind, listId: string, ids: string[]) {
    return this.db.transaction(async (trx) => {
      const list = await this.locked(trx, workspaceId, listId, kind, 'remove');
      const unique = [...new Set(ids)];
      const removed = new Set(await this.store.removeMembers(trx, kind, listId, unique));
      return {
        list: toList(await this.counted(trx, list, -removed.size)),
        removed: removed.size,
        notInList: unique.filter((id) => !removed.has(id)),
      };
    });
  }

  async people(workspaceId: string, listId: string, query: MembersQuery) {
    const { rows, pagination } = await this.membersPage(workspaceId, listId, 'people', query);
    return { items: rows.map((m) => this.showPerson(m)), pagination };
  }

  async companies(workspaceId: string, listId: string, query: MembersQuery) {
    const { rows, pagination } = await this.membersPage(workspaceId, listId, 'company', query);
    return { items: rows.map((m) => this.showCompany(m)), pagination };
  }

  /**
   * A page of members by `skip` or after a client's `cursor`, and its pagination: `total` is the list's
   * counter; one row beyond the page says whether more follow and where the next cursor points.
   */
  private async membersPage(workspaceId: string, listId: string, kind: ListKind, query: MembersQuery) {
    const page = pageOf(query);
    const after = query.cursor ? decodeCursor(query.cursor) : null;
    if (after && page.skip > 0)
      throw invalid('Page by cursor or by skip, not both.', [
        detail('skip', 'must be 0 with a cursor', 'conflict', 'query'),
      ]);
    const range = { limit: page.limit + 1, skip: page.skip, after };
    const { list, members: found } = await this.store.withMembers(
      this.db,
      workspaceId,
      kind,
      listId,
      range,
      this.shown(workspaceId, kind),
    );
    if (!list) throw notFound(LIST_NOT_FOUND);
    assertKind(list, kind, 'read');
    const rows = found.slice(0, page.limit);
    const last = rows[rows.length - 1];
    const hasMore = found.length > page.limit;
    const nextCursor = hasMore ? encodeCursor(last.added_at, last.id) : null;
    return { rows, pagination: { ...page, total: list.member_count, hasMore, nextCursor } };
  }

  /**
   * The list (404 before anything is written) and its members as the read operations show them, batch by
   * batch, for a streamed export.
   */
  async openExport(
    workspaceId: string,
    listId: string,
  ): Promise<{ list: List; batches: AsyncGenerator<(PersonMember | CompanyMember)[]> }> {
    const list = await this.get(workspaceId, listId);
    return { list, batches: this.shownBatches(workspaceId, list) };
  }

  private async *shownBatches(workspaceId: string, list: List): AsyncGenerator<(PersonMember | CompanyMember)[]> {
    for await (const rows of this.walk(this.db, list.kind, list.id, this.shown(workspaceId, list.kind))) {
      yield list.kind === 'people' ? rows.map((m) => this.showPerson(m)) : rows.map((m) => this.showCompany(m));
    }
  }

  /**
   * Turns a people list into contacts of a campaign, in one transaction: members without a work email are
   * skipped; the others' work emails are revealed and charged (402 and nothing done when the balance cannot
   * cover them all); the contacts module adds them, reporting addresses the campaign already holds.
   */
  async sendToCampaign(
    workspaceId: string,
    listId: string,
    campaignId: string,
  ): Promise<Schemas['LeadListSendResult']> {
    return this.db.transaction(async (trx) => {
      await this.locked(trx, workspaceId, listId, 'people', 'send');
      await this.campaigns.findInWorkspace(trx, workspaceId, campaignId);

      // Checked up front so the 402 names what the whole list needs, not what one batch does.
      await this.leads.requireCreditsForEmails(trx, workspaceId, this.store.peopleOf(trx, listId));

      const counts = { members: 0, added: 0, duplicates: 0, skippedNoEmail: 0, invalid: 0 };
      let used = 0;
      for await (const members of this.walk(trx, 'people', listId)) {
        const batch = await this.leads.peopleByIds(
          trx,
          members.map((m) => m.id),
        );
        counts.members += members.length;
        const withEmail = batch.filter((p) => p.work_email !== null);
        counts.skippedNoEmail += members.length - withEmail.length;
        if (!withEmail.length) continue;
        const { emails, creditsUsed } = await this.leads.revealWorkEmails(
          trx,
          workspaceId,
          withEmail.map((p) => p.id),
        );
        used += creditsUsed;
        const inputs: NewContact[] = withEmail.map((p) => ({
          email: emails.get(p.id)!,
          firstName: p.first_name,
          lastName: p.last_name,
          jobTitle: p.title,
          companyName: p.company_name,
          personId: p.id,
        }));
        const result = await this.contacts.addContacts(trx, workspaceId, campaignId, inputs);
        counts.added += result.counts.added;
        counts.duplicates += result.counts.duplicates;
        counts.invalid += result.counts.invalid;
      }
      return { listId, campaignId, counts, credits: { used, remaining: await this.credits.balance(trx, workspaceId) } };
    });
  }

  /** Every member of a list, BATCH_SIZE at a time, by keyset (constant memory for any list size), with the rows `join` adds. */
  private async *walk(db: Executor, kind: ListKind, listId: string, join?: MemberJoin): AsyncGenerator<JoinedMember[]> {
    let after: Position | null = null;
    for (;;) {
      const rows = await this.store.members(db, kind, listId, { limit: BATCH_SIZE, after }, join);
      // Taken before the yield: a suspended walk holds its position, not the batch it handed over.
      const last = rows.length === BATCH_SIZE ? rows[rows.length - 1] : undefined;
      after = last ? { at: last.added_at, id: last.id } : null;
      if (rows.length) yield rows;
      if (!after) return;
    }
  }

  /**
   * Members as the lead module shows them to the workspace (only what it has revealed), read with the member
   * page: a member whose person or company is gone (its memberships go with it) is left out by the join.
   */
  private shown(workspaceId: string, kind: ListKind): MemberJoin {
    return kind === 'people'
      ? (page, memberId) => this.leads.joinShownPeople(page, workspaceId, memberId)
      : (page, memberId) => this.leads.joinShownCompanies(page, workspaceId, memberId);
  }

  private showPerson(m: JoinedMember): PersonMember {
    return Object.assign(this.leads.showJoinedPerson(m.row), { addedAt: m.added_at.toISOString() });
  }

  private showCompany(m: JoinedMember): CompanyMember {
    return Object.assign(this.leads.showJoinedCompany(m.row), { addedAt: m.added_at.toISOString() });
  }

  /** Locks the workspace's list for a change; 404 when it is not the workspace's, 409 when it is of the other kind. */
  private async locked(
    trx: Executor,
    workspaceId: string,
    listId: string,
    kind: ListKind,
    action: Exclude<Action, 'read'>,
  ): Promise<ListRow> {
    const list = await this.store.lock(trx, workspaceId, listId);
    if (!list) throw notFound(LIST_NOT_FOUND);
    assertKind(list, kind, action);
    return list;
  }

  /** The locked list after a change of `delta` members (as it was when nothing changed). */
  private async counted(trx: Executor, list: ListRow, delta: number): Promise<ListRow> {
    return delta ? this.store.adjustMembers(trx, list.id, delta, this.clock.now()) : list;
  }

  private async ofKind(workspaceId: string, listId: string, kind: ListKind): Promise<ListRow> {
    const list = await this.store.find(this.db, workspaceId, listId);
    if (!list) throw notFound(LIST_NOT_FOUND);
    assertKind(list, kind, 'read');
    return list;
  }
}

function assertKind(list: Pick<ListRow, 'kind'>, kind: ListKind, action: Action): void {
  if (list.kind === kind) return;
  throw conflict(`This list is a ${list.kind} list: ${OTHER_KIND_HINT[action](list.kind)}.`, [
    detail('listId', `is a ${list.kind} list`, 'wrongKind', action === 'read' ? 'query' : 'body'),
  ]);
}
