// Webhook delivery in tests: a real receiver (node:http on 127.0.0.1, a free port) told how to
// answer, watches in the real watch store, events shaped as the evaluation makes them, and the
// receiver's side of the signature check: docs/api.md's snippets ("Verifying a webhook") as written.
import { spawnSync } from 'node:child_process';
import { createHmac, timingSafeEqual } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { AlertEvent, Watch } from '../../serve/alerts/alert-model.ts';
import { ROOT } from './child.ts';

interface Received {
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
      dashboard_url: `http://example.test/ui/narrative.html?id=n${n}`,
    },
    why: { text: 'a new narrative', before: null, after: figures },
    matches: [
      {
        window: '7d',
        condition: 'new_narrative',
        narrative_id: `n${n}`,
        narrative_key: `k${n}`,
        label: `narrative ${n}`,
        why: { text: 'a new narrative', before: null, after: figures },
      },
    ],
    posts: [{ uuid: 'p1', title: 'a post', text: 'a post’s words', url: null }],
  };
}

/** docs/api.md's code block (```lang) that holds `marker`. */
function documentedBlock(lang: string, marker: string): string {
  const md = fs.readFileSync(path.join(ROOT, 'docs', 'api.md'), 'utf8');
  const block = [...md.matchAll(new RegExp('```' + lang + '\\n([\\s\\S]*?)```', 'g'))].map((m) => m[1]!).find((b) => b.includes(marker));
  if (!block) throw new Error(`docs/api.md has no ${lang} block with ${marker}`);
  return block;
}

/**
 * The receiver's check exactly as docs/api.md shows it in Node.js ("Verifying a webhook"): the
 * documented block run as written, its import line given the functions it imports.
 */
function documentedVerifier(): (secret: string, rawBody: string, header: string) => boolean {
  const code = documentedBlock('js', 'function verifyAlert').replace(/^import .*\n/m, '');
  return new Function('createHmac', 'timingSafeEqual', `${code}\nreturn verifyAlert;`)(createHmac, timingSafeEqual);
}

export const verifyWebhook = documentedVerifier();

/** The documented Python check, run by python3 on one request: its answer (True/False), or null without python3. */
export function pythonVerifies(secret: string, rawBody: string, header: string): boolean | null {
  const code = documentedBlock('python', 'def verify_alert');
  const r = spawnSync(
    'python3',
    ['-c', `${code}\nimport sys\nprint(verify_alert(sys.argv[1], sys.argv[2].encode(), sys.argv[3]))`, secret, rawBody, header],
    {
      encoding: 'utf8',
    },
  );
  if (r.error && (r.error as NodeJS.ErrnoException).code === 'ENOENT') return null;
  if (r.status !== 0) throw new Error(`python3 failed: ${r.stderr}`);
  return r.stdout.trim() === 'True';
}
