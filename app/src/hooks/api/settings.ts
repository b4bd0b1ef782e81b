/** Settings: the workspace's keys with their scopes, the audit log, usage and the credit ledger. */
import { useApi } from '../../api';

export const useKeys = () => useApi().useQuery('get', '/v2/api-key/list', { params: { query: { limit: 100 } } });

export const useAuditLog = (cursor: string | undefined) =>
  useApi().useQuery('get', '/v2/audit/list', { params: { query: { limit: 20, ...(cursor ? { cursor } : {}) } } });

export const useUsage = () => useApi().useQuery('get', '/v2/usage');

export const useCreditLedger = () =>
  useApi().useQuery('get', '/v2/credits/ledger', { params: { query: { limit: 20 } } });
