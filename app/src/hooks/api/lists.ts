/** People and company lists: the lists, creating one, adding search results, members a page at a time, export. */
import { useQueryClient } from '@tanstack/react-query';
import type { components } from '../../../../client';
import { useApi } from '../../api';
import { invalidate } from './invalidate';

export type ListKind = components['schemas']['LeadListKind'];
export type LeadList = components['schemas']['LeadList'];

export const useLists = (query: { kind?: ListKind; skip?: number; limit?: number }) =>
  useApi().useQuery('get', '/v2/list/all', { params: { query } });

function useListsChanged() {
  const queryClient = useQueryClient();
  return () =>
    invalidate(queryClient, '/v2/list/all', '/v2/list/get', '/v2/list/leads', '/v2/list/companies', '/v2/usage');
}

export const useCreatePeopleList = () =>
  useApi().useMutation('post', '/v2/list/create/people', { onSuccess: useListsChanged() });

export const useCreateCompanyList = () =>
  useApi().useMutation('post', '/v2/list/create/company', { onSuccess: useListsChanged() });

export const useAddLeads = () => useApi().useMutation('post', '/v2/list/add/leads', { onSuccess: useListsChanged() });

export const useAddCompanies = () =>
  useApi().useMutation('post', '/v2/list/add/companies', { onSuccess: useListsChanged() });

export const useList = (listId: string) => useApi().useQuery('get', '/v2/list/get', { params: { query: { listId } } });

/** A page of a list's members by cursor (the previous page's `nextCursor`), so paging never repeats or skips one. */
export const useListPeople = (listId: string, cursor: string | undefined, enabled: boolean) =>
  useApi().useQuery(
    'get',
    '/v2/list/leads',
    { params: { query: { listId, limit: 20, ...(cursor ? { cursor } : {}) } } },
    { enabled },
  );

export const useListCompanies = (listId: string, cursor: string | undefined, enabled: boolean) =>
  useApi().useQuery(
    'get',
    '/v2/list/companies',
    { params: { query: { listId, limit: 20, ...(cursor ? { cursor } : {}) } } },
    { enabled },
  );

/** Every member as CSV, streamed by the API; read as a file the browser saves. */
export const useExportList = () => useApi().useMutation('get', '/v2/list/export');
