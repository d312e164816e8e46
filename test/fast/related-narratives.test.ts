// GET /narratives/{id}/related on the committed sample through the whole pipeline: the same
// window's narratives by cosine of their stored text centroids (recomputed here from
// narrative-centroids.f32), none under the minimum similarity, itself left out; related stories
// share words and an unrelated story finds nothing; an emergent narrative's related
// ones by its members' mean; clear errors. And creator handles in the detail's creators and posts.
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { RunningServer } from '../../serve/server.ts';
import { testServer } from '../helpers/server.ts';
import { ROOT } from '../helpers/child.ts';
import { pipedSampleDir } from '../helpers/pipeline.ts';
import { callApi } from '../helpers/http.ts';
import { cleanupTmp } from '../helpers/tmp.ts';
import { RELATED_MIN_SIMILARITY } from '../../serve/maps/related-narratives.ts';
import { openDuckDB } from '../../core/infra/duckdb.ts';

let s: RunningServer;
let dir: string;
const api = (p: string) => callApi(s.baseUrl, s.demo.secret, 'GET', p);

interface Related {
  id: string;
  label: string;
  window_key: string;
  similarity: number;
}

test.before(async () => {
  dir = await pipedSampleDir();
  s = await testServer(dir);
});

test.after(async () => {
  await s?.close();
  cleanupTmp();
});

/** Every narrative's centroid as the snapshot stores it, by id. */
async function centroids(): Promise<Map<string, Float32Array>> {
  const gen = path.join(dir, 'snapshots', fs.readFileSync(path.join(dir, 'snapshots', 'CURRENT'), 'utf8').trim());
  const db = await openDuckDB();
  const rows = await db.all(`SELECT id, centroid_index FROM read_parquet('${path.join(gen, 'narratives.parquet')}')`);
  db.close();
  const flat = new Float32Array(new Uint8Array(fs.readFileSync(path.join(gen, 'narrative-centroids.f32'))).buffer);
  const dim = flat.length / rows.length;
  return new Map(rows.map((r) => [r.id as string, flat.slice(Number(r.centroid_index) * dim, (Number(r.centroid_index) + 1) * dim)]));
}

const cosine = (a: Float32Array, b: Float32Array) => a.reduce((sum, x, k) => sum + x * b[k]!, 0);

test('related: the same window by centroid cosine, most similar first, none under the minimum, itself left out', async () => {
  const byId = await centroids();
  const trending = (await api('/narratives/trending?window=30d&limit=100')).json.items as Related[];
  let found = 0;
  for (const n of trending) {
    const r = await api(`/narratives/${n.id}/related?limit=20`);
    assert.is(r.status, 200);
    assert.is(r.json.min_similarity, RELATED_MIN_SIMILARITY);
    const items = r.json.items as Related[];
    // What the server left out is under the minimum: the same set as every other narrative of the window at or above it.
    const want = trending
      .filter((o) => o.id !== n.id && cosine(byId.get(n.id)!, byId.get(o.id)!) >= RELATED_MIN_SIMILARITY)
      .map((o) => o.id)
      .sort();
    assert.equal(items.map((x) => x.id).sort(), want, n.label);
    for (const [i, x] of items.entries()) {
      assert.is(x.window_key, '30d');
      assert.ok(Math.abs(x.similarity - cosine(byId.get(n.id)!, byId.get(x.id)!)) < 1e-5);
      if (i) assert.ok(items[i - 1]!.similarity >= x.similarity);
    }
    found += items.length;
  }
  assert.ok(found > 0, 'some narratives of the sample are related');
  // Related stories speak of the same things: each related pair shares a word of its labels and top
  // tags (the sample's game stories, a nerf and a petition, both of Shardfall) or a planted story
  // among their posts (the fixture's truth: a story holding a fifth of each); a festival lineup leak relates to none.
  const words = (n: Related & { top_tags?: string[] }) =>
    new Set(`${n.label} ${(n.top_tags ?? []).join(' ')}`.toLowerCase().match(/\p{L}{4,}/gu) ?? []);
  const truth = new Map<string, string>();
  for (const line of fs.readFileSync(path.join(ROOT, 'fixtures', 'sample', 'truth.ndjson'), 'utf8').split('\n'))
    if (line.includes('"type":"post"')) {
      const r = JSON.parse(line) as { uuid: string; narrative: string | null };
      if (r.narrative) truth.set(r.uuid, r.narrative);
    }
  const stories = async (id: string) => {
    const posts = (await api(`/narratives/${id}?limit=500`)).json.posts.items as Array<{ uuid: string }>;
    const count = new Map<string, number>();
    for (const p of posts) if (truth.has(p.uuid)) count.set(truth.get(p.uuid)!, (count.get(truth.get(p.uuid)!) ?? 0) + 1);
    return new Set([...count].filter(([, c]) => c >= 0.2 * posts.length).map(([story]) => story));
  };
  for (const n of trending) {
    for (const x of (await api(`/narratives/${n.id}/related`)).json.items as Related[]) {
      const mine = words(n);
      const theirs = await stories(x.id);
      const shared = [...words(x)].some((w) => mine.has(w)) || [...(await stories(n.id))].some((st) => theirs.has(st));
      assert.ok(shared, `"${n.label}" related to "${x.label}"`);
    }
  }
  const lineup = trending.find((n) => /lineup/i.test(n.label))!;
  assert.equal((await api(`/narratives/${lineup.id}/related`)).json.items, []);
});

test('related of an emergent narrative (its members’ mean) and by narrative_key; clear errors', async () => {
  const answer = await callApi(s.baseUrl, s.demo.secret, 'POST', '/search', {
    body: { query: 'skincare serum rash', limit: 60, window: '30d' },
  });
  const em = answer.json.narratives.find((n: { source: string }) => n.source === 'emergent');
  if (em) {
    const r = await api(`/narratives/${em.id}/related`);
    assert.is(r.status, 200);
    assert.is(r.json.id, em.id);
    assert.ok((r.json.items as Related[]).every((x) => x.similarity >= RELATED_MIN_SIMILARITY && x.id !== em.id));
  }
  const first = (await api('/narratives/trending?window=30d&limit=1')).json.items[0];
  assert.is((await api(`/narratives/${first.narrative_key}/related`)).json.id, first.id);
  const bad = await api(`/narratives/${first.id}/related?limit=0`);
  assert.is(bad.status, 400);
  assert.match(bad.json.error, /limit/);
  const missing = await api('/narratives/no-such/related');
  assert.is(missing.status, 404);
  assert.match(missing.json.error, /no narrative no-such/);
});

test('creator handles: the detail’s creators and posts carry the handle the posts had at ingest', async () => {
  const first = (await api('/narratives/trending?window=30d&limit=1')).json.items[0];
  const d = (await api(`/narratives/${first.id}?limit=5`)).json;
  const handles = new Map<number, string>();
  for (const line of fs.readFileSync(path.join(dir, 'landing', 'sample', 'posts-00001.ndjson'), 'utf8').split('\n')) {
    try {
      const p = JSON.parse(line);
      if (p.creator_handle) handles.set(p.creator_id, p.creator_handle);
    } catch {
      // the sample plants malformed lines
    }
  }
  assert.ok(d.creators.length > 0);
  for (const c of d.creators) assert.is(c.creatorHandle, handles.get(c.creatorId) ?? null, String(c.creatorId));
  assert.ok(d.creators.some((c: { creatorHandle: string | null }) => c.creatorHandle));
  for (const p of d.posts.items) assert.is(p.creatorHandle, p.creatorId === null ? null : (handles.get(p.creatorId) ?? null));
  const answer = await callApi(s.baseUrl, s.demo.secret, 'POST', '/search', { body: { query: 'skincare', limit: 5 } });
  for (const c of answer.json.creators) assert.is(c.creatorHandle, handles.get(c.creatorId) ?? null);
});

test.run();
