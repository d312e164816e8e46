// The ranking core, callable without HTTP: hybrid retrieval (BM25 + HNSW) with the window applied
// inside both retrievers, a relevance floor, Reciprocal Rank Fusion (k = 60), then a documented
// blend with recency and engagement. Every score is defined in docs/fields.md.
import { terms as analyzeTerms } from '../text/analyzer.ts';
import { assertInt } from '../infra/assert.ts';
import { generationIdf, searchSegments } from './bm25.ts';
import { embedderKnows, embedQuery } from '../vectors/embedder.ts';
import { toSpace } from '../vectors/vector-space.ts';
import { DAY_MS, WINDOW_DAYS, type WindowKey } from '../snapshots/windows.ts';
import { exactNeighbours } from './exact-neighbours.ts';
import { chanceSimilarity } from './chance-floor.ts';
import { searchGraphs, type LoadedGraphs, type Neighbour } from './segment-graphs.ts';
import { weightedEngagement, type SearchIndex } from './search-index.ts';

/**
 * Every setting of the ranking, in one place (what each does to a score: docs/fields.md, "Ranking").
 */
export const RANKING = {
  /** Reciprocal Rank Fusion's k (as Elasticsearch and others use): rrf = sum 1 / (k + rank). */
  rrfK: 60,
  /**
   * A row found only by the vector retriever must be at least this similar to count as a match,
   * and more similar than rows are by chance to the query (core/ranking/chance-floor.ts).
   */
  vectorFloor: 0.35,
  /** exampleRankingScore = relevance x w + recencyScore x w + engagementScore x w. */
  blend: { relevance: 0.7, recency: 0.15, engagement: 0.15 },
  /** Each retriever returns a deeper list than asked for, so fusion has overlap: max(limit x depthFactor, minDepth) rows. */
  depthFactor: 2,
  minDepth: 100,
  /**
   * Search breadth (hnswlib's ef, per shard) for a candidate list of `depth` rows: the depth itself,
   * at least minEf. At 1M posts recall@10 against exact search is 0.970 at ef 100 and 0.980 at ef 400
   * (bench/RESULTS.md, ranking); twice the breadth would cost p99 latency for little.
   */
  minEf: 64,
  /** Recency's half-life in days: a third of the window (recencyHalfLifeDays); all: this many. */
  allWindowHalfLifeDays: 30,
} as const;

type IntentEvidenceSource = 'authored_text' | 'no_match' | 'no_text' | 'tag_only';

export interface RankedRow {
  row: number;
  uuid: string;
  rawSimilarity: number;
  similarity: number;
  rrfScore: number;
  relevance: number;
  recencyScore: number;
  engagementScore: number;
  engagementDepth: number;
  authorReach: number;
  exampleRankingScore: number;
  intentSimilarity: number | null;
  intentEvidenceSource: IntentEvidenceSource;
  lexicalRank: number | null;
  vectorRank: number | null;
}

export interface SearchParams {
  query: string;
  limit: number;
  window: WindowKey;
}

/** A search whose query is analysed once, where it enters (serve/search-route/), and read analysed from then on. */
export interface AnalysedSearch extends SearchParams {
  /** The query's analysed terms (core/text/analyzer.ts), in order. */
  terms: readonly string[];
}

/** The search with its query analysed. */
export function analyseSearch(p: SearchParams): AnalysedSearch {
  return { query: p.query, limit: p.limit, window: p.window, terms: analyzeTerms(p.query) };
}

/** Half-life of the recency score: a third of the window (all: 30 days). */
export function recencyHalfLifeDays(window: WindowKey): number {
  return window === 'all' ? RANKING.allWindowHalfLifeDays : WINDOW_DAYS[window] / 3;
}

/**
 * A query's vector in the index's text space: its words the embedder knows (learnt by the fit, or
 * folded in since: core/vectors/fold-in.ts), embedded as a post's but for its folded words' common
 * directions (embedQuery). All zeros when it knows none.
 */
export function queryVector(index: SearchIndex, queryTerms: string[]): Float32Array {
  return toSpace(index.textSpace, embedQuery(index.embedder, queryTerms));
}

/**
 * The share of a query the vector retriever stands for: the BM25 idf of its terms the embedder
 * knows over that of every term either side knows (0..1; 1 when it knows them all). A name no fit
 * has seen yet is left out of the query vector, so the vector candidates answer only the rest of
 * the query; their RRF term is weighted by this share, so they cannot outrank the posts that hold
 * the name (docs/fields.md, "rrfScore").
 */
function vectorCoverage(index: SearchIndex, queryTerms: string[]): number {
  let all = 0;
  let known = 0;
  for (const [term, { df, idf }] of generationIdf(index.bm25, queryTerms)) {
    const embedded = embedderKnows(index.embedder, term);
    if (df === 0 && !embedded) continue;
    all += idf;
    if (embedded) known += idf;
  }
  return all > 0 ? known / all : 0;
}

/** The query's cosine to the row on its int8 vector, kept in [-1, 1] (quantisation can overshoot by ~1e-3). */
function cosine(index: SearchIndex, q: Float32Array, row: number): number {
  return Math.max(-1, Math.min(1, index.vectors.dot(q, row)));
}

/** Search breadth (hnswlib's ef, per shard) for a vector candidate list of `depth` rows (RANKING.minEf). */
export function vectorEf(depth: number): number {
  return Math.max(depth, RANKING.minEf);
}

/**
 * A search up to its vector candidates: the query's terms, the retrievers' depth, the window's
 * first row, the query vector and the lexical candidates. Split from the fusion so a thread that
 * holds no graphs can ask another for the vector candidates (serve/search/graph-worker.ts), find
 * the lexical ones while it waits, and fuse them itself, with exactly the ranking of search().
 */
export interface SearchPlan {
  start: number;
  depth: number;
  /** The query's analysed terms. */
  terms: string[];
  /** The query vector in the index's text space; null when no query term is known to it. */
  vector: Float32Array | null;
  /** The vector candidates' weight in the fusion: the share of the query the vector stands for (vectorCoverage). */
  vectorWeight: number;
  /** The similarity a vector candidate needs: RANKING.vectorFloor, or the query's chance similarity when higher. */
  floor: number;
}

/** The plan of a search (null: nothing can match, the answer is empty); its query is analysed here unless it comes analysed. */
export function planSearch(index: SearchIndex, p: SearchParams | AnalysedSearch): SearchPlan | null {
  assertInt(p.limit, 0, Number.MAX_SAFE_INTEGER, 'limit');
  const start = index.windowStart[p.window];
  assertInt(start, 0, index.rows, `the ${p.window} window's first row`);
  const windowRows = index.rows - start;
  if (windowRows === 0 || p.limit === 0) return null;
  const qTerms = 'terms' in p ? [...p.terms] : analyzeTerms(p.query);
  if (qTerms.length === 0) return null;
  // Each retriever returns a deeper list than asked for, so fusion has overlap to work with.
  const depth = Math.min(windowRows, Math.max(p.limit * RANKING.depthFactor, RANKING.minDepth));
  const qv = queryVector(index, qTerms);
  const vector = qv.some((x) => x !== 0) ? qv : null;
  return {
    start,
    depth,
    terms: qTerms,
    vector,
    vectorWeight: vector ? vectorCoverage(index, qTerms) : 0,
    floor: vector ? Math.max(RANKING.vectorFloor, chanceSimilarity(index.vectors, vector)) : RANKING.vectorFloor,
  };
}

/** The lexical candidates of a plan: BM25 over the window's rows. */
export function lexicalCandidates(index: SearchIndex, plan: SearchPlan): Array<{ row: number; score: number }> {
  return searchSegments(index.bm25, plan.terms, plan.depth, plan.start, index.deleted);
}

/**
 * The graphs' hits of a plan, graphDepth(depth) of them (ef: vectorEf of that), above the fixed
 * vector floor (fuse applies the plan's); vectorCandidates ranks them again and cuts to the depth.
 */
export function graphCandidates(graphs: LoadedGraphs, plan: Pick<SearchPlan, 'vector' | 'depth' | 'start'>): Neighbour[] {
  if (!plan.vector) return [];
  const k = graphDepth(plan.depth);
  return searchGraphs(graphs, plan.vector, k, vectorEf(k), plan.start).filter((v) => v.sim >= RANKING.vectorFloor);
}

/**
 * How many hits the graphs are asked for, for a vector list of `depth` rows: half as many again.
 * The graphs rank by the float vectors they hold, the answer (and the exact scan it is measured
 * against) by the int8 vectors every thread shares; near the depth's cut, where similarities
 * crowd, the two orders disagree, and a list cut by the graphs' order lost rows the exact scan
 * keeps. Measured at 100k posts (windows 90d and all, 50 queries a mix; recall of the exact
 * scan's list): cut by the graphs 0.975 / 0.896 / 0.954 (planted / frequent / long), ranked
 * again from 1.5x 0.999 / 0.949 / 0.998, from 3x 0.999 / 0.956 / 0.999; a 3x ef alone 0.975 /
 * 0.915 / 0.957.
 */
function graphDepth(depth: number): number {
  return Math.ceil(depth * 1.5);
}

/**
 * The vector candidates of a plan: the graphs' hits (graphDepth of them) and the lexical
 * candidates the graphs missed, each ranked by its similarity on the int8 vectors (the one the
 * exact scan ranks by: a dot product each), at or above the vector floor, best first (ties by
 * row), cut to the depth. HNSW can miss a tight burst of near-duplicate posts whole (its greedy
 * descent never enters it); the lexical candidates often lie inside it, and an exact scan would
 * have ranked them there (docs/fields.md, "What a search guarantees"). A few hundred dot
 * products: a small share of an answer's time.
 */
export function vectorCandidates(
  index: SearchIndex,
  plan: Pick<SearchPlan, 'vector' | 'depth'>,
  lexical: ReadonlyArray<{ row: number }>,
  hits: readonly Neighbour[],
): Neighbour[] {
  const q = plan.vector;
  if (!q) return [];
  const seen = new Set<number>();
  const out: Neighbour[] = [];
  const add = (row: number) => {
    if (seen.has(row) || !index.vectors.hasVector(row)) return;
    seen.add(row);
    const sim = cosine(index, q, row);
    if (sim >= RANKING.vectorFloor) out.push({ row, sim });
  };
  for (const h of hits) add(h.row);
  for (const { row } of lexical) add(row);
  out.sort((a, b) => b.sim - a.sim || a.row - b.row);
  return out.slice(0, plan.depth);
}

/**
 * `exact`: the vector candidates by a scan of the int8 vectors (exact-neighbours.ts) instead of the
 * HNSW graphs: the asynchronous jobs' deep retrievals, in a thread that holds no graphs.
 * `reference`: exact on both sides, the lexical candidates by scoring every posting of the query's
 * lists too (no pruning): the answer the served one is measured against (docs/fields.md, "What a
 * search guarantees").
 */
export function search(index: SearchIndex, p: SearchParams, opts: { exact?: boolean; reference?: boolean } = {}): RankedRow[] {
  const plan = planSearch(index, p);
  if (!plan) return [];
  let vector: Neighbour[] = [];
  if (plan.vector && (opts.exact || opts.reference)) {
    vector = exactNeighbours(index.vectors, plan.vector, plan.depth, plan.start).filter((v) => v.sim >= RANKING.vectorFloor);
  } else if (plan.vector) {
    if (!index.hnsw)
      throw new Error(`generation ${index.generation} was loaded without its graphs (the server's search workers hold them)`);
    vector = graphCandidates(index.hnsw, plan);
  }
  const lexical = opts.reference
    ? searchSegments(index.bm25, plan.terms, plan.depth, plan.start, index.deleted, true)
    : lexicalCandidates(index, plan);
  return fuse(index, p, plan, lexical, opts.exact || opts.reference ? vector : vectorCandidates(index, plan, lexical, vector));
}

/**
 * Reciprocal Rank Fusion of a plan's lexical candidates and its vector candidates, blended and cut to the limit.
 * The candidates (a few hundred) are scored in typed arrays and only the rows returned become
 * objects: building every candidate's full row cost most of the fusion.
 */
export function fuse(
  index: SearchIndex,
  p: SearchParams,
  plan: SearchPlan,
  lexical: ReadonlyArray<{ row: number }>,
  candidates: readonly Neighbour[],
): RankedRow[] {
  const vector = candidates.filter((v) => v.sim >= plan.floor);
  // Candidate slots: the lexical rows in their order, then the rows only the vector retriever found.
  const slotOf = new Map<number, number>();
  const rows = new Int32Array(lexical.length + vector.length);
  const lexRank = new Int32Array(rows.length);
  const vecRank = new Int32Array(rows.length);
  let n = 0;
  for (let i = 0; i < lexical.length; i++) {
    const row = lexical[i]!.row;
    if (slotOf.has(row)) continue;
    slotOf.set(row, n);
    rows[n] = row;
    lexRank[n++] = i + 1;
  }
  for (let i = 0; i < vector.length; i++) {
    const row = vector[i]!.row;
    let slot = slotOf.get(row);
    if (slot === undefined) (slotOf.set(row, (slot = n)), (rows[n++] = row));
    if (vecRank[slot] === 0) vecRank[slot] = i + 1;
  }
  const halfLife = recencyHalfLifeDays(p.window);
  const rrf = new Float64Array(n);
  const recency = new Float64Array(n);
  const engagementScore = new Float64Array(n);
  const ranking = new Float64Array(n);
  for (let s = 0; s < n; s++) {
    const row = rows[s]!;
    const lr = lexRank[s]!;
    const vr = vecRank[s]!;
    rrf[s] = (lr ? 1 / (RANKING.rrfK + lr) : 0) + (vr ? plan.vectorWeight / (RANKING.rrfK + vr) : 0);
    const ageDays = Math.max(0, (index.asOfMs - index.publishedAt[row]!) / DAY_MS);
    recency[s] = Math.pow(0.5, ageDays / halfLife);
    engagementScore[s] =
      index.maxWeightedEngagementLog > 0
        ? Math.log1p(weightedEngagement(index.likes[row]!, index.comments[row]!, index.shares[row]!)) / index.maxWeightedEngagementLog
        : 0;
    ranking[s] =
      RANKING.blend.relevance * relevanceOf(rrf[s]!) + RANKING.blend.recency * recency[s]! + RANKING.blend.engagement * engagementScore[s]!;
  }
  // uuids are decoded for exact ties only (a few hundred candidates each time otherwise).
  const uuids = new Map<number, string>();
  const uuidOf = (row: number): string => {
    let u = uuids.get(row);
    if (u === undefined) uuids.set(row, (u = index.uuid.get(row)!));
    return u;
  };
  // Only the candidates at or above the limit-th best blended score can be returned: those are
  // sorted by the full order (a comparator sort of every candidate cost a third of the fusion). A
  // NaN score (or cutoff) keeps its candidate in that sort, as before.
  const cutoff = n > p.limit ? ranking.slice().sort()[n - p.limit]! : -Infinity;
  const order: number[] = [];
  for (let s = 0; s < n; s++) if (!(ranking[s]! < cutoff)) order.push(s);
  order.sort(
    (a, b) =>
      ranking[b]! - ranking[a]! ||
      rrf[b]! - rrf[a]! ||
      (uuidOf(rows[a]!) < uuidOf(rows[b]!) ? -1 : uuidOf(rows[a]!) > uuidOf(rows[b]!) ? 1 : 0),
  );
  const qv = plan.vector;
  return order.slice(0, p.limit).map((s) => {
    const row = rows[s]!;
    const raw = qv !== null ? cosine(index, qv, row) : 0;
    const comments = index.comments[row]!;
    const shares = index.shares[row]!;
    const interactions = index.likes[row]! + comments + shares;
    const followers = index.followers[row]!;
    const kind = index.textKind[row]!;
    const lr = lexRank[s] || null;
    const matched = lr !== null || raw >= plan.floor;
    return {
      row,
      uuid: uuidOf(row),
      rawSimilarity: raw,
      similarity: Math.max(0, raw),
      rrfScore: rrf[s]!,
      relevance: relevanceOf(rrf[s]!),
      recencyScore: recency[s]!,
      engagementScore: engagementScore[s]!,
      engagementDepth: interactions > 0 ? (comments + shares) / interactions : 0,
      authorReach: Number.isNaN(followers) || index.maxFollowersLog === 0 ? 0 : Math.log1p(followers) / index.maxFollowersLog,
      exampleRankingScore: ranking[s]!,
      intentSimilarity: kind === 1 ? raw : null,
      intentEvidenceSource: kind === -1 ? 'no_text' : kind === 0 ? 'tag_only' : matched ? 'authored_text' : 'no_match',
      lexicalRank: lr,
      vectorRank: vecRank[s] || null,
    };
  });
}

/** relevance: the RRF score over the best a row can reach (first in both lists), 0..1. */
function relevanceOf(rrf: number): number {
  return rrf / (2 / (RANKING.rrfK + 1));
}
