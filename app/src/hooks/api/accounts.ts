/** Email accounts: the list with each one's status, and connecting one by password. */
import { useQueryClient } from '@tanstack/react-query';
import { useApi } from '../../api';
import { invalidate } from './invalidate';

export const useAccounts = () => useApi().useQuery('get', '/v2/account/list', { params: { query: { limit: 100 } } });

export const useConnectAccount = () => {
  const queryClient = useQueryClient();
  return useApi().useMutation('post', '/v2/account/connect', {
    onSuccess: () => invalidate(queryClient, '/v2/account/list'),
  });
};
