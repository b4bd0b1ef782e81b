/** Settings: the workspace's keys and their scopes, the audit log, usage (quota, credits, sends) and the credit ledger. */
import { useState } from 'react';
import { useAuditLog, useCreditLedger, useKeys, useUsage } from '../hooks/api/settings';
import { DataTable } from '../components/DataTable';
import { Empty, Loaded } from '../components/states';
import { useCan } from '../session';

export function Settings() {
  const canKeys = useCan('keys:manage');
  const canAudit = useCan('audit:read');
  const canUsage = useCan('usage:read');
  const canLedger = useCan('credits:read');
  return (
    <section aria-labelledby="settings-title">
      <h1 id="settings-title">Settings</h1>
      {canUsage ? <Usage /> : null}
      {canLedger ? <Ledger /> : null}
      {canKeys ? <Keys /> : null}
      {canAudit ? <AuditLog /> : null}
    </section>
  );
}

function Usage() {
  const usage = useUsage();
  return (
    <section aria-labelledby="usage-title">
      <h2 id="usage-title">Usage</h2>
      <Loaded query={usage} what="usage">
        {({ data }) => (
          <dl className="figures">
            <div>
              <dt>Plan</dt>
              <dd>{data.plan.name}</dd>
            </div>
            <div>
              <dt>Credits</dt>
              <dd>{data.credits.balance}</dd>
            </div>
            <div>
              <dt>Sent today</dt>
              <dd>{data.sends.sent}</dd>
            </div>
            {data.quota.map((q) => (
              <div key={q.window}>
                <dt>Requests this {q.window}</dt>
                <dd>
                  {q.used} / {q.limit}
                </dd>
              </div>
            ))}
          </dl>
        )}
      </Loaded>
    </section>
  );
}

function Ledger() {
  const ledger = useCreditLedger();
  return (
    <section aria-labelledby="ledger-title">
      <h2 id="ledger-title">Credit ledger</h2>
      <Loaded query={ledger} what="the ledger">
        {({ data }) =>
          data.items.length === 0 ? (
            <Empty>No credit movements yet.</Empty>
          ) : (
            <DataTable
              caption="Credit ledger"
              columns={[
                { header: 'When', cell: (e) => new Date(e.at).toLocaleString() },
                { header: 'Amount', cell: (e) => e.amount },
                { header: 'Balance', cell: (e) => e.balanceAfter },
                { header: 'Reason', cell: (e) => e.reason },
              ]}
              rows={data.items}
              rowKey={(e) => e.id}
            />
          )
        }
      </Loaded>
    </section>
  );
}

function Keys() {
  const keys = useKeys();
  return (
    <section aria-labelledby="keys-title">
      <h2 id="keys-title">API keys</h2>
      <Loaded query={keys} what="keys">
        {({ data }) => (
          <DataTable
            caption="API keys"
            columns={[
              { header: 'Name', cell: (k) => k.name ?? '(unnamed)' },
              { header: 'Prefix', cell: (k) => k.prefix },
              { header: 'Scopes', cell: (k) => k.scopes.join(', ') },
              {
                header: 'Last used',
                cell: (k) =>
                  k.revokedAt ? 'revoked' : k.lastUsedAt ? new Date(k.lastUsedAt).toLocaleString() : 'never',
              },
            ]}
            rows={data.items}
            rowKey={(k) => k.id}
          />
        )}
      </Loaded>
    </section>
  );
}

function AuditLog() {
  const [cursors, setCursors] = useState<string[]>([]);
  const log = useAuditLog(cursors.at(-1));
  return (
    <section aria-labelledby="audit-title">
      <h2 id="audit-title">Audit log</h2>
      <Loaded query={log} what="the audit log">
        {({ data }) =>
          data.items.length === 0 ? (
            <Empty>Nothing recorded yet.</Empty>
          ) : (
            <>
              <DataTable
                caption="Audit log"
                columns={[
                  { header: 'When', cell: (e) => new Date(e.at).toLocaleString() },
                  { header: 'Operation', cell: (e) => e.operation },
                  { header: 'By', cell: (e) => e.keyName ?? e.actor },
                  { header: 'Outcome', cell: (e) => e.outcome },
                ]}
                rows={data.items}
                rowKey={(e) => e.id}
              />
              <nav className="pager" aria-label="Audit log pages">
                <button type="button" disabled={!cursors.length} onClick={() => setCursors(cursors.slice(0, -1))}>
                  Newer
                </button>
                <button
                  type="button"
                  disabled={!data.pagination.hasMore || !data.pagination.nextCursor}
                  onClick={() => setCursors([...cursors, data.pagination.nextCursor!])}
                >
                  Older
                </button>
              </nav>
            </>
          )
        }
      </Loaded>
    </section>
  );
}
