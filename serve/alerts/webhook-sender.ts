// One POST of an event to a watch's URL (docs/api.md, "Webhook deliveries"). node:http(s) with the
// address guard as its lookup, so the address checked is the address connected to (a name that
// rebinds to 127.0.0.1 is refused at connect); an IP literal, which Node connects to without a
// lookup, is checked before the attempt. The whole attempt, from the lookup to the last byte
// of the answer, has `timeoutMs`: a receiver that hangs is a failed attempt, not a stuck worker.
// Redirects are not followed (a 3xx is a failure): the URL the account gave is the only address.
import http from 'node:http';
import https from 'node:https';
import { guardedLookup, literalRefusal, RefusedAddress } from './address-guard.ts';

/** The part of a receiver's answer kept (for the error text of a failed attempt); the rest is not read. */
const BODY_CAP = 4096;
/** Of which the delivery log keeps this much. */
const ERROR_TEXT = 200;

interface SendResult {
  /** The HTTP status; null when none came. */
  status: number | null;
  /** Why it failed (null for a 2xx): the network error, or the status and the start of the answer. */
  error: string | null;
  latencyMs: number;
}

interface SendOptions {
  timeoutMs: number;
  allowPrivate: boolean;
}

export const isDelivered = (status: number | null) => status !== null && status >= 200 && status < 300;

export function postWebhook(url: string, body: string, headers: Record<string, string>, o: SendOptions): Promise<SendResult> {
  const started = performance.now();
  const u = new URL(url);
  const lib = u.protocol === 'https:' ? https : http;
  const literal = literalRefusal(u.hostname, o.allowPrivate);
  if (literal) return Promise.resolve({ status: null, error: `refused address: ${literal.message}`, latencyMs: 0 });
  return new Promise<SendResult>((resolve) => {
    let done = false;
    const finish = (status: number | null, error: string | null) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      resolve({ status, error, latencyMs: Math.round(performance.now() - started) });
    };
    const req = lib.request(
      u,
      {
        method: 'POST',
        headers: { ...headers, 'Content-Length': String(Buffer.byteLength(body)) },
        lookup: guardedLookup(o.allowPrivate),
        // A fresh connection each time: a pooled socket could outlive the address check it was made under.
        agent: false,
      },
      (res) => {
        const status = res.statusCode ?? 0;
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (c: Buffer) => {
          if (size < BODY_CAP) chunks.push(c.subarray(0, BODY_CAP - size));
          size += c.length;
          // Enough read: the rest of a large answer is not waited for.
          if (size >= BODY_CAP) res.destroy();
        });
        const settle = () => {
          if (isDelivered(status)) return finish(status, null);
          const text = Buffer.concat(chunks).toString('utf8').replace(/\s+/g, ' ').trim().slice(0, ERROR_TEXT);
          finish(status, `HTTP ${status}${text ? `: ${text}` : ''}`);
        };
        res.on('end', settle);
        res.on('close', settle);
        res.on('error', settle);
      },
    );
    const timer = setTimeout(() => {
      req.destroy();
      finish(null, `no answer within ${o.timeoutMs} ms`);
    }, o.timeoutMs);
    req.on('error', (err: NodeJS.ErrnoException) => {
      finish(null, err instanceof RefusedAddress ? `refused address: ${err.message}` : `${err.code ?? 'error'}: ${err.message}`);
    });
    req.end(body);
  });
}
