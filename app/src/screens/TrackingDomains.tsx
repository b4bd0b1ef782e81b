/**
 * Custom tracking domains: adding one, the CNAME record to create for it as the API names it, its status with
 * the reason a check failed, and checking its DNS now instead of at the next scheduled check.
 */
import { useState, type FormEvent } from 'react';
import { useAddTrackingDomain, useTrackingDomains, useVerifyTrackingDomain } from '../hooks/api/tracking-domains';
import { DataTable } from '../components/DataTable';
import { Empty, ErrorNotice, Loaded } from '../components/states';
import { useCan } from '../session';

export function TrackingDomains() {
  const domains = useTrackingDomains();
  const canWrite = useCan('deliverability:write');
  return (
    <section aria-labelledby="domains-title">
      <h2 id="domains-title">Tracking domains</h2>
      <p className="hint">
        A host of your own for the open pixel, click links and unsubscribe link in your mail. Mail uses it while it is
        verified, and the default host otherwise.
      </p>
      {canWrite ? <AddDomain /> : null}
      <Loaded query={domains} what="tracking domains">
        {({ data }) =>
          data.items.length === 0 ? (
            <Empty>No tracking domains yet.</Empty>
          ) : (
            <ul className="cards">
              {data.items.map((d) => (
                <li key={d.id} className="card" aria-labelledby={`domain-${d.id}`}>
                  <h3 id={`domain-${d.id}`}>{d.domain}</h3>
                  <p>
                    <span className={`badge ${d.status}`}>{d.status}</span>
                    {d.reason ? ` ${d.reason.message}` : ''}
                  </p>
                  <p>{d.status === 'verified' ? 'Its DNS record:' : 'Create this DNS record at your DNS provider:'}</p>
                  <DataTable
                    caption={`DNS record for ${d.domain}`}
                    columns={[
                      { header: 'Type', cell: () => 'CNAME' },
                      { header: 'Name', cell: (r) => r.domain },
                      { header: 'Target', cell: (r) => <span data-cname-target>{r.cnameTarget}</span> },
                    ]}
                    rows={[d]}
                    rowKey={(r) => r.id}
                  />
                  <p className="hint">
                    {d.checkedAt ? `Checked ${new Date(d.checkedAt).toLocaleString()}; ` : ''}next check{' '}
                    {new Date(d.nextCheckAt).toLocaleString()}.
                  </p>
                  {canWrite ? <VerifyDomain id={d.id} domain={d.domain} /> : null}
                </li>
              ))}
            </ul>
          )
        }
      </Loaded>
    </section>
  );
}

function AddDomain() {
  const [domain, setDomain] = useState('');
  const add = useAddTrackingDomain();
  const submit = (event: FormEvent) => {
    event.preventDefault();
    add.mutate({ body: { domain } }, { onSuccess: () => setDomain('') });
  };
  return (
    <form className="inline" onSubmit={submit}>
      <label htmlFor="new-domain">Domain</label>
      <input
        id="new-domain"
        required
        minLength={4}
        maxLength={253}
        placeholder="track.acme.com"
        value={domain}
        onChange={(e) => setDomain(e.target.value)}
      />
      <button type="submit" disabled={add.isPending}>
        Add domain
      </button>
      <ErrorNotice error={add.error} />
    </form>
  );
}

function VerifyDomain({ id, domain }: { id: string; domain: string }) {
  const verify = useVerifyTrackingDomain();
  const checked = verify.data?.data.trackingDomain;
  return (
    <div className="row">
      <button type="button" disabled={verify.isPending} onClick={() => verify.mutate({ body: { id } })}>
        {verify.isPending ? 'Checking…' : `Check ${domain} now`}
      </button>
      {checked ? (
        <p role="status">
          {checked.status === 'verified' ? 'Verified.' : `Still ${checked.status}: ${checked.reason?.message ?? ''}`}
        </p>
      ) : null}
      <ErrorNotice error={verify.error} />
    </div>
  );
}
