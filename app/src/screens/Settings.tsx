/**
 * Settings, a section at a time (`#/settings/<section>`), each shown to keys whose scopes read it: the workspace's
 * usage (quota, credits, sends), the credit ledger, the keys and their scopes and the audit log; webhooks;
 * tracking domains; the sending settings.
 */
import { useState } from 'react';
import { useAuditLog, useCreditLedger, useKeys, useUsage } from '../hooks/api/settings';
import { CursorPager } from '../components/CursorPager';
import { DataTable } from '../components/DataTable';
import { Empty, Loaded } from '../components/states';
import { SubNav } from '../components/SubNav';
import { useHolds } from '../session';
import { Webhooks } from './Webhooks';
import { TrackingDomains } from './TrackingDomains';
import { SendingSettings } from './SendingSettings';

/** Each section, and the scopes of which a key needs one to see it. */
export const SETTINGS_SECTIONS = [
  { path: '', label: 'Usage and keys', scopes: ['usage:read', 'credits:read', 'keys:manage', 'audit:read'] },
  { path: 'webhooks', label: 'Webhooks', scopes: ['webhooks:read'] },
  { path: 'tracking-domains', label: 'Tracking domains', scopes: ['deliverability:read'] },
  { path: 'sending', label: 'Sending', scopes: ['sending:read'] },
] as const;

export function Settings({ section = '' }: { section?: string }) {
  const can = useHolds();
  const shown = SETTINGS_SECTIONS.filter((s) => s.scopes.some(can));
  const current = shown.find((s) => s.path === section) ?? shown[0];
  return (
    <section aria-labelledby="settings-title">
      <h1 id="settings-title">Settings</h1>
      <SubNav label="Settings sections" screen="settings" sections={shown} current={current?.path ?? ''} />
      {current?.path === 'webhooks' ? (
        <Webhooks />
      ) : current?.path === 'tracking-domains' ? (
        <TrackingDomains />
      ) : current?.path === 'sending' ? (
        <SendingSettings />
      ) : (
        <>
          {can('usage:read') ? <Usage /> : null}
          {can('credits:read') ? <Ledger /> : null}
          {can('keys:manage') ? <Keys /> : null}
          {can('audit:read') ? <AuditLog /> : null}
        </>
      )}
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
              <CursorPager
                label="Audit log pages"
                cursors={cursors}
                onCursors={setCursors}
                pagination={data.pagination}
                names={['Newer', 'Older']}
              />
            </>
          )
        }
      </Loaded>
    </section>
  );
}
