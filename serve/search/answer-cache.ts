// Real search traffic repeats itself (the same trending query from many clients, a dashboard
// refreshing). An identical request on the same generation gets the same answer: the ranking and
// every part built from it are a function of the generation, the query's analysed terms, the
// limit and the window. So the built answer (its JSON fragment, its row count and its emergent
// narratives, stored again on a hit so their ids stay readable for another hour) is kept and
// reused; the billing never is: each call is still held, settled and recorded as its own
// (search-route.ts), and `request_id`, `response_time_ms`, `query` (as the caller wrote it) and
// `usage` are the call's own. Bounded by the bytes of the answers' JSON (SEARCH_CACHE_MB, least
// recently used out first) and emptied when a new generation is swapped in (docs/api.md, "Answer
// cache"), then given the answers the swap's warm-up built on it (swap-warm-up.ts). lru-cache (isaacs) does the bookkeeping.
import { LRUCache } from 'lru-cache';
import type { WindowKey } from '../../core/snapshots/windows.ts';
import type { BuiltAnswer } from './answer-build.ts';

export class AnswerCache {
  private readonly lru: LRUCache<string, BuiltAnswer> | null;
  private generation: string | null = null;
  hits = 0;
  misses = 0;

  /** `maxBytes` 0: no cache (every search ranks afresh). */
  constructor(maxBytes: number) {
    this.lru = maxBytes > 0 ? new LRUCache<string, BuiltAnswer>({ maxSize: maxBytes }) : null;
  }

  get enabled(): boolean {
    return this.lru !== null;
  }

  /** The key of a request: its analysed terms in order (what the ranking reads), limit and window. */
  static key(terms: readonly string[], limit: number, window: WindowKey): string {
    return `${window}\u0000${limit}\u0000${terms.join('\u0001')}`;
  }

  get(generation: string, key: string): BuiltAnswer | undefined {
    if (!this.lru || generation !== this.generation) return undefined;
    const hit = this.lru.get(key);
    if (hit) this.hits++;
    else this.misses++;
    return hit;
  }

  /** Keep an answer; the bound counts the bytes of its JSON. */
  set(generation: string, key: string, answer: BuiltAnswer): void {
    if (!this.lru || generation !== this.generation) return;
    this.lru.set(key, answer, { size: Math.max(1, answer.json.byteLength) });
  }

  /** A new generation is served: every answer of the old one is dropped; `warm` (its warm-up's answers) are its first. */
  swapTo(generation: string, warm: ReadonlyArray<[string, BuiltAnswer]> = []): void {
    this.generation = generation;
    this.lru?.clear();
    for (const [key, answer] of warm) this.set(generation, key, answer);
  }

  get bytes(): number {
    return this.lru?.calculatedSize ?? 0;
  }

  get entries(): number {
    return this.lru?.size ?? 0;
  }
}
