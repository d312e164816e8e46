// Webhook delivery in tests: a real receiver (node:http on 127.0.0.1, a free port) told how to
// answer, watches in the real watch store, events shaped as the evaluation makes them, and the
// receiver's side of the signature check exactly as docs/api.md ("Verifying a webhook") shows it.
import { createHmac, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { AlertEvent, Watch } from '../../serve/alerts/alert-model.ts';

export interface Received {
  headers: http.IncomingHttpHeaders;
  body: string;
  at: number;
}

/** What the receiver answers a request: a status, or 'hang' (never answers). */
export type Answer = number | 'hang';

export interface Receiver {
  url: string;
  port: number;
  received: Received[];
  /** Requests for one event id. */
  of(eventId: string): Received[];
  answer: (r: Received, nth: number) => Answer;
  close(): Promise<void>;
}

/** Listen on 127.0.0.1 (port 0: a free one); `answer` is given each request and how many came before for its event. */
export async function startReceiver(answer: Receiver['answer'] = () => 200, port = 0): Promise<Receiver> {
  const received: Received[] = [];
  const hanging = new Set<http.ServerResponse>();
  const r: Receiver = {
    url: '',
    port: 0,
    received,
    of: (id) => received.filter((x) => x.headers['x-alert-event-id'] === id),
    answer,
    close: async () => {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const rec: Received = { headers: req.headers, body, at: Date.now() };
      const nth = r.of(String(req.headers['x-alert-event-id'])).length;
      received.push(rec);
      const a = r.answer(rec, nth);
      if (a === 'hang') {
        hanging.add(res);
        return;
      }
      res.writeHead(a, { 'content-type': 'text/plain' }).end(a >= 300 ? `receiver says ${a}` : 'ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  r.port = (server.address() as AddressInfo).port;
  r.url = `http://127.0.0.1:${r.port}/hook`;
  return r;
}

/** A port nothing listens on (just closed): a receiver that is down. */
export async function closedPort(): Promise<number> {
  const s = http.createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const port = (s.address() as AddressInfo).port;
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return port;
}

let made = 0;

export function watchFor(url: string, account = 'acct_test'): Watch {
  return {
    id: `alw_test${++made}_${process.pid}`,
    account,
    name: null,
    target: { kind: 'any' },
    windows: ['7d'],
    conditions: { new_narrative: true },
    url,
    created_at: new Date().toISOString(),
    secret_version: 1,
    paused: null,
  };
}

export function eventFor(watch: Watch, n: number): AlertEvent {
  const figures = {
    generation: 'g2',
    narrative_id: `n${n}`,
    content_count: 40 + n,
    momentum_score: 0.5,
    emerging_score: 0.25,
    lifecycle: 'emerging',
    last_day: '2026-11-27',
    last_day_posts: 12,
    spike: false,
  };
  return {
    id: `evt_${watch.id}_${n}`,
    type: 'narrative.new_narrative',
    watch_id: watch.id,
    account: watch.account,
    created_at: new Date().toISOString(),
    generation: 'g2',
    previous_generation: 'g1',
    window: '7d',
    narrative: {
      id: `n${n}`,
      narrative_key: `k${n}`,
      label: `narrative ${n} (ünïcode ✓)`,
      summary: 'a story',
      theme_id: null,
      url: `http://example.test/narratives/n${n}`,
    },
    why: { text: 'a new narrative', before: null, after: figures },
    posts: [{ uuid: 'p1', title: 'a post', url: null }],
  };
}

/**
 * The receiver's check, as docs/api.md shows it: the signature header's v1 must equal
 * HMAC-SHA256(secret, "<t>.<raw body>") (compared in constant time), and t must be within 5 minutes.
 */
export function verifyWebhook(secret: string, rawBody: string, header: string, nowSeconds = Math.floor(Date.now() / 1000)): boolean {
  const parts = Object.fromEntries(header.split(',').map((kv) => kv.split('=', 2) as [string, string]));
  const t = Number(parts.t);
  if (!Number.isInteger(t) || Math.abs(nowSeconds - t) > 300 || !parts.v1) return false;
  const expected = Buffer.from(createHmac('sha256', secret).update(`${t}.${rawBody}`).digest('hex'));
  const given = Buffer.from(parts.v1);
  return given.length === expected.length && timingSafeEqual(given, expected);
}
