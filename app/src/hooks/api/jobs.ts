/** Bulk jobs: starting a contact import from a CSV file, following a job's progress, and its per-row results. */
import { useEffect } from 'react';
import { useQueryClient } from '@tanstack/react-query';
import type { paths } from '../../../../client';
import { useApi } from '../../api';
import { invalidate } from './invalidate';
import { useRestartContactList } from './contacts';

export type Job = paths['/v2/job/get']['get']['responses']['200']['content']['application/json']['data']['job'];

export const useImportContacts = () => {
  const queryClient = useQueryClient();
  return useApi().useMutation('post', '/v2/job/contact-import', {
    onSuccess: () => invalidate(queryClient, '/v2/job/list'),
  });
};

export const useJobs = () => useApi().useQuery('get', '/v2/job/list', { params: { query: { limit: 20 } } });

const FINISHED = new Set(['completed', 'failed', 'cancelled']);

/**
 * One job, asked again every second until it has finished; then the contacts and campaigns it changed (an
 * import adds contacts, a bulk action pauses, moves or deletes them) are read again.
 */
export function useJob(jobId: string) {
  const queryClient = useQueryClient();
  const restartContacts = useRestartContactList();
  const job = useApi().useQuery(
    'get',
    '/v2/job/get',
    { params: { query: { jobId } } },
    { refetchInterval: (query) => (FINISHED.has(query.state.data?.data.job.status ?? '') ? false : 1000) },
  );
  const finished = FINISHED.has(job.data?.data.job.status ?? '');
  useEffect(() => {
    if (!finished) return;
    void restartContacts();
    void invalidate(queryClient, '/v2/campaign/list', '/v2/campaign/get', '/v2/job/list');
  }, [finished, queryClient, restartContacts]);
  return job;
}

/** The job's results: a CSV with one line per input row and its reason code. */
export const useJobResults = (jobId: string, finished: boolean) =>
  useApi().useQuery('get', '/v2/job/results', { params: { query: { jobId } }, parseAs: 'text' }, { enabled: finished });
