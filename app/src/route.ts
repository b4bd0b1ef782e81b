/** Screens are addressed by the URL's hash (`#/campaigns/<id>`), so every screen is one static page at /app. */
import { useSyncExternalStore } from 'react';

const subscribe = (listener: () => void) => {
  window.addEventListener('hashchange', listener);
  return () => window.removeEventListener('hashchange', listener);
};

/** The hash's path segments: `#/campaigns/abc` is ['campaigns', 'abc']. */
export function useRoute(): string[] {
  const hash = useSyncExternalStore(subscribe, () => window.location.hash);
  return hash.replace(/^#\/?/, '').split('/').filter(Boolean).map(decodeURIComponent);
}

export const href = (...segments: string[]): string => `#/${segments.map(encodeURIComponent).join('/')}`;
