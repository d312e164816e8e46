// The OpenAPI document against the real server: real responses of every endpoint (success and
// error cases) validated with ajv against the response schema the document gives for that path,
// method and status. A field the server sends and the document forbids, or a required field the
// server forgets, fails here.
import { Ajv2020 } from 'ajv/dist/2020.js';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { pollUntil } from '../../core/infra/wait-at-most.ts';
import { toMicro } from '../../ledger/money.ts';
import { insightsResult } from '../../serve/jobs/analyses.ts';
import { TemplateSummariser } from '../../serve/jobs/summariser.ts';
import type { RunningServer } from '../../serve/server.ts';
import { testServer } from '../helpers/server.ts';
import { pipedSampleDir } from '../helpers/pipeline.ts';
import { cleanupTmp } from '../helpers/tmp.ts';

let s: RunningServer;
let doc: any;
const seen = new Set<string>();

/** Whether json matches the document's schema at schemaRef, and ajv's account of why not. */
function matches(schemaRef: string, json: unknown): { ok: boolean; why: string } {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  ajv.addSchema({ $id: 'doc', components: doc.components });
  const validate = ajv.compile({ $ref: `doc${schemaRef}` });
  const ok = validate(json) as boolean;
  return { ok, why: ajv.errorsText(validate.errors, { separator: '\n' }) };
}

async function check(
  method: string,
  path: string,
  template: string,
  opts: { key?: string | null; body?: unknown; headers?: Record<string, string>; form?: string } = {},
): Promise<any> {
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.key !== null) headers['x-api-key'] = opts.key ?? s.demo.secret;
  if (opts.body !== undefined) headers['content-type'] = 'application/json';
  // `form`: the body as `curl -d` sends it (application/x-www-form-urlencoded).
  if (opts.form !== undefined) headers['content-type'] = 'application/x-www-form-urlencoded';
  const res = await fetch(`${s.baseUrl}${path}`, {
    method,
    headers,
    body: opts.form ?? (opts.body === undefined ? undefined : JSON.stringify(opts.body)),
  });
  const text = await res.text();
  // A thumbnail is bytes; every other answer JSON.
  const json: any = text && res.headers.get('content-type')?.includes('json') ? JSON.parse(text) : text || null;
  const op = doc.paths[template]?.[method.toLowerCase()];
  assert.ok(op, `${method} ${template} is in the document`);
  const response = op.responses[String(res.status)];
  assert.ok(response, `${method} ${template}: status ${res.status} is documented`);
  const schema = response.content?.['application/json']?.schema;
  if (response.content) assert.ok(text !== '', `${method} ${path} ${res.status}: a documented body is there`);
  if (schema) {
    const m = matches(schema.$ref, json);
    assert.ok(m.ok, `${method} ${path} ${res.status}: ${m.why}`);
  }
  seen.add(`${method} ${template}`);
  return json;
}

test.before(async () => {
  const dir = await pipedSampleDir();
  // Pattern entries on, so their schema (PatternEntry) meets real ones too; off is the default.
  s = await testServer(dir, { SEARCH_PATTERNS: 'on' });
  doc = await (await fetch(`${s.baseUrl}/openapi.json`)).json();
});

test.after(async () => {
  await s?.close();
  cleanupTmp();
});

/** Searches: answers with narratives and patterns, none, bad input, no key, a form body, too little credit. */
async function checkSearch(): Promise<{ answer: any; poor: { id: string } }> {
  const answer = await check('POST', '/search', '/search', { body: { query: 'sourdough starter bread', limit: 30, window: 'all' } });
  assert.ok(answer.content.length > 0);
  const withPatterns = await check('POST', '/search', '/search', { body: { query: 'teal waves pastel', limit: 50, window: 'all' } });
  assert.ok(withPatterns.patterns.length > 0, 'pattern entries validated');
  await check('POST', '/search', '/search', { body: { query: 'qqqqzzzz' } });
  await check('POST', '/search', '/search', { body: { query: 'x', limit: 0 } });
  await check('POST', '/search', '/search', { key: 'nope', body: { query: 'x' } });
  assert.match(
    (await check('POST', '/search', '/search', { form: '{"query":"x"}' })).error,
    /must be JSON sent with Content-Type: application\/json/,
  );
  const poor = await s.ledger.createAccount('poor');
  await s.ledger.topup(poor.id, toMicro('0.1'));
  await check('POST', '/search', '/search', { key: (await s.ledger.createKey(poor.id)).secret, body: { query: 'x' } });
  return { answer, poor };
}

/** Narratives: trending, search, one by id and by key, trajectories (an emergent one among them), related. */
async function checkNarratives(answer: any): Promise<string> {
  const trending = await check('GET', '/narratives/trending?window=all', '/narratives/trending');
  const id = trending.items[0].id;
  await check('GET', `/narratives/search?q=${encodeURIComponent(trending.items[0].label)}`, '/narratives/search');
  await check('GET', `/narratives/${id}`, '/narratives/{id}');
  await check('GET', '/narratives/nope', '/narratives/{id}');
  for (const n of answer.narratives) {
    await check('GET', `/narratives/${n.id}`, '/narratives/{id}');
    await check('GET', `/narratives/${n.id}/trajectory`, '/narratives/{id}/trajectory');
  }
  assert.ok(
    answer.narratives.some((n: { source: string }) => n.source === 'emergent'),
    'an emergent trajectory validated',
  );
  await check('GET', `/narratives/${id}/trajectory`, '/narratives/{id}/trajectory');
  await check('GET', `/narratives/${id}/related?limit=3`, '/narratives/{id}/related');
  await check('GET', `/narratives/${answer.narratives[0].id}/related`, '/narratives/{id}/related');
  assert.is((await check('GET', `/narratives/${trending.items[0].narrative_key}`, '/narratives/{id}')).resolved_by, 'narrative_key');
  await check('GET', `/narratives/${trending.items[0].narrative_key}/trajectory`, '/narratives/{id}/trajectory');
  return id;
}

/** Themes, the trending narratives of one, and a tracked narrative naming its theme. */
async function checkThemes(id: string): Promise<void> {
  const themes = await check('GET', '/themes?window=all&daily=true', '/themes');
  assert.ok(themes.items.length > 0 && themes.items.every((t: { daily_counts?: number[] }) => t.daily_counts?.length));
  await check('GET', `/themes/${themes.items[0].id}`, '/themes/{id}');
  assert.is((await check('GET', `/themes/${themes.items[0].theme_key}`, '/themes/{id}')).resolved_by, 'theme_key');
  await check('GET', '/themes/nope', '/themes/{id}');
  await check('GET', '/themes?sort=nope', '/themes');
  const inTheme = await check('GET', `/narratives/trending?theme=${themes.items[0].id}`, '/narratives/trending');
  assert.ok(inTheme.items.every((n: { theme_id: string }) => n.theme_id === themes.items[0].id));
  await check('GET', '/narratives/trending?theme=nope', '/narratives/trending');
  assert.ok((await check('GET', `/narratives/${id}`, '/narratives/{id}')).theme, 'a tracked narrative names its theme');
}

/** Patterns and their content and lookalikes; usage, health, prices; daily counts; media. */
async function checkPatternsAndMedia(): Promise<void> {
  const patterns = await check('GET', '/intelligence/patterns?scope=all', '/intelligence/patterns');
  const key = patterns.items[0].patternKey;
  await check('GET', `/intelligence/patterns/${key}`, '/intelligence/patterns/{patternKey}');
  const content = await check('GET', `/intelligence/patterns/${key}/content?limit=1`, '/intelligence/patterns/{patternKey}/content');
  if (content.nextCursor)
    await check(
      'GET',
      `/intelligence/patterns/${key}/content?limit=1&cursor=${content.nextCursor}`,
      '/intelligence/patterns/{patternKey}/content',
    );
  await check('GET', `/intelligence/patterns/${key}/lookalikes`, '/intelligence/patterns/{patternKey}/lookalikes');
  await check('GET', '/intelligence/patterns?sort=nope', '/intelligence/patterns');
  await check('GET', '/usage', '/usage');
  await check('GET', '/health', '/health');
  await check('GET', '/billing/prices', '/billing/prices');
  const daily = await check('GET', '/narratives/trending?window=30d&daily=true&sort=engagement', '/narratives/trending');
  assert.ok(daily.items.every((n: { daily_counts?: number[] }) => n.daily_counts?.length === 30));
  const uuid = patterns.items[0].medoidContentUuids[0];
  assert.ok((await check('GET', `/media/${uuid}`, '/media/{uuid}')).items.length > 0);
  await check('GET', `/media/${uuid}/0`, '/media/{uuid}/{index}');
  await check('GET', '/media/nope', '/media/{uuid}');
  const batch = await check('GET', `/media?uuids=${uuid},nope`, '/media');
  assert.equal(
    batch.items.map((x: { media: unknown }) => x.media === null),
    [false, true],
  );
  await check('GET', '/media?uuids=', '/media');
  await check('GET', `/media/${uuid}/x`, '/media/{uuid}/{index}');
}

/** Jobs: each kind submitted, polled to its end and re-read from the cache; their errors. */
async function checkJobs(poor: { id: string }): Promise<void> {
  const rich = await s.ledger.createAccount('rich');
  await s.ledger.topup(rich.id, toMicro('500'));
  const richKey = (await s.ledger.createKey(rich.id)).secret;
  for (const body of [
    { kind: 'records', query: 'coffee', limit: 30, window: 'all' },
    { kind: 'insights', query: 'coffee', limit: 300, window: 'all' },
    { kind: 'insights', query: 'coffee', window: 'all', includeSignals: true },
    { kind: 'patterns', query: 'teal waves pastel', window: 'all' },
    { kind: 'stats', query: 'coffee', window: 'all' },
  ]) {
    const sub = await check('POST', '/intelligence/jobs', '/intelligence/jobs', { key: richKey, body });
    let job: any = sub;
    await pollUntil(
      'the job',
      async () =>
        ['succeeded', 'failed'].includes(
          (job = await check('GET', `/intelligence/jobs/${sub.jobId}`, '/intelligence/jobs/{jobId}', { key: richKey })).status,
        ),
      60_000,
    );
    if (job.status === 'succeeded')
      assert.is((await check('POST', '/intelligence/jobs', '/intelligence/jobs', { key: richKey, body })).cached, true);
  }
  await check('POST', '/intelligence/jobs', '/intelligence/jobs', { key: richKey, body: { kind: 'records', query: 'x', depth: 1 } });
  await check('POST', '/intelligence/jobs', '/intelligence/jobs', {
    key: (await s.ledger.createKey(poor.id)).secret,
    body: { kind: 'insights', query: 'x' },
  });
  await check('GET', '/intelligence/jobs/job_nope', '/intelligence/jobs/{jobId}', { key: richKey });
  await check('POST', '/intelligence/jobs', '/intelligence/jobs', { key: richKey, form: '{"kind":"stats","query":"x"}' });
}

/** Alerts: a watch made (to a public address literal: no DNS lookup), listed, read, deleted; a private address refused. */
async function checkAlerts(): Promise<void> {
  const watchBody = {
    target: { kind: 'query', query: 'coffee' },
    conditions: { momentum: { level: 0.5 } },
    url: 'https://93.184.215.14/hook',
  };
  const made = await check('POST', '/alerts', '/alerts', { body: watchBody });
  assert.match(made.secret, /^whsec_/);
  await check('GET', '/alerts', '/alerts');
  await check('GET', `/alerts/${made.watch.id}`, '/alerts/{id}');
  await check('GET', `/alerts/${made.watch.id}/deliveries?limit=5`, '/alerts/{id}/deliveries');
  await check('GET', `/alerts/${made.watch.id}/deliveries?limit=0`, '/alerts/{id}/deliveries');
  await check('POST', `/alerts/${made.watch.id}/events/evt_nothing/redeliver`, '/alerts/{id}/events/{event_id}/redeliver');
  await check('POST', `/alerts/${made.watch.id}/resume`, '/alerts/{id}/resume');
  await check('POST', '/alerts', '/alerts', { body: { ...watchBody, url: 'http://127.0.0.1/hook' } });
  await check('POST', '/alerts', '/alerts', { form: JSON.stringify(watchBody) });
  await check('DELETE', `/alerts/${made.watch.id}`, '/alerts/{id}');
  await check('GET', `/alerts/${made.watch.id}`, '/alerts/{id}');
  await check('DELETE', `/alerts/${made.watch.id}`, '/alerts/{id}');
}

/** MCP: initialize with and without a key, without the accept header, as a form, a notification. */
async function checkMcp(): Promise<void> {
  const initialize = {
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'openapi-test', version: '1' } },
  };
  const mcpHeaders = { accept: 'application/json, text/event-stream' };
  assert.is(
    (await check('POST', '/mcp', '/mcp', { body: initialize, headers: mcpHeaders })).result.serverInfo.name,
    'content-intelligence',
  );
  await check('POST', '/mcp', '/mcp', { key: null, body: initialize, headers: mcpHeaders });
  await check('POST', '/mcp', '/mcp', { body: initialize });
  await check('POST', '/mcp', '/mcp', { form: JSON.stringify(initialize), headers: mcpHeaders });
  await check('POST', '/mcp', '/mcp', { body: { jsonrpc: '2.0', method: 'notifications/initialized' }, headers: mcpHeaders });
}

test('the document is OpenAPI 3.1 and every response of every endpoint matches it', async () => {
  assert.is(doc.openapi, '3.1.0');
  const { answer, poor } = await checkSearch();
  await checkThemes(await checkNarratives(answer));
  await checkPatternsAndMedia();
  await checkJobs(poor);
  await checkAlerts();
  await checkMcp();
  for (const probe of ['/livez', '/readyz']) await check('GET', probe, probe, { key: null });
  // Every documented operation was exercised.
  const documented = Object.entries(doc.paths)
    .flatMap(([p, ops]) => Object.keys(ops as object).map((m) => `${m.toUpperCase()} ${p}`))
    .filter((x) => x !== 'GET /openapi.json');
  assert.equal(
    documented.filter((d) => !seen.has(d)),
    [],
  );
});

test('the documented query rules are the ones enforced: every integer parameter at its maximum is taken, one past it refused', async () => {
  const trending = (await (
    await fetch(`${s.baseUrl}/narratives/trending?window=all`, { headers: { 'x-api-key': s.demo.secret } })
  ).json()) as any;
  const patterns = (await (
    await fetch(`${s.baseUrl}/intelligence/patterns?scope=all`, { headers: { 'x-api-key': s.demo.secret } })
  ).json()) as any;
  const ids: Record<string, string> = {
    id: trending.items[0].id,
    patternKey: patterns.items[0].patternKey,
    uuid: patterns.items[0].medoidContentUuids[0],
    index: '0',
  };
  const watchId = (
    (await (
      await fetch(`${s.baseUrl}/alerts`, {
        method: 'POST',
        headers: { 'x-api-key': s.demo.secret, 'content-type': 'application/json' },
        body: JSON.stringify({ target: { kind: 'any' }, conditions: { new_narrative: true }, url: 'https://93.184.215.14/hook' }),
      })
    ).json()) as { watch: { id: string } }
  ).watch.id;
  let checked = 0;
  for (const [template, ops] of Object.entries(
    doc.paths as Record<
      string,
      Record<string, { parameters?: Array<{ name: string; in: string; schema: { type?: string; maximum?: number; minimum?: number } }> }>
    >,
  )) {
    const get = ops.get;
    if (!get?.parameters) continue;
    // A watch's routes take a watch id (alw_...), the others the ids above.
    const path = template.replace(/\{(\w+)\}/g, (_m, name: string) => (template.startsWith('/alerts/') ? watchId : ids[name]!));
    for (const p of get.parameters.filter((x) => x.in === 'query' && x.schema.type === 'integer' && x.schema.maximum !== undefined)) {
      const at = await fetch(`${s.baseUrl}${path}?${p.name}=${p.schema.maximum}${template === '/narratives/search' ? '&q=coffee' : ''}`, {
        headers: { 'x-api-key': s.demo.secret },
      });
      // A thumbnail's frame names a file: the largest frame number is taken, and no post has that many frames.
      const taken = template === '/media/{uuid}/{index}' ? 404 : 200;
      assert.is(at.status, taken, `${template} ${p.name}=${p.schema.maximum}`);
      if (taken === 404) assert.match(((await at.json()) as { error: string }).error, /no frame/);
      const past = await fetch(
        `${s.baseUrl}${path}?${p.name}=${p.schema.maximum! + 1}${template === '/narratives/search' ? '&q=coffee' : ''}`,
        { headers: { 'x-api-key': s.demo.secret } },
      );
      assert.is(past.status, 400, `${template} ${p.name} past ${p.schema.maximum}`);
      assert.match(
        ((await past.json()) as { error: string }).error,
        new RegExp(`${p.name} must be between ${p.schema.minimum} and ${p.schema.maximum}`),
      );
      checked++;
    }
  }
  assert.ok(checked >= 8, `${checked} parameters checked`);
  // The bodies too: the search limit's documented maximum is the enforced one.
  const max = doc.components.schemas.SearchRequest.properties.limit.maximum as number;
  const body = (limit: number) =>
    fetch(`${s.baseUrl}/search`, {
      method: 'POST',
      headers: { 'x-api-key': s.demo.secret, 'content-type': 'application/json' },
      body: JSON.stringify({ query: 'coffee', limit }),
    });
  assert.is((await body(max)).status, 200);
  assert.is((await body(max + 1)).status, 400);
});

test('an insights result with signals matches its schema (the sample is under every signals floor, so built here directly)', async () => {
  const lease = s.snapshots.lease();
  try {
    const r = { kind: 'insights', query: 'coffee', limit: 600, window: 'all', includeSignals: true } as const;
    const { ranked } = await s.searchEngine.search(lease.gen, { query: r.query, limit: 300, window: r.window });
    const result = JSON.parse(await insightsResult(lease.gen, r, ranked, new TemplateSummariser()));
    assert.ok(result.signals && Array.isArray(result.signals.anomalies));
    const m = matches('#/components/schemas/InsightsResult', result);
    assert.ok(m.ok, m.why);
    assert.not.ok(
      matches('#/components/schemas/InsightsResult', { ...result, signals: { ...result.signals, lifecycle: 'booming' } }).ok,
      'a wrong lifecycle fails',
    );
  } finally {
    lease.release();
  }
});

test.run();
