/**
 * Email accounts: each one's status, sends today and warm-up; connecting one through Google's, Microsoft's or the
 * deployment's own identity provider's consent page (the real flow: the page opens in a new tab, the session is
 * polled until it ends) or by password.
 */
import { useMemo, useState, type FormEvent } from 'react';
import {
  useAccounts,
  useCheckVitals,
  useConnectAccount,
  useOAuthSession,
  useStartOAuth,
  useWarmupSummary,
  type OAuthProvider,
} from '../hooks/api/accounts';
import { Chart, dailySeries } from '../components/Chart';
import { DataTable } from '../components/DataTable';
import { Empty, ErrorNotice, Loaded } from '../components/states';
import { useCan } from '../session';
import { valuesOf } from '../vocabulary';

export function Accounts() {
  const accounts = useAccounts();
  const canWrite = useCan('accounts:write');
  const canAnalytics = useCan('analytics:read');
  const [open, setOpen] = useState<string>();
  return (
    <section aria-labelledby="accounts-title">
      <h1 id="accounts-title">Email accounts</h1>
      {canWrite ? <ConnectByOAuth /> : null}
      {canWrite ? <ConnectByPassword /> : null}
      <Loaded query={accounts} what="accounts">
        {({ data }) =>
          data.items.length === 0 ? (
            <Empty>No email accounts connected yet.</Empty>
          ) : (
            <DataTable
              caption="Email accounts"
              columns={[
                {
                  header: 'Email',
                  cell: (a) => (
                    <button type="button" className="link" onClick={() => setOpen(a.id)}>
                      {a.email}
                    </button>
                  ),
                },
                { header: 'Status', cell: (a) => <span className={`badge ${a.status}`}>{a.status}</span> },
                { header: 'Sent today', cell: (a) => `${a.sentToday} / ${a.dailyLimit}` },
                {
                  header: 'Warm-up',
                  cell: (a) => (a.warmup.enabled ? `${a.warmup.status}, ${a.warmupSentToday} today` : 'off'),
                },
              ]}
              rows={data.items}
              rowKey={(a) => a.id}
            />
          )
        }
      </Loaded>
      {open ? <AccountHealth key={open} accountId={open} warmup={canAnalytics} /> : null}
    </section>
  );
}

/** One account's health: its warm-up placement over 7 days and, on demand, its DNS vitals and reputation. */
function AccountHealth({ accountId, warmup }: { accountId: string; warmup: boolean }) {
  const vitals = useCheckVitals();
  const checked = vitals.data?.data.items[0];
  return (
    <section aria-labelledby="health-title">
      <h2 id="health-title">Health</h2>
      {warmup ? <WarmupHealth accountId={accountId} /> : null}
      <button
        type="button"
        disabled={vitals.isPending}
        onClick={() => vitals.mutate({ body: { accountIds: [accountId] } })}
      >
        {vitals.isPending ? 'Checking…' : 'Check DNS vitals'}
      </button>
      <ErrorNotice error={vitals.error} />
      {checked ? (
        <dl className="figures">
          {(['mx', 'spf', 'dkim', 'dmarc'] as const).map((record) => (
            <div key={record}>
              <dt>{record.toUpperCase()}</dt>
              <dd>{checked[record].pass ? 'pass' : 'fail'}</dd>
            </div>
          ))}
          <div>
            <dt>Reputation</dt>
            <dd>{checked.score}</dd>
          </div>
        </dl>
      ) : null}
    </section>
  );
}

function WarmupHealth({ accountId }: { accountId: string }) {
  const summary = useWarmupSummary(accountId);
  const graph = summary.data?.data.graph;
  const daily = useMemo(() => graph && dailySeries(graph, { Inbox: 'landedInbox', Spam: 'landedSpam' }), [graph]);
  return (
    <Loaded query={summary} what="the warm-up">
      {({ data }) => (
        <>
          <p>
            Warm-up health: {data.health.score === null ? 'not measured yet' : `${data.health.score}%`} (
            {data.health.label}, {data.health.landedInbox} in the inbox and {data.health.landedSpam} in spam over{' '}
            {data.health.days} days)
          </p>
          {daily ? <Chart title="Warm-up placement" {...daily} /> : null}
        </>
      )}
    </Loaded>
  );
}

const EMPTY = { email: '', smtpHost: '', smtpPort: '587', imapHost: '', imapPort: '993', password: '' };

function ConnectByPassword() {
  const [form, setForm] = useState(EMPTY);
  const connect = useConnectAccount();
  const field = (name: keyof typeof EMPTY, label: string, type = 'text', required = true) => (
    <div className="field">
      <label htmlFor={`connect-${name}`}>{label}</label>
      <input
        id={`connect-${name}`}
        type={type}
        required={required}
        maxLength={name === 'email' ? 320 : 253}
        autoComplete="off"
        {...(type === 'number' ? { min: 1, max: 65535 } : {})}
        value={form[name]}
        onChange={(e) => setForm({ ...form, [name]: e.target.value })}
      />
    </div>
  );
  const submit = (event: FormEvent) => {
    event.preventDefault();
    connect.mutate(
      {
        body: {
          email: form.email,
          provider: 'smtp',
          smtp: { host: form.smtpHost, port: Number(form.smtpPort), password: form.password },
          ...(form.imapHost
            ? { imap: { host: form.imapHost, port: Number(form.imapPort), password: form.password } }
            : {}),
        },
      },
      { onSuccess: () => setForm(EMPTY) },
    );
  };
  return (
    <form onSubmit={submit} aria-labelledby="connect-title">
      <h2 id="connect-title">Connect by password</h2>
      <div className="grid">
        {field('email', 'Email address', 'email')}
        {field('password', 'Password', 'password')}
        {field('smtpHost', 'SMTP host')}
        {field('smtpPort', 'SMTP port', 'number')}
        {field('imapHost', 'IMAP host (for replies; optional)', 'text', false)}
        {field('imapPort', 'IMAP port', 'number', false)}
      </div>
      <button type="submit" disabled={connect.isPending}>
        {connect.isPending ? 'Connecting…' : 'Connect'}
      </button>
      {connect.isSuccess ? <p role="status">Account connected.</p> : null}
      <ErrorNotice error={connect.error} />
    </form>
  );
}

/** The providers the API knows; one the deployment has not configured answers a 409 naming its setting. */
const PROVIDERS: Record<OAuthProvider, string> = {
  google: 'Connect with Google',
  microsoft: 'Connect with Microsoft',
  generic: "Connect with your organisation's provider",
};

function ConnectByOAuth() {
  const [loginHint, setLoginHint] = useState('');
  const [sessionId, setSessionId] = useState<string>();
  const start = useStartOAuth();
  const begin = (provider: OAuthProvider) =>
    start.mutate(
      { body: { provider, ...(loginHint ? { loginHint } : {}) } },
      {
        onSuccess: ({ data }) => {
          setSessionId(data.sessionId);
          window.open(data.authorizationUrl, '_blank', 'noopener');
        },
      },
    );
  return (
    <section aria-labelledby="oauth-title">
      <h2 id="oauth-title">Connect a mailbox by OAuth</h2>
      <div className="row">
        <label htmlFor="oauth-hint">Mailbox (optional)</label>
        <input
          id="oauth-hint"
          type="email"
          maxLength={320}
          value={loginHint}
          onChange={(e) => setLoginHint(e.target.value)}
        />
        {valuesOf(PROVIDERS).map((provider) => (
          <button key={provider} type="button" disabled={start.isPending} onClick={() => begin(provider)}>
            {PROVIDERS[provider]}
          </button>
        ))}
      </div>
      <ErrorNotice error={start.error} />
      {sessionId ? <OAuthProgress key={sessionId} sessionId={sessionId} /> : null}
    </section>
  );
}

function OAuthProgress({ sessionId }: { sessionId: string }) {
  const session = useOAuthSession(sessionId);
  return (
    <Loaded query={session} what="the connect flow">
      {({ data }) => (
        <p role="status">
          {data.status === 'pending'
            ? 'Waiting for you to consent in the other tab…'
            : data.status === 'connected'
              ? `Connected ${data.account?.email ?? ''}.`
              : `Not connected: ${data.reason?.message ?? 'the flow failed'}.`}
        </p>
      )}
    </Loaded>
  );
}
