/**
 * A job followed to its end: a progress bar while the worker applies its rows, the counts per outcome, then the
 * results file (one line per input row or contact, with its outcome and reason) as a table. A CSV import and a
 * bulk action on contacts both show their job here.
 */
import { useMemo } from 'react';
import { parse } from 'csv-parse/browser/esm/sync';
import { useJob, useJobResults, type Job } from '../hooks/api/jobs';
import { ErrorNotice, Loaded } from './states';
import { VirtualTable } from './VirtualTable';

const TITLES: Record<Job['type'], string> = {
  contactImport: 'Import',
  contactBulk: 'Bulk action',
  verify: 'Verification',
  enrich: 'Enrichment',
};

/** The outcomes a job counts, in the order they are told. */
const OUTCOMES = [
  'created',
  'changed',
  'valid',
  'matched',
  'skipped',
  'invalid',
  'catchAll',
  'unknown',
  'disposable',
  'unmatched',
] as const;

/** "Created 2, skipped 0, invalid 1." from the outcomes the job's type has. */
function describeCounts(counts: Job['counts']): string {
  const told = OUTCOMES.filter((o) => counts[o] !== undefined).map((o) => `${o} ${counts[o]}`);
  const text = told.join(', ');
  return `${text.charAt(0).toUpperCase()}${text.slice(1)}.`;
}

export function JobProgress({ jobId }: { jobId: string }) {
  const job = useJob(jobId);
  const shown = job.data?.data.job;
  const results = useJobResults(jobId, shown?.status === 'completed' || shown?.status === 'failed');
  return (
    <section aria-labelledby="job-title">
      <h2 id="job-title">
        {shown ? TITLES[shown.type] : 'Job'}
        {shown?.contactBulk ? `: ${shown.contactBulk.action}` : ''}
      </h2>
      <Loaded query={job} what="the job">
        {({ data: { job: j } }) => (
          <>
            <label htmlFor="job-progress">
              {j.status}: {j.progress.processed} of {j.progress.total} rows
            </label>
            <progress id="job-progress" max={Math.max(j.progress.total, 1)} value={j.progress.processed} />
            <p data-job-status={j.status}>{j.status === 'completed' ? describeCounts(j.counts) : (j.error ?? '')}</p>
          </>
        )}
      </Loaded>
      {results.data && shown ? <ResultsTable csv={results.data} perContact={shown.type === 'contactBulk'} /> : null}
      <ErrorNotice error={results.error} />
    </section>
  );
}

function ResultsTable({ csv, perContact }: { csv: string; perContact: boolean }) {
  const { columns, rows } = useMemo(() => {
    const [header = [], ...lines] = parse(csv);
    return {
      columns: header.map((name, i) => ({ header: name, cell: (row: { cells: string[] }) => row.cells[i] })),
      rows: lines.map((cells, i) => ({ key: String(i), cells })),
    };
  }, [csv]);
  // A bulk action over a whole workspace answers a line per contact: only the lines in view are rendered.
  return (
    <VirtualTable
      caption={`Results, one row per ${perContact ? 'contact' : 'line of the file'}`}
      showCaption
      columns={columns}
      rows={rows}
      rowKey={(row) => row.key}
      complete
    />
  );
}
