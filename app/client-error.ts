import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import { ApiError } from '../domain/errors.ts';
import { newId } from '../domain/ids.ts';
import { errorBody } from './envelope.ts';

/** Node's parser refusals, as the error envelope's status, code and message. */
function refusalOf(error: NodeJS.ErrnoException): ApiError {
  switch (error.code) {
    case 'HPE_HEADER_OVERFLOW':
      return new ApiError(431, 'invalid_request_error', 'header_too_large', 'The request headers are larger than 16 KiB.');
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return new ApiError(408, 'invalid_request_error', 'request_timeout', 'The request did not arrive in time.');
    default:
      return new ApiError(
        400,
        'invalid_request_error',
        'invalid_request',
        'The request is not valid HTTP/1.1 (for example a Content-Length that does not match the body).',
      );
  }
}

interface ClientSocket extends Duplex {
  /** The response in flight on this connection, if any (Node's own guard reads the same field). */
  _httpMessage?: { headersSent?: boolean };
}

/**
 * The server's 'clientError' listener: a request Node refuses before Express sees it (headers
 * over the limit, a malformed request line, a lying Content-Length) still gets the JSON error
 * envelope, when nothing of another answer has been written on the connection yet.
 */
export function answerClientError(error: NodeJS.ErrnoException, socket: ClientSocket): void {
  if (error.code === 'ECONNRESET' || !socket.writable || socket._httpMessage?.headersSent) {
    socket.destroy();
    return;
  }
  const requestId = newId('req');
  const refusal = refusalOf(error);
  const body = JSON.stringify(errorBody(requestId, refusal));
  socket.end(
    [
      `HTTP/1.1 ${refusal.status} ${STATUS_CODES[refusal.status]}`,
      'Content-Type: application/json; charset=utf-8',
      `Content-Length: ${Buffer.byteLength(body)}`,
      `X-Request-Id: ${requestId}`,
      'Connection: close',
      '',
      body,
    ].join('\r\n'),
  );
}
