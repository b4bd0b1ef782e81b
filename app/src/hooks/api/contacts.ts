/** Contacts of a campaign: adding them one by one, and a CSV import run as a job (jobs.ts follows it). */
import { useQueryClient } from '@tanstack/react-query';
import { useApi } from '../../api';
import { invalidate } from './invalidate';

export const useAddContacts = () => {
  const queryClient = useQueryClient();
  return useApi().useMutation('post', '/v2/contact/add', {
    onSuccess: () => invalidate(queryClient, '/v2/campaign/list', '/v2/contact/get'),
  });
};

export const useContact = (campaignId: string, email: string) =>
  useApi().useQuery(
    'get',
    '/v2/contact/get',
    { params: { query: { campaignId, email } } },
    { enabled: email.includes('@') },
  );
