/**
 * Contacts as a query: `GET /v2/contact/list` (filters, a sort, keyset pages) and the selection of
 * `POST /v2/contact/bulk`, which takes the same filters.
 */
import type { components, operations } from '../../../generated/api';
import type { Db, Executor } from '../../db';
import { decodeCursor, decodeKeyCursor, encodeCursor, encodeKeyCursor } from '../../platform/cursor';
import { defaulted } from '../../platform/paging';
import type { CampaignService } from '../campaign';
import { toContact } from './service';
import type { ContactStore, ListAfter, ListedRow, ListFilter, ListSort } from './store';

type Schemas = components['schemas'];
export type ContactFilter = Schemas['ContactFilter'];
type ListQuery = NonNullable<operations['listContacts']['parameters']['query']>;
type ListAnswer = {
  items: Schemas['ContactListItem'][];
  pagination: { limit: number; hasMore: boolean; nextCursor: string | null };
};

/** Contacts a bulk job reads per query while it selects them. */
const SELECTION_PAGE = 1000;

function toItem(row: ListedRow): Schemas['ContactListItem'] {
  const going = row.progress_state !== null && row.progress_state !== 'done';
  return {
    contact: toContact(row),
    progress: {
      state: row.progress_state as Schemas['ContactListProgress']['state'],
      step: going ? row.progress_step : null,
      nextSendAt:
        row.progress_state === 'waiting' && row.progress_due_at ? new Date(row.progress_due_at).toISOString() : null,
      paused: row.status === 'paused' || row.campaign_status === 'paused',
      subsequenceId: row.progress_subsequence_id,
      lastReplyIntent: row.last_intent as Schemas['ReplyIntent'] | null,
    },
  };
}

/** The row's place in a `sort` order, as a cursor names it. */
function positionOf(row: ListedRow, sort: ListSort): ListAfter {
  if (sort === 'email') return { key: row.email.toLowerCase(), id: row.id };
  return { key: new Date(sort === 'createdAt' ? row.created_at : row.updated_at), id: row.id };
}

export interface ContactListingDeps {
  db: Db;
  store: ContactStore;
  campaigns: CampaignService;
}

export class ContactListing {
  private readonly db: Db;
  private readonly store: ContactStore;
  private readonly campaigns: CampaignService;

  constructor({ db, store, campaigns }: ContactListingDeps) {
    this.db = db;
    this.store = store;
    this.campaigns = campaigns;
  }

  /** GET /v2/contact/list */
  async list(workspaceId: string, query: ListQuery): Promise<ListAnswer> {
    const { cursor, sort: sortParam, order: orderParam, limit: limitParam, ...filter } = query;
    const sort = defaulted(sortParam, 'sort');
    const order = defaulted(orderParam, 'order');
    const limit = defaulted(limitParam, 'limit');
    let after: ListAfter | undefined;
    if (cursor !== undefined) {
      if (sort === 'email') after = decodeKeyCursor(cursor);
      else {
        const { at, id } = decodeCursor(cursor);
        after = { key: at, id };
      }
    }
    await this.assertCampaign(this.db, workspaceId, filter);
    const rows = await this.store.listPage(this.db, workspaceId, filter, { sort, order, after, limit: limit + 1 });
    const hasMore = rows.length > limit;
    const items = rows.slice(0, limit);
    const last = items.at(-1);
    let nextCursor: string | null = null;
    if (hasMore && last) {
      const { key, id } = positionOf(last, sort);
      nextCursor = key instanceof Date ? encodeCursor(key, id) : encodeKeyCursor(key, id);
    }
    return { items: items.map(toItem), pagination: { limit, hasMore, nextCursor } };
  }

  /** 404 when the filter names a campaign that is not the workspace's. */
  async assertCampaign(db: Executor, workspaceId: string, filter: ListFilter): Promise<void> {
    if (filter.campaignId) await this.campaigns.assertExists(db, workspaceId, filter.campaignId);
  }

  /** The contacts the filter selects now, oldest first, a page at a time (a bulk job's rows). */
  async *select(workspaceId: string, filter: ContactFilter): AsyncGenerator<{ id: string; email: string }> {
    let after: ListAfter | undefined;
    for (;;) {
      const rows = await this.store.listPage(this.db, workspaceId, filter, {
        sort: 'createdAt',
        order: 'asc',
        after,
        limit: SELECTION_PAGE,
      });
      for (const row of rows) yield { id: row.id, email: row.email };
      if (rows.length < SELECTION_PAGE) return;
      after = positionOf(rows[rows.length - 1], 'createdAt');
    }
  }
}
