/** Custom tracking domains: the list with each one's CNAME record to create, adding one, checking its DNS now. */
import { useQueryClient } from '@tanstack/react-query';
import { useApi } from '../../api';
import { invalidate } from './invalidate';

export const useTrackingDomains = () =>
  useApi().useQuery('get', '/v2/tracking-domain/list', { params: { query: { limit: 100 } } });

function useDomainsChanged() {
  const queryClient = useQueryClient();
  return () => invalidate(queryClient, '/v2/tracking-domain/list');
}

export const useAddTrackingDomain = () =>
  useApi().useMutation('post', '/v2/tracking-domain/create', { onSuccess: useDomainsChanged() });

export const useVerifyTrackingDomain = () =>
  useApi().useMutation('post', '/v2/tracking-domain/verify', { onSuccess: useDomainsChanged() });
