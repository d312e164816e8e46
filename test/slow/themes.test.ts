// Themes above narratives (docs/fields.md, "Themes"): the grouping on hand-made centroids; the
// narratives stage's themes.parquet on the committed sample (every narrative's theme present, its
// figures the sum of its narratives', keys kept by an incremental run and by a full rerun); and the
// free reads over it: GET /themes paged as trending is, GET /themes/{id}, the trending theme filter.
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { groupNarratives, themeCentre, THEME_CRITERION } from '../../core/clustering/themes.ts';
import type { RunningServer } from '../../serve/server.ts';
import { callApi } from '../helpers/http.ts';
import { AS_OF, readSnapshot, runPipeline, sampleDataDir, summaryOf } from '../helpers/pipeline.ts';
import { testServer } from '../helpers/server.ts';
import { cleanupTmp, writeLines } from '../helpers/tmp.ts';

/** A unit vector in `dim` dimensions: `axis` weighted 1, the other axes given, normalised. */
function unit(dim: number, parts: Record<number, number>): Float32Array {
  const v = new Float32Array(dim);
  for (const [k, x] of Object.entries(parts)) v[Number(k)] = x;
  const n = Math.hypot(...v);
  return v.map((x) => x / n);
}

test('grouping: two groups far apart are two themes; a lone narrative is a theme of its own', () => {
  // Narratives 0, 2, 4 about one subject (axis 0), 1 and 3 about another (axis 1), 5 about nothing else.
  const items = [
    { centroid: unit(6, { 0: 1, 2: 0.5 }), size: 40 },
    { centroid: unit(6, { 1: 1, 3: 0.4 }), size: 30 },
    { centroid: unit(6, { 0: 1, 4: 0.6 }), size: 25 },
    { centroid: unit(6, { 1: 1, 4: 0.3 }), size: 20 },
    { centroid: unit(6, { 0: 1, 2: 0.3, 4: 0.3 }), size: 10 },
    { centroid: unit(6, { 5: 1 }), size: 50 },
  ];
  const g = groupNarratives(items);
  assert.equal(Array.from(g.themeOf), [0, 1, 0, 1, 0, 2]);
  assert.is(g.themes, 3);
  assert.ok(g.silhouette > 0.5, `silhouette ${g.silhouette}`);
  assert.is(g.merges, 3);
  // The same narratives in another order: the same themes (numbered by their first narrative).
  const order = [5, 3, 0, 1, 4, 2];
  const again = groupNarratives(order.map((i) => items[i]!));
  const sameTheme = (a: number, b: number) => again.themeOf[order.indexOf(a)] === again.themeOf[order.indexOf(b)];
  assert.ok(sameTheme(0, 2) && sameTheme(2, 4) && sameTheme(1, 3) && !sameTheme(0, 1) && !sameTheme(5, 0) && !sameTheme(5, 1));
});

test('grouping: unrelated narratives are never forced together; one story told in pieces is one theme; none and one narrative', () => {
  const dim = 8;
  const apart = Array.from({ length: 5 }, (_, i) => ({ centroid: unit(dim, { [i]: 1 }), size: 10 + i }));
  const g = groupNarratives(apart);
  assert.equal(Array.from(g.themeOf), [0, 1, 2, 3, 4]);
  assert.is(g.silhouette, 0);
  assert.is(g.lowestLinkage, null);
  // Below the linkage floor: two narratives 0.2 alike stay apart even when nothing else is in the window.
  const weak = [
    { centroid: unit(dim, { 0: 1 }), size: 10 },
    { centroid: unit(dim, { 0: 0.2, 1: Math.sqrt(1 - 0.04) }), size: 10 },
  ];
  assert.ok(0.2 < THEME_CRITERION.minLinkageCosine);
  assert.equal(Array.from(groupNarratives(weak).themeOf), [0, 1]);
  // A window whose narratives are all one story's pieces (0.8 alike) is one theme.
  const pieces = [
    { centroid: unit(dim, { 0: 1, 1: 0.5 }), size: 30 },
    { centroid: unit(dim, { 0: 1, 2: 0.5 }), size: 20 },
    { centroid: unit(dim, { 0: 1, 3: 0.5 }), size: 10 },
  ];
  const one = groupNarratives(pieces);
  assert.equal(Array.from(one.themeOf), [0, 0, 0]);
  assert.ok(one.silhouette > 0.7, `${one.silhouette}`);
  assert.equal(Array.from(groupNarratives([]).themeOf), []);
  assert.equal(Array.from(groupNarratives([pieces[0]!]).themeOf), [0]);
  // A raised floor keeps the pieces apart: the criterion decides, nothing else.
  assert.equal(Array.from(groupNarratives(pieces, { ...THEME_CRITERION, minLinkageCosine: 0.95 }).themeOf), [0, 1, 2]);
});

test('grouping: the cut is the best silhouette, not the last merge above the floor: two close pairs a little alike stay two themes', () => {
  // Pairs A = {0, 1} and B = {2, 3}: each pair 0.96 alike inside, the pairs 0.56 alike across (above the
  // floor, so they could merge). Apart, every narrative is far nearer its own pair than the other.
  const items = [
    [1, 0.2, 0.9, 0],
    [1, -0.2, 0.9, 0],
    [1, 0.2, 0, 0.9],
    [1, -0.2, 0, 0.9],
  ].map((v) => ({ centroid: unit(4, Object.fromEntries(v.map((x, k) => [k, x]))), size: 10 }));
  const cos = (a: number, b: number) => items[a]!.centroid.reduce((t, x, k) => t + x * items[b]!.centroid[k]!, 0);
  assert.ok(cos(0, 1) > 0.95 && cos(2, 3) > 0.95, `${cos(0, 1)} ${cos(2, 3)}`);
  assert.ok(cos(0, 2) > THEME_CRITERION.minLinkageCosine + 0.1, `${cos(0, 2)}`);
  const g = groupNarratives(items);
  assert.equal(Array.from(g.themeOf), [0, 0, 1, 1]);
  assert.is(g.merges, 2);
  // Pulled closer (0.8 across), the pairs are one theme.
  const close = items.map((x, i) => ({ ...x, centroid: unit(4, { 0: 1, 1: i % 2 ? -0.2 : 0.2, [2 + (i >> 1)]: 0.4 }) }));
  assert.ok(cos(0, 2) < 0.6);
  assert.equal(Array.from(groupNarratives(close).themeOf), [0, 0, 0, 0]);
  // Size matters: a narrative's weight is its members. The centre leans to the larger narrative.
  const c = themeCentre(
    [
      { centroid: unit(2, { 0: 1 }), size: 90 },
      { centroid: unit(2, { 1: 1 }), size: 10 },
    ],
    2,
  );
  assert.ok(Math.abs(Math.hypot(c[0]!, c[1]!) - 1) < 1e-6 && c[0]! > 8 * c[1]!);
});

let d = '';
let s: RunningServer | null = null;

/** New posts an hour after AS_OF: copies of sample posts' text under new uuids (an incremental run's input). */
function newPosts(n: number): unknown[] {
  const lines = fs.readFileSync(path.join(d, 'landing', 'sample', 'posts-00001.ndjson'), 'utf8').split('\n');
  const out: unknown[] = [];
  for (const line of lines) {
    if (out.length >= n) break;
    try {
      const p = JSON.parse(line) as Record<string, unknown>;
      if (typeof p.uuid !== 'string' || typeof p.title !== 'string') continue;
      out.push({
        ...p,
        uuid: `later-${out.length}`,
        media: [],
        content_type: 'text',
        published_at: new Date(AS_OF.getTime() + (out.length + 1) * 60_000).toISOString(),
      });
    } catch {
      // the sample's planted bad records
    }
  }
  return out;
}

const keysOf = async () => (await readSnapshot(d, 'themes', 'theme_key, window_key')).map((r) => `${r.window_key} ${r.theme_key}`);

test('the stage writes themes.parquet: every narrative in one theme of its window, counts the sums of its narratives', async () => {
  d = sampleDataDir();
  const run = await runPipeline(d);
  const themes = await readSnapshot(d, 'themes', '*', 'ORDER BY row_id');
  const narratives = await readSnapshot(d, 'narratives', 'id, theme_id, window_key, content_count, label', 'ORDER BY row_id');
  assert.ok(themes.length > 0 && themes.length <= narratives.length);
  const byId = new Map(themes.map((t) => [t.id as string, t]));
  for (const n of narratives) {
    const t = byId.get(n.theme_id as string);
    assert.ok(t, `narrative ${n.id}'s theme ${n.theme_id} is in themes.parquet`);
    assert.is(t!.window_key, n.window_key);
  }
  const members = await readSnapshot(d, 'narrative-members', 'narrative_id, uuid');
  const creators = await readSnapshot(d, 'posts', 'uuid, creator_id');
  const creatorOf = new Map(creators.map((p) => [p.uuid as string, p.creator_id]));
  for (const t of themes) {
    const mine = narratives.filter((n) => n.theme_id === t.id);
    assert.is(Number(t.narrative_count), mine.length, `${t.id} narrative_count`);
    assert.is(
      Number(t.content_count),
      mine.reduce((a, n) => a + Number(n.content_count), 0),
      `${t.id} content_count`,
    );
    const uuids = members.filter((m) => mine.some((n) => n.id === m.narrative_id)).map((m) => m.uuid as string);
    assert.is(Number(t.creator_count), new Set(uuids.map((u) => creatorOf.get(u)).filter((c) => c !== null)).size, `${t.id} creators`);
    assert.ok(uuids.includes(t.representative_content_uuid as string), `${t.id}: its representative is one of its posts`);
    assert.ok(/^tk-(7d|30d|90d|all)-[0-9a-f]{10}$/.test(t.theme_key as string), t.theme_key as string);
    assert.ok(/^(7d|30d|90d|all)-[0-9a-f]{8}-t\d{3}$/.test(t.id as string), t.id as string);
    assert.ok((t.label as string).length > 0 && (t.summary as string).length > 0);
    for (const k of ['momentum_score', 'emerging_score']) assert.ok((t[k] as number) >= 0 && (t[k] as number) <= 1, k);
    assert.is((t.daily_counts as number[]).reduce((a, x) => a + Number(x), 0) <= Number(t.content_count), true);
    assert.ok(/^\d+$/.test(t.total_engagement as string));
  }
  // On the sample, the 30d window's GlowLab serum story: one theme holds whatever narratives tell it.
  const serum = narratives.filter((n) => n.window_key === '30d' && /glowlab|skincarescare|serum/i.test(n.label as string));
  assert.ok(serum.length >= 1, serum.map((n) => n.label).join(' | '));
  assert.is(new Set(serum.map((n) => n.theme_id)).size, 1, serum.map((n) => `${n.label}: ${n.theme_id}`).join(' | '));
  // And themes do group: some theme of the sample holds several narratives.
  assert.ok(
    themes.some((t) => Number(t.narrative_count) >= 2),
    themes.map((t) => `${t.window_key} ${t.label}: ${t.narrative_count}`).join(' | '),
  );
  const windows = summaryOf(run, 'narratives').windows as Record<string, { themes: number; narratives: number }>;
  for (const w of ['7d', '30d', '90d', 'all'])
    assert.is(windows[w]!.themes, themes.filter((t) => t.window_key === w).length, `${w}: the summary's count`);
});

test('theme keys: kept by an incremental run that adds posts and by a full rerun of the same data', async () => {
  const before = await keysOf();
  writeLines(path.join(d, 'landing', 'sample', 'later.ndjson'), newPosts(12));
  const inc = await runPipeline(d, ['run'], new Date(AS_OF.getTime() + 3_600_000));
  assert.is(summaryOf(inc, 'narratives').mode, 'incremental');
  const afterInc = await keysOf();
  const keptInc = before.filter((k) => afterInc.includes(k)).length;
  assert.ok(keptInc >= 0.9 * before.length, `incremental: ${keptInc} of ${before.length} theme keys kept`);
  const themes = await readSnapshot(d, 'themes', 'id, previous_id, match_overlap');
  assert.ok(themes.filter((t) => t.previous_id !== null).length >= keptInc, 'a kept key names the theme it continues');
  // The incremental generation's themes agree with its narratives.
  const narratives = await readSnapshot(d, 'narratives', 'theme_id, content_count');
  const ids = new Set(themes.map((t) => t.id));
  assert.ok(narratives.every((n) => ids.has(n.theme_id)));
  await runPipeline(d, ['run'], new Date(AS_OF.getTime() + 7_200_000), {}, { full: true });
  const afterFull = await keysOf();
  const keptFull = afterInc.filter((k) => afterFull.includes(k)).length;
  assert.ok(keptFull >= 0.9 * afterInc.length, `full rerun: ${keptFull} of ${afterInc.length} theme keys kept`);
});

const api = (p: string) => callApi(s!.baseUrl, s!.demo.secret, 'GET', p);

test('GET /themes: paged like trending, by burst, each with its narratives; daily counts; platform filter', async () => {
  s = await testServer(d);
  const all = (await api('/themes?window=30d&limit=100')).json;
  const themes = await readSnapshot(d, 'themes', 'id', "WHERE window_key = '30d'");
  assert.is(all.total, themes.length);
  assert.is(all.items.length, themes.length);
  assert.is(all.window, '30d');
  const sorted = [...all.items].sort(
    (a: any, b: any) =>
      b.burst_score - a.burst_score ||
      b.momentum_score - a.momentum_score ||
      b.emerging_score - a.emerging_score ||
      b.content_count - a.content_count ||
      a.id.localeCompare(b.id),
  );
  assert.equal(
    all.items.map((t: { id: string }) => t.id),
    sorted.map((t: { id: string }) => t.id),
  );
  const trending = (await api('/narratives/trending?window=30d&limit=100')).json.items as Array<{ id: string; theme_id: string }>;
  for (const t of all.items) {
    assert.is(t.narratives.length, t.narrative_count);
    assert.equal(
      t.narratives.map((n: { id: string }) => n.id).sort(),
      trending
        .filter((n) => n.theme_id === t.id)
        .map((n) => n.id)
        .sort(),
    );
    assert.is(
      t.narratives.reduce((a: number, n: { content_count: number }) => a + n.content_count, 0),
      t.content_count,
    );
  }
  // Pages of 2: the same list in pieces, next_offset null on the last.
  const paged: string[] = [];
  for (let offset: number | null = 0; offset !== null;) {
    const p: any = (await api(`/themes?window=30d&limit=2&offset=${offset}`)).json;
    assert.ok(p.items.length <= 2);
    paged.push(...p.items.map((t: { id: string }) => t.id));
    offset = p.next_offset;
  }
  assert.equal(
    paged,
    all.items.map((t: { id: string }) => t.id),
  );
  const daily = (await api('/themes?window=30d&daily=true&sort=volume&limit=3')).json;
  assert.is(daily.sort, 'volume');
  assert.ok(daily.items.every((t: { daily_counts: number[]; period_change: object }) => t.daily_counts.length === 30 && t.period_change));
  assert.ok(daily.items[0].content_count >= daily.items[1].content_count);
  const tiktok = (await api('/themes?window=30d&platform=TikTok&limit=100')).json;
  assert.ok(tiktok.total > 0 && tiktok.total <= all.total);
  const bad = await api('/themes?window=5d');
  assert.is(bad.status, 400);
  assert.match(bad.json.error, /window must be one of/);
  assert.is((await api('/themes?platform=myspace')).status, 400);
  assert.is((await api('/themes?limit=101')).status, 400);
});

test('GET /themes/{id}: by id or theme_key, with its narratives; an unknown id or key is a 404 that says why', async () => {
  const listed = (await api('/themes?window=30d&sort=volume&limit=1')).json.items[0];
  const one = await api(`/themes/${listed.id}`);
  assert.is(one.status, 200);
  assert.is(one.json.theme.id, listed.id);
  assert.is(one.json.generation, listed.generation ?? one.json.generation);
  assert.is(one.json.narratives.length, listed.narrative_count);
  assert.ok(one.json.narratives.every((n: { theme_id: string; source: string }) => n.theme_id === listed.id && n.source === 'tracked'));
  assert.is(one.json.daily_counts.length, 30);
  const byKey = await api(`/themes/${listed.theme_key}`);
  assert.is(byKey.json.theme.id, listed.id);
  assert.is(byKey.json.resolved_by, 'theme_key');
  const missing = await api('/themes/30d-00000000-t999');
  assert.is(missing.status, 404);
  assert.match(missing.json.error, /no theme 30d-00000000-t999 in generation g\d+/);
  const ended = await api('/themes/tk-30d-0000000000');
  assert.is(ended.status, 404);
  assert.match(ended.json.error, /has no theme in generation/);
});

test('theme_id on trending items and narrative detail; trending filtered by theme (id or key), in its window', async () => {
  const theme = (await api('/themes?window=30d&sort=volume&limit=1')).json.items[0];
  const filtered = await api(`/narratives/trending?theme=${theme.id}&daily=true`);
  assert.is(filtered.status, 200);
  assert.is(filtered.json.window, '30d', "the theme's window");
  assert.equal(
    filtered.json.items.map((n: { id: string }) => n.id),
    theme.narratives.map((n: { id: string }) => n.id),
    'its narratives, in the trending order',
  );
  assert.ok(filtered.json.items.every((n: { theme_id: string }) => n.theme_id === theme.id));
  assert.equal((await api(`/narratives/trending?theme=${theme.theme_key}&window=30d`)).json.total, filtered.json.total);
  const detail = (await api(`/narratives/${theme.narratives[0].id}`)).json;
  assert.is(detail.narrative.theme_id, theme.id);
  assert.equal(detail.theme, { id: theme.id, theme_key: theme.theme_key, label: theme.label, narrative_count: theme.narrative_count });
  const other = await api(`/narratives/trending?theme=${theme.id}&window=7d`);
  assert.is(other.status, 400);
  assert.match(other.json.error, /is a theme of window 30d, not 7d/);
  const unknown = await api('/narratives/trending?theme=30d-00000000-t999');
  assert.is(unknown.status, 404);
  assert.match(unknown.json.error, /no theme/);
  assert.ok(typeof unknown.json.request_id === 'string');
  assert.is((await api('/narratives/trending?theme=')).status, 400);
});

test("trending spread over themes: each theme's first narrative before any theme's second; spread=false the plain order", async () => {
  for (const window of ['30d', 'all']) {
    const spread = (await api(`/narratives/trending?window=${window}&limit=100`)).json;
    const plain = (await api(`/narratives/trending?window=${window}&limit=100&spread=false`)).json;
    assert.is(spread.spread, true);
    assert.is(plain.spread, false);
    type Item = { id: string; theme_id: string };
    assert.equal(spread.items.map((n: Item) => n.id).sort(), plain.items.map((n: Item) => n.id).sort(), 'the same narratives');
    // The round of each item (its place among its theme's, in the plain order) never goes down the spread page.
    const seen = new Map<string, number>();
    const roundOf = new Map(
      plain.items.map((n: Item) => [n.id, (seen.set(n.theme_id, (seen.get(n.theme_id) ?? -1) + 1), seen.get(n.theme_id)!)]),
    );
    const rounds = spread.items.map((n: Item) => roundOf.get(n.id)!);
    assert.equal(
      rounds,
      [...rounds].sort((a, b) => a - b),
      `${window}: rounds ascending`,
    );
    // Within a round, the plain order.
    const at = new Map(plain.items.map((n: Item, i: number) => [n.id, i]));
    for (let i = 1; i < spread.items.length; i++)
      if (rounds[i] === rounds[i - 1]) assert.ok(at.get(spread.items[i - 1].id)! < at.get(spread.items[i].id)!);
    if (window === '30d') assert.ok(Math.max(...rounds) > 0, 'some theme has two narratives: the spread moved something');
  }
  const one = (await api('/themes?window=30d&sort=volume&limit=1')).json.items[0];
  assert.is((await api(`/narratives/trending?theme=${one.id}`)).json.spread, false, 'one theme: nothing to spread');
});

test.after(async () => {
  await s?.close();
  cleanupTmp();
});
test.run();
