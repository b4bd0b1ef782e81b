/** The unibox: messages a page at a time by cursor, replying in a thread, the reply's intent, marking read. */
import { useQueryClient } from '@tanstack/react-query';
import type { paths } from '../../../../client';
import { useApi } from '../../api';
import { invalidate } from './invalidate';

export type InboxQuery = NonNullable<paths['/v2/email/list']['get']['parameters']['query']>;
export type Intent = paths['/v2/email/set-intent']['post']['requestBody']['content']['application/json']['intent'];

export const useMessages = (query: InboxQuery) => useApi().useQuery('get', '/v2/email/list', { params: { query } });

function useInboxChanged() {
  const queryClient = useQueryClient();
  return () => invalidate(queryClient, '/v2/email/list');
}

export const useReply = () => useApi().useMutation('post', '/v2/email/reply', { onSuccess: useInboxChanged() });

export const useSetIntent = () =>
  useApi().useMutation('post', '/v2/email/set-intent', { onSuccess: useInboxChanged() });

export const useMarkRead = () => useApi().useMutation('post', '/v2/email/mark-read', { onSuccess: useInboxChanged() });
