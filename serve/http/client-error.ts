// Requests Node's HTTP parser refuses before any handler sees them (headers over the size limit,
// a malformed request line or path byte, a timeout) are answered in the API's error shape too,
// from the server's `clientError` event, instead of Node's bare status line. The connection closes:
// after a parse error nothing more on it can be trusted. CONNECT and an unmet Expect, which Node
// handles apart from requests, too.
import { randomBytes } from 'node:crypto';
import { STATUS_CODES, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';

function statusOf(code: string | undefined): { status: number; error: string } {
  switch (code) {
    case 'HPE_HEADER_OVERFLOW':
      return { status: 431, error: 'request headers too large (at most 16 KiB in all)' };
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return { status: 408, error: 'the request was not received in time' };
    case 'HPE_INVALID_METHOD':
      return { status: 400, error: 'malformed request: unknown HTTP method' };
    case 'HPE_INVALID_URL':
      return { status: 400, error: 'malformed request: the request target has characters a URL may not contain' };
    default:
      return { status: 400, error: 'malformed HTTP request' };
  }
}

type Answered = (info: { status: number; code: string | undefined; requestId: string }) => void;

/** Write a JSON error answer straight onto a socket and close it. */
function answerOnSocket(socket: Duplex, status: number, error: string, code: string | undefined, onAnswer?: Answered): void {
  const requestId = `req_${randomBytes(9).toString('base64url')}`;
  const body = JSON.stringify({ error, request_id: requestId });
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
      `X-Request-Id: ${requestId}\r\nConnection: close\r\n\r\n${body}`,
  );
  onAnswer?.({ status, code, requestId });
}

export function answerClientError(err: Error & { code?: string }, socket: Duplex, onAnswer?: Answered): void {
  // A peer that is gone, or an answer whose bytes already started on this socket: nothing to add.
  // (An answer still being prepared, e.g. for a body that turned out malformed, is overtaken.)
  if (
    err.code === 'ECONNRESET' ||
    !socket.writable ||
    (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage?.headersSent
  ) {
    socket.destroy();
    return;
  }
  const { status, error } = statusOf(err.code);
  answerOnSocket(socket, status, error, err.code, onAnswer);
}

/** An Expect header other than 100-continue: 417, as Node would answer, in the API's shape. */
export function answerExpectation(res: ServerResponse, onAnswer?: Answered): void {
  const requestId = `req_${randomBytes(9).toString('base64url')}`;
  const body = JSON.stringify({
    error: `unsupported Expect header "${res.req.headers.expect}" (only 100-continue is)`,
    request_id: requestId,
  });
  res.writeHead(417, {
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': Buffer.byteLength(body),
    'X-Request-Id': requestId,
    Connection: 'close',
  });
  res.end(body);
  onAnswer?.({ status: 417, code: 'EXPECTATION', requestId });
}

/** CONNECT asks for a tunnel, which Node hands over as a bare socket; this API is no proxy. */
export function answerConnect(socket: Duplex, onAnswer?: Answered): void {
  if (!socket.writable) return void socket.destroy();
  answerOnSocket(socket, 405, 'CONNECT is not supported: this server is an HTTP API, not a proxy', 'CONNECT', onAnswer);
}
