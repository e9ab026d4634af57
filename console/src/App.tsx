import { BrowserRouter, Navigate, Route, Routes } from 'react-router';
import { Layout } from './components/Layout';
import { can } from './lib/roles';
import { useSession } from './lib/session-context';
import type { Session } from './lib/session';
import { customerViews, operatorViews, type View } from './navigation';
import { SignIn } from './views/SignIn';

/** The views this session may open: a customer's by the key's scopes, an operator's by role. */
function viewsFor(session: Session): View[] {
  if (session.kind === 'operator') return operatorViews.filter((view) => !view.role || can(session.role, view.role));
  return customerViews.filter((view) => !view.scope || session.scopes === null || session.scopes.includes(view.scope));
}

export function App() {
  const { session } = useSession();
  const views = session ? viewsFor(session) : [];
  const home = views.find((view) => view.label)?.path;
  return (
    <BrowserRouter basename="/console">
      {session ? (
        <Routes>
          <Route element={<Layout views={views} />}>
            {views.map((view) => (
              <Route key={view.path} path={view.path} element={view.element} />
            ))}
            <Route path="*" element={home ? <Navigate to={`/${home}`} replace /> : <p>This key holds no scope the console can use.</p>} />
          </Route>
        </Routes>
      ) : (
        <Routes>
          <Route path="*" element={<SignIn />} />
        </Routes>
      )}
    </BrowserRouter>
  );
}
