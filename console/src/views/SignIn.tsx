import { useState, type FormEvent } from 'react';
import { api, unwrap } from '../api/client';
import { ErrorNotice } from '../components/ErrorNotice';
import { isCustomerKey, storeSession, type Session } from '../lib/session';
import { useSession } from '../lib/session-context';

/** Checks a customer key and reads its scopes. */
async function customerSession(token: string): Promise<Session> {
  const key = (await unwrap(api.GET('/api-keys/current'))).data;
  return { kind: 'customer', token, label: key.name, scopes: key.permissions };
}

/** Checks an operator's token (the admin token or an `op_...` token) and reads its role. */
async function operatorSession(token: string): Promise<Session> {
  const operator = (await unwrap(api.GET('/admin/operators/current'))).data;
  return { kind: 'operator', token, label: operator.name, role: operator.role };
}

export function SignIn() {
  const { signIn } = useSession();
  const [token, setToken] = useState('');
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);

  async function submit(event: FormEvent) {
    event.preventDefault();
    const trimmed = token.trim();
    setBusy(true);
    setError(null);
    // The checks read the token from the stored session: store it first, forget it if refused.
    const tentative: Session = isCustomerKey(trimmed)
      ? { kind: 'customer', token: trimmed, label: '', scopes: null }
      : { kind: 'operator', token: trimmed, label: '', role: 'viewer' };
    storeSession(tentative);
    try {
      signIn(await (isCustomerKey(trimmed) ? customerSession(trimmed) : operatorSession(trimmed)));
    } catch (failure) {
      storeSession(null);
      setError(failure);
    } finally {
      setBusy(false);
    }
  }

  return (
    <main id="main" className="sign-in">
      <h1>Dispatch console</h1>
      <form onSubmit={(event) => void submit(event)}>
        <label htmlFor="token">API key or operator token</label>
        <input
          id="token"
          name="token"
          type="password"
          autoComplete="off"
          required
          value={token}
          onChange={(event) => setToken(event.target.value)}
          aria-describedby="token-help"
        />
        <p id="token-help" className="help">
          A customer signs in with an API key (<code>ds_live_…</code> or <code>ds_test_…</code>); an operator with the admin token or an operator token (
          <code>op_…</code>). It is kept in this tab only, and forgotten on sign-out.
        </p>
        <button type="submit" disabled={busy}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
      <ErrorNotice error={error} />
    </main>
  );
}
