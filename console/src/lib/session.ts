import type { Schemas } from '../api/client';

export type Scope = Schemas['Scope'];
export type OperatorRole = Schemas['OperatorRole'];

/** Who is signed in. Kept in sessionStorage only: it ends with the tab, and on sign-out. */
export type Session =
  | {
      kind: 'customer';
      token: string;
      /** The key's name, for the header. */
      label: string;
      /** The key's scopes; null when the server could not tell them (every control is shown, the API refuses). */
      scopes: Scope[] | null;
    }
  | {
      kind: 'operator';
      token: string;
      label: string;
      role: OperatorRole;
    };

const STORAGE_KEY = 'dispatch.console.session';

export function currentSession(): Session | null {
  const stored = sessionStorage.getItem(STORAGE_KEY);
  if (!stored) return null;
  try {
    return JSON.parse(stored) as Session;
  } catch {
    sessionStorage.removeItem(STORAGE_KEY);
    return null;
  }
}

export function storeSession(session: Session | null): void {
  if (session) sessionStorage.setItem(STORAGE_KEY, JSON.stringify(session));
  else sessionStorage.removeItem(STORAGE_KEY);
}

/** Customer keys are `ds_live_...` or `ds_test_...`; anything else is tried as an operator's token. */
export function isCustomerKey(token: string): boolean {
  return /^ds_(live|test)_/.test(token);
}
