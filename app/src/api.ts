/**
 * The console's one way to the API: the typed client of client/ (openapi-fetch over the generated `paths`) with
 * the signed-in key, wrapped by openapi-react-query so every screen reads and writes through TanStack Query with
 * the spec's types. The client's own retries are off: a 429 is shown as the API worded it, and queries wait out
 * its Retry-After before they ask again (`cooldown`).
 */
import { createContext, useContext } from 'react';
import { QueryClient } from '@tanstack/react-query';
import createQueryHooks from 'openapi-react-query';
import { createClient, isErrorV2, parseRetryAfter, type ErrorBody } from '../../client';

/** When the quota lets the console ask again (ms since the epoch), as the last 429's Retry-After said. */
export const cooldown = {
  until: 0,
  listeners: new Set<() => void>(),
  set(until: number) {
    this.until = until;
    for (const listener of this.listeners) listener();
  },
};

export function createApi(apiKey: string) {
  const client = createClient({ apiKey, baseUrl: window.location.origin, retry: false });
  client.use({
    onResponse({ response }) {
      if (response.status !== 429) return;
      const now = Date.now();
      cooldown.set(now + (parseRetryAfter(response.headers.get('Retry-After'), now) ?? 1000));
    },
  });
  return createQueryHooks(client);
}

export type Api = ReturnType<typeof createApi>;

export const ApiContext = createContext<Api | null>(null);

export function useApi(): Api {
  const api = useContext(ApiContext);
  if (!api) throw new Error('useApi outside a signed-in session');
  return api;
}

/** What an error thrown by a query or mutation says: the API's own words and the details it named. */
export function describeError(error: unknown): { message: string; status?: number; details: string[] } {
  if (error && typeof error === 'object' && 'error' in error) {
    const body = error as ErrorBody;
    if (isErrorV2(body))
      return {
        message: body.error,
        status: body.statusCode,
        details: body.details.map((d) => `${d.field}: ${d.message}`),
      };
    return { message: body.error, details: [] };
  }
  return { message: error instanceof Error ? error.message : String(error), details: [] };
}

const statusOf = (error: unknown) => describeError(error).status;

export function createQueryClient(): QueryClient {
  return new QueryClient({
    defaultOptions: {
      queries: {
        staleTime: 10_000,
        // Refused keys and missing scopes stay refused; a 429 is asked again once its Retry-After has passed.
        retry: (count, error) => {
          const status = statusOf(error);
          if (status === 429) return count < 3;
          return status === undefined && count < 2;
        },
        retryDelay: (count) => Math.max(cooldown.until - Date.now(), 500 * 2 ** count),
      },
    },
  });
}
