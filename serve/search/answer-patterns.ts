// Pattern entries of a search answer (docs/api.md, "Pattern entry"), served only when SEARCH_PATTERNS is on (the
// list is empty while the feature is switched off, the default). Candidates are the window's
// patterns that hold a returned row or share a query term; each is scored (docs/fields.md,
// "Pattern entries in search"):
//   lexicalMatch     share of the query's terms found in the pattern's label, summary and elements;
//   memberTextMatch  share of the pattern's posts whose own text holds a query term;
//   visualSimilarity cosine between the pattern's centroid and the query's look: the unit mean of
//                    the visual vectors of the returned rows, weighted by their exampleRankingScore
//                    (pseudo-relevance feedback: a text query has no picture of its own);
//   queryRelevance   0.4 lexicalMatch + 0.3 memberTextMatch + 0.3 max(0, visualSimilarity).
import fs from 'node:fs';
import path from 'node:path';
import { segmentsContainAny, segmentTermIds } from '../../core/ranking/bm25.ts';
import { segmentDir, segmentOfRow } from '../../core/snapshots/segments.ts';
import type { RankedRow } from '../../core/ranking/search.ts';
import type { WindowKey } from '../../core/snapshots/windows.ts';
import type { GenerationData } from '../generation/loaded-generation.ts';
import type { Lookalike, PatternDetail, RepresentativeContent } from '../generation/load-maps.ts';

const SEARCH_PATTERNS_MAX = 10;
const PATTERN_BLEND = { lexical: 0.4, memberText: 0.3, visual: 0.3 } as const;
/** Returned rows whose visual vectors make the query's look. */
const LOOK_ROWS = 50;

export interface PatternEntry {
  pattern: PatternDetail;
  lexicalMatch: number;
  memberTextMatch: number;
  visualSimilarity: number;
  queryRelevance: number;
  lookalikes: Lookalike[];
  representativeContent: RepresentativeContent[];
}

/** Visual vectors of a few rows, read from their segments' visual-vectors.f32 (not held in memory). */
function readVisualRows(gen: GenerationData, rows: number[]): Map<number, Float32Array> {
  const out = new Map<number, Float32Array>();
  const dim = gen.maps.patternDim;
  if (dim === 0 || rows.length === 0) return out;
  for (const r of rows) {
    if (gen.index.deleted[r]) continue;
    const s = segmentOfRow(gen.index.segments, r);
    const fd = fs.openSync(path.join(segmentDir(gen.dir, s.id), 'visual-vectors.f32'), 'r');
    try {
      const v = new Float32Array(dim);
      fs.readSync(fd, new Uint8Array(v.buffer), 0, dim * 4, (r - s.firstRow) * dim * 4);
      if (v.some((x) => x !== 0)) out.set(r, v);
    } finally {
      fs.closeSync(fd);
    }
  }
  return out;
}

function queryLook(gen: GenerationData, ranked: readonly RankedRow[]): Float32Array | null {
  const top = ranked.slice(0, LOOK_ROWS);
  const vectors = readVisualRows(
    gen,
    top.map((r) => r.row),
  );
  if (vectors.size === 0) return null;
  const look = new Float64Array(gen.maps.patternDim);
  for (const r of top) {
    const v = vectors.get(r.row);
    if (v) for (let i = 0; i < v.length; i++) look[i]! += r.exampleRankingScore * v[i]!;
  }
  const norm = Math.hypot(...look) || 1;
  return Float32Array.from(look, (x) => x / norm);
}

/** `terms`: the query's analysed terms (core/ranking/search.ts, analyseSearch). */
export function searchPatterns(
  gen: GenerationData,
  window: WindowKey,
  terms: readonly string[],
  ranked: readonly RankedRow[],
): PatternEntry[] {
  const qTerms = [...new Set(terms)];
  if (qTerms.length === 0) return [];
  const inAnswer = new Set<string>();
  for (const r of ranked) for (const k of gen.content.patternKeys.get(r.row)) inAnswer.add(k);
  const bm25 = gen.index.bm25;
  const termIds = segmentTermIds(bm25, qTerms);
  const anyTerm = termIds.some((ids) => ids.length > 0);
  let look: Float32Array | null | undefined;
  const entries: PatternEntry[] = [];
  for (const p of gen.maps.patterns) {
    if (p.scope !== window) continue;
    const own = new Set(p.text);
    const lexicalMatch = qTerms.filter((t) => own.has(t)).length / qTerms.length;
    if (lexicalMatch === 0 && !inAnswer.has(p.detail.patternKey)) continue;
    let matching = 0;
    if (anyTerm) for (const row of p.members) if (segmentsContainAny(bm25, termIds, row)) matching++;
    const memberTextMatch = p.members.length ? matching / p.members.length : 0;
    if (look === undefined) look = queryLook(gen, ranked);
    let visualSimilarity = 0;
    if (look && p.centroid) for (let i = 0; i < look.length; i++) visualSimilarity += look[i]! * p.centroid[i]!;
    const queryRelevance =
      PATTERN_BLEND.lexical * lexicalMatch +
      PATTERN_BLEND.memberText * memberTextMatch +
      PATTERN_BLEND.visual * Math.max(0, visualSimilarity);
    entries.push({
      pattern: p.detail,
      lexicalMatch,
      memberTextMatch,
      visualSimilarity,
      queryRelevance,
      lookalikes: p.lookalikes,
      representativeContent: p.representatives,
    });
  }
  return entries
    .sort((a, b) => b.queryRelevance - a.queryRelevance || a.pattern.patternKey.localeCompare(b.pattern.patternKey))
    .slice(0, SEARCH_PATTERNS_MAX);
}
