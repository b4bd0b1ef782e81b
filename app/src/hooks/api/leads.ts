/**
 * The lead database: people and company searches, enrichment by known details, and what each reveal costs
 * (`GET /v2/usage` answers the deployment's prices with the balance). Searches and enrichment are POSTs that may
 * spend credits, so they are mutations the person starts; each answer says what it charged and what is left.
 */
import { useQueryClient } from '@tanstack/react-query';
import type { components, paths } from '../../../../client';
import { useApi } from '../../api';
import { invalidate } from './invalidate';

export type PeopleSearch = paths['/v2/mixed_people/search']['post']['requestBody']['content']['application/json'];
export type CompanySearch = paths['/v2/company/find']['post']['requestBody']['content']['application/json'];
export type EnrichRequest = paths['/v2/enrich/by-details']['post']['requestBody']['content']['application/json'];
export type LeadPerson = components['schemas']['LeadPerson'];
export type LeadCompany = components['schemas']['LeadCompany'];
export type PeopleDataOption = components['schemas']['PeopleDataOption'];
export type Prices = components['schemas']['CreditPrices'];

/** A charge changes the balance, the usage and the ledger. */
function useCreditsChanged() {
  const queryClient = useQueryClient();
  return () => invalidate(queryClient, '/v2/usage', '/v2/credits/ledger');
}

export const useSearchPeople = () =>
  useApi().useMutation('post', '/v2/mixed_people/search', { onSuccess: useCreditsChanged() });

export const useFindCompanies = () =>
  useApi().useMutation('post', '/v2/company/find', { onSuccess: useCreditsChanged() });

export const useEnrich = () =>
  useApi().useMutation('post', '/v2/enrich/by-details', { onSuccess: useCreditsChanged() });

/**
 * What each reveal costs and the balance, from GET /v2/usage; only asked when the key may read usage (without
 * it the console cannot say a cost beforehand, and each answer still says what it charged).
 */
export const useCredits = (enabled: boolean) =>
  useApi().useQuery('get', '/v2/usage', undefined, { enabled, select: (usage) => usage.data.credits });
