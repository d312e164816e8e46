// Thousands of malformed and hostile requests over raw sockets against a real server process
// (npm run serve's entry on the committed sample): random JSON, deep nesting, huge strings, lone
// surrogates, invalid UTF-8, odd methods, headers and paths, broken framing. Every answer is under
// 500, every error is JSON {error, request_id}, the process stays up and healthy, and the account's
// balance moved by exactly the charges the client was told of.
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import fc from 'fast-check';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { pollUntil } from '../../core/infra/wait-at-most.ts';
import { spawnTs, type Child } from '../helpers/child.ts';
import { pipedSampleDir } from '../helpers/pipeline.ts';
import { cleanupTmp } from '../helpers/tmp.ts';

let server: Child;
let port = 0;
let key = '';
let dataDir = '';

test.before(async () => {
  dataDir = await pipedSampleDir();
  server = spawnTs('serve/main.ts', [], {
    DATA_DIR: dataDir,
    PORT: '0',
    LOG_LEVEL: 'info',
    DEMO_CREDITS: '100000',
    RATE_LIMIT_RPS: '100000',
    RATE_LIMIT_BURST: '100000',
    SEARCH_BUDGET_MS: '60000',
  });
  await pollUntil('the server to serve', () => /"baseUrl":"[^"]+".*"serving"/.test(server.out()) || server.proc.exitCode !== null, 120_000);
  port = Number(/"baseUrl":"http:\/\/127\.0\.0\.1:(\d+)/.exec(server.out())![1]);
  key = JSON.parse(fs.readFileSync(path.join(dataDir, 'demo-key.json'), 'utf8')).secret;
});

test.after(async () => {
  server?.proc.kill('SIGTERM');
  await server?.exited;
  cleanupTmp();
});

interface Answer {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
  raw: Buffer;
}

function parseAnswer(raw: Buffer): Answer | null {
  // An interim answer (100 Continue) comes before the real one.
  while (/^HTTP\/1\.1 1\d\d /.test(raw.subarray(0, 13).toString('latin1'))) raw = raw.subarray(raw.indexOf('\r\n\r\n') + 4);
  const end = raw.indexOf('\r\n\r\n');
  if (end < 0) return null;
  const head = raw.subarray(0, end).toString('latin1').split('\r\n');
  const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head[0]!)?.[1]);
  const headers: Record<string, string> = {};
  for (const line of head.slice(1)) {
    const i = line.indexOf(':');
    headers[line.slice(0, i).toLowerCase()] = line.slice(i + 1).trim();
  }
  let body = raw.subarray(end + 4);
  if (headers['transfer-encoding'] === 'chunked') {
    const parts: Buffer[] = [];
    let at = 0;
    for (;;) {
      const nl = body.indexOf('\r\n', at);
      const size = parseInt(body.subarray(at, nl).toString('latin1'), 16);
      if (!size) break;
      parts.push(body.subarray(nl + 2, nl + 2 + size));
      at = nl + 2 + size + 2;
    }
    body = Buffer.concat(parts);
  } else if (headers['content-length'] !== undefined) {
    body = body.subarray(0, Number(headers['content-length']));
  }
  return { status, headers, body, raw };
}

/** One request on its own connection: the bytes as given, then read to the server's close. */
function send(bytes: Buffer, opts: { halfClose?: boolean } = {}): Promise<Answer | null> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    const s = net.connect(port, '127.0.0.1', () => {
      s.write(bytes);
      if (opts.halfClose) s.end();
    });
    s.on('data', (d) => chunks.push(d));
    s.on('error', () => undefined);
    const timer = setTimeout(() => s.destroy(), 20_000);
    s.on('close', () => {
      clearTimeout(timer);
      resolve(parseAnswer(Buffer.concat(chunks)));
    });
  });
}

function request(method: string, target: string, headers: Array<[string, string]>, body?: Buffer | string, keepAlive = false): Buffer {
  const b = body === undefined ? Buffer.alloc(0) : Buffer.isBuffer(body) ? body : Buffer.from(body, 'utf8');
  const lines = [
    `${method} ${target} HTTP/1.1`,
    'Host: 127.0.0.1',
    ...(keepAlive ? [] : ['Connection: close']),
    ...headers.map(([k, v]) => `${k}: ${v}`),
  ];
  if (body !== undefined && !headers.some(([k]) => /^(content-length|transfer-encoding)$/i.test(k)))
    lines.push(`Content-Length: ${b.length}`);
  return Buffer.concat([Buffer.from(lines.join('\r\n') + '\r\n\r\n', 'latin1'), b]);
}

const SEED = 20261124;
const sample = <T>(arb: fc.Arbitrary<T>, n: number, offset = 0): T[] => fc.sample(arb, { seed: SEED + offset, numRuns: n });

const PATHS = [
  '/api/search',
  '/api/intelligence/jobs',
  '/api/mcp',
  '/api/usage',
  '/api/health',
  '/api/narratives/trending',
  '/api/narratives/search',
  '/api/intelligence/patterns',
  '/api/openapi.json',
  '/api/admin/accounts.create',
  '/api/billing/top-up',
  '/api/narratives/x/trajectory',
  '/',
];
const JSON_TARGETS = ['/api/search', '/api/intelligence/jobs', '/api/mcp', '/api/admin/credits.topup'];

type Header = [string, string];
interface Case {
  what: string;
  bytes: Buffer;
  halfClose?: boolean;
  method: string;
}
type Add = (what: string, method: string, bytes: Buffer, halfClose?: boolean) => void;

/** Random JSON documents to every JSON endpoint, bodies shaped like the real ones with hostile field values, prototype keys. */
function jsonCases(add: Add, auth: Header[]): void {
  sample(fc.jsonValue({ maxDepth: 6 }), 800).forEach((v, i) =>
    add('random json', 'POST', request('POST', JSON_TARGETS[i % JSON_TARGETS.length]!, auth, JSON.stringify(v))),
  );
  // Bodies shaped like the real ones with hostile field values.
  const field = fc.oneof(
    fc.string(),
    fc.string({ unit: fc.nat(0xffff).map((c) => String.fromCharCode(c)) }),
    fc.string({ unit: 'binary' }),
    fc.integer(),
    fc.double(),
    fc.boolean(),
    fc.constant(null),
    fc.array(fc.string(), { maxLength: 3 }),
    fc.constantFrom('7d', '30d', '90d', 'all', 'records', 'insights', 'patterns', 'stats', '', ' ', '1e400', '-0', '__proto__'),
  );
  sample(
    fc.record({ query: field, limit: field, window: field, kind: field, includeSignals: field }, { requiredKeys: [] }),
    800,
    1,
  ).forEach((v, i) => add('shaped json', 'POST', request('POST', JSON_TARGETS[i % 2]!, auth, JSON.stringify(v))));
  sample(fc.dictionary(fc.string(), field, { maxKeys: 4 }), 150, 2).forEach((v) =>
    add(
      'prototype keys',
      'POST',
      request('POST', '/api/search', auth, JSON.stringify({ ...v, __proto__: { limit: 5 }, constructor: { prototype: {} } })),
    ),
  );
}

/** Deep nesting, and huge strings: under and over the body limit. */
function sizeCases(add: Add, auth: Header[]): void {
  // Deep nesting, under and over the body limit.
  for (const n of [100, 1000, 5000, 15_000, 100_000]) {
    add(`nesting ${n}`, 'POST', request('POST', '/api/search', auth, '['.repeat(n) + ']'.repeat(n)));
    add(`object nesting ${n}`, 'POST', request('POST', '/api/intelligence/jobs', auth, '{"a":'.repeat(n) + '1' + '}'.repeat(n)));
    add(`query nesting ${n}`, 'POST', request('POST', '/api/search', auth, `{"query":${'['.repeat(n)}${']'.repeat(n)}}`));
  }
  // Huge strings around the body limit (32 KB), and far over it.
  for (const n of [1000, 2000, 2001, 30_000, 33_000, 1_000_000, 5_000_000])
    add(`query of ${n}`, 'POST', request('POST', '/api/search', auth, JSON.stringify({ query: 'x'.repeat(n) })));
}

/** Lone surrogates, invalid UTF-8, BOM, UTF-16, random bytes as bodies. */
function encodingCases(add: Add, auth: Header[]): void {
  // Lone surrogates (escaped and raw), invalid UTF-8, NUL, BOM, control characters.
  for (const s of ['"\\ud800"', '"\\udfff"', '"a\\ud83d"', '"\\u0000"', '"\\ud800\\ud800"'])
    add('lone surrogate', 'POST', request('POST', '/api/search', auth, `{"query":${s}}`));
  for (const bytes of [[0xed, 0xa0, 0x80], [0xc0, 0x80], [0xff, 0xfe], [0xf8, 0x88, 0x80, 0x80, 0x80], [0x80], [0xe2, 0x82]]) {
    add(
      'invalid utf-8',
      'POST',
      request('POST', '/api/search', auth, Buffer.concat([Buffer.from('{"query":"a'), Buffer.from(bytes), Buffer.from('"}')])),
    );
  }
  add(
    'bom',
    'POST',
    request('POST', '/api/search', auth, Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"query":"coffee"}')])),
  );
  add(
    'utf-16 body',
    'POST',
    request(
      'POST',
      '/api/search',
      [...auth.slice(0, 1), ['content-type', 'application/json; charset=utf-16']],
      Buffer.from('{"query":"coffee"}', 'utf16le'),
    ),
  );
  sample(fc.uint8Array({ minLength: 1, maxLength: 3000 }), 200, 3).forEach((b, i) =>
    add('random bytes body', 'POST', request('POST', JSON_TARGETS[i % JSON_TARGETS.length]!, auth, Buffer.from(b))),
  );
}

/** Odd methods, with and without bodies, on every path. */
function methodCases(add: Add, auth: Header[]): void {
  const methods = [
    'GET',
    'HEAD',
    'POST',
    'PUT',
    'PATCH',
    'DELETE',
    'OPTIONS',
    'TRACE',
    'PROPFIND',
    'MKCOL',
    'PURGE',
    'LINK',
    'SEARCH',
    'QUERY',
    'FOO',
    'get',
  ];
  for (const m of methods)
    for (const p of PATHS) {
      add(`${m} ${p}`, m, request(m, p, auth));
      add(`${m} ${p} with a body`, m, request(m, p, auth, '{"query":"coffee","limit":1}'));
    }
  add('CONNECT', 'CONNECT', request('CONNECT', '127.0.0.1:80', auth));
}

/** Odd targets and query strings. */
function targetCases(add: Add, auth: Header[]): void {
  const pathArb = fc.oneof(
    fc.string().map((s) => '/api/' + encodeURIComponent(s)),
    fc.string({ unit: 'binary' }).map((s) => '/api/narratives/' + encodeURIComponent(s)),
    fc.constantFrom(
      '/api/narratives/%',
      '/api/narratives/%ZZ',
      '/api/%E0%A4%A',
      '/api/narratives/%C0%80/trajectory',
      '/api/../../etc/passwd',
      '/api/./search',
      '//api//search',
      '/api/search?',
      '/api/narratives/trending?window=7d&window=30d',
      '/api/narratives/trending?limit[]=1',
      '/api/usage?limit=1e3',
      '/api/usage?cursor=%FF',
      '/api/usage?keyId=' + 'k'.repeat(5000),
      '*',
      'http://127.0.0.1/api/health',
      '/api/intelligence/patterns?sort=__proto__',
      '/api/narratives/search?q=' + 'a%20'.repeat(2000),
      '/api/narratives/' + 'x'.repeat(6000),
    ),
  );
  sample(pathArb, 400, 4).forEach((p) => add(`GET ${p.slice(0, 40)}`, 'GET', request('GET', p, auth)));
}

/** Stands for the demo key in ODD_HEADERS (the key is made when the server starts). */
const API_KEY = '{demo key}';

/** Odd headers: duplicate or lying lengths, encodings and types the routes do not take, odd keys, huge and many headers. */
const ODD_HEADERS: Header[][] = [
  [
    ['x-api-key', API_KEY],
    ['content-type', 'application/json'],
    ['content-length', '5'],
    ['content-length', '6'],
  ],
  [
    ['x-api-key', API_KEY],
    ['content-type', 'application/json'],
    ['transfer-encoding', 'chunked'],
    ['content-length', '3'],
  ],
  [
    ['x-api-key', API_KEY],
    ['content-type', 'application/json'],
    ['transfer-encoding', 'gzip, chunked'],
  ],
  [
    ['x-api-key', API_KEY],
    ['content-type', 'application/json'],
    ['content-encoding', 'gzip'],
  ],
  [
    ['x-api-key', API_KEY],
    ['content-type', 'application/json'],
    ['content-encoding', 'br'],
  ],
  [
    ['x-api-key', API_KEY],
    ['content-type', 'text/plain'],
  ],
  [
    ['x-api-key', API_KEY],
    ['content-type', 'application/json; charset=latin1'],
  ],
  [
    ['x-api-key', API_KEY],
    ['content-type', 'multipart/form-data; boundary=x'],
  ],
  [
    ['x-api-key', API_KEY],
    ['content-type', 'application/x-www-form-urlencoded'],
  ],
  [
    ['x-api-key', API_KEY + ' '],
    ['content-type', 'application/json'],
  ],
  [
    ['x-api-key', API_KEY],
    ['x-api-key', API_KEY],
    ['content-type', 'application/json'],
  ],
  [
    ['x-api-key', 'sk_' + 'a'.repeat(8000)],
    ['content-type', 'application/json'],
  ],
  [
    ['x-api-key', API_KEY],
    ['content-type', 'application/json'],
    ['Idempotency-Key', 'k'.repeat(5000)],
  ],
  [
    ['x-api-key', API_KEY],
    ['content-type', 'application/json'],
    ['Idempotency-Key', ''],
  ],
  [
    ['x-api-key', API_KEY],
    ['content-type', 'application/json'],
    ['X-Service-Version', 'v9'],
  ],
  [
    ['x-api-key', API_KEY],
    ['content-type', 'application/json'],
    ['expect', '100-continue'],
  ],
  [
    ['x-api-key', API_KEY],
    ['content-type', 'application/json'],
    ['expect', 'something-else'],
  ],
  [
    ['x-api-key', API_KEY],
    ['content-type', 'application/json'],
    ['upgrade', 'websocket'],
    ['connection', 'upgrade'],
  ],
  [
    ['x-api-key', API_KEY],
    ['content-type', 'application/json'],
    ['accept', 'text/html'],
  ],
  [
    ['x-api-key', API_KEY],
    ['content-type', 'application/json'],
    ['x-forwarded-for', '10.0.0.1'],
  ],
  [
    ['x-api-key', API_KEY],
    ['content-type', 'application/json'],
    ['x-huge', 'h'.repeat(20_000)],
  ],
  [
    ['x-api-key', API_KEY],
    ['content-type', 'application/json'],
    ...Array.from({ length: 3000 }, (_, i) => [`x-h${i}`, 'v'] as [string, string]),
  ],
  [
    ['x-api-key', API_KEY],
    ['bad header name', 'v'],
  ],
  [
    ['x-api-key', API_KEY],
    ['x-ctl', 'a\u0001b'],
  ],
];

/** Each ODD_HEADERS set on three routes. */
function headerCases(add: Add): void {
  for (const odd of ODD_HEADERS) {
    const h = odd.map(([k, v]): Header => [k, v.replaceAll(API_KEY, key)]);
    for (const p of ['/api/search', '/api/intelligence/jobs', '/api/health']) {
      add(
        `headers ${h
          .slice(2)
          .map(([k]) => k)
          .join(',')
          .slice(0, 40)} ${p}`,
        'POST',
        request('POST', p, h, '{"query":"coffee","limit":2}'),
      );
    }
  }
}

/** Broken framing: a request line of garbage, a truncated body, chunked bodies that lie; old and other protocols. */
function framingCases(add: Add, auth: Header[]): void {
  sample(fc.uint8Array({ minLength: 1, maxLength: 500 }), 150, 5).forEach((b) => add('garbage request', 'GARBAGE', Buffer.from(b), true));
  add('truncated body', 'POST', request('POST', '/api/search', [...auth, ['content-length', '100']], '{"query":'), true);
  add('bad chunk size', 'POST', request('POST', '/api/search', [...auth, ['transfer-encoding', 'chunked']], 'zz\r\n{}\r\n0\r\n\r\n'));
  add(
    'chunked json',
    'POST',
    request('POST', '/api/search', [...auth, ['transfer-encoding', 'chunked']], '12\r\n{"query":"coffee"}\r\n0\r\n\r\n'),
  );
  add(
    'chunked huge',
    'POST',
    request(
      'POST',
      '/api/search',
      [...auth, ['transfer-encoding', 'chunked']],
      ('8000\r\n' + 'a'.repeat(0x8000) + '\r\n').repeat(40) + '0\r\n\r\n',
    ),
  );
  add('no key, big body', 'POST', request('POST', '/api/search', [['content-type', 'application/json']], 'x'.repeat(3_000_000)));
  add('http/1.0', 'GET', Buffer.from(`GET /api/health HTTP/1.0\r\nx-api-key: ${key}\r\n\r\n`));
  add('http/2 preface', 'PRI', Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n'));
}

/** Valid billed searches among them, with replays under an Idempotency-Key. */
function validSearchCases(add: Add, auth: Header[]): void {
  // Valid billed searches among them, with replays under an Idempotency-Key.
  sample(
    fc.record({
      query: fc.constantFrom('coffee', 'battery recall', 'sourdough starter', 'music', 'the', 'zzzzqqq', '🔥'),
      limit: fc.integer({ min: 1, max: 300 }),
      window: fc.constantFrom('7d', '30d', '90d', 'all'),
    }),
    150,
    6,
  ).forEach((v, i) =>
    add(
      'valid search',
      'POST',
      request('POST', '/api/search', i % 5 === 0 ? [...auth, ['Idempotency-Key', `fuzz-${i % 15}`]] : auth, JSON.stringify(v)),
    ),
  );
}

/** The hostile corpus: [label, request bytes, options], concern by concern. */
function corpus(): Case[] {
  const out: Case[] = [];
  const auth: Header[] = [
    ['x-api-key', key],
    ['content-type', 'application/json'],
    ['accept', 'application/json, text/event-stream'],
  ];
  const add: Add = (what, method, bytes, halfClose = false) => out.push({ what, bytes, method, halfClose });
  for (const cases of [jsonCases, sizeCases, encodingCases, methodCases, targetCases]) cases(add, auth);
  headerCases(add);
  framingCases(add, auth);
  validSearchCases(add, auth);
  return out;
}

test('hostile requests over raw sockets: no 5xx, every error JSON {error, request_id}, the server healthy, every charge accounted for', async () => {
  const usage0 = (await (await fetch(`http://127.0.0.1:${port}/api/usage`, { headers: { 'x-api-key': key } })).json()) as {
    balance: number;
  };
  const cases = corpus();
  assert.ok(cases.length >= 3000, `${cases.length} requests`);
  const problems: string[] = [];
  let chargedMicro = 0;
  let answered = 0;
  const statuses = new Map<number, number>();
  const jobs = new Set<string>();
  const queue = cases.map((c, i) => ({ ...c, i }));
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      for (let c = queue.shift(); c; c = queue.shift()) {
        const a = await send(c.bytes, { halfClose: c.halfClose });
        if (!a) {
          problems.push(`#${c.i} ${c.what}: no answer`);
          continue;
        }
        answered++;
        statuses.set(a.status, (statuses.get(a.status) ?? 0) + 1);
        if (!(a.status >= 100 && a.status < 500))
          problems.push(`#${c.i} ${c.what}: status ${a.status} ${a.body.toString('utf8').slice(0, 200)}`);
        if (a.status >= 400 && c.method !== 'HEAD') {
          let body: { error?: unknown; request_id?: unknown } | null = null;
          try {
            body = JSON.parse(a.body.toString('utf8'));
          } catch {
            // reported below
          }
          if (
            !/^application\/json/.test(a.headers['content-type'] ?? '') ||
            typeof body?.error !== 'string' ||
            typeof body?.request_id !== 'string'
          ) {
            problems.push(
              `#${c.i} ${c.what}: ${a.status} not in the error shape: ${a.headers['content-type']} ${a.body.toString('utf8').slice(0, 120)}`,
            );
          }
        }
        // Charged now: a search answer, or a job answered from the cache. A job accepted (202) is charged when it finishes.
        const used = a.headers['x-service-credits-used'];
        if (a.status === 200 && used && a.headers['idempotent-replayed'] !== 'true') chargedMicro += Math.round(Number(used) * 1e6);
        if (a.status === 202 && a.body.includes('"jobId"')) jobs.add(JSON.parse(a.body.toString('utf8')).jobId);
      }
    }),
  );
  process.stdout.write(
    `hostile requests: ${cases.length} sent, ${answered} answered, statuses ` +
      `${JSON.stringify(Object.fromEntries([...statuses].sort((a, b) => a[0] - b[0])))}, ` +
      `${chargedMicro / 1e6} credits charged\n`,
  );
  assert.equal(problems.slice(0, 20), [], `${problems.length} problems`);
  assert.is(answered, cases.length, 'every request answered');
  assert.ok(
    (statuses.get(200) ?? 0) > 100 && (statuses.get(400) ?? 0) > 500 && (statuses.get(405) ?? 0) > 50,
    JSON.stringify([...statuses]),
  );
  for (const id of jobs) {
    let job: { status: string; charged: number | null } = { status: 'queued', charged: null };
    await pollUntil(
      `job ${id} to finish`,
      async () => {
        job = (await (
          await fetch(`http://127.0.0.1:${port}/api/intelligence/jobs/${id}`, { headers: { 'x-api-key': key } })
        ).json()) as typeof job;
        return job.status === 'succeeded' || job.status === 'failed';
      },
      120_000,
      50,
    );
    chargedMicro += Math.round((job.charged ?? 0) * 1e6);
  }
  // Still up, healthy, and the money adds up to what the client saw.
  assert.is(server.proc.exitCode, null, 'the server process is still running');
  const health = await fetch(`http://127.0.0.1:${port}/api/health`, { headers: { 'x-api-key': key } });
  assert.is(health.status, 200);
  assert.is(((await health.json()) as { ledger: { open_holds: number } }).ledger.open_holds, 0);
  const usage1 = (await (await fetch(`http://127.0.0.1:${port}/api/usage`, { headers: { 'x-api-key': key } })).json()) as {
    balance: number;
  };
  assert.is(Math.round((usage0.balance - usage1.balance) * 1e6), chargedMicro, 'balance moved by exactly the charges the client saw');
  assert.ok(chargedMicro > 0);
  assert.not.match(server.out(), /request failed/, 'no request failed inside the server');
});

test('a JSON body sent as another type (curl -d, text, none) is a 415 that says so on every JSON route, nothing charged', async () => {
  const balance = async () =>
    ((await (await fetch(`http://127.0.0.1:${port}/api/usage`, { headers: { 'x-api-key': key } })).json()) as { balance: number }).balance;
  const before = await balance();
  const bodies: Record<string, string> = {
    '/api/search': '{"query":"coffee","limit":5}',
    '/api/intelligence/jobs': '{"kind":"stats","query":"coffee"}',
    '/api/mcp': '{"jsonrpc":"2.0","id":1,"method":"tools/list"}',
  };
  const types: Array<[string | null, RegExp]> = [
    [
      'application/x-www-form-urlencoded',
      /has Content-Type application\/x-www-form-urlencoded, which curl -d sends: add -H 'content-type: application\/json'/,
    ],
    ['text/plain', /has Content-Type text\/plain\)/],
    [null, /has no Content-Type\)/],
  ];
  for (const [target, body] of Object.entries(bodies))
    for (const [type, says] of types) {
      const headers: Array<[string, string]> = [
        ['x-api-key', key],
        ['accept', 'application/json, text/event-stream'],
        ...(type ? [['content-type', type] as [string, string]] : []),
      ];
      const a = (await send(request('POST', target, headers, body)))!;
      const what = `${target} with ${type ?? 'no content-type'}`;
      assert.is(a.status, 415, what);
      const json = JSON.parse(a.body.toString('utf8')) as { error: string; request_id: string };
      assert.match(json.error, /^the request body must be JSON sent with Content-Type: application\/json/, what);
      assert.match(json.error, says, what);
      assert.type(json.request_id, 'string');
    }
  // Still: no key is a 403 first; an empty POST is the body's own 400; JSON with a charset passes.
  assert.is((await send(request('POST', '/api/search', [['content-type', 'text/plain']], bodies['/api/search'])))!.status, 403);
  const empty = (await send(request('POST', '/api/search', [['x-api-key', key]], '')))!;
  assert.equal([empty.status, JSON.parse(empty.body.toString('utf8')).error], [400, 'query is required']);
  const ok = (await send(
    request(
      'POST',
      '/api/search',
      [
        ['x-api-key', key],
        ['content-type', 'Application/JSON; charset=utf-8'],
      ],
      bodies['/api/search'],
    ),
  ))!;
  assert.is(ok.status, 200);
  const spent = Math.round((before - (await balance())) * 1e6);
  assert.is(spent, Math.round(Number(ok.headers['x-service-credits-used']) * 1e6), 'only the JSON search was charged');
});

test('a refused upload: a small body is drained and the connection kept; a client still sending a huge one gets its answer, not a reset', async () => {
  // Two requests on one connection: the first refused (no key) with a small body it never read.
  const small = Buffer.concat([
    request('POST', '/api/search', [['content-type', 'application/json']], JSON.stringify({ query: 'x'.repeat(20_000) }), true),
    request('GET', '/api/health', [['x-api-key', key]]),
  ]);
  const both = await new Promise<string>((resolve) => {
    let out = '';
    const s = net.connect(port, '127.0.0.1', () => s.write(small));
    s.on('data', (d) => (out += d.toString('latin1')));
    s.on('close', () => resolve(out));
    s.on('error', () => undefined);
  });
  assert.equal(both.match(/HTTP\/1\.1 \d{3}/g), ['HTTP/1.1 403', 'HTTP/1.1 200'], 'both answered on one connection');
  // A client that declares 10 GB and keeps writing for a while before it reads, as a busy uploader does.
  for (let trial = 0; trial < 3; trial++) {
    const answer = await new Promise<string>((resolve) => {
      let out = '';
      const s = net.connect(port, '127.0.0.1');
      s.pause();
      s.on('connect', async () => {
        s.write(`POST /api/search HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 10000000000\r\n\r\n`);
        const chunk = Buffer.alloc(256 * 1024, 97);
        const until = Date.now() + 300;
        while (Date.now() < until && !s.destroyed) if (!s.write(chunk)) await new Promise((r) => s.once('drain', r).once('close', r));
        s.on('data', (d) => (out += d.toString('latin1')));
        s.resume();
      });
      s.on('error', () => undefined);
      s.on('close', () => resolve(out));
    });
    assert.match(
      answer,
      /^HTTP\/1\.1 403 [^]*\r\nConnection: close\r\n[^]*"error":"missing x-api-key header"/,
      `trial ${trial}: ${answer.slice(0, 80)}`,
    );
  }
  assert.is(server.proc.exitCode, null);
});

test.run();
