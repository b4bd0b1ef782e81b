/**
 * Signing in: the API key lives in sessionStorage only (gone when the tab closes), and the key's scopes, which
 * GET /v2/authenticate answers, decide what the console shows and enables. `holds` is the server's own rule (a
 * write scope reads the same area, `all` holds everything), so the console never offers what the API would refuse.
 */
import { createContext, useContext } from 'react';
import { holds } from '../../server/platform/scopes';

const STORAGE_KEY = 'outreach-console.apiKey';

export const storedKey = (): string | null => sessionStorage.getItem(STORAGE_KEY);
export const storeKey = (key: string | null): void =>
  key === null ? sessionStorage.removeItem(STORAGE_KEY) : sessionStorage.setItem(STORAGE_KEY, key);

export interface Session {
  workspaceName: string;
  scopes: string[];
  signOut(): void;
}

export const SessionContext = createContext<Session | null>(null);

export function useSession(): Session {
  const session = useContext(SessionContext);
  if (!session) throw new Error('useSession outside a signed-in session');
  return session;
}

/** Whether the signed-in key holds a scope: the question asked for any number of scopes (a screen's sections). */
export function useHolds(): (scope: string) => boolean {
  const { scopes } = useSession();
  return (scope) => holds(scopes, scope);
}

/** Whether the signed-in key may call operations that need `scope` (or one of several scopes). */
export function useCan(scope: string | readonly string[]): boolean {
  return [scope].flat().some(useHolds());
}
