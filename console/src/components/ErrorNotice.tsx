import { ApiFailure } from '../api/client';

/** A failed request as the API told it: its message, its code and the request id to quote to support. */
export function ErrorNotice({ error }: { error: unknown }) {
  if (!error) return null;
  const failure = error instanceof ApiFailure ? error : null;
  const message = error instanceof Error ? error.message : String(error);
  return (
    <div className="notice notice-error" role="alert">
      <p>{message}</p>
      {failure && (
        <p className="notice-meta">
          {failure.param && (
            <>
              Field: <code>{failure.param}</code> ·{' '}
            </>
          )}
          {failure.requiredRole && (
            <>
              Requires the role <code>{failure.requiredRole}</code> ·{' '}
            </>
          )}
          Code: <code>{failure.code}</code>
          {failure.requestId && (
            <>
              {' '}
              · Request id: <code>{failure.requestId}</code>
            </>
          )}
        </p>
      )}
    </div>
  );
}
