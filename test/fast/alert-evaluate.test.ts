// The evaluation of a publish (serve/alerts/evaluate.ts; docs/api.md, "Alerts") on two real
// generations: the committed sample published, then a small new story (fixtures/planted-story.ts)
// arriving in an incremental run. The story fires new_narrative for an "any" watch and for a query
// watch naming it, not for watches on something else; each condition's events are exactly the
// narratives whose figures meet its rule; the same publish evaluated twice gives the same ids; a
// watch made after the publish sees nothing of it.
import path from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { dataDirLayout } from '../../core/infra/data-dir.ts';
import { generationDir, readCurrent } from '../../core/snapshots/generations.ts';
import { plantedStory } from '../../fixtures/planted-story.ts';
import type { AlertEvent, Watch } from '../../serve/alerts/alert-model.ts';
import { createEvaluation, EVENT_POSTS, eventId, type Publish } from '../../serve/alerts/evaluate.ts';
import { loadGeneration, type LoadedGeneration } from '../../serve/generation/loaded-generation.ts';
import { AS_OF, runPipeline, sampleDataDir } from '../helpers/pipeline.ts';
import { cleanupTmp, writeLines } from '../helpers/tmp.ts';

const LATER = new Date(AS_OF.getTime() + 3_600_000);
const BASE = 'http://127.0.0.1:9/api';
let first: LoadedGeneration;
let second: LoadedGeneration;
let madeAt: string;

async function served(d: string): Promise<LoadedGeneration> {
  const layout = dataDirLayout(d);
  return loadGeneration(generationDir(layout, (await readCurrent(layout))!));
}

test.before(async () => {
  const d = sampleDataDir();
  await runPipeline(d, ['run'], AS_OF);
  first = await served(d);
  madeAt = new Date().toISOString();
  writeLines(path.join(d, 'landing', 'planted.ndjson'), plantedStory(LATER));
  await runPipeline(d, ['run'], LATER);
  second = await served(d);
});

test.after(cleanupTmp);

function publish(now = '2026-11-27T00:00:00.000Z'): Publish {
  return {
    after: {
      id: second.id,
      asOf: second.manifest.as_of,
      computedAt: second.manifest.computed_at,
      maps: second.maps,
      posts: (rows) => Array.from(rows, (r) => ({ uuid: second.index.uuid.get(r)!, title: second.content.title.get(r), url: null })),
    },
    before: { id: first.id, asOf: first.manifest.as_of, maps: first.maps },
    baseUrl: BASE,
    now,
  };
}

let n = 0;
function watch(target: Watch['target'], conditions: Watch['conditions'], windows: Watch['windows'] = ['7d', '30d', '90d', 'all']): Watch {
  return {
    id: `alw_test${++n}`,
    account: 'acct_test',
    name: null,
    target,
    windows,
    conditions,
    url: 'http://127.0.0.1:9/hook',
    created_at: madeAt,
    secret_version: 1,
    paused: null,
  };
}

const isStory = (e: AlertEvent) => /kombucha|brightbrew|mould/i.test(e.narrative.label);

test('the two generations: the second names the first as its previous one and holds the planted story as a new narrative', () => {
  assert.is(second.manifest.previous_generation, first.id);
  const story = second.maps.narratives.filter((ln) => /kombucha|brightbrew|mould/i.test(ln.narrative.label));
  assert.ok(story.length > 0, 'the story is a narrative');
  for (const ln of story) assert.not.ok(first.maps.narrativeByKey.has(ln.narrative.narrative_key!), `${ln.narrative.label} is new`);
});

test('a new story fires new_narrative for an "any" watch and for a query watch naming it, not for watches on something else', () => {
  const evaluate = createEvaluation(publish());
  const any = evaluate(watch({ kind: 'any' }, { new_narrative: true }));
  const story = any.filter(isStory);
  assert.ok(story.length > 0, `the any watch fires for the story (fired for: ${any.map((e) => e.narrative.label).join(' | ')})`);
  // Exactly the narratives whose key the first generation lacks, in the watched windows.
  const expected = second.maps.narratives
    .filter((ln) => !first.maps.narrativeByKey.has(ln.narrative.narrative_key!))
    .map((ln) => ln.narrative.id);
  assert.equal(any.map((e) => e.narrative.id).sort(), expected.sort());
  const only7d = evaluate(watch({ kind: 'any' }, { new_narrative: true }, ['7d']));
  assert.ok(only7d.length > 0 && only7d.every((e) => e.window === '7d'), 'a watch sees its windows only');

  const named = evaluate(watch({ kind: 'query', query: 'kombucha recall' }, { new_narrative: true }));
  assert.ok(named.some(isStory), 'the query watch naming it fires');
  assert.ok(named.every((e) => e.type === 'narrative.new_narrative'));

  const other = evaluate(watch({ kind: 'query', query: 'sourdough starter' }, { new_narrative: true }));
  assert.not.ok(other.some(isStory), `a query on something else does not fire for it (${other.map((e) => e.narrative.label)})`);
  const kept = first.maps.narratives.find((ln) => second.maps.narrativeByKey.has(ln.narrative.narrative_key!))!;
  const onOne = evaluate(
    watch({ kind: 'narrative', narrative_key: kept.narrative.narrative_key! }, { new_narrative: true }, [
      kept.narrative.window_key as '7d',
    ]),
  );
  assert.equal(onOne, [], 'a narrative that existed before is never new');

  // The event: why, the figures after (none before), the narrative's link and its most central posts.
  const e = story[0]!;
  const ln = second.maps.narrativeByKey.get(e.narrative.narrative_key)!;
  assert.is(e.type, 'narrative.new_narrative');
  assert.is(e.generation, second.id);
  assert.is(e.previous_generation, first.id);
  assert.is(e.why.before, null);
  assert.is(e.why.after.content_count, ln.narrative.content_count);
  assert.is(e.why.after.narrative_id, ln.narrative.id);
  assert.is(e.why.after.last_day_posts, ln.dailyCounts.at(-1));
  assert.match(e.why.text, /^new narrative ".+" with \d+ posts$/);
  assert.is(e.narrative.url, `${BASE}/narratives/${ln.narrative.id}`);
  assert.is(e.posts.length, Math.min(EVENT_POSTS, ln.members.length));
  assert.equal(
    e.posts.map((p) => p.uuid),
    Array.from(ln.members.subarray(0, EVENT_POSTS), (r) => second.index.uuid.get(r)),
  );
  assert.ok(
    e.posts.every((p) => p.uuid.startsWith('planted-story-')),
    'its most central posts are the story',
  );
  assert.is(e.id, eventId(e.watch_id, 'new_narrative', e.narrative.narrative_key, second.id));
});

test('momentum, lifecycle and spike events are exactly the narratives whose figures before and after meet the rule', () => {
  const evaluate = createEvaluation(publish());
  const kept = second.maps.narratives.filter((ln) => first.maps.narrativeByKey.has(ln.narrative.narrative_key!));
  const was = (ln: (typeof kept)[number]) => first.maps.narrativeByKey.get(ln.narrative.narrative_key!)!.narrative;
  const ids = (xs: Array<{ narrative: { id: string } }>) => xs.map((e) => e.narrative.id).sort();
  // Levels between the figures the narratives really have, so some cross and some do not.
  const moved = kept.filter((ln) => ln.narrative.momentum_score !== was(ln).momentum_score);
  assert.ok(moved.length > 0, 'some momentum moved between the generations');
  for (const direction of ['up', 'down'] as const) {
    const pair = moved.find((ln) => (direction === 'up') === ln.narrative.momentum_score > was(ln).momentum_score);
    if (!pair) continue;
    const level = (pair.narrative.momentum_score + was(pair).momentum_score) / 2;
    const events = evaluate(watch({ kind: 'any' }, { momentum: { level, direction } }));
    const crossed = kept.filter((ln) =>
      direction === 'up'
        ? was(ln).momentum_score < level && ln.narrative.momentum_score >= level
        : was(ln).momentum_score >= level && ln.narrative.momentum_score < level,
    );
    assert.ok(crossed.length > 0);
    assert.equal(ids(events), ids(crossed), `momentum ${direction} ${level}`);
    const e = events[0]!;
    assert.match(e.why.text, /^momentum \d\.\d\d -> \d\.\d\d crossed [\d.]+$/);
    assert.is(e.why.before!.momentum_score, was(second.maps.narrativeById.get(e.narrative.id)!).momentum_score);
  }
  const changed = kept.filter((ln) => ln.narrative.lifecycle !== was(ln).lifecycle);
  const lifecycle = evaluate(watch({ kind: 'any' }, { lifecycle: {} }));
  assert.equal(ids(lifecycle), ids(changed));
  for (const e of lifecycle) assert.is(e.why.text, `lifecycle ${e.why.before!.lifecycle ?? 'none'} -> ${e.why.after.lifecycle ?? 'none'}`);
  // An hour apart no lifecycle changes on the sample: the previous generation's figures of one
  // narrative are set to another lifecycle, so the rule meets a change and a change it filters out.
  const target = kept.find((ln) => ln.narrative.lifecycle !== null)!;
  const key = target.narrative.narrative_key!;
  const other = target.narrative.lifecycle === 'declining' ? 'growing' : 'declining';
  const edited = { ...was(target), lifecycle: other };
  const before = { ...first.maps, narrativeByKey: new Map(first.maps.narrativeByKey) };
  before.narrativeByKey.set(key, { ...first.maps.narrativeByKey.get(key)!, narrative: edited });
  const p = publish();
  const evaluateEdited = createEvaluation({ ...p, before: { ...p.before, maps: before } });
  const fired = evaluateEdited(watch({ kind: 'any' }, { lifecycle: {} }));
  assert.equal(ids(fired), ids([...changed, target]));
  assert.is(fired.find((e) => e.narrative.narrative_key === key)!.why.text, `lifecycle ${other} -> ${target.narrative.lifecycle}`);
  const to = target.narrative.lifecycle as 'growing';
  assert.ok(evaluateEdited(watch({ kind: 'any' }, { lifecycle: { to: [to] } })).some((e) => e.narrative.narrative_key === key));
  assert.not.ok(evaluateEdited(watch({ kind: 'any' }, { lifecycle: { to: [other] } })).some((e) => e.narrative.narrative_key === key));
  const spikes = evaluate(watch({ kind: 'any' }, { spike: true }));
  assert.ok(spikes.some(isStory), 'the new story spikes on its newest day');
  for (const e of spikes) {
    assert.ok(e.why.after.spike, 'the newest day spikes now');
    assert.not.ok(e.why.before?.spike, 'and did not before');
  }
});

test('the same publish evaluated twice gives the same event ids; a watch made after the publish sees nothing of it', () => {
  const w = watch({ kind: 'any' }, { new_narrative: true, spike: true, lifecycle: {}, momentum: { level: 0.3 } });
  const a = createEvaluation(publish('2026-11-27T00:00:00.000Z'))(w);
  const b = createEvaluation(publish('2026-11-27T01:00:00.000Z'))(w);
  assert.ok(a.length > 0);
  assert.equal(
    a.map((e) => e.id),
    b.map((e) => e.id),
  );
  assert.is(new Set(a.map((e) => e.id)).size, a.length, 'one event per watch, condition and narrative');
  // Another watch: other ids.
  const other = createEvaluation(publish())({ ...w, id: 'alw_other' });
  assert.not.ok(other.some((e) => a.some((x) => x.id === e.id)));
  const later = { ...w, created_at: new Date(Date.parse(second.manifest.computed_at) + 1).toISOString() };
  assert.equal(createEvaluation(publish())(later), []);
});

test.run();
