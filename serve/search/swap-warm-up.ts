// A swap's warm-up (docs/operations.md, "Serving"): before the snapshot store serves a new
// generation, the most recent distinct searches the server answered (RecentSearches) are answered
// on it, one at a time, on every answer worker in turn (each worker keeps its own per-row caches:
// rows' JSON, label words), unbilled and unrecorded. The first requests on the new generation then
// find those caches filled, and the answer cache starts with these answers instead of empty: a
// swap used to make every popular query and row cold at once, on the threads serving the traffic.
// One search at a time, so the warm-up takes at most one worker from the traffic; bounded by
// SWAP_WARM_UP_SEARCHES and SWAP_WARM_UP_MS (a swap waits for it at most that long).
import type { Logger } from '../../core/infra/log.ts';
import type { LoadedGeneration } from '../generation/loaded-generation.ts';
import type { BuiltAnswer } from './answer-build.ts';
import type { RecentSearches } from './recent-searches.ts';
import type { SearchEngine } from './search-engine.ts';

/** The last warm-up (GET /health, search.warm_up). */
interface WarmUpReport {
  generation: string;
  /** Searches answered on the generation before it was served, of `of` in the warm-up set. */
  searches: number;
  of: number;
  /** Searches that failed (they are left cold; the swap goes ahead). */
  failed: number;
  ms: number;
}

export class SwapWarmUp {
  last: WarmUpReport | null = null;
  private warmed: { generation: string; answers: Array<[string, BuiltAnswer]> } | null = null;

  constructor(
    private readonly engine: SearchEngine,
    private readonly recent: RecentSearches,
    private readonly opts: { budgetMs: number; patterns: boolean },
    private readonly log: Logger,
  ) {}

  /** Answer the warm-up set on `gen` (loaded, not served yet) until it is done or the budget is spent. */
  async warm(gen: LoadedGeneration): Promise<void> {
    const t0 = performance.now();
    const set = this.recent.latest();
    const answers: Array<[string, BuiltAnswer]> = [];
    let failed = 0;
    for (const { key, search } of set) {
      if (performance.now() - t0 >= this.opts.budgetMs) break;
      try {
        answers.push([key, await this.engine.warm(gen, { params: search, patterns: this.opts.patterns })]);
      } catch {
        failed++;
      }
    }
    this.warmed = { generation: gen.id, answers };
    this.last = { generation: gen.id, searches: answers.length, of: set.length, failed, ms: Math.round(performance.now() - t0) };
    if (set.length > 0) this.log.info({ ...this.last }, 'warm-up of the new generation done');
  }

  /** The warm-up's answers on `generation`, by answer-cache key, handed once (the answer cache takes them at the swap). */
  take(generation: string): Array<[string, BuiltAnswer]> {
    const w = this.warmed;
    this.warmed = null;
    return w?.generation === generation ? w.answers : [];
  }
}
