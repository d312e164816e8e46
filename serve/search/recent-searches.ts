// The most recent distinct searches the server answered, the warm-up set of a swap
// (swap-warm-up.ts): keyed as the answer cache keys them (analysed terms, limit, window), so a
// search asked again moves to the front instead of taking a second place. Bounded.
import type { AnalysedSearch } from '../../core/ranking/search.ts';
import { AnswerCache } from './answer-cache.ts';

export class RecentSearches {
  private readonly byKey = new Map<string, AnalysedSearch>();

  constructor(readonly max: number) {}

  record(search: AnalysedSearch): void {
    if (this.max === 0) return;
    const key = AnswerCache.key(search.terms, search.limit, search.window);
    this.byKey.delete(key);
    this.byKey.set(key, search);
    if (this.byKey.size > this.max) this.byKey.delete(this.byKey.keys().next().value!);
  }

  /** The searches with their keys, most recent first. */
  latest(): Array<{ key: string; search: AnalysedSearch }> {
    return [...this.byKey].reverse().map(([key, search]) => ({ key, search }));
  }

  get size(): number {
    return this.byKey.size;
  }
}
