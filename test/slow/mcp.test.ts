// The MCP tool server with the SDK's real client over HTTP against a real server: the tools and
// their strict schemas, every tool called, a billed call's ledger entry equal to the HTTP path's,
// idempotency, the 402 and 400 paths as tool errors with the HTTP status and body, and an
// unauthenticated attempt refused before any MCP exchange.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { loadConfig } from '../../core/infra/config.ts';
import { createLogger } from '../../core/infra/log.ts';
import { pollUntil } from '../../core/infra/wait-at-most.ts';
import { toMicro } from '../../ledger/money.ts';
import { startServer, type RunningServer } from '../../serve/server.ts';
import { pipedSampleDir } from '../helpers/pipeline.ts';
import { cleanupTmp } from '../helpers/tmp.ts';

let s: RunningServer;
const clients: Client[] = [];

async function account(name: string, credits: string) {
  const a = await s.ledger.createAccount(name);
  if (Number(credits) > 0) await s.ledger.topup(a.id, toMicro(credits));
  const { key, secret } = await s.ledger.createKey(a.id);
  return { id: a.id, keyId: key.id, secret };
}

async function connect(secret: string | null): Promise<Client> {
  const client = new Client({ name: 'mcp-test', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${s.baseUrl}/mcp`), { requestInit: { headers: secret ? { 'x-api-key': secret } : {} } }),
  );
  clients.push(client);
  return client;
}

const call = async (c: Client, name: string, args: Record<string, unknown> = {}) =>
  (await c.callTool({ name, arguments: args })) as {
    isError?: boolean;
    structuredContent?: any;
    content: Array<{ type: string; text: string }>;
    _meta?: any;
  };

test.before(async () => {
  const dir = await pipedSampleDir();
  s = await startServer(
    loadConfig({ DATA_DIR: dir, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'silent', RATE_LIMIT_RPS: '1000', RATE_LIMIT_BURST: '1000' }),
    createLogger('test', 'silent'),
  );
});

test.after(async () => {
  for (const c of clients) await c.close().catch(() => undefined);
  await s?.close();
  cleanupTmp();
});

test('tools: one per HTTP capability, strict input schemas, costs in the descriptions', async () => {
  const c = await connect(s.demo.secret);
  const { tools } = await c.listTools();
  assert.equal(
    tools.map((t) => t.name).sort(),
    [
      'alerts_create',
      'alerts_delete',
      'alerts_deliveries',
      'alerts_get',
      'alerts_list',
      'alerts_redeliver',
      'billing_prices',
      'billing_top_up',
      'health',
      'job_get',
      'job_submit',
      'media_list',
      'narrative_get',
      'narrative_related',
      'narrative_trajectory',
      'narratives_search',
      'narratives_trending',
      'pattern_content',
      'pattern_get',
      'pattern_lookalikes',
      'patterns_browse',
      'search',
      'theme_get',
      'themes_list',
      'usage',
    ].sort(),
  );
  for (const t of tools) {
    assert.is(t.inputSchema.type, 'object', t.name);
    assert.is((t.inputSchema as { additionalProperties?: unknown }).additionalProperties, false, `${t.name} is strict`);
    assert.ok(/COST|Free\./.test(t.description ?? ''), `${t.name} says what it costs`);
  }
  const search = tools.find((t) => t.name === 'search')!;
  const props = search.inputSchema.properties as Record<string, any>;
  assert.equal(props.window.enum, ['7d', '30d', '90d', 'all']);
  assert.is(props.limit.maximum, 300);
  assert.equal(search.inputSchema.required, ['query']);
});

test('every tool answers with the JSON of its HTTP endpoint', async () => {
  const c = await connect(s.demo.secret);
  const health = await call(c, 'health');
  assert.is(health.isError, undefined);
  assert.is(health.structuredContent.status, 'ok');
  assert.equal(JSON.parse(health.content[0]!.text), health.structuredContent);
  const trending = (await call(c, 'narratives_trending', { window: 'all', limit: 5 })).structuredContent;
  const id = trending.items[0].id;
  assert.ok((await call(c, 'narratives_search', { q: trending.items[0].label })).structuredContent.items.length > 0);
  assert.is((await call(c, 'narrative_get', { id, limit: 3 })).structuredContent.narrative.id, id);
  assert.is((await call(c, 'narrative_trajectory', { id })).structuredContent.id, id);
  // Themes: the list as GET /themes gives it (defaults applied), one theme by its key, and trending filtered by it.
  const themes = await call(c, 'themes_list', { window: 'all', sort: 'volume', limit: 3 });
  const http = await fetch(`${s.baseUrl}/themes?window=all&sort=volume&limit=3`, { headers: { 'x-api-key': s.demo.secret } });
  assert.equal(themes.structuredContent, await http.json());
  const theme = themes.structuredContent.items[0];
  const one = (await call(c, 'theme_get', { id: theme.theme_key })).structuredContent;
  assert.equal([one.theme.id, one.resolved_by, one.narratives.length], [theme.id, 'theme_key', theme.narrative_count]);
  const inTheme = (await call(c, 'narratives_trending', { theme: theme.id })).structuredContent;
  assert.equal([inTheme.window, inTheme.total], ['all', theme.narrative_count]);
  const gone = await call(c, 'theme_get', { id: 'tk-all-0000000000' });
  assert.is(gone.isError, true);
  assert.is(gone.structuredContent.status, 404);
  assert.match(gone.structuredContent.error, /has no theme in generation/);
  const related = (await call(c, 'narrative_related', { id, limit: 2 })).structuredContent;
  assert.is(related.id, id);
  assert.ok(related.items.length <= 2 && related.items.every((n: { similarity: number }) => n.similarity >= related.min_similarity));
  const patterns = (await call(c, 'patterns_browse', { scope: 'all', sort: 'confidence', limit: 3 })).structuredContent;
  const key = patterns.items[0].patternKey;
  assert.is((await call(c, 'pattern_get', { patternKey: key })).structuredContent.pattern.patternKey, key);
  assert.ok(Array.isArray((await call(c, 'pattern_content', { patternKey: key, limit: 2 })).structuredContent.items));
  assert.is((await call(c, 'pattern_lookalikes', { patternKey: key })).structuredContent.patternKey, key);
  const searched = await call(c, 'search', { query: 'coffee', limit: 5, window: 'all' });
  assert.ok(searched.structuredContent.content.length > 0);
  assert.is(searched._meta.httpStatus, 200);
  assert.is(searched._meta.creditsUsed, searched.structuredContent.usage.credits);
  const sub = await call(c, 'job_submit', { kind: 'stats', query: 'coffee', window: 'all' });
  assert.is(sub._meta.httpStatus, 202);
  let job: any = null;
  await pollUntil(
    'the job',
    async () =>
      ['succeeded', 'failed'].includes((job = (await call(c, 'job_get', { jobId: sub.structuredContent.jobId })).structuredContent).status),
    60_000,
  );
  assert.is(job.status, 'succeeded');
  assert.is(job.charged, 5);
  assert.match((await call(c, 'billing_top_up')).structuredContent.how, /credits topup/);
  assert.is((await call(c, 'billing_prices')).structuredContent.search.per_record, 0.01);
  const pattern = (await call(c, 'patterns_browse', { limit: 1 })).structuredContent.items[0];
  const media = (await call(c, 'media_list', { uuid: pattern.medoidContentUuids[0] })).structuredContent;
  assert.ok(media.items.length > 0 && media.items[0].thumbnail.startsWith('/media/'));
  const daily = (await call(c, 'narratives_trending', { daily: true, sort: 'volume', limit: 2 })).structuredContent;
  assert.ok(daily.items[0].daily_counts.length > 0 && daily.items[0].period_change.days > 0);
  const usage = (await call(c, 'usage', { limit: 5 })).structuredContent;
  assert.ok(usage.entries.length > 0 && typeof usage.balance === 'number');
});

test('billing: a search through MCP leaves the same ledger entry as the same search over HTTP; an idempotency key is honoured', async () => {
  const a = await account('mcp-billing', '20');
  const c = await connect(a.secret);
  const viaMcp = (await call(c, 'search', { query: 'sourdough starter', limit: 20, window: 'all' })).structuredContent;
  const viaHttp = (await (
    await fetch(`${s.baseUrl}/search`, {
      method: 'POST',
      headers: { 'x-api-key': a.secret, 'content-type': 'application/json' },
      body: JSON.stringify({ query: 'sourdough starter', limit: 20, window: 'all' }),
    })
  ).json()) as any;
  assert.is(viaMcp.usage.credits, viaHttp.usage.credits);
  const entries = (await s.ledger.usage(a.id, { limit: 10 })).entries.filter((e) => e.type === 'settlement');
  assert.is(entries.length, 2);
  const strip = (e: any) => ({ type: e.type, credits: e.credits, held: e.held, keyId: e.keyId, what: e.what });
  assert.equal(strip(entries[0]), strip(entries[1]));
  assert.is(entries[0]!.credits, viaHttp.content.length / 100);
  // The same idempotency key twice: one charge, the same answer.
  const first = (await call(c, 'search', { query: 'festival lineup', limit: 10, idempotencyKey: 'mcp-1' })).structuredContent;
  const again = (await call(c, 'search', { query: 'festival lineup', limit: 10, idempotencyKey: 'mcp-1' })).structuredContent;
  assert.is(again.request_id, first.request_id);
  assert.is(
    (await s.ledger.usage(a.id, { limit: 10 })).entries.filter((e) => e.type === 'settlement').length,
    first.content.length > 0 ? 3 : 2,
  );
});

test('errors: 402 with its full body and 400 with its message as tool errors; a schema violation is refused before any call', async () => {
  const poor = await account('mcp-poor', '0.05');
  const c = await connect(poor.secret);
  const r402 = await call(c, 'search', { query: 'coffee' });
  assert.is(r402.isError, true);
  assert.equal(r402.structuredContent, {
    status: 402,
    error: 'insufficient_credits',
    credits_required: 1,
    credits_available: 0.05,
    recommendations: { maxLimitForWindow: 5, topUpUrl: r402.structuredContent.recommendations.topUpUrl },
    tier: '1',
    window: '30d',
    request_id: r402.structuredContent.request_id,
  });
  assert.equal(JSON.parse(r402.content[0]!.text), r402.structuredContent);
  const r402job = await call(c, 'job_submit', { kind: 'insights', query: 'coffee', window: '7d' });
  assert.is(r402job.structuredContent.tier, '2');
  // A rule the schema cannot say (the signals floor of an explicit limit) comes back as the HTTP 400.
  const r400 = await call(c, 'job_submit', { kind: 'insights', query: 'coffee', window: '7d', limit: 100, includeSignals: true });
  assert.is(r400.isError, true);
  assert.is(r400.structuredContent.status, 400);
  assert.match(r400.structuredContent.error, /375/);
  // The schema's own rules: the SDK refuses the call, nothing reaches the API.
  const before = (await s.ledger.usage(poor.id, { limit: 50 })).entries.length;
  const bad = await call(c, 'search', { query: 'coffee', limit: 301 });
  assert.is(bad.isError, true);
  assert.match(bad.content[0]!.text, /limit/);
  const unknown = await call(c, 'search', { query: 'coffee', depth: 3 });
  assert.is(unknown.isError, true);
  assert.is((await s.ledger.usage(poor.id, { limit: 50 })).entries.length, before);
});

test('the alerts tools make, list, read and delete a watch as the HTTP routes do; a refused address is the HTTP 400', async () => {
  const c = await connect(s.demo.secret);
  const body = {
    name: 'via mcp',
    target: { kind: 'query', query: 'coffee' },
    conditions: { new_narrative: true },
    url: 'https://93.184.215.14/hook',
  };
  const made = await call(c, 'alerts_create', body);
  assert.not.ok(made.isError, JSON.stringify(made.structuredContent));
  const w = made.structuredContent.watch;
  assert.equal([w.name, w.target, w.windows], ['via mcp', body.target, ['7d']]);
  assert.match(made.structuredContent.secret, /^whsec_/);
  assert.ok((await call(c, 'alerts_list')).structuredContent.items.some((x: { id: string }) => x.id === w.id));
  assert.equal((await call(c, 'alerts_get', { id: w.id })).structuredContent, { watch: w, events: [] });
  const refused = await call(c, 'alerts_create', { ...body, url: 'http://127.0.0.1:9/hook' });
  assert.equal([refused.isError, refused.structuredContent.status], [true, 400]);
  assert.match(refused.structuredContent.error, /loopback or private address/);
  assert.equal((await call(c, 'alerts_delete', { id: w.id })).structuredContent, { id: w.id, deleted: true });
  const gone = await call(c, 'alerts_get', { id: w.id });
  assert.equal([gone.isError, gone.structuredContent.status], [true, 404]);
});

test('an unauthenticated attempt is a 403 before any MCP exchange', async () => {
  const raw = await fetch(`${s.baseUrl}/mcp`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } },
    }),
  });
  assert.is(raw.status, 403);
  assert.equal(Object.keys((await raw.json()) as object).sort(), ['error', 'request_id']);
  const wrong = await fetch(`${s.baseUrl}/mcp`, {
    method: 'POST',
    headers: { 'x-api-key': 'not-a-key', 'content-type': 'application/json' },
    body: '{}',
  });
  assert.is(wrong.status, 403);
  let failed = false;
  try {
    await connect(null);
  } catch {
    failed = true;
  }
  assert.ok(failed, 'the SDK client without a key cannot connect');
});

test.run();
