/** Bulk jobs: starting a contact import from a CSV file, following its progress, and its per-row results. */
import { useQueryClient } from '@tanstack/react-query';
import { useApi } from '../../api';
import { invalidate } from './invalidate';

export const useImportContacts = () => {
  const queryClient = useQueryClient();
  return useApi().useMutation('post', '/v2/job/contact-import', {
    onSuccess: () => invalidate(queryClient, '/v2/job/list'),
  });
};

export const useJobs = () => useApi().useQuery('get', '/v2/job/list', { params: { query: { limit: 20 } } });

const FINISHED = new Set(['completed', 'failed', 'cancelled']);

/** One job, asked again every second until it has finished. */
export const useJob = (jobId: string) =>
  useApi().useQuery(
    'get',
    '/v2/job/get',
    { params: { query: { jobId } } },
    { refetchInterval: (query) => (FINISHED.has(query.state.data?.data.job.status ?? '') ? false : 1000) },
  );

/** The job's results: a CSV with one line per input row and its reason code. */
export const useJobResults = (jobId: string, finished: boolean) =>
  useApi().useQuery('get', '/v2/job/results', { params: { query: { jobId } }, parseAs: 'text' }, { enabled: finished });
