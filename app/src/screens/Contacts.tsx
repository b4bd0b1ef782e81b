/**
 * Contacts: a CSV file imported into a campaign as a job; the contacts of one campaign or of the whole workspace
 * in a table that loads page after page as it scrolls (filters, a search, a sort), each with where it stands in
 * its sequence; a bulk action (pause, resume, move, delete, lead status) on every contact the filters select,
 * run as a job; and the workspace's recent jobs. A job's progress and results show in one place, whichever
 * started it.
 */
import { useEffect, useMemo, useState, type FormEvent, type ReactNode } from 'react';
import { useCampaign, useCampaigns } from '../hooks/api/campaigns';
import {
  useBulkContacts,
  useContactList,
  useRestartContactList,
  type BulkRequest,
  type ContactListItem,
  type ContactListQuery,
} from '../hooks/api/contacts';
import { useImportContacts, useJobs } from '../hooks/api/jobs';
import { ConfirmDialog } from '../components/Confirm';
import type { Column } from '../components/DataTable';
import { NumberInput } from '../components/NumberInput';
import { JobProgress } from '../components/JobProgress';
import { Empty, ErrorNotice, Loaded } from '../components/states';
import { VirtualTable } from '../components/VirtualTable';
import { useCan } from '../session';
import { INTENTS, LEAD_STATUSES } from '../vocabulary';

export function Contacts() {
  const canList = useCan('contacts:read');
  const canBulk = useCan('contacts:write');
  const canReadJobs = useCan('jobs:read');
  const canStartJobs = useCan('jobs:write');
  const canReadCampaigns = useCan('campaigns:read');
  const [jobId, setJobId] = useState<string>();
  return (
    <section aria-labelledby="contacts-title">
      <h1 id="contacts-title">Contacts</h1>
      {canStartJobs && canReadCampaigns ? <ImportForm onStarted={setJobId} /> : null}
      {jobId && canReadJobs ? <JobProgress key={jobId} jobId={jobId} /> : null}
      {canList ? <ContactTable onBulkStarted={canBulk && canReadJobs ? setJobId : undefined} /> : null}
      {canReadJobs ? <RecentJobs onOpen={setJobId} /> : null}
    </section>
  );
}

function ImportForm({ onStarted }: { onStarted: (jobId: string) => void }) {
  const campaigns = useCampaigns({ limit: 100 });
  const [campaignId, setCampaignId] = useState('');
  const [file, setFile] = useState<File | null>(null);
  const start = useImportContacts();
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    if (!file) return;
    const csv = await file.text();
    start.mutate(
      {
        params: { query: { campaignId } },
        body: csv,
        headers: { 'Content-Type': 'text/csv' },
        bodySerializer: (body: unknown) => body as string,
      },
      { onSuccess: ({ data }) => onStarted(data.job.id) },
    );
  };
  return (
    <form onSubmit={(e) => void submit(e)} aria-labelledby="import-title">
      <h2 id="import-title">Import a CSV file</h2>
      <p className="hint">
        One contact a line, with a header row naming the columns (email, firstName, lastName, ...).
      </p>
      <Loaded query={campaigns} what="campaigns">
        {({ data }) => (
          <div className="field">
            <label htmlFor="import-campaign">Into campaign</label>
            <select id="import-campaign" required value={campaignId} onChange={(e) => setCampaignId(e.target.value)}>
              <option value="">Choose a campaign</option>
              {data.items.map((c) => (
                <option key={c.id} value={c.id}>
                  {c.name}
                </option>
              ))}
            </select>
          </div>
        )}
      </Loaded>
      <div className="field">
        <label htmlFor="import-file">CSV file</label>
        <input
          id="import-file"
          type="file"
          accept=".csv,text/csv"
          required
          onChange={(e) => setFile(e.target.files?.[0] ?? null)}
        />
      </div>
      <button type="submit" disabled={start.isPending}>
        Import
      </button>
      <ErrorNotice error={start.error} />
    </form>
  );
}

type Filter = BulkRequest['filter'];
type Sort = NonNullable<ContactListQuery['sort']>;
type Order = NonNullable<ContactListQuery['order']>;

// Labels by value: typed by the spec's enums, so a value the API adds or drops fails the type check here.
const STATUSES: Record<NonNullable<Filter['status']>, string> = {
  active: 'Active',
  paused: 'Paused',
  completed: 'Completed',
  bounced: 'Bounced',
  unsubscribed: 'Unsubscribed',
};
/** The filters that pick one value of an enum. */
const ENUM_FILTERS = [
  ['status', 'Status', STATUSES],
  ['leadStatus', 'Lead status', LEAD_STATUSES],
  ['intent', "Last reply's intent", INTENTS],
] as const;
const SORTS: Record<Sort, string> = { createdAt: 'Added', updatedAt: 'Last activity', email: 'Address' };
const ACTIONS: Record<BulkRequest['action'], string> = {
  pause: 'Pause',
  resume: 'Resume',
  move: 'Move to another campaign',
  delete: 'Delete',
  setLeadStatus: 'Set the lead status',
};

/** The search is asked for once typing stops for this long (ms), and only from 3 characters, as the API needs. */
const SEARCH_PAUSE = 300;

/** `value`, once it has stayed the same for `ms`; a few lines, not worth a library. */
function useSettled<T>(value: T, ms: number): T {
  const [settled, setSettled] = useState(value);
  useEffect(() => {
    const timer = setTimeout(() => setSettled(value), ms);
    return () => clearTimeout(timer);
  }, [value, ms]);
  return settled;
}

/** A date input's day as the start of that day where the browser is. */
const dayStart = (day: string) => (day ? new Date(`${day}T00:00:00`).toISOString() : undefined);

function ContactTable({ onBulkStarted }: { onBulkStarted: ((jobId: string) => void) | undefined }) {
  const campaigns = useCampaigns({ limit: 100 });
  const [filter, setFilter] = useState<Omit<Filter, 'search' | 'createdAfter' | 'createdBefore'>>({});
  const [days, setDays] = useState({ after: '', before: '' });
  const [search, setSearch] = useState('');
  const [sort, setSort] = useState<Sort>('createdAt');
  const [order, setOrder] = useState<Order>('desc');
  const settledSearch = useSettled(search.trim(), SEARCH_PAUSE);
  const selection: Filter = {
    ...filter,
    ...(settledSearch.length >= 3 ? { search: settledSearch } : {}),
    ...(days.after ? { createdAfter: dayStart(days.after) } : {}),
    ...(days.before ? { createdBefore: dayStart(days.before) } : {}),
  };
  const query = { ...selection, sort, order };
  const list = useContactList(query);
  const restart = useRestartContactList();
  const rows = useMemo(() => list.data?.pages.flatMap((page) => page.data.items) ?? [], [list.data]);
  const campaign = useCampaign(filter.campaignId);
  const subsequences = campaign.data?.data.campaign.subsequences ?? [];
  const campaignNames = useMemo(() => new Map(campaigns.data?.data.items.map((c) => [c.id, c.name])), [campaigns.data]);
  const subsequenceNames = new Map(subsequences.map((s) => [s.id, s.name]));
  const set = (patch: Partial<typeof filter>) => setFilter((f) => ({ ...f, ...patch }));
  const { hasNextPage, isFetchingNextPage, isPlaceholderData, fetchNextPage } = list;
  // While another query's rows stand in for this one's first page, they have no next page of this query.
  const loadMore = () => {
    if (hasNextPage && !isFetchingNextPage && !isPlaceholderData) void fetchNextPage();
  };
  const columns: Column<ContactListItem>[] = [
    { header: 'Email', cell: ({ contact }) => contact.email },
    { header: 'Name', cell: ({ contact }) => [contact.firstName, contact.lastName].filter(Boolean).join(' ') },
    { header: 'Company', cell: ({ contact }) => contact.companyName },
    { header: 'Campaign', cell: ({ contact }) => campaignNames.get(contact.campaignId) ?? '—' },
    { header: 'Status', cell: ({ contact }) => <span className={`badge ${contact.status}`}>{contact.status}</span> },
    { header: 'Lead status', cell: ({ contact }) => (contact.leadStatus ? LEAD_STATUSES[contact.leadStatus] : '—') },
    { header: 'Step', cell: ({ progress }) => progress.step ?? '—' },
    {
      header: 'Next send',
      cell: ({ progress }) => (progress.nextSendAt ? new Date(progress.nextSendAt).toLocaleString() : '—'),
    },
    {
      header: 'Last intent',
      cell: ({ progress }) => (progress.lastReplyIntent ? INTENTS[progress.lastReplyIntent] : '—'),
    },
    { header: 'Paused', cell: ({ progress }) => (progress.paused ? 'yes' : 'no') },
    {
      header: 'Subsequence',
      cell: ({ progress }) =>
        progress.subsequenceId ? (subsequenceNames.get(progress.subsequenceId) ?? 'a subsequence') : '—',
    },
  ];
  return (
    <section aria-labelledby="contact-list-title">
      <h2 id="contact-list-title">All contacts</h2>
      <form className="filters" aria-label="Filters" onSubmit={(e) => e.preventDefault()}>
        <Field id="contacts-search" label="Search">
          <input
            id="contacts-search"
            type="search"
            maxLength={100}
            aria-describedby="contacts-search-hint"
            value={search}
            onChange={(e) => setSearch(e.target.value)}
          />
          <small id="contacts-search-hint" className="hint">
            Part of the address, name or company; 3 characters at least.
          </small>
        </Field>
        <Choice
          id="contacts-campaign"
          label="Campaign"
          any="All campaigns"
          options={Object.fromEntries(campaigns.data?.data.items.map((c) => [c.id, c.name]) ?? [])}
          value={filter.campaignId}
          onChange={(campaignId) => set({ campaignId, subsequenceId: undefined })}
        />
        {ENUM_FILTERS.map(([key, label, options]) => (
          // Each value is one of the options named with it, so the filter gets a value of its own enum.
          <Choice<string>
            key={key}
            id={`contacts-${key}`}
            label={label}
            options={options}
            value={filter[key]}
            onChange={(value) => set({ [key]: value })}
          />
        ))}
        <Field id="contacts-step" label="Next step">
          <NumberInput id="contacts-step" min={1} max={100} value={filter.step} onChange={(step) => set({ step })} />
        </Field>
        <Choice
          id="contacts-paused"
          label="Paused"
          options={{ yes: 'Paused', no: 'Not paused' }}
          value={filter.paused === undefined ? undefined : filter.paused ? 'yes' : 'no'}
          onChange={(paused) => set({ paused: paused === undefined ? undefined : paused === 'yes' })}
        />
        {subsequences.length ? (
          <Choice
            id="contacts-subsequence"
            label="Subsequence"
            options={Object.fromEntries(subsequences.map((sub) => [sub.id, sub.name]))}
            value={filter.subsequenceId}
            onChange={(subsequenceId) => set({ subsequenceId })}
          />
        ) : null}
        {(['after', 'before'] as const).map((bound) => (
          <Field key={bound} id={`contacts-${bound}`} label={`Added ${bound === 'after' ? 'from' : 'before'}`}>
            <input
              id={`contacts-${bound}`}
              type="date"
              value={days[bound]}
              onChange={(e) => setDays({ ...days, [bound]: e.target.value })}
            />
          </Field>
        ))}
        <Choice
          id="contacts-sort"
          label="Sort by"
          any={null}
          options={SORTS}
          value={sort}
          onChange={(value) => setSort(value ?? 'createdAt')}
        />
        <Choice
          id="contacts-order"
          label="Order"
          any={null}
          options={sort === 'email' ? { asc: 'A to Z', desc: 'Z to A' } : { desc: 'Newest first', asc: 'Oldest first' }}
          value={order}
          onChange={(value) => setOrder(value ?? 'desc')}
        />
      </form>
      {onBulkStarted ? (
        <BulkActions selection={selection} campaigns={campaigns.data?.data.items ?? []} onStarted={onBulkStarted} />
      ) : null}
      <ErrorNotice error={list.error} />
      {list.isPending ? (
        <p className="state" role="status">
          Loading contacts…
        </p>
      ) : rows.length === 0 ? (
        <Empty>No contacts match these filters.</Empty>
      ) : (
        <>
          <VirtualTable
            // Other filters start a new list, read from its top.
            key={JSON.stringify(query)}
            caption="Contacts"
            columns={columns}
            rows={rows}
            rowKey={({ contact }) => contact.id}
            complete={!hasNextPage}
            onNearEnd={loadMore}
          />
          <p className="state" role="status" data-loaded={rows.length}>
            {isFetchingNextPage
              ? `${rows.length} contacts loaded; loading more…`
              : hasNextPage
                ? `${rows.length} contacts loaded; more load as you scroll.`
                : `All ${rows.length} contacts shown.`}{' '}
            <button type="button" className="link" onClick={() => void restart()}>
              Reload
            </button>
          </p>
        </>
      )}
    </section>
  );
}

function Field({ id, label, children }: { id: string; label: string; children: ReactNode }) {
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      {children}
    </div>
  );
}

/** A select of values by their labels, with `any` (by default "Any") for none, or no such choice when null. */
function Choice<V extends string>({
  id,
  label,
  any = 'Any',
  options,
  value,
  onChange,
}: {
  id: string;
  label: string;
  any?: string | null;
  options: Record<V, string>;
  value: V | undefined;
  onChange: (value: V | undefined) => void;
}) {
  return (
    <Field id={id} label={label}>
      <select id={id} value={value ?? ''} onChange={(e) => onChange((e.target.value || undefined) as V | undefined)}>
        {any === null ? null : <option value="">{any}</option>}
        {(Object.entries(options) as [V, string][]).map(([v, text]) => (
          <option key={v} value={v}>
            {text}
          </option>
        ))}
      </select>
    </Field>
  );
}

/** One action on every contact the filters select, run as a job; a delete is asked about first. */
function BulkActions({
  selection,
  campaigns,
  onStarted,
}: {
  selection: Filter;
  campaigns: { id: string; name: string }[];
  onStarted: (jobId: string) => void;
}) {
  const [action, setAction] = useState<BulkRequest['action']>('pause');
  const [toCampaignId, setToCampaignId] = useState('');
  const [leadStatus, setLeadStatus] = useState<Filter['leadStatus'] | ''>('');
  const [confirming, setConfirming] = useState(false);
  const bulk = useBulkContacts();
  const run = () =>
    bulk.mutate(
      {
        body: {
          filter: selection,
          action,
          ...(action === 'move' ? { toCampaignId } : {}),
          ...(action === 'setLeadStatus' ? { leadStatus: leadStatus || null } : {}),
        },
      },
      { onSuccess: ({ data }) => onStarted(data.job.id) },
    );
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (action === 'delete') setConfirming(true);
    else run();
  };
  return (
    <form className="row bulk" aria-labelledby="bulk-title" onSubmit={submit}>
      <h3 id="bulk-title">Every contact these filters select</h3>
      <label htmlFor="bulk-action" className="visually-hidden">
        Bulk action
      </label>
      <select id="bulk-action" value={action} onChange={(e) => setAction(e.target.value as BulkRequest['action'])}>
        {Object.entries(ACTIONS).map(([value, label]) => (
          <option key={value} value={value}>
            {label}
          </option>
        ))}
      </select>
      {action === 'move' ? (
        <>
          <label htmlFor="bulk-to">To campaign</label>
          <select id="bulk-to" required value={toCampaignId} onChange={(e) => setToCampaignId(e.target.value)}>
            <option value="">Choose a campaign</option>
            {campaigns
              .filter((c) => c.id !== selection.campaignId)
              .map((c) => (
                <option key={c.id} value={c.id}>
                  {c.name}
                </option>
              ))}
          </select>
        </>
      ) : null}
      {action === 'setLeadStatus' ? (
        <>
          <label htmlFor="bulk-lead-status">New lead status</label>
          <select
            id="bulk-lead-status"
            value={leadStatus ?? ''}
            onChange={(e) => setLeadStatus(e.target.value as Filter['leadStatus'] | '')}
          >
            <option value="">None (clear it)</option>
            {Object.entries(LEAD_STATUSES).map(([value, label]) => (
              <option key={value} value={value}>
                {label}
              </option>
            ))}
          </select>
        </>
      ) : null}
      <button type="submit" disabled={bulk.isPending}>
        Apply to the filtered contacts
      </button>
      <ConfirmDialog
        open={confirming}
        confirmLabel="Delete the contacts"
        onConfirm={run}
        onClose={() => setConfirming(false)}
      >
        Delete every contact these filters select{selection.campaignId ? ' in this campaign' : ', in every campaign'}?
        They are deleted for good; their email events stay in the figures.
      </ConfirmDialog>
      <ErrorNotice error={bulk.error} />
    </form>
  );
}

function RecentJobs({ onOpen }: { onOpen: (jobId: string) => void }) {
  const jobs = useJobs();
  return (
    <section aria-labelledby="jobs-title">
      <h2 id="jobs-title">Recent jobs</h2>
      <Loaded query={jobs} what="jobs">
        {({ data }) =>
          data.items.length === 0 ? (
            <Empty>No imports yet.</Empty>
          ) : (
            <ul>
              {data.items.map((j) => (
                <li key={j.id}>
                  <button type="button" className="link" onClick={() => onOpen(j.id)}>
                    {j.type} {new Date(j.createdAt).toLocaleString()}
                  </button>{' '}
                  {j.status} ({j.progress.processed}/{j.progress.total})
                </li>
              ))}
            </ul>
          )
        }
      </Loaded>
    </section>
  );
}
