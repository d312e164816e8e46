// A generation as the server answers from it: the loaded data (serve/generation/) with the means
// to answer searches on it. With a search pool the big parts go to its workers at load (the graphs
// to its graph worker, the shared parts to its answer workers) and answers are built there;
// without one (SEARCH_THREADS=0) this thread holds everything and answers itself, by the same code.
import { assert } from '../../core/infra/assert.ts';
import { graphCandidates, type SearchParams, type SearchPlan } from '../../core/ranking/search.ts';
import type { SearchIndex } from '../../core/ranking/search-index.ts';
import { loadGeneration, type GenerationParts, type LoadedGeneration } from '../generation/loaded-generation.ts';
import type { GenerationLoader } from '../generation/snapshot-store.ts';
import { answerHere, rankHere, type AnswerRequest, type BuiltAnswer, type SearchOutcome } from './answer-build.ts';
import type { SearchPool } from './search-pool.ts';

export interface ServedGeneration extends LoadedGeneration {
  /** A search answer (its JSON fragment, rows and emergent narratives): in an answer worker when there are any, else here. */
  answer(r: AnswerRequest): Promise<BuiltAnswer>;
  /** The ranked rows and their clusters alone (tests and tools). */
  search(p: SearchParams): Promise<SearchOutcome>;
  /** Let the search workers drop it (once no request holds it). */
  dispose(): Promise<void>;
}

/**
 * Load a generation to answer from; with a pool, its workers take the big parts and this thread
 * keeps no graphs. The segments `previous` (the generation being served) holds are taken from it.
 */
export async function loadServedGeneration(
  dir: string,
  pool: SearchPool | null = null,
  previous: LoadedGeneration | null = null,
): Promise<ServedGeneration> {
  const share = pool
    ? async (parts: GenerationParts) => {
        try {
          await pool.load(parts);
        } catch (err) {
          await pool.drop(parts.id);
          throw err;
        }
      }
    : undefined;
  const gen = await loadGeneration(dir, { previous, share });
  const id = gen.id;
  const served: ServedGeneration = {
    ...gen,
    answer: pool ? (r) => pool.answer(id, r) : async (r) => answerHere(served, r, (plan) => graphsOf(gen.index, plan)),
    search: pool ? (p) => pool.search(id, p) : async (p) => rankHere(served, p, (plan) => graphsOf(gen.index, plan)),
    dispose: pool ? () => pool.drop(id) : async () => undefined,
  };
  return served;
}

/** The snapshot store's loader: generations served through `pool` (or on this thread), dropped from its workers when retired. */
export function servedLoader(pool: SearchPool | null): GenerationLoader<ServedGeneration> {
  return { load: (dir, previous) => loadServedGeneration(dir, pool, previous), dispose: (gen) => gen.dispose() };
}

function graphsOf(index: SearchIndex, plan: SearchPlan) {
  assert(index.hnsw, `generation ${index.generation} was loaded without its graphs`);
  return graphCandidates(index.hnsw, plan);
}
