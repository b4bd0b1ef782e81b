/** Email accounts: the list with each one's status, and connecting one by password or through OAuth. */
import { useQueryClient } from '@tanstack/react-query';
import type { paths } from '../../../../client';
import { useApi } from '../../api';
import { invalidate } from './invalidate';

export const useAccounts = () => useApi().useQuery('get', '/v2/account/list', { params: { query: { limit: 100 } } });

export const useConnectAccount = () => {
  const queryClient = useQueryClient();
  return useApi().useMutation('post', '/v2/account/connect', {
    onSuccess: () => invalidate(queryClient, '/v2/account/list'),
  });
};

export type OAuthProvider =
  paths['/v2/account/oauth/start']['post']['requestBody']['content']['application/json']['provider'];

/** Starts an OAuth connect flow: the answer names the provider's page the person consents on. */
export const useStartOAuth = () => useApi().useMutation('post', '/v2/account/oauth/start');

/** A connect flow, asked again every 2 s while the person is at the provider; the accounts once it ends. */
export function useOAuthSession(sessionId: string) {
  const queryClient = useQueryClient();
  return useApi().useQuery(
    'get',
    '/v2/account/oauth/session',
    { params: { query: { sessionId } } },
    {
      refetchInterval: (query) => {
        const status = query.state.data?.data.status;
        if (status && status !== 'pending') {
          void invalidate(queryClient, '/v2/account/list');
          return false;
        }
        return 2000;
      },
    },
  );
}

/** An account's warm-up over the last days: health (inbox against spam placement) and the daily series. */
export const useWarmupSummary = (accountId: string) =>
  useApi().useQuery('get', '/v2/analytics/account/warmup/summary', { params: { query: { accountId } } });

/** Looks up an account's DNS records, blocklists and reputation now (a read, sent as a POST for its body). */
export const useCheckVitals = () => useApi().useMutation('post', '/v2/account/vitals');
