import { useState } from 'preact/hooks';
import { api, errorText } from '../api';
import { ErrorNote } from '../components';
import type { Session } from '../types';

/** An API key (created with `conveyor` or the identities API) is exchanged for a console session cookie. */
export function SignInPage({ onSignedIn }: { onSignedIn: (s: Session) => void }) {
  const [key, setKey] = useState('');
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      onSignedIn(await api<Session>('/session', { method: 'POST', body: { api_key: key } }));
    } catch (err) {
      setError(errorText(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <main id="main" class="sign-in">
      <h1>Sign in to Conveyor</h1>
      <form onSubmit={submit}>
        <label for="api-key">API key</label>
        <input
          id="api-key"
          name="api_key"
          type="password"
          autoComplete="off"
          required
          value={key}
          onInput={(e) => setKey(e.currentTarget.value)}
        />
        <p class="hint">
          The key stays on the server; this browser gets a session cookie that ends when you sign out.
        </p>
        <button type="submit" disabled={busy}>
          Sign in
        </button>
        <ErrorNote error={error} />
      </form>
    </main>
  );
}
