import { createContext, useCallback, useContext, useMemo, useState, type ReactNode } from 'react';
import { useQueryClient } from '@tanstack/react-query';
import { can } from './roles';
import { currentSession, storeSession, type OperatorRole, type Scope, type Session } from './session';

interface SessionState {
  session: Session | null;
  signIn: (session: Session) => void;
  signOut: () => void;
}

const SessionContext = createContext<SessionState | null>(null);

export function SessionProvider({ children }: { children: ReactNode }) {
  const queryClient = useQueryClient();
  const [session, setSession] = useState<Session | null>(currentSession);
  const signIn = useCallback((next: Session) => {
    storeSession(next);
    setSession(next);
  }, []);
  const signOut = useCallback(() => {
    storeSession(null);
    // What the last session read must not be shown to the next one.
    queryClient.clear();
    setSession(null);
  }, [queryClient]);
  const value = useMemo(() => ({ session, signIn, signOut }), [session, signIn, signOut]);
  return <SessionContext.Provider value={value}>{children}</SessionContext.Provider>;
}

export function useSession(): SessionState {
  const state = useContext(SessionContext);
  if (!state) throw new Error('useSession outside SessionProvider');
  return state;
}

/** Whether the signed-in key holds the scope: controls it would refuse are not shown. */
export function useCan(): (scope: Scope) => boolean {
  const { session } = useSession();
  return useCallback((scope: Scope) => session?.kind === 'customer' && (session.scopes === null || session.scopes.includes(scope)), [session]);
}

/** Whether the signed-in operator's role reaches an operation's `x-required-role`: buttons it would refuse are not shown. */
export function useRole(): (required: OperatorRole) => boolean {
  const { session } = useSession();
  return useCallback((required: OperatorRole) => session?.kind === 'operator' && can(session.role, required), [session]);
}
