// Ids a client can keep, and a trajectory for every narrative the detail endpoint answers: a real
// server over the sample, then a second pipeline run a day later (new narrative ids), hot-swapped.
// Tracked ids, narrative keys, earlier ids, emergent ids from a search, pattern keys; the JSON
// types of a narrative's fields the same in the narrative and in its trajectory points.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { loadConfig } from '../../core/infra/config.ts';
import { createLogger } from '../../core/infra/log.ts';
import { startServer, type RunningServer } from '../../serve/server.ts';
import { callApi } from '../helpers/http.ts';
import { AS_OF, runPipeline, pipedSampleDir } from '../helpers/pipeline.ts';
import { cleanupTmp } from '../helpers/tmp.ts';

let s: RunningServer;
let dir: string;
const call = (path: string) => callApi(s.baseUrl, s.demo.secret, 'GET', path);
const post = (path: string, body: unknown) => callApi(s.baseUrl, s.demo.secret, 'POST', path, { body });

test.before(async () => {
  dir = await pipedSampleDir();
  s = await startServer(
    loadConfig({ DATA_DIR: dir, PORT: '0', LOG_LEVEL: 'silent', DEMO_CREDITS: '100', RATE_LIMIT_RPS: '1000', RATE_LIMIT_BURST: '1000' }),
    createLogger('test', 'silent'),
  );
});

test.after(async () => {
  await s?.close();
  cleanupTmp();
});

/** The fields a narrative and its trajectory points share, with their one JSON type. */
function assertTypes(x: Record<string, unknown>, what: string): void {
  for (const k of ['content_count', 'creator_count', 'momentum_score', 'emerging_score']) assert.type(x[k], 'number', `${what}.${k}`);
  assert.type(x.total_engagement, 'string', `${what}.total_engagement`);
  assert.match(x.total_engagement as string, /^\d+$/);
}

let firstGen: { id: string; key: string; patternKey: string; emergentId: string };

test("every narrative the detail endpoint answers has a trajectory: tracked and emergent, with the members' daily series", async () => {
  const t = await call('/narratives/trending?window=30d&limit=1');
  const n = t.json.items[0];
  assertTypes(n, 'narrative');
  const tr = await call(`/narratives/${n.id}/trajectory`);
  assert.is(tr.status, 200);
  assert.is(tr.json.source, 'tracked');
  assert.is(tr.json.points.length, 1);
  assertTypes(tr.json.points[0], 'trajectory point');
  assert.is(tr.json.points[0].content_count, n.content_count);
  assert.is(tr.json.points[0].total_engagement, n.total_engagement);
  // The daily series is the members' own: the same counts as daily_counts, dated, with engagement.
  assert.equal(
    tr.json.daily.map((d: { content_count: number }) => d.content_count),
    tr.json.daily_counts,
  );
  assert.is(tr.json.daily.length, 30);
  assert.is(Date.parse(tr.json.daily.at(-1).start) + 86_400_000, Date.parse(tr.json.points[0].as_of));
  assert.ok(tr.json.daily.every((d: { engagement: number }) => Number.isFinite(d.engagement) && d.engagement >= 0));

  // An emergent narrative from a search answer: readable, and now with a trajectory too.
  const r = await post('/search', { query: 'sourdough starter bread', limit: 60, window: 'all' });
  const em = r.json.narratives.find((x: { source: string }) => x.source === 'emergent');
  assert.ok(em, 'the search formed an emergent narrative');
  assertTypes(em, 'emergent narrative');
  assert.is((await call(`/narratives/${em.id}`)).status, 200);
  const et = await call(`/narratives/${em.id}/trajectory`);
  assert.is(et.status, 200, JSON.stringify(et.json));
  assert.is(et.json.source, 'emergent');
  assert.is(et.json.narrative_key, null);
  assert.is(et.json.window_key, 'all');
  assert.is(et.json.points.length, 1);
  assertTypes(et.json.points[0], 'emergent point');
  assert.is(et.json.points[0].content_count, em.content_count);
  assert.is(
    et.json.daily_counts.reduce((a: number, b: number) => a + b, 0),
    em.content_count,
    "every member is in the window's series",
  );
  assert.equal(
    et.json.daily.map((d: { content_count: number }) => d.content_count),
    et.json.daily_counts,
  );

  const p = await call('/intelligence/patterns?scope=all&limit=50');
  firstGen = { id: n.id, key: n.narrative_key, patternKey: p.json.items[0].patternKey, emergentId: em.id };
});

test('a narrative_key resolves to the current narrative of its story; the answer says so', async () => {
  const byKey = await call(`/narratives/${firstGen.key}`);
  assert.is(byKey.status, 200);
  assert.is(byKey.json.narrative.id, firstGen.id);
  assert.is(byKey.json.resolved_by, 'narrative_key');
  assert.is(byKey.json.requested_id, firstGen.key);
  assert.is(byKey.json.generation, 'g000001');
  const own = await call(`/narratives/${firstGen.id}`);
  assert.is(own.json.resolved_by, undefined, 'a current id needs no resolving');
  const tr = await call(`/narratives/${firstGen.key}/trajectory`);
  assert.is(tr.json.id, firstGen.id);
  const none = await call('/narratives/no-such-id');
  assert.is(none.status, 404);
  assert.match(none.json.error, /not an id of generation g000001 or of an earlier one in its history, nor a narrative_key/);
});

test('after the next run: earlier ids and keys lead to the story now; gone ones say why; pattern keys last', async () => {
  await runPipeline(dir, ['run'], new Date(AS_OF.getTime() + 86_400_000));
  await s.snapshots.refresh();
  assert.is((await call('/health')).json.generation, 'g000002');
  const now = await call(`/narratives/${firstGen.key}`);
  if (now.status === 200) {
    assert.is(now.json.generation, 'g000002');
    assert.is(now.json.narrative.narrative_key, firstGen.key);
    assert.is.not(now.json.narrative.id, firstGen.id, 'ids are per generation');
    const earlier = await call(`/narratives/${firstGen.id}`);
    assert.is(earlier.status, 200);
    assert.is(earlier.json.resolved_by, 'earlier_generation_id');
    assert.is(earlier.json.narrative.id, now.json.narrative.id);
    const tr = await call(`/narratives/${firstGen.id}/trajectory`);
    assert.equal(
      tr.json.points.map((p: { generation: string }) => p.generation),
      ['g000001', 'g000002'],
    );
    for (const p of tr.json.points) assertTypes(p, 'point');
  } else {
    assert.is(now.status, 404);
    assert.match(now.json.error, /has no narrative in generation g000002 \(it ended/);
  }
  // Every key of generation 1 either leads to a narrative now or says it ended; the history stays readable.
  const g1 = await call('/narratives/trending?window=all&limit=100');
  let carried = 0;
  for (const n of g1.json.items) carried += n.narrative_key ? 1 : 0;
  assert.ok(carried > 0);
  const ended = [...s.snapshots.generation!.maps.narrativeHistory.keys()].filter(
    (k) => !s.snapshots.generation!.maps.narrativeByKey.has(k),
  );
  for (const k of ended.slice(0, 3)) {
    const d = await call(`/narratives/${k}`);
    assert.is(d.status, 404);
    assert.match(d.json.error, /has no narrative in generation g000002/);
    const tr = await call(`/narratives/${k}/trajectory`);
    assert.is(tr.status, 200);
    assert.is(tr.json.ended, true);
    assert.ok(tr.json.points.length >= 1);
  }
  // An emergent id belongs to the generation its search ran on.
  const em = await call(`/narratives/${firstGen.emergentId}/trajectory`);
  assert.is(em.status, 404);
  assert.match(
    em.json.error,
    /emergent narratives stay readable for an hour after the search that formed them, on the generation it ran on/,
  );
  // Pattern keys are the stable ids of patterns: one that lasted reads in the new generation.
  const p = await call(`/intelligence/patterns/${firstGen.patternKey}`);
  if (p.status === 200) assert.is(p.json.pattern.generation, 'g000002');
  else assert.match(p.json.error, /has no entry in generation g000002: it ended/);
  assert.match((await call('/intelligence/patterns/pk-none')).json.error, /no pattern pk-none: not a pattern key/);
});

test.run();
