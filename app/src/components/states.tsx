/** The loading, empty and error states every screen shows, worded the same everywhere. */
import type { ReactNode } from 'react';
import { describeError } from '../api';

export function Loading({ what }: { what: string }) {
  return (
    <p className="state" role="status">
      Loading {what}…
    </p>
  );
}

export function Empty({ children }: { children: ReactNode }) {
  return <p className="state empty">{children}</p>;
}

/** An error in the API's own words, with the details it named and, for a missing scope, what to do. */
export function ErrorNotice({ error }: { error: unknown }) {
  if (!error) return null;
  const { message, status, details } = describeError(error);
  return (
    <div className="error" role="alert">
      <p>
        {status ? <strong>{status}: </strong> : null}
        {message}
      </p>
      {details.length ? (
        <ul>
          {details.map((d) => (
            <li key={d}>{d}</li>
          ))}
        </ul>
      ) : null}
    </div>
  );
}

/** A query's three states, then its data. */
export function Loaded<T>({
  query,
  what,
  children,
}: {
  query: { data: T | undefined; error: unknown; isPending: boolean };
  what: string;
  children: (data: T) => ReactNode;
}) {
  if (query.error) return <ErrorNotice error={query.error} />;
  if (query.isPending || query.data === undefined) return <Loading what={what} />;
  return <>{children(query.data)}</>;
}
