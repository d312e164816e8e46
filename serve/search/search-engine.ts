// The search engine: what answers searches on a loaded generation. Two implementations, chosen by
// SEARCH_THREADS (search-parts.ts): the worker pool (search-pool.ts: answer workers over the
// generation's shared parts, one graph worker), or this thread (in-thread-engine.ts, SEARCH_THREADS=0),
// by the same answer code (answer-build.ts). The engine is also the snapshot store's loader: with a
// pool, its workers take the big parts of each generation as it loads and drop them when it retires.
// Its boundary is asserted here, once for both: what comes in (a limit the API allows, a known
// window, a generation this engine loaded) and what goes out (no more rows than the limit).
import { assert, assertInt } from '../../core/infra/assert.ts';
import type { SearchParams } from '../../core/ranking/search.ts';
import { WINDOW_KEYS } from '../../core/snapshots/windows.ts';
import type { LoadedGeneration } from '../generation/loaded-generation.ts';
import type { GenerationLoader } from '../generation/snapshot-store.ts';
import type { AnswerRequest, BuiltAnswer, SearchOutcome } from './answer-build.ts';
import { SEARCH_LIMIT_MAX } from './search-body.ts';

export interface SearchEngine extends GenerationLoader {
  /** A search answer on `gen` (its JSON fragment, rows and emergent narratives). */
  answer(gen: LoadedGeneration, r: AnswerRequest): Promise<BuiltAnswer>;
  /**
   * A swap's warm-up answer (swap-warm-up.ts): built on every thread that answers (each keeps its
   * own per-row caches), one after another, outside the queue's bound.
   */
  warm(gen: LoadedGeneration, r: AnswerRequest): Promise<BuiltAnswer>;
  /** The ranked rows and their clusters alone (tests and tools). */
  search(gen: LoadedGeneration, p: SearchParams): Promise<SearchOutcome>;
  /** Stop (the pool: its searches in flight finish first). */
  close(): Promise<void>;
}

/** The pool holds SEARCH_QUEUE_MAX searches already: the 503 of docs/api.md, "POST /search" (nothing is held or charged). */
export class SearchQueueFull extends Error {
  constructor(readonly max: number) {
    super(`the search queue is full (at most ${max} searches at once); try again after Retry-After seconds`);
  }
}

/** A search as the engine takes it: a limit of 1..SEARCH_LIMIT_MAX, a known window, on a generation the engine holds. */
export function assertSearchable(p: SearchParams, gen: LoadedGeneration, held: boolean): void {
  assertInt(p.limit, 1, SEARCH_LIMIT_MAX, 'search limit');
  assert((WINDOW_KEYS as readonly string[]).includes(p.window), () => `search window ${p.window} is not one of ${WINDOW_KEYS.join(', ')}`);
  assert(held, () => `generation ${gen.id} is not loaded in the search engine (released, or loaded elsewhere)`);
}

/** What the engine gives back: no more rows than the limit asked. */
export function assertWithinLimit(rows: number, p: SearchParams): void {
  assertInt(rows, 0, p.limit, 'rows in the answer');
}
