// serve/search/'s parts of the server, built from the configuration in one place: the search
// engine (the worker pool, or this thread with SEARCH_THREADS=0), the answer cache, the emergent
// narratives searches form (shared between replicas with DATABASE_URL), the route's settings, and
// a swap's warm-up (the recent searches, answered on each new generation before it is served).
import type { Config } from '../../core/infra/config.ts';
import type { Logger } from '../../core/infra/log.ts';
import { AnswerCache } from './answer-cache.ts';
import { EmergentShare } from './emergent-share.ts';
import { EMERGENT_MAX, EMERGENT_TTL_MS, EmergentStore } from './emergent-store.ts';
import { InThreadEngine } from './in-thread-engine.ts';
import { RecentSearches } from './recent-searches.ts';
import type { SearchEngine } from './search-engine.ts';
import { SearchPool } from './search-pool.ts';
import { SwapWarmUp } from './swap-warm-up.ts';

export interface SearchParts {
  engine: SearchEngine;
  /** The engine when it is the worker pool (null with SEARCH_THREADS=0): /health and /metrics read its workers. */
  pool: SearchPool | null;
  /** Answers of identical searches on the served generation (SEARCH_CACHE_MB; disabled at 0). */
  cache: AnswerCache;
  emergent: EmergentStore;
  /** Replicas share the emergent narratives their searches form (DATABASE_URL); null: one server. */
  emergentShare: EmergentShare | null;
  /** Pattern entries in answers (SEARCH_PATTERNS). */
  patterns: boolean;
  /** SEARCH_BUDGET_MS: a search not answered by then is handed to an insights job. */
  budgetMs: number;
  /** The most recent distinct searches answered (SWAP_WARM_UP_SEARCHES): a swap's warm-up set. */
  recent: RecentSearches;
  /** Answers them on each new generation before it is served. */
  warmUp: SwapWarmUp;
}

export function searchParts(config: Config, log: Logger): SearchParts {
  const pool =
    config.SEARCH_THREADS > 0
      ? new SearchPool({
          threads: config.SEARCH_THREADS,
          queueMax: config.SEARCH_QUEUE_MAX,
          loaderNice: config.LOADER_NICE,
          onError: (err) => log.error({ err: err.message }, 'search worker failed; a new one replaces it'),
        })
      : null;
  const emergentShare = config.DATABASE_URL
    ? new EmergentShare(config.DATABASE_URL, (err) => log.error({ err: err.message }, 'sharing emergent narratives failed'))
    : null;
  const engine = pool ?? new InThreadEngine();
  const recent = new RecentSearches(config.SWAP_WARM_UP_SEARCHES);
  return {
    engine,
    pool,
    cache: new AnswerCache(config.SEARCH_CACHE_MB * 1024 * 1024),
    emergent: new EmergentStore(EMERGENT_TTL_MS, EMERGENT_MAX, () => Date.now(), emergentShare),
    emergentShare,
    patterns: config.SEARCH_PATTERNS,
    budgetMs: config.SEARCH_BUDGET_MS,
    recent,
    warmUp: new SwapWarmUp(engine, recent, { budgetMs: config.SWAP_WARM_UP_MS, patterns: config.SEARCH_PATTERNS }, log),
  };
}
