// The search engine on this thread (SEARCH_THREADS=0, and tools and tests that load a generation
// themselves): the generation is loaded whole, graphs included, and answers are built here by
// the same code the pool's answer workers run (answer-build.ts).
import { assert } from '../../core/infra/assert.ts';
import { graphCandidates, type SearchParams, type SearchPlan } from '../../core/ranking/search.ts';
import { loadGeneration, type LoadedGeneration } from '../generation/loaded-generation.ts';
import { answerHere, rankHere, type AnswerRequest, type BuiltAnswer, type SearchOutcome } from './answer-build.ts';
import { assertSearchable, assertWithinLimit, type SearchEngine } from './search-engine.ts';

export class InThreadEngine implements SearchEngine {
  /** The generations this engine loaded and has not disposed of. */
  private readonly held = new Set<LoadedGeneration>();

  async load(dir: string, previous: LoadedGeneration | null): Promise<LoadedGeneration> {
    const gen = await loadGeneration(dir, { previous });
    this.held.add(gen);
    return gen;
  }

  async dispose(gen: LoadedGeneration): Promise<void> {
    this.held.delete(gen);
  }

  async answer(gen: LoadedGeneration, r: AnswerRequest): Promise<BuiltAnswer> {
    assertSearchable(r.params, gen, this.held.has(gen));
    const built = await answerHere(gen, r, (plan) => graphsOf(gen, plan));
    assertWithinLimit(built.count, r.params);
    return built;
  }

  /** One thread answers: its caches are filled by the one answer. */
  warm(gen: LoadedGeneration, r: AnswerRequest): Promise<BuiltAnswer> {
    return this.answer(gen, r);
  }

  async search(gen: LoadedGeneration, p: SearchParams): Promise<SearchOutcome> {
    assertSearchable(p, gen, this.held.has(gen));
    const outcome = await rankHere(gen, p, (plan) => graphsOf(gen, plan));
    assertWithinLimit(outcome.ranked.length, p);
    return outcome;
  }

  async close(): Promise<void> {
    this.held.clear();
  }
}

function graphsOf(gen: LoadedGeneration, plan: SearchPlan) {
  assert(gen.index.hnsw, `generation ${gen.id} was loaded without its graphs`);
  return graphCandidates(gen.index.hnsw, plan);
}
