/**
 * People and company lists: the workspace's lists a page at a time, creating one, and a list's members a page at
 * a time (by cursor, as the API advises for a list that changes while it is read) with its CSV export.
 */
import { useState, type FormEvent } from 'react';
import { useQueryClient, useMutation } from '@tanstack/react-query';
import { useApi } from '../api';
import {
  useCreateCompanyList,
  useCreatePeopleList,
  useList,
  useListCompanies,
  useListPeople,
  useLists,
  type LeadList,
  type ListKind,
} from '../hooks/api/lists';
import { plural } from '../components/Cost';
import { saveFile } from '../components/save-file';
import { CursorPager } from '../components/CursorPager';
import { DataTable } from '../components/DataTable';
import { Empty, ErrorNotice, Loaded } from '../components/states';
import { SkipPager } from '../components/SkipPager';
import { useCan } from '../session';
import { href } from '../route';

const PAGE = 20;
const KINDS: Record<ListKind, string> = { people: 'People', company: 'Companies' };

export function Lists({ listId }: { listId: string | undefined }) {
  return listId ? <ListPage listId={listId} /> : <AllLists />;
}

function AllLists() {
  const [skip, setSkip] = useState(0);
  const [kind, setKind] = useState<ListKind>();
  const lists = useLists({ limit: PAGE, skip, ...(kind ? { kind } : {}) });
  const canWrite = useCan('lists:write');
  return (
    <section aria-labelledby="lists-title">
      <h1 id="lists-title">Lists</h1>
      {canWrite ? <CreateList /> : null}
      <div className="row">
        <label htmlFor="lists-kind">Kind</label>
        <select
          id="lists-kind"
          value={kind ?? ''}
          onChange={(e) => {
            setSkip(0);
            setKind((e.target.value || undefined) as ListKind | undefined);
          }}
        >
          <option value="">Any</option>
          <option value="people">People</option>
          <option value="company">Companies</option>
        </select>
      </div>
      <Loaded query={lists} what="lists">
        {({ data }) =>
          data.items.length === 0 ? (
            <Empty>No lists yet: save people or companies from a search under Leads, or create one.</Empty>
          ) : (
            <>
              <DataTable
                caption="Lists"
                columns={[
                  { header: 'Name', cell: (l) => <a href={href('lists', l.id)}>{l.name}</a> },
                  { header: 'Kind', cell: (l) => KINDS[l.kind] },
                  { header: 'Members', cell: (l) => l.memberCount },
                  { header: 'Created', cell: (l) => new Date(l.createdAt).toLocaleString() },
                ]}
                rows={data.items}
                rowKey={(l) => l.id}
              />
              <SkipPager
                label="List pages"
                skip={skip}
                limit={PAGE}
                shown={data.items.length}
                pagination={data.pagination}
                onSkip={setSkip}
              />
            </>
          )
        }
      </Loaded>
    </section>
  );
}

function CreateList() {
  const [name, setName] = useState('');
  const [kind, setKind] = useState<ListKind>('people');
  const people = useCreatePeopleList();
  const companies = useCreateCompanyList();
  const create = kind === 'people' ? people : companies;
  const submit = (event: FormEvent) => {
    event.preventDefault();
    create.mutate(
      { body: { name } },
      {
        onSuccess: ({ data }) => {
          setName('');
          window.location.hash = href('lists', data.list.id);
        },
      },
    );
  };
  return (
    <form className="inline" onSubmit={submit}>
      <label htmlFor="new-list">New list</label>
      <input id="new-list" required maxLength={200} value={name} onChange={(e) => setName(e.target.value)} />
      <label htmlFor="new-list-kind">of</label>
      <select id="new-list-kind" value={kind} onChange={(e) => setKind(e.target.value as ListKind)}>
        <option value="people">people</option>
        <option value="company">companies</option>
      </select>
      <button type="submit" disabled={create.isPending}>
        Create list
      </button>
      <ErrorNotice error={people.error ?? companies.error} />
    </form>
  );
}

function ListPage({ listId }: { listId: string }) {
  const list = useList(listId);
  return (
    <section aria-labelledby="list-title">
      <p>
        <a href={href('lists')}>All lists</a>
      </p>
      <Loaded query={list} what="the list">
        {({ data: { list: l } }) => (
          <>
            <h1 id="list-title">{l.name}</h1>
            <p>
              {KINDS[l.kind]}, {plural(l.memberCount, 'member')}.
            </p>
            <ExportList list={l} />
            <Members list={l} />
          </>
        )}
      </Loaded>
    </section>
  );
}

/** The list as CSV through GET /v2/list/export (streamed by the API), saved as a file. */
function ExportList({ list }: { list: LeadList }) {
  const api = useApi();
  const queryClient = useQueryClient();
  const exported = useMutation({
    mutationFn: () =>
      queryClient.fetchQuery({
        ...api.queryOptions('get', '/v2/list/export', {
          params: { query: { listId: list.id, format: 'csv' } },
          parseAs: 'text',
        }),
        staleTime: 0,
        gcTime: 0,
      }),
    onSuccess: (csv) => saveFile(`${list.name}.csv`, csv, 'text/csv'),
  });
  return (
    <div className="row">
      <button type="button" disabled={exported.isPending} onClick={() => exported.mutate()}>
        {exported.isPending ? 'Exporting…' : 'Export as CSV'}
      </button>
      <ErrorNotice error={exported.error} />
    </div>
  );
}

function Members({ list }: { list: LeadList }) {
  // Cursors of the pages before this one, so Previous goes back the way Next came.
  const [cursors, setCursors] = useState<string[]>([]);
  const cursor = cursors.at(-1);
  const people = useListPeople(list.id, cursor, list.kind === 'people');
  const companies = useListCompanies(list.id, cursor, list.kind === 'company');
  const page = list.kind === 'people' ? people : companies;
  const caption = `Members of ${list.name}`;
  const added = (m: { addedAt: string }) => new Date(m.addedAt).toLocaleString();
  const table =
    list.kind === 'people' ? (
      <DataTable
        caption={caption}
        columns={[
          { header: 'Name', cell: (p) => p.name },
          { header: 'Title', cell: (p) => p.title },
          { header: 'Company', cell: (p) => p.company?.name },
          {
            header: 'Email',
            cell: (p) => (p.revealed.includes('workEmailReveal') ? (p.email ?? 'none known') : 'not revealed'),
          },
          { header: 'Added', cell: added },
        ]}
        rows={people.data?.data.items ?? []}
        rowKey={(p) => p.id}
      />
    ) : (
      <DataTable
        caption={caption}
        columns={[
          { header: 'Name', cell: (c) => c.name },
          { header: 'Domain', cell: (c) => c.domain },
          { header: 'Industry', cell: (c) => c.industry },
          { header: 'Location', cell: (c) => [c.city, c.country].filter(Boolean).join(', ') },
          { header: 'Added', cell: added },
        ]}
        rows={companies.data?.data.items ?? []}
        rowKey={(c) => c.id}
      />
    );
  return (
    <section aria-labelledby="members-title">
      <h2 id="members-title">Members</h2>
      <Loaded
        query={{ data: page.data?.data.pagination, error: page.error, isPending: page.isPending }}
        what="the members"
      >
        {(pagination) =>
          !page.data?.data.items.length ? (
            <Empty>No members yet: save some from a search under Leads.</Empty>
          ) : (
            <>
              {table}
              <CursorPager label="Member pages" cursors={cursors} onCursors={setCursors} pagination={pagination} />
            </>
          )
        }
      </Loaded>
    </section>
  );
}
