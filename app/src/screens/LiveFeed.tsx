/** What happened since the console opened: the event feed's new events, newest first. */
import type { FeedEvent } from '../hooks/api/events';

const describe = (event: FeedEvent) => {
  const to = typeof event.data.email === 'string' ? ` ${event.data.email}` : '';
  return `${event.type}${to}`;
};

export function LiveFeed({ events }: { events: FeedEvent[] }) {
  return (
    <aside className="live" aria-labelledby="live-title">
      <h2 id="live-title">Live</h2>
      {events.length ? (
        <ol aria-live="polite">
          {events.map((e) => (
            <li key={e.id}>
              <time dateTime={e.occurredAt}>{new Date(e.occurredAt).toLocaleTimeString()}</time> {describe(e)}
            </li>
          ))}
        </ol>
      ) : (
        <p className="state empty">New sends and replies appear here as they happen.</p>
      )}
    </aside>
  );
}
