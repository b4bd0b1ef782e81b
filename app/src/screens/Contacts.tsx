/**
 * Contacts: a CSV file imported into a campaign as a job, followed with a progress bar until it finishes, then
 * its per-row results (one line per input row with its reason code); and the workspace's recent imports.
 */
import { useState, type FormEvent } from 'react';
import { parse } from 'csv-parse/browser/esm/sync';
import { useCampaigns } from '../hooks/api/campaigns';
import { useImportContacts, useJob, useJobResults, useJobs } from '../hooks/api/jobs';
import { Empty, ErrorNotice, Loaded } from '../components/states';
import { useCan } from '../session';

export function Contacts() {
  const canStartJobs = useCan('jobs:write');
  const canReadCampaigns = useCan('campaigns:read');
  const canImport = canStartJobs && canReadCampaigns;
  const [jobId, setJobId] = useState<string>();
  return (
    <section aria-labelledby="contacts-title">
      <h1 id="contacts-title">Contacts</h1>
      {canImport ? <ImportForm onStarted={setJobId} /> : null}
      {jobId ? <JobProgress jobId={jobId} /> : null}
      <RecentJobs onOpen={setJobId} />
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

function JobProgress({ jobId }: { jobId: string }) {
  const job = useJob(jobId);
  const status = job.data?.data.job.status;
  const results = useJobResults(jobId, status === 'completed' || status === 'failed');
  return (
    <section aria-labelledby="job-title">
      <h2 id="job-title">Import</h2>
      <Loaded query={job} what="the import">
        {({ data: { job: j } }) => (
          <>
            <label htmlFor="job-progress">
              {j.status}: {j.progress.processed} of {j.progress.total} rows
            </label>
            <progress id="job-progress" max={Math.max(j.progress.total, 1)} value={j.progress.processed} />
            <p data-job-status={j.status}>
              {j.status === 'completed'
                ? `Created ${j.counts.created ?? 0}, skipped ${j.counts.skipped ?? 0}, invalid ${j.counts.invalid ?? 0}.`
                : (j.error ?? '')}
            </p>
          </>
        )}
      </Loaded>
      {results.data ? <ResultsTable csv={results.data} /> : null}
      <ErrorNotice error={results.error} />
    </section>
  );
}

function ResultsTable({ csv }: { csv: string }) {
  const [header = [], ...rows] = parse(csv);
  return (
    <div className="table-wrap" tabIndex={0}>
      <table>
        <caption>Results, one row per line of the file</caption>
        <thead>
          <tr>
            {header.map((h) => (
              <th scope="col" key={h}>
                {h}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.map((row, i) => (
            <tr key={i}>
              {row.map((cell, j) => (
                <td key={j}>{cell}</td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
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
