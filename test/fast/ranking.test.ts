// The ranking core on the published sample: relevance against planted narratives, the window
// applied inside retrieval (checked against brute force), field ranges, determinism, no-match.
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { terms } from '../../core/text/analyzer.ts';
import { dataDirLayout } from '../../core/infra/data-dir.ts';
import { generationDir, readCurrent } from '../../core/snapshots/generations.ts';
import {
  fuse,
  graphCandidates,
  lexicalCandidates,
  planSearch,
  RANKING,
  recencyHalfLifeDays,
  search,
  type RankedRow,
} from '../../core/ranking/search.ts';
import { loadSearchIndex, weightedEngagement, type SearchIndex } from '../../core/ranking/search-index.ts';
import { DAY_MS, type WindowKey } from '../../core/snapshots/windows.ts';
import { WINDOW_KEYS } from '../../core/snapshots/windows.ts';
import { ROOT } from '../helpers/child.ts';
import { runPipeline } from '../helpers/pipeline.ts';
import { cleanupTmp, tmpDir } from '../helpers/tmp.ts';

const truth = fs
  .readFileSync(path.join(ROOT, 'fixtures', 'sample', 'truth.ndjson'), 'utf8')
  .split('\n')
  .filter(Boolean)
  .map((l) => JSON.parse(l));
const narrativeOf = new Map(truth.filter((t) => t.type === 'post').map((t) => [t.uuid as string, t.narrative as string | null]));
const narratives = truth.filter((t) => t.type === 'narrative');
let index: SearchIndex;

test.before(async () => {
  const d = tmpDir();
  fs.cpSync(path.join(ROOT, 'fixtures', 'sample', 'posts'), path.join(d, 'landing', 'sample'), { recursive: true });
  await runPipeline(d);
  const layout = dataDirLayout(d);
  index = await loadSearchIndex(generationDir(layout, (await readCurrent(layout))!));
});
test.after(cleanupTmp);

test("narrative queries rank that narrative's posts first (precision@10 over all planted narratives)", () => {
  let hits = 0;
  for (const n of narratives) {
    const rows = search(index, { query: n.keywords.slice(0, 3).join(' '), limit: 10, window: 'all' });
    hits += rows.filter((r) => narrativeOf.get(r.uuid) === n.id).length;
  }
  const p = hits / (10 * narratives.length);
  assert.ok(p >= 0.7, `precision@10 ${p.toFixed(2)}`);
});

test('the window filters inside retrieval: every row in the window, and limit rows whenever the window holds that many matches', () => {
  for (const n of narratives) {
    const query = n.keywords.slice(0, 2).join(' ');
    const q = new Set(terms(query));
    for (const window of WINDOW_KEYS) {
      const rows = search(index, { query, limit: 5, window });
      for (const r of rows) assert.ok(r.row >= index.windowStart[window], `${window}: row published before the window`);
      // Brute force: rows in the window containing a query term (lexical matches).
      let matches = 0;
      for (let row = index.windowStart[window]; row < index.rows; row++) {
        const seg = index.bm25.segments.find((x) => row >= x.firstRow && row < x.firstRow + x.index.docLen.length)!;
        const t = seg.index;
        for (const term of q) {
          const id = t.vocab.get(term);
          if (id === undefined) continue;
          let found = false;
          for (let i = t.starts[id]!; i < t.starts[id + 1]!; i++) if (t.docs[i] === row - seg.firstRow) found = true;
          if (found) {
            matches++;
            break;
          }
        }
      }
      assert.is(rows.length >= Math.min(5, matches), true, `${window}: ${rows.length} rows for ${matches} matches`);
    }
  }
});

test('every score is in its documented range; results are deterministic and ordered', () => {
  const a = search(index, { query: narratives[0].keywords.join(' '), limit: 50, window: '90d' });
  const b = search(index, { query: narratives[0].keywords.join(' '), limit: 50, window: '90d' });
  assert.equal(a, b);
  assert.ok(a.length > 0 && a.length <= 50);
  for (let i = 0; i < a.length; i++) {
    const r = a[i]!;
    assert.ok(r.rawSimilarity >= -1.0001 && r.rawSimilarity <= 1.0001);
    for (const k of [
      'similarity',
      'relevance',
      'recencyScore',
      'engagementScore',
      'engagementDepth',
      'authorReach',
      'exampleRankingScore',
    ] as const) {
      assert.ok(r[k] >= 0 && r[k] <= 1.0000001, `${k} ${r[k]}`);
    }
    assert.ok(r.rrfScore > 0 && r.rrfScore <= 2 / 61 + 1e-12);
    if (i > 0) assert.ok(a[i - 1]!.exampleRankingScore >= r.exampleRankingScore);
  }
});

test('a query that matches nothing returns nothing (the relevance floor), and limit is respected', () => {
  assert.equal(search(index, { query: 'zzqxv wubbalubba', limit: 100, window: 'all' }), []);
  assert.equal(search(index, { query: '   ', limit: 100, window: 'all' }), []);
  assert.is(search(index, { query: narratives[1].keywords.join(' '), limit: 3, window: 'all' }).length, 3);
});

/**
 * Fusion by its definition (docs/fields.md, "Ranking"): every candidate of either list scored in
 * full, all of them sorted (blended score, then RRF, then uuid), cut to the limit. fuse() scores
 * in typed arrays, sorts only the candidates that can make the cut and builds the returned rows
 * alone; it must give exactly these rows, in this order, with these values.
 */
function fuseByDefinition(
  ix: SearchIndex,
  p: { query: string; limit: number; window: WindowKey },
  vector: Float32Array | null,
  lexical: ReadonlyArray<{ row: number }>,
  neighbours: ReadonlyArray<{ row: number; sim: number }>,
  floor: number,
): RankedRow[] {
  const lr = new Map(lexical.map((x, i) => [x.row, i + 1]));
  const vr = new Map(neighbours.filter((x) => x.sim >= floor).map((x, i) => [x.row, i + 1]));
  const rows = [...new Set([...lr.keys(), ...vr.keys()])];
  const all = rows.map((row): RankedRow => {
    const l = lr.get(row) ?? null;
    const v = vr.get(row) ?? null;
    const rrf = (l ? 1 / (RANKING.rrfK + l) : 0) + (v ? 1 / (RANKING.rrfK + v) : 0);
    const raw = vector ? Math.max(-1, Math.min(1, ix.vectors.dot(vector, row))) : 0;
    const relevance = rrf / (2 / (RANKING.rrfK + 1));
    const recencyScore = Math.pow(0.5, Math.max(0, (ix.asOfMs - ix.publishedAt[row]!) / DAY_MS) / recencyHalfLifeDays(p.window));
    const engagementScore =
      ix.maxWeightedEngagementLog > 0
        ? Math.log1p(weightedEngagement(ix.likes[row]!, ix.comments[row]!, ix.shares[row]!)) / ix.maxWeightedEngagementLog
        : 0;
    const interactions = ix.likes[row]! + ix.comments[row]! + ix.shares[row]!;
    const followers = ix.followers[row]!;
    const kind = ix.textKind[row]!;
    return {
      row,
      uuid: ix.uuid.get(row)!,
      rawSimilarity: raw,
      similarity: Math.max(0, raw),
      rrfScore: rrf,
      relevance,
      recencyScore,
      engagementScore,
      engagementDepth: interactions > 0 ? (ix.comments[row]! + ix.shares[row]!) / interactions : 0,
      authorReach: Number.isNaN(followers) || ix.maxFollowersLog === 0 ? 0 : Math.log1p(followers) / ix.maxFollowersLog,
      exampleRankingScore:
        RANKING.blend.relevance * relevance + RANKING.blend.recency * recencyScore + RANKING.blend.engagement * engagementScore,
      intentSimilarity: kind === 1 ? raw : null,
      intentEvidenceSource: kind === -1 ? 'no_text' : kind === 0 ? 'tag_only' : l !== null || raw >= floor ? 'authored_text' : 'no_match',
      lexicalRank: l,
      vectorRank: v,
    };
  });
  all.sort((a, b) => b.exampleRankingScore - a.exampleRankingScore || b.rrfScore - a.rrfScore || (a.uuid < b.uuid ? -1 : 1));
  return all.slice(0, p.limit);
}

test('fusion returns exactly the rows, order and scores of its definition (every candidate scored and sorted)', () => {
  const queries = [...narratives.map((n) => n.keywords.slice(0, 2).join(' ')), 'the', 'new day love', '#fyp trending now'];
  let compared = 0;
  let cut = 0;
  for (const query of queries)
    for (const window of WINDOW_KEYS)
      for (const limit of [1, 10, 100, 300]) {
        const p = { query, limit, window };
        const plan = planSearch(index, p);
        if (!plan) continue;
        const lexical = lexicalCandidates(index, plan);
        const neighbours = plan.vector ? graphCandidates(index.hnsw!, plan) : [];
        const want = fuseByDefinition(index, p, plan.vector, lexical, neighbours, plan.floor);
        assert.equal(fuse(index, p, plan, lexical, neighbours), want, `${query} ${window} ${limit}`);
        compared++;
        if (new Set([...lexical.map((x) => x.row), ...neighbours.map((x) => x.row)]).size > limit) cut++;
      }
  assert.ok(compared > 100 && cut > 50, `${compared} searches compared, ${cut} cut to their limit`);
});

test("the served answer against the exact one (search's reference): top-100 overlap of planted, frequent-word and long queries", () => {
  // Queries as the api bench's mixes build them: the planted narratives' keywords, the most frequent
  // words alone and in pairs, and 8-20 words of real posts; every window.
  const df = new Map<string, number>();
  const texts: string[] = [];
  for (const line of fs.readFileSync(path.join(ROOT, 'fixtures', 'sample', 'posts', 'posts-00001.ndjson'), 'utf8').split('\n')) {
    let r: { title?: unknown; description?: unknown };
    try {
      r = JSON.parse(line) as typeof r;
    } catch {
      continue;
    }
    const text = [r?.title, r?.description].filter((x): x is string => typeof x === 'string').join(' ');
    texts.push(text);
    for (const t of new Set(terms(text))) df.set(t, (df.get(t) ?? 0) + 1);
  }
  const frequent = [...df]
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
    .slice(0, 12)
    .map(([t]) => t);
  const mixes: Record<string, string[]> = {
    planted: narratives.map((n) => n.keywords.slice(0, 3).join(' ')),
    frequent: [...frequent, ...frequent.slice(0, 11).map((t, i) => `${t} ${frequent[i + 1]}`)],
    long: texts
      .filter((t) => t.split(/\s+/).length >= 8)
      .slice(0, 40)
      .map((t) => t.split(/\s+/).slice(0, 20).join(' ')),
  };
  for (const [mix, queries] of Object.entries(mixes)) {
    let overlap = 0;
    let n = 0;
    for (const query of queries)
      for (const window of WINDOW_KEYS) {
        const exact = search(index, { query, limit: 100, window }, { reference: true });
        const served = new Set(search(index, { query, limit: 100, window }).map((r) => r.row));
        if (exact.length === 0) continue;
        overlap += exact.filter((r) => served.has(r.row)).length / exact.length;
        n++;
      }
    assert.ok(n >= 40, `${mix}: ${n} answers compared`);
    assert.ok(overlap / n >= 0.98, `${mix}: mean top-100 overlap ${(overlap / n).toFixed(4)} over ${n} answers`);
  }
});

test.run();
