/**
 * The console: a sign-in form until a key is given, then the screens the key's scopes allow. The key is checked
 * with GET /v2/authenticate; a refused key returns to the form with the API's words.
 */
import { useEffect, useMemo, useState, type ReactNode } from 'react';
import { QueryClientProvider, useQueryClient } from '@tanstack/react-query';
import { ApiContext, createApi, createQueryClient, describeError } from './api';
import { SessionContext, storeKey, storedKey, useCan } from './session';
import { href, useRoute } from './route';
import { useAuthenticate } from './hooks/api/authenticate';
import { useEventFeed, type FeedEvent } from './hooks/api/events';
import { invalidate } from './hooks/api/invalidate';
import { ErrorNotice, Loading } from './components/states';
import { QuotaBanner } from './components/QuotaBanner';
import { SignIn } from './screens/SignIn';
import { Campaigns } from './screens/Campaigns';
import { Campaign } from './screens/Campaign';
import { Contacts } from './screens/Contacts';
import { Accounts } from './screens/Accounts';
import { LiveFeed } from './screens/LiveFeed';
import { Inbox } from './screens/Inbox';
import { SETTINGS_SECTIONS, Settings } from './screens/Settings';
import { Leads } from './screens/Leads';
import { Lists } from './screens/Lists';

export function App() {
  const [apiKey, setApiKey] = useState(storedKey);
  const [refusal, setRefusal] = useState<unknown>(null);
  const session = useMemo(
    () => (apiKey ? { api: createApi(apiKey), queryClient: createQueryClient() } : null),
    [apiKey],
  );
  const signIn = (key: string) => {
    storeKey(key);
    setRefusal(null);
    setApiKey(key);
  };
  const signOut = (why: unknown = null) => {
    storeKey(null);
    setRefusal(why);
    setApiKey(null);
  };
  if (!session) return <SignIn onSignIn={signIn} refusal={refusal} />;
  return (
    <QueryClientProvider client={session.queryClient}>
      <ApiContext.Provider value={session.api}>
        <Authenticated onRefused={signOut} />
      </ApiContext.Provider>
    </QueryClientProvider>
  );
}

function Authenticated({ onRefused }: { onRefused: (why?: unknown) => void }) {
  const { data, error } = useAuthenticate();
  // A refused key goes back to the form with the API's words; another failure (the quota) is shown here.
  const refused = describeError(error).status === 401;
  useEffect(() => {
    if (refused) onRefused(error);
  }, [refused, error, onRefused]);
  if (error) return refused ? null : <ErrorNotice error={error} />;
  if (!data) return <Loading what="your workspace" />;
  return (
    <SessionContext.Provider
      value={{ workspaceName: data.data.workspace.name, scopes: data.data.key.scopes, signOut: () => onRefused() }}
    >
      <Shell workspaceName={data.data.workspace.name} signOut={() => onRefused()} />
    </SessionContext.Provider>
  );
}

const SCREENS = [
  { path: 'campaigns', label: 'Campaigns', scope: 'campaigns:read' },
  { path: 'contacts', label: 'Contacts', scope: ['contacts:read', 'jobs:read'] },
  { path: 'accounts', label: 'Accounts', scope: 'accounts:read' },
  { path: 'inbox', label: 'Unibox', scope: 'inbox:read' },
  { path: 'leads', label: 'Leads', scope: 'credits:spend' },
  { path: 'lists', label: 'Lists', scope: 'lists:read' },
  { path: 'settings', label: 'Settings', scope: SETTINGS_SECTIONS.flatMap((s) => s.scopes) },
] as const;

function Shell({ workspaceName, signOut }: { workspaceName: string; signOut: () => void }) {
  const [screen = 'campaigns', id] = useRoute();
  const queryClient = useQueryClient();
  const [live, setLive] = useState<FeedEvent[]>([]);
  const canEvents = useCan('events:read');
  return (
    <div className="shell">
      <a className="skip" href="#main">
        Skip to content
      </a>
      <header>
        <span className="brand">Outreach console</span>
        <span className="workspace">{workspaceName}</span>
        <button type="button" onClick={signOut}>
          Sign out
        </button>
      </header>
      <nav aria-label="Screens">
        <ul>
          {SCREENS.map((s) => (
            <NavItem key={s.path} screen={s} current={screen === s.path} />
          ))}
        </ul>
      </nav>
      <QuotaBanner />
      {canEvents ? (
        <EventFollower
          onEvents={(events) => {
            setLive((shown) => [...[...events].reverse(), ...shown].slice(0, 20));
            void invalidate(
              queryClient,
              '/v2/campaign/list',
              '/v2/analytics/campaign/summary',
              '/v2/account/list',
              '/v2/email/list',
            );
          }}
        />
      ) : null}
      <main id="main" tabIndex={-1}>
        <Screen screen={screen} id={id} />
      </main>
      {canEvents ? <LiveFeed events={live} /> : null}
    </div>
  );
}

function EventFollower({ onEvents }: { onEvents: (events: FeedEvent[]) => void }) {
  const failure = useEventFeed(onEvents);
  return <ErrorNotice error={failure} />;
}

function NavItem({ screen, current }: { screen: (typeof SCREENS)[number]; current: boolean }) {
  const allowed = useCan(screen.scope);
  if (!allowed) return null;
  return (
    <li>
      <a href={href(screen.path)} aria-current={current ? 'page' : undefined}>
        {screen.label}
      </a>
    </li>
  );
}

function Screen({ screen, id }: { screen: string; id: string | undefined }): ReactNode {
  switch (screen) {
    case 'campaigns':
      return id ? <Campaign campaignId={id} /> : <Campaigns />;
    case 'contacts':
      return <Contacts />;
    case 'accounts':
      return <Accounts />;
    case 'inbox':
      return <Inbox />;
    case 'leads':
      return <Leads section={id} />;
    case 'lists':
      return <Lists listId={id} />;
    case 'settings':
      return <Settings section={id} />;
    default:
      return <ErrorNotice error={new Error(`No screen named "${screen}".`)} />;
  }
}
