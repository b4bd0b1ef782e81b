/** The campaigns: status and figures a page at a time, filtered by status, and a form to create one. */
import { useState, type FormEvent } from 'react';
import { useCampaigns, useCreateCampaign, type CampaignListQuery } from '../hooks/api/campaigns';
import { DataTable } from '../components/DataTable';
import { Empty, ErrorNotice, Loaded } from '../components/states';
import { SkipPager } from '../components/SkipPager';
import { useCan } from '../session';
import { href } from '../route';

const PAGE = 20;
const STATUSES = ['draft', 'active', 'paused', 'completed'] as const;

export function Campaigns() {
  const [skip, setSkip] = useState(0);
  const [status, setStatus] = useState<CampaignListQuery['status']>();
  const list = useCampaigns({ limit: PAGE, skip, ...(status ? { status } : {}) });
  const canWrite = useCan('campaigns:write');
  return (
    <section aria-labelledby="campaigns-title">
      <h1 id="campaigns-title">Campaigns</h1>
      {canWrite ? <CreateCampaign /> : null}
      <label htmlFor="campaign-status">Status</label>{' '}
      <select
        id="campaign-status"
        value={status ?? ''}
        onChange={(e) => {
          setSkip(0);
          setStatus((e.target.value || undefined) as CampaignListQuery['status']);
        }}
      >
        <option value="">Any</option>
        {STATUSES.map((s) => (
          <option key={s} value={s}>
            {s}
          </option>
        ))}
      </select>
      <Loaded query={list} what="campaigns">
        {({ data }) =>
          data.items.length === 0 ? (
            <Empty>No campaigns{status ? ` with status ${status}` : ''} yet.</Empty>
          ) : (
            <>
              <DataTable
                caption="Campaigns"
                columns={[
                  { header: 'Name', cell: (c) => <a href={href('campaigns', c.id)}>{c.name}</a> },
                  {
                    header: 'Status',
                    cell: (c) => (
                      <>
                        <span className={`badge ${c.status}`}>{c.status}</span>
                        {c.pauseReason ? <small> {c.pauseReason.message}</small> : null}
                      </>
                    ),
                  },
                  { header: 'Contacts', cell: (c) => c.counts.contacts },
                  { header: 'Steps', cell: (c) => c.counts.steps },
                  { header: 'Accounts', cell: (c) => c.counts.accounts },
                ]}
                rows={data.items}
                rowKey={(c) => c.id}
              />
              <SkipPager
                label="Campaign pages"
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

function CreateCampaign() {
  const [name, setName] = useState('');
  const create = useCreateCampaign();
  const submit = (event: FormEvent) => {
    event.preventDefault();
    create.mutate(
      { body: { name } },
      {
        onSuccess: ({ data }) => {
          setName('');
          window.location.hash = href('campaigns', data.campaign.id);
        },
      },
    );
  };
  return (
    <form className="inline" onSubmit={submit}>
      <label htmlFor="new-campaign">New campaign</label>
      <input id="new-campaign" required maxLength={200} value={name} onChange={(e) => setName(e.target.value)} />
      <button type="submit" disabled={create.isPending}>
        Create
      </button>
      <ErrorNotice error={create.error} />
    </form>
  );
}
