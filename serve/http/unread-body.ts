// A request refused before its body was read (403 before the key check passes, 400 for a body
// over the limit, 405, 404) must still reach the client as an answer, not as a connection reset
// mid-upload. A body up to BODY_DRAIN_BYTES is read and discarded after the answer, and the
// connection stays open for the next request (Node does that by itself). A larger or unknown-length
// body gets `Connection: close`, and the close lingers, as nginx's lingering_close does: the answer
// and our FIN go out, the rest of the upload is read and thrown away for up to LINGER_MS, and only
// then is the socket destroyed. Destroying it at once would leave unread bytes in the kernel, which
// makes the kernel send a reset that can arrive before the client has read the answer.
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type Koa from 'koa';

const BODY_DRAIN_BYTES = 64 * 1024;
const LINGER_MS = 2000;

/** Call after the handler, before the answer is written. */
export function closeIfBodyUnread(ctx: Koa.Context): void {
  const req: IncomingMessage = ctx.req;
  if (req.complete || req.readableEnded) return;
  const declared = Number(req.headers['content-length']);
  const chunked = req.headers['transfer-encoding'] !== undefined;
  if (!chunked && Number.isFinite(declared) && declared <= BODY_DRAIN_BYTES) return;
  ctx.set('Connection', 'close');
  lingerOnClose(req.socket);
}

function lingerOnClose(socket: Socket): void {
  // Node ends a `Connection: close` answer with socket.destroySoon(); for this one socket, end
  // (send our FIN) and keep reading instead, destroying it when the peer closes or LINGER_MS passes.
  socket.destroySoon = function lingeringClose(this: Socket) {
    this.end();
    const timer = setTimeout(() => this.destroy(), LINGER_MS);
    timer.unref();
    this.once('close', () => clearTimeout(timer));
    this.once('end', () => this.destroy());
    this.resume();
  };
}
