/**
 * Contacts: one by address, the list by filter (cursor pages, loaded as the table scrolls), adding them, and
 * bulk actions on every contact a filter selects, run as a job (jobs.ts follows it).
 */
import { useCallback } from 'react';
import { keepPreviousData, useQueryClient } from '@tanstack/react-query';
import type { paths } from '../../../../client';
import { useApi } from '../../api';
import { invalidate } from './invalidate';

type ListQuery = NonNullable<paths['/v2/contact/list']['get']['parameters']['query']>;
/** The filters and order of the list (its cursor and page size are the hook's). */
export type ContactListQuery = Omit<ListQuery, 'cursor' | 'limit'>;
export type ContactListItem =
  paths['/v2/contact/list']['get']['responses']['200']['content']['application/json']['data']['items'][number];
export type BulkRequest = paths['/v2/contact/bulk']['post']['requestBody']['content']['application/json'];

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

/**
 * The contacts a query selects, 100 a page, the next page fetched when asked (the table asks as it nears its
 * end). Pages are never asked again in the background: a refetch of an infinite query asks every page loaded
 * so far, which for a list scrolled deep would spend the quota. A change is shown by starting the list over
 * (`useRestartContactList`), as a finished job does.
 */
export const useContactList = (query: ContactListQuery) =>
  useApi().useInfiniteQuery(
    'get',
    '/v2/contact/list',
    { params: { query: { ...query, limit: 100 } } },
    {
      // A null cursor is left out of the query string: the first page.
      initialPageParam: null,
      getNextPageParam: (page) => page.data.pagination.nextCursor ?? undefined,
      staleTime: Infinity,
      refetchOnWindowFocus: false,
      placeholderData: keepPreviousData,
    },
  );

/** Drops the loaded pages of every contact list and asks the first page again. */
export function useRestartContactList() {
  const queryClient = useQueryClient();
  return useCallback(() => queryClient.resetQueries({ queryKey: ['get', '/v2/contact/list'] }), [queryClient]);
}

export const useBulkContacts = () => {
  const queryClient = useQueryClient();
  return useApi().useMutation('post', '/v2/contact/bulk', {
    onSuccess: () => invalidate(queryClient, '/v2/job/list'),
  });
};
