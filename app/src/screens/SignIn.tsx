/** Sign-in with an API key; the key is kept in this tab's sessionStorage only. */
import { useState, type FormEvent } from 'react';
import { ErrorNotice } from '../components/states';

export function SignIn({ onSignIn, refusal }: { onSignIn: (key: string) => void; refusal: unknown }) {
  const [key, setKey] = useState('');
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (key.trim()) onSignIn(key.trim());
  };
  return (
    <main className="sign-in" id="main">
      <h1>Outreach console</h1>
      <form onSubmit={submit}>
        <label htmlFor="api-key">API key</label>
        <input
          id="api-key"
          name="api-key"
          type="password"
          autoComplete="off"
          required
          maxLength={200}
          value={key}
          onChange={(e) => setKey(e.target.value)}
        />
        <p className="hint">Kept in this tab only (sessionStorage); closing the tab signs you out.</p>
        <button type="submit">Sign in</button>
      </form>
      <ErrorNotice error={refusal} />
    </main>
  );
}
