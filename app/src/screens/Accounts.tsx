/** Email accounts: each one's status, sends today and warm-up, and connecting one by password (SMTP and IMAP). */
import { useState, type FormEvent } from 'react';
import { useAccounts, useConnectAccount } from '../hooks/api/accounts';
import { Empty, ErrorNotice, Loaded } from '../components/states';
import { useCan } from '../session';

export function Accounts() {
  const accounts = useAccounts();
  const canWrite = useCan('accounts:write');
  return (
    <section aria-labelledby="accounts-title">
      <h1 id="accounts-title">Email accounts</h1>
      {canWrite ? <ConnectByPassword /> : null}
      <Loaded query={accounts} what="accounts">
        {({ data }) =>
          data.items.length === 0 ? (
            <Empty>No email accounts connected yet.</Empty>
          ) : (
            <div className="table-wrap">
              <table>
                <caption className="visually-hidden">Email accounts</caption>
                <thead>
                  <tr>
                    <th scope="col">Email</th>
                    <th scope="col">Status</th>
                    <th scope="col">Sent today</th>
                    <th scope="col">Warm-up</th>
                  </tr>
                </thead>
                <tbody>
                  {data.items.map((a) => (
                    <tr key={a.id}>
                      <td>{a.email}</td>
                      <td>
                        <span className={`badge ${a.status}`}>{a.status}</span>
                      </td>
                      <td>
                        {a.sentToday} / {a.dailyLimit}
                      </td>
                      <td>{a.warmup.enabled ? `${a.warmup.status}, ${a.warmupSentToday} today` : 'off'}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )
        }
      </Loaded>
    </section>
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
