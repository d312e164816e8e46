// A search answer from a generation's data, the same code in an answer worker (answer-worker.ts)
// and on the main thread (SEARCH_THREADS=0): rank (the ranking core's plan, the vector candidates
// from wherever the graphs are, fusion), cluster the rows (answer-clusters.ts), build every part
// that follows from the ranking (content items, creators, tracked and emergent narratives,
// patterns) and write them as one JSON fragment, so the thread that answers HTTP only adds the
// call's own fields (query, request_id, response_time_ms, usage) around it.
import {
  fuse,
  lexicalCandidates,
  planSearch,
  vectorCandidates,
  type AnalysedSearch,
  type RankedRow,
  type SearchParams,
  type SearchPlan,
} from '../../core/ranking/search.ts';
import type { Neighbour } from '../../core/ranking/segment-graphs.ts';
import { contentItemsJson, creatorsOf } from '../generation/content-item.ts';
import type { GenerationData } from '../generation/loaded-generation.ts';
import { clusterAnswer, type AnswerClusters } from './answer-clusters.ts';
import { emergentNarratives, trackedNarratives, type EmergentNarrative } from './answer-narratives.ts';
import { searchPatterns } from './answer-patterns.ts';

/**
 * One UTF-8 buffer of ASCII strings, byte runs and a last string of any text, in its own
 * ArrayBuffer (a worker transfers it; a small Buffer may sit in Node's shared pool).
 */
export function utf8Concat(chunks: ReadonlyArray<string | Uint8Array>, last: string): Uint8Array {
  let size = Buffer.byteLength(last);
  for (const c of chunks) size += c.length;
  const out = Buffer.allocUnsafeSlow(size);
  let at = 0;
  for (const c of chunks) at += typeof c === 'string' ? out.write(c, at, 'latin1') : (out.set(c, at), c.length);
  out.write(last, at, 'utf8');
  return new Uint8Array(out.buffer, out.byteOffset, size);
}

export interface AnswerRequest {
  /** The search with its query analysed once (search-route.ts): the plan, the emergent ids and the pattern entries read its terms. */
  params: AnalysedSearch;
  /** Pattern entries on (SEARCH_PATTERNS). */
  patterns: boolean;
}

export interface BuiltAnswer {
  /** UTF-8 JSON of `"content":[...],"creators":[...],"narratives":[...],"patterns":[...]` (no braces). */
  json: Uint8Array;
  /** Content rows returned (what the call is charged for). */
  count: number;
  /** The answer's emergent narratives, for /narratives/{id} (emergent-store.ts). */
  emergent: EmergentNarrative[];
}

export interface SearchOutcome {
  ranked: RankedRow[];
  clusters: AnswerClusters;
}

/** Where the vector candidates of a plan come from: this thread's graphs, or the graph worker's. */
type VectorCandidates = (plan: SearchPlan) => Neighbour[] | Promise<Neighbour[]>;

/** The ranked rows and their clusters. */
export async function rankHere(gen: GenerationData, p: SearchParams | AnalysedSearch, vectors: VectorCandidates): Promise<SearchOutcome> {
  const plan = planSearch(gen.index, p);
  let ranked: RankedRow[] = [];
  if (plan) {
    // The vector candidates are asked for first: the graph worker searches while this thread finds the lexical ones.
    const vector = plan.vector ? vectors(plan) : [];
    const lexical = lexicalCandidates(gen.index, plan);
    ranked = fuse(gen.index, p, plan, lexical, vectorCandidates(gen.index, plan, lexical, await vector));
  }
  return { ranked, clusters: clusterAnswer(gen.index.vectors, ranked) };
}

/** Every part of an answer that follows from the ranking, as JSON. */
function buildAnswer(gen: GenerationData, r: AnswerRequest, outcome: SearchOutcome): BuiltAnswer {
  const { params } = r;
  const { ranked, clusters } = outcome;
  const rows = ranked.map((x) => x.row);
  // Emergent ids derive from the analysed terms joined by spaces (as the answer cache's key does).
  const emergent = emergentNarratives(gen, params.window, params.terms.join(' '), ranked, clusters);
  // The content items from the rows' cached JSON (content-item.ts), the rest serialised here.
  const rest = JSON.stringify({
    creators: creatorsOf(gen, rows),
    narratives: [...trackedNarratives(gen, params.window, rows), ...emergent.map((e) => e.narrative)],
    // Pattern entries are switched off unless SEARCH_PATTERNS is on; the list stays empty.
    patterns: r.patterns ? searchPatterns(gen, params.window, params.terms, ranked) : [],
  });
  const content = contentItemsJson(gen, ranked);
  return { json: utf8Concat(['"content":', ...content], `,${rest.slice(1, -1)}`), count: ranked.length, emergent };
}

export async function answerHere(gen: GenerationData, r: AnswerRequest, vectors: VectorCandidates): Promise<BuiltAnswer> {
  return buildAnswer(gen, r, await rankHere(gen, r.params, vectors));
}
