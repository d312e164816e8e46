// The evaluation of a publish (serve/alerts/evaluate.ts; docs/api.md, "Alerts") on two real
// generations: the committed sample published, then a small new story (fixtures/planted-story.ts)
// arriving in an incremental run. The story fires one event per watch (its narratives in every
// watched window, every condition met) for an "any" watch and for a query watch naming it, not for
// watches on something else; each condition's matches are exactly the narratives whose figures
// meet its rule; a previous generation whose stories all had other keys (what a rebuild does) or
// whose narratives held none of the posts makes nothing new but the story; the same publish
// evaluated twice gives the same ids; a watch made after the publish sees nothing of it.
import path from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { dataDirLayout } from '../../core/infra/data-dir.ts';
import { generationDir, readCurrent } from '../../core/snapshots/generations.ts';
import { readGenerationUuids } from '../../core/snapshots/segments.ts';
import { plantedStory } from '../../fixtures/planted-story.ts';
import type { AlertEvent, Watch } from '../../serve/alerts/alert-model.ts';
import { createEvaluation, eventId, type Publish } from '../../serve/alerts/evaluate.ts';
import { EVENT_POSTS, eventPosts } from '../../serve/alerts/event-posts.ts';
import { indexRows, uuidRows } from '../../serve/alerts/story-links.ts';
import type { LoadedNarrative, Maps } from '../../serve/generation/load-maps.ts';
import { loadGeneration, type LoadedGeneration } from '../../serve/generation/loaded-generation.ts';
import { AS_OF, runPipeline, pipedSampleDir } from '../helpers/pipeline.ts';
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
  const d = await pipedSampleDir();
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
      asOfIso: second.manifest.as_of,
      computedAt: second.manifest.computed_at,
      maps: second.maps,
      rows: indexRows(second.index),
      posts: (ln) => eventPosts(second, ln),
    },
    before: { id: first.id, asOfIso: first.manifest.as_of, maps: first.maps, rows: indexRows(first.index) },
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

test('the two generations: the second names the first as its previous one and holds the planted story as a new narrative', () => {
  assert.is(second.manifest.previous_generation, first.id);
  const story = second.maps.narratives.filter((ln) => /kombucha|brightbrew|mould/i.test(ln.narrative.label));
  assert.ok(story.length > 0, 'the story is a narrative');
  for (const ln of story) assert.not.ok(first.maps.narrativeByKey.has(ln.narrative.narrative_key!), `${ln.narrative.label} is new`);
});

const STORY = /kombucha|brightbrew|mould/i;
const isStory = (e: AlertEvent) => STORY.test(e.narrative.label);
/** The narratives the events' matches name (one per match; of one condition when given). */
const matched = (events: AlertEvent[], condition?: string) =>
  events
    .flatMap((e) => e.matches)
    .filter((m) => !condition || m.condition === condition)
    .map((m) => m.narrative_id)
    .sort();
/** The second generation's narratives the first has no key of: the story's, in each window. */
const newKeys = () => second.maps.narratives.filter((ln) => !first.maps.narrativeByKey.has(ln.narrative.narrative_key!));

test('a new story fires one event per watch for an "any" watch and for a query watch naming it, not for watches on something else', () => {
  const evaluate = createEvaluation(publish());
  const any = evaluate(watch({ kind: 'any' }, { new_narrative: true }));
  // One story, in four windows: one event, whose matches are its narratives of every window.
  assert.is(any.length, 1, `one event (fired for: ${any.map((e) => e.narrative.label).join(' | ')})`);
  const e = any[0]!;
  assert.ok(isStory(e), e.narrative.label);
  assert.equal(
    matched(any),
    newKeys()
      .map((ln) => ln.narrative.id)
      .sort(),
  );
  assert.equal(
    e.matches.map((m) => [m.window, m.condition]),
    [
      ['all', 'new_narrative'],
      ['90d', 'new_narrative'],
      ['30d', 'new_narrative'],
      ['7d', 'new_narrative'],
    ],
  );
  const only7d = evaluate(watch({ kind: 'any' }, { new_narrative: true }, ['7d']));
  assert.ok(only7d.length === 1 && only7d[0]!.matches.every((m) => m.window === '7d'), 'a watch sees its windows only');
  assert.is(only7d[0]!.window, '7d');

  const named = evaluate(watch({ kind: 'query', query: 'kombucha recall' }, { new_narrative: true }));
  assert.is(named.length, 1);
  assert.ok(isStory(named[0]!), 'the query watch naming it fires');
  assert.ok(named[0]!.matches.every((m) => m.condition === 'new_narrative' && STORY.test(m.label)));

  const other = evaluate(watch({ kind: 'query', query: 'sourdough starter' }, { new_narrative: true }));
  assert.not.ok(other.some(isStory), `a query on something else does not fire for it (${other.map((e) => e.narrative.label)})`);
  const kept = first.maps.narratives.find((ln) => second.maps.narrativeByKey.has(ln.narrative.narrative_key!))!;
  const onOne = evaluate(
    watch({ kind: 'narrative', narrative_key: kept.narrative.narrative_key! }, { new_narrative: true }, [
      kept.narrative.window_key as '7d',
    ]),
  );
  assert.equal(onOne, [], 'a narrative that existed before is never new');

  // Every condition it meets in every window, in the one event: new_narrative first (the primary), then spike.
  const both = evaluate(watch({ kind: 'any' }, { new_narrative: true, spike: true })).filter(isStory);
  assert.is(both.length, 1);
  const conditions = both[0]!.matches.map((m) => m.condition);
  assert.ok(conditions.includes('spike') && conditions.indexOf('spike') > conditions.lastIndexOf('new_narrative'), conditions.join());
  assert.ok(
    both[0]!.matches.every((m) => STORY.test(m.label)),
    'no other story in it',
  );
  assert.is(both[0]!.id, eventId(both[0]!.watch_id, e.narrative.narrative_key, second.id), 'the same story: the same identity');
});

test("the event: the primary narrative's why, figures, links and central posts with their text", () => {
  const [e] = createEvaluation(publish())(watch({ kind: 'any' }, { new_narrative: true }));
  const ln = second.maps.narrativeById.get(e!.narrative.id)!;
  assert.is(e!.type, 'narrative.new_narrative');
  assert.is(e!.window, 'all', 'the widest window first');
  assert.equal(e!.why, e!.matches[0]!.why);
  assert.is(e!.generation, second.id);
  assert.is(e!.previous_generation, first.id);
  assert.is(e!.why.before, null);
  assert.is(e!.why.after.content_count, ln.narrative.content_count);
  assert.is(e!.why.after.narrative_id, ln.narrative.id);
  assert.is(e!.why.after.last_day_posts, ln.dailyCounts.at(-1));
  assert.match(e!.why.text, /^new narrative ".+" with \d+ posts$/);
  assert.is(e!.narrative.url, `${BASE}/narratives/${ln.narrative.id}`);
  assert.is(e!.narrative.dashboard_url, `${BASE}/ui/narrative.html?id=${ln.narrative.id}`);
  // Its central posts (the posts a reader opens first: no slur, no text twice), the first of them.
  assert.is(e!.posts.length, Math.min(EVENT_POSTS, ln.central.length));
  assert.equal(
    e!.posts.map((p) => [p.uuid, p.text]),
    Array.from(ln.central.subarray(0, EVENT_POSTS), (r) => [second.index.uuid.get(r), second.content.description.get(r)]),
    'the planted posts carry their whole text (no title, a description shorter than the cut)',
  );
  assert.ok(
    e!.posts.every((p) => p.uuid.startsWith('planted-story-') && STORY.test(p.text!)),
    'its most central posts are the story',
  );
  assert.is(e!.id, eventId(e!.watch_id, ln.narrative.narrative_key!, second.id), 'the story is its widest narrative');
});

test("an event post's text: its description, else its title, cut at a word boundary near 240 characters", () => {
  let cut = 0;
  for (const ln of second.maps.narratives)
    for (const [i, p] of eventPosts(second, ln).entries()) {
      const r = ln.central[i]!;
      const words = (second.content.description.get(r) || second.content.title.get(r) || '').replace(/\s+/g, ' ').trim();
      if (words.length > 240) {
        cut++;
        assert.ok(p.text!.endsWith('…') && p.text!.length <= 241 && words.startsWith(p.text!.slice(0, -1)), p.text!);
      } else assert.is(p.text, words || null);
    }
  assert.ok(cut > 0, 'some texts of the sample are cut');
});

test('momentum, lifecycle and spike events are exactly the narratives whose figures before and after meet the rule', () => {
  const evaluate = createEvaluation(publish());
  const kept = second.maps.narratives.filter((ln) => first.maps.narrativeByKey.has(ln.narrative.narrative_key!));
  const was = (ln: (typeof kept)[number]) => first.maps.narrativeByKey.get(ln.narrative.narrative_key!)!.narrative;
  const ids = (xs: LoadedNarrative[]) => xs.map((ln) => ln.narrative.id).sort();
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
    assert.equal(matched(events), ids(crossed), `momentum ${direction} ${level}`);
    for (const m of events.flatMap((e) => e.matches)) {
      assert.match(m.why.text, /^momentum \d\.\d\d -> \d\.\d\d crossed [\d.]+$/);
      assert.is(m.why.before!.momentum_score, was(second.maps.narrativeById.get(m.narrative_id)!).momentum_score);
    }
  }
  const changed = kept.filter((ln) => ln.narrative.lifecycle !== was(ln).lifecycle);
  const lifecycle = evaluate(watch({ kind: 'any' }, { lifecycle: {} }));
  assert.equal(matched(lifecycle), ids(changed));
  for (const { why } of lifecycle.flatMap((e) => e.matches))
    assert.is(why.text, `lifecycle ${why.before!.lifecycle ?? 'none'} -> ${why.after.lifecycle ?? 'none'}`);
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
  assert.equal(matched(fired), ids([...changed, target]));
  const matchOf = (events: AlertEvent[]) => events.flatMap((e) => e.matches).find((m) => m.narrative_key === key);
  assert.is(matchOf(fired)!.why.text, `lifecycle ${other} -> ${target.narrative.lifecycle}`);
  const to = target.narrative.lifecycle as 'growing';
  assert.ok(matchOf(evaluateEdited(watch({ kind: 'any' }, { lifecycle: { to: [to] } }))));
  assert.not.ok(matchOf(evaluateEdited(watch({ kind: 'any' }, { lifecycle: { to: [other] } }))));
  const spikes = evaluate(watch({ kind: 'any' }, { spike: true }));
  assert.ok(spikes.some(isStory), 'the new story spikes on its newest day');
  for (const { why } of spikes.flatMap((e) => e.matches)) {
    assert.ok(why.after.spike, 'the newest day spikes now');
    assert.not.ok(why.before?.spike, 'and did not before');
  }
});

/** The first generation's maps with every narrative under another key, or (`keep`) only some of its narratives. */
function previousMaps(rename: (key: string) => string, keep: (ln: LoadedNarrative) => boolean = () => true): Maps {
  const narratives = first.maps.narratives
    .filter(keep)
    .map((ln) => ({ ...ln, narrative: { ...ln.narrative, narrative_key: rename(ln.narrative.narrative_key!) } }));
  return { ...first.maps, narratives, narrativeByKey: new Map(narratives.map((ln) => [ln.narrative.narrative_key, ln])) };
}

test('a previous generation with every story under another key (a rebuild re-split them): the same events, nothing new but the story', () => {
  const w = watch({ kind: 'any' }, { new_narrative: true, spike: true, lifecycle: {}, momentum: { level: 0.5 } });
  const p = publish();
  const rekeyed = createEvaluation({ ...p, before: { ...p.before, maps: previousMaps((k) => `${k}-rebuilt`) } })(w);
  const byKey = createEvaluation(p)(w);
  // By key alone every narrative would be new; by their posts each is its previous one: the same
  // matches, the same figures before, the same sentences (only the previous narratives' keys differ).
  const changes = (events: AlertEvent[]) => events.flatMap((e) => e.matches.map((m) => [m.condition, m.narrative_id, m.why]));
  assert.ok(byKey.flatMap((e) => e.matches).length > newKeys().length, 'more than the story fires');
  assert.equal(changes(rekeyed), changes(byKey));
  // The same when the previous generation is read from disk (its posts by the segments' uuids alone, as at a start).
  const fromDisk = { rows: uuidRows(readGenerationUuids(first.dir, first.manifest.segments ?? [])) };
  const rekeyedFromDisk = createEvaluation({ ...p, before: { ...p.before, ...fromDisk, maps: previousMaps((k) => `${k}-rebuilt`) } })(w);
  assert.equal(changes(rekeyedFromDisk), changes(byKey));
  assert.equal(
    matched(rekeyed, 'new_narrative'),
    newKeys()
      .map((ln) => ln.narrative.id)
      .sort(),
  );
});

test('a previous generation whose narratives held none of the posts: only a narrative with posts it lacked is new', () => {
  // No narrative before, the same posts: every narrative's key is new and nothing held its posts;
  // the story alone has posts the previous generation did not have.
  const p = publish();
  const none = createEvaluation({
    ...p,
    before: {
      ...p.before,
      maps: previousMaps(
        (k) => k,
        () => false,
      ),
    },
  });
  const fired = none(watch({ kind: 'any' }, { new_narrative: true }));
  assert.equal(
    matched(fired),
    newKeys()
      .map((ln) => ln.narrative.id)
      .sort(),
  );
  assert.is(fired.length, 1);
  // Its spike said so: the story is new; the other narratives that spike had no narrative before.
  const spikes = none(watch({ kind: 'any' }, { spike: true })).flatMap((e) => e.matches);
  assert.ok(spikes.some((m) => STORY.test(m.label) && m.why.text.endsWith('; the narrative is new')));
  for (const m of spikes.filter((x) => !STORY.test(x.label)))
    assert.ok(m.why.text.endsWith('; the previous generation had no narrative of it in this window'), m.why.text);
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
  assert.is(new Set(a.map((e) => e.id)).size, a.length, 'one event per watch and story');
  // Another watch: other ids.
  const other = createEvaluation(publish())({ ...w, id: 'alw_other' });
  assert.not.ok(other.some((e) => a.some((x) => x.id === e.id)));
  const later = { ...w, created_at: new Date(Date.parse(second.manifest.computed_at) + 1).toISOString() };
  assert.equal(createEvaluation(publish())(later), []);
});

test.run();
