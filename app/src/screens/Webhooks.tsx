/**
 * Webhooks: the workspace's subscriptions with their status; creating one (its signing secret is answered once,
 * so it is shown once); a signed test event sent now with what the URL answered; resuming a disabled one;
 * deleting one; and each one's delivery log (every attempt with its status code, the retries and when the next
 * one is due), where a delivery can be sent again.
 */
import { useState, type FormEvent } from 'react';
import {
  useCreateWebhook,
  useDeleteWebhook,
  useDeliveries,
  useResumeWebhook,
  useRetryDelivery,
  useTestWebhook,
  useWebhooks,
  type EventType,
  type Webhook,
} from '../hooks/api/webhooks';
import { Choices } from '../components/Choices';
import { ConfirmDialog } from '../components/Confirm';
import { DataTable } from '../components/DataTable';
import { Empty, ErrorNotice, Loaded } from '../components/states';
import { SkipPager } from '../components/SkipPager';
import { useCan } from '../session';
import { EVENT_TYPES } from '../vocabulary';

export function Webhooks() {
  const webhooks = useWebhooks();
  const canWrite = useCan('webhooks:write');
  const [open, setOpen] = useState<string>();
  return (
    <section aria-labelledby="webhooks-title">
      <h2 id="webhooks-title">Webhooks</h2>
      <p className="hint">
        Each event is sent signed (Standard Webhooks) to the URLs that subscribed to its type, and retried with backoff
        until the URL answers 2xx.
      </p>
      {canWrite ? <CreateWebhook /> : null}
      <Loaded query={webhooks} what="webhooks">
        {({ data }) =>
          data.items.length === 0 ? (
            <Empty>No webhooks yet.</Empty>
          ) : (
            <ul className="cards">
              {data.items.map((w) => (
                <WebhookCard
                  key={w.id}
                  webhook={w}
                  canWrite={canWrite}
                  logOpen={open === w.id}
                  onLog={() => setOpen(open === w.id ? undefined : w.id)}
                />
              ))}
            </ul>
          )
        }
      </Loaded>
    </section>
  );
}

function CreateWebhook() {
  const [url, setUrl] = useState('');
  const [description, setDescription] = useState('');
  const [eventTypes, setEventTypes] = useState<EventType[]>(['email.replied']);
  const create = useCreateWebhook();
  const submit = (event: FormEvent) => {
    event.preventDefault();
    create.mutate(
      { body: { url, eventTypes, ...(description ? { description } : {}) } },
      {
        onSuccess: () => {
          setUrl('');
          setDescription('');
        },
      },
    );
  };
  const secret = create.data?.data.secret;
  return (
    <form onSubmit={submit} aria-labelledby="new-webhook-title">
      <h3 id="new-webhook-title">New webhook</h3>
      <div className="grid">
        <div className="field">
          <label htmlFor="webhook-url">URL</label>
          <input
            id="webhook-url"
            type="url"
            required
            maxLength={2000}
            placeholder="https://hooks.example.com/outreach"
            value={url}
            onChange={(e) => setUrl(e.target.value)}
          />
        </div>
        <div className="field">
          <label htmlFor="webhook-description">Description (optional)</label>
          <input
            id="webhook-description"
            maxLength={200}
            value={description}
            onChange={(e) => setDescription(e.target.value)}
          />
        </div>
      </div>
      <Choices legend="Events" words={EVENT_TYPES} chosen={eventTypes} onChange={setEventTypes} />
      <button type="submit" disabled={create.isPending || eventTypes.length === 0}>
        Create webhook
      </button>
      <ErrorNotice error={create.error} />
      {secret ? (
        <div className="secret" role="status">
          <p>
            Webhook created. Its signing secret is shown this once: keep it where your receiver verifies signatures.
          </p>
          <code data-secret>{secret}</code>
        </div>
      ) : null}
    </form>
  );
}

function WebhookCard({
  webhook: w,
  canWrite,
  logOpen,
  onLog,
}: {
  webhook: Webhook;
  canWrite: boolean;
  logOpen: boolean;
  onLog: () => void;
}) {
  const test = useTestWebhook();
  const resume = useResumeWebhook();
  const remove = useDeleteWebhook();
  const [confirming, setConfirming] = useState(false);
  const tested = test.data?.data;
  return (
    <li className="card" aria-labelledby={`webhook-${w.id}`}>
      <h3 id={`webhook-${w.id}`} className="url">
        {w.url}
      </h3>
      <p>
        <span className={`badge ${w.status}`}>{w.status}</span>
        {w.disabledReason ? ` ${w.disabledReason}` : ''}
        {w.description ? ` · ${w.description}` : ''}
      </p>
      <p className="hint">Events: {w.eventTypes.join(', ')}</p>
      <div className="row">
        <button type="button" aria-expanded={logOpen} onClick={onLog}>
          {logOpen ? 'Hide delivery log' : 'Delivery log'}
        </button>
        {canWrite ? (
          <>
            <button type="button" disabled={test.isPending} onClick={() => test.mutate({ body: { id: w.id } })}>
              Send test
            </button>
            {w.status === 'disabled' ? (
              <button type="button" disabled={resume.isPending} onClick={() => resume.mutate({ body: { id: w.id } })}>
                Resume
              </button>
            ) : null}
            <button type="button" onClick={() => setConfirming(true)}>
              Delete
            </button>
            <ConfirmDialog
              open={confirming}
              confirmLabel="Delete it and its log"
              onConfirm={() => remove.mutate({ body: { id: w.id } })}
              onClose={() => setConfirming(false)}
            >
              Delete the webhook to {w.url}? No more events are sent to it, and its delivery log goes with it.
            </ConfirmDialog>
          </>
        ) : null}
      </div>
      {tested ? (
        <p role="status" data-test-result={tested.delivered ? 'delivered' : 'failed'}>
          Test {tested.delivered ? 'delivered' : 'not delivered'}:{' '}
          {tested.statusCode === null ? (tested.error ?? 'no answer') : `HTTP ${tested.statusCode}`} in{' '}
          {tested.durationMs} ms.
        </p>
      ) : null}
      <ErrorNotice error={test.error ?? resume.error ?? remove.error} />
      {logOpen ? <DeliveryLog webhookId={w.id} canWrite={canWrite} /> : null}
    </li>
  );
}

const PAGE = 20;

function DeliveryLog({ webhookId, canWrite }: { webhookId: string; canWrite: boolean }) {
  const [skip, setSkip] = useState(0);
  const log = useDeliveries(webhookId, skip);
  const retry = useRetryDelivery();
  return (
    <section aria-label="Delivery log">
      <Loaded query={log} what="the delivery log">
        {({ data }) =>
          data.items.length === 0 ? (
            <Empty>Nothing delivered yet: events appear here as they are sent (test events are not logged).</Empty>
          ) : (
            <>
              <DataTable
                caption="Delivery attempts, newest first"
                columns={[
                  { header: 'When', cell: (a) => new Date(a.attemptedAt).toLocaleString() },
                  { header: 'Event', cell: (a) => a.eventType },
                  { header: 'Attempt', cell: (a) => a.attempt },
                  {
                    header: 'Answer',
                    cell: (a) => (
                      <span data-status-code={a.statusCode ?? ''}>
                        {a.statusCode === null ? (a.error ?? 'no answer') : `HTTP ${a.statusCode}`}, {a.durationMs} ms
                      </span>
                    ),
                  },
                  {
                    header: 'Delivery',
                    cell: (a) =>
                      `${a.deliveryStatus}${a.nextAttemptAt ? `, next try ${new Date(a.nextAttemptAt).toLocaleString()}` : ''}`,
                  },
                  ...(canWrite
                    ? [
                        {
                          header: 'Again',
                          cell: (a: (typeof data.items)[number]) => (
                            <button
                              type="button"
                              disabled={retry.isPending}
                              onClick={() => retry.mutate({ body: { deliveryId: a.deliveryId } })}
                            >
                              Retry
                            </button>
                          ),
                        },
                      ]
                    : []),
                ]}
                rows={data.items}
                rowKey={(a) => `${a.deliveryId}-${a.attempt}`}
              />
              <SkipPager
                label="Delivery log pages"
                skip={skip}
                limit={PAGE}
                shown={data.items.length}
                pagination={data.pagination}
                onSkip={setSkip}
              />
              {retry.isSuccess ? <p role="status">Queued for the next delivery run.</p> : null}
              <ErrorNotice error={retry.error} />
            </>
          )
        }
      </Loaded>
    </section>
  );
}
