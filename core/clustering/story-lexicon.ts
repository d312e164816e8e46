// The story clustering's words (stories.ts, word-bursts.ts, themes): each row's label words, the
// key terms of a group of posts (c-TF-IDF against the window) and who holds them.
import { cTfIdf } from '../maps/labels.ts';
import type { RowKeyLists } from '../maps/label-counts.ts';

/** Words that name a story: a group's key terms (STORY_DEFAULTS.keyTerms). */
export const KEY_TERMS = 5;

/** Each row's words: the ids below `words` in `lists` (label words; bigrams above are skipped). */
export interface StoryWords {
  lists: RowKeyLists;
  words: number;
  /** Each row's UTC day (days since the epoch): what the bursting-word step counts (word-bursts.ts); absent, it is skipped. */
  days?: Int32Array;
}

/**
 * The key test's words over one window: posts holding each word (each word once per post), counted
 * in dense scratch arrays reset after use, and the window's own counts for the idf.
 */
export class StoryLexicon {
  private readonly seen: Int32Array;
  private readonly counts: Int32Array;
  private readonly windowDf: Int32Array;
  private stamp = 0;
  readonly posts: number;

  constructor(
    private readonly w: StoryWords,
    windowRows: ArrayLike<number>,
    private readonly keyTerms = KEY_TERMS,
  ) {
    this.seen = new Int32Array(w.words);
    this.counts = new Int32Array(w.words);
    this.windowDf = new Int32Array(w.words);
    const { ids, counts } = this.count(windowRows);
    ids.forEach((id, j) => (this.windowDf[id] = counts[j]!));
    this.posts = windowRows.length;
  }

  /** Posts holding each word, as (ids, counts) of the words met. */
  private count(rows: ArrayLike<number>): { ids: number[]; counts: number[] } {
    const { offsets, ids } = this.w.lists;
    const met: number[] = [];
    for (let k = 0; k < rows.length; k++) {
      const r = rows[k]!;
      const s = ++this.stamp;
      for (let i = offsets[r]!; i < offsets[r + 1]!; i++) {
        const id = ids[i]!;
        if (id >= this.w.words || this.seen[id] === s) continue;
        this.seen[id] = s;
        if (this.counts[id]!++ === 0) met.push(id);
      }
    }
    const counts = met.map((id) => this.counts[id]!);
    for (const id of met) this.counts[id] = 0;
    return { ids: met, counts };
  }

  /** The key terms of a group of posts: its words of highest c-TF-IDF against the window. */
  keysOf(members: ArrayLike<number>): number[] {
    return this.weightsOf(members, this.keyTerms).ids;
  }

  /** A group's `n` words of highest c-TF-IDF against the window, best first, with their weights. */
  weightsOf(members: ArrayLike<number>, n: number): { ids: number[]; weights: number[] } {
    const { ids, counts } = this.count(members);
    const weight = ids.map((id, j) => cTfIdf(counts[j]!, members.length, this.windowDf[id]!, this.posts));
    // A key term is shared: a word of one post names nothing (and would keep that post in).
    const order = ids
      .map((_, j) => j)
      .filter((j) => counts[j]! >= Math.min(2, members.length))
      .sort((a, b) => weight[b]! - weight[a]! || counts[b]! - counts[a]! || ids[a]! - ids[b]!);
    const top = order.slice(0, n);
    return { ids: top.map((j) => ids[j]!), weights: top.map((j) => weight[j]!) };
  }

  /** Share of `rows` holding at least one of `keys`. */
  coverage(rows: ArrayLike<number>, keys: readonly number[]): number {
    if (rows.length === 0) return 0;
    const { offsets, ids } = this.w.lists;
    const s = ++this.stamp;
    for (const id of keys) this.seen[id] = s;
    let hit = 0;
    for (let k = 0; k < rows.length; k++) {
      const r = rows[k]!;
      for (let i = offsets[r]!; i < offsets[r + 1]!; i++)
        if (this.seen[ids[i]!] === s) {
          hit++;
          break;
        }
    }
    return hit / rows.length;
  }

  /** The words at least `min` posts of the window hold, ascending. */
  wordsHeldBy(min: number): number[] {
    const out: number[] = [];
    this.windowDf.forEach((df, id) => df >= min && out.push(id));
    return out;
  }

  /** Calls `f` once for each distinct word of post `r`. */
  eachWord(r: number, f: (id: number) => void): void {
    const { offsets, ids } = this.w.lists;
    const s = ++this.stamp;
    for (let i = offsets[r]!; i < offsets[r + 1]!; i++) {
      const id = ids[i]!;
      if (id >= this.w.words || this.seen[id] === s) continue;
      this.seen[id] = s;
      f(id);
    }
  }

  /** How many of `keys` post `r` holds. */
  heldCount(r: number, keys: readonly number[]): number {
    let n = 0;
    this.eachWord(r, (id) => keys.includes(id) && n++);
    return n;
  }

  /** Whether post `r` holds one of `keys`. */
  holds(r: number, keys: readonly number[]): boolean {
    const { offsets, ids } = this.w.lists;
    for (let i = offsets[r]!; i < offsets[r + 1]!; i++) if (keys.includes(ids[i]!)) return true;
    return false;
  }

  /**
   * A group told as a story: its members that hold one of its key terms, when at least `coverage`
   * of them do (the key test); null when it fails.
   */
  story(members: readonly number[], coverage: number): number[] | null {
    const keys = this.keysOf(members);
    const kept = members.filter((r) => this.holds(r, keys));
    return kept.length >= coverage * members.length ? kept : null;
  }
}
