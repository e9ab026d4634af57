import { Suspense } from 'react';
import { NavLink, Outlet } from 'react-router';
import { useSession } from '../lib/session-context';
import type { View } from '../navigation';

/** The frame of every signed-in view: a skip link, the header with sign-out, the navigation as a list, the main region. */
export function Layout({ views }: { views: View[] }) {
  const { session, signOut } = useSession();
  const listed = views.filter((view) => view.label);
  return (
    <>
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      <header className="top">
        <span className="brand">Dispatch</span>
        <span className="who">
          {session?.kind === 'operator' ? `Operator (${session.role})` : 'Key'}: {session?.label}
        </span>
        <button type="button" onClick={signOut}>
          Sign out
        </button>
      </header>
      <div className="frame">
        <nav className="side" aria-label="Console">
          <ul>
            {listed.map((view) => (
              <li key={view.path}>
                <NavLink to={`/${view.path}`} end={view.path === 'operator'}>
                  {view.label}
                </NavLink>
              </li>
            ))}
          </ul>
        </nav>
        <main id="main" tabIndex={-1}>
          <Suspense fallback={<p aria-live="polite">Loading…</p>}>
            <Outlet />
          </Suspense>
        </main>
      </div>
    </>
  );
}
