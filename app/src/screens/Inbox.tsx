/** The unibox: received and sent messages, newest first, a page at a time; a message's reply, intent and read state. */
import { useState, type FormEvent } from 'react';
import { useMarkRead, useMessages, useReply, useSetIntent, type InboxQuery, type Intent } from '../hooks/api/inbox';
import { CursorPager } from '../components/CursorPager';
import { Empty, ErrorNotice, Loaded } from '../components/states';
import { useCan } from '../session';
import { INTENTS } from '../vocabulary';

type Message = NonNullable<ReturnType<typeof useMessages>['data']>['data']['items'][number];

export function Inbox() {
  const [direction, setDirection] = useState<InboxQuery['direction']>('inbound');
  const [unread, setUnread] = useState(false);
  // Cursors of the pages before this one, so Previous goes back the way Next came.
  const [cursors, setCursors] = useState<string[]>([]);
  const cursor = cursors.at(-1);
  const messages = useMessages({
    limit: 20,
    ...(direction ? { direction } : {}),
    ...(unread ? { unread } : {}),
    ...(cursor ? { cursor } : {}),
  });
  const [open, setOpen] = useState<Message | null>(null);
  return (
    <section aria-labelledby="inbox-title">
      <h1 id="inbox-title">Unibox</h1>
      <div className="row">
        <label htmlFor="inbox-direction">Show</label>
        <select
          id="inbox-direction"
          value={direction ?? ''}
          onChange={(e) => {
            setCursors([]);
            setDirection((e.target.value || undefined) as InboxQuery['direction']);
          }}
        >
          <option value="inbound">Received</option>
          <option value="outbound">Sent</option>
          <option value="">Both</option>
        </select>
        <label className="check">
          <input
            type="checkbox"
            checked={unread}
            onChange={(e) => {
              setCursors([]);
              setUnread(e.target.checked);
            }}
          />{' '}
          Unread only
        </label>
      </div>
      <Loaded query={messages} what="messages">
        {({ data }) =>
          data.items.length === 0 ? (
            <Empty>No messages here yet.</Empty>
          ) : (
            <>
              <ul className="messages">
                {data.items.map((m) => (
                  <li key={m.id} className={m.read || m.direction === 'outbound' ? '' : 'unread'}>
                    <button type="button" className="link" onClick={() => setOpen(m)}>
                      {m.direction === 'inbound' ? m.from : m.to}: {m.subject || '(no subject)'}
                    </button>{' '}
                    <small>
                      {m.kind}
                      {m.intent ? `, ${m.intent}` : ''}
                    </small>
                  </li>
                ))}
              </ul>
              <CursorPager
                label="Message pages"
                cursors={cursors}
                onCursors={setCursors}
                pagination={data.pagination}
              />
            </>
          )
        }
      </Loaded>
      {open ? <MessageView key={open.id} message={open} /> : null}
    </section>
  );
}

function MessageView({ message }: { message: Message }) {
  const canWrite = useCan('inbox:write');
  const [text, setText] = useState('');
  const reply = useReply();
  const setIntent = useSetIntent();
  const markRead = useMarkRead();
  const send = (event: FormEvent) => {
    event.preventDefault();
    reply.mutate({ body: { id: message.id, text } }, { onSuccess: () => setText('') });
  };
  return (
    <article className="message" aria-labelledby="message-subject">
      <h2 id="message-subject">{message.subject || '(no subject)'}</h2>
      <p>
        From {message.from} to {message.to}
      </p>
      <pre>{message.textBody}</pre>
      {canWrite ? (
        <>
          <div className="row">
            {message.direction === 'inbound' ? (
              <button
                type="button"
                onClick={() => markRead.mutate({ body: { ids: [message.id], read: !message.read } })}
              >
                {message.read ? 'Mark unread' : 'Mark read'}
              </button>
            ) : null}
            <label htmlFor="message-intent">Intent</label>
            <select
              id="message-intent"
              value={message.intent ?? ''}
              onChange={(e) => setIntent.mutate({ body: { id: message.id, intent: e.target.value as Intent } })}
            >
              <option value="" disabled>
                Not classified
              </option>
              {Object.entries(INTENTS).map(([value, label]) => (
                <option key={value} value={value}>
                  {label}
                </option>
              ))}
            </select>
          </div>
          <form onSubmit={send}>
            <label htmlFor="reply-text">Reply in thread</label>
            <textarea
              id="reply-text"
              required
              maxLength={50000}
              rows={4}
              value={text}
              onChange={(e) => setText(e.target.value)}
            />
            <button type="submit" disabled={reply.isPending}>
              Send reply
            </button>
            {reply.isSuccess ? <p role="status">Reply sent.</p> : null}
          </form>
          <ErrorNotice error={reply.error ?? setIntent.error ?? markRead.error} />
        </>
      ) : null}
    </article>
  );
}
