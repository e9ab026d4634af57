/**
 * Whether an error means the database could not be reached or went away (as opposed to a query
 * it refused): the work may succeed once it is back, so callers wait, retry or answer 503.
 */
const CONNECTION_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH']);
// 57P01 admin_shutdown, 57P02 crash_shutdown, 57P03 cannot_connect_now; class 08 is connection exceptions.
const SERVER_CODES = /^(08|57P0[123])/;

export function isDatabaseUnavailable(error: unknown): boolean {
  for (let current = error, depth = 0; current instanceof Error && depth < 5; depth++) {
    const { code, message } = current as Error & { code?: unknown };
    if (typeof code === 'string' && (CONNECTION_CODES.has(code) || SERVER_CODES.test(code))) return true;
    // A FATAL error ends the session: the server refused or dropped the connection (a database
    // closed to connections, too many clients), whatever its code.
    if ((current as Error & { severity?: unknown }).severity === 'FATAL') return true;
    // knex (tarn) gives up waiting for a pooled connection; pg reports a connection that ended under
    // it (knex prefixes a failed query's message with its SQL and ' - ', so the match is not anchored).
    if (
      current.name === 'KnexTimeoutError' ||
      /Connection terminated|Client has encountered a connection error|timeout exceeded when trying to connect/.test(message)
    )
      return true;
    current = (current as Error & { cause?: unknown }).cause;
  }
  return false;
}
