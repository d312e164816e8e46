// c-TF-IDF labels (labels.ts: the same weight, the same order) counted over integer keys instead of
// strings, for the narratives stage (every window's narratives) and a search answer's few clusters.
// String-keyed maps (ClassCounts) were the largest cost of both: here a row's label keys are
// interned to ids once and counted in dense scratch arrays that are reset after use, and only the
// top n keys per class are kept (no sort of every key).
import { byWeight, cTfIdf, SHARED_KEY, sharedBy, type WeightedKey } from './labels.ts';

/** Label keys interned to ids for one generation; bounded (cleared when full, with the caller's row cache). */
export class LabelVocabulary {
  private readonly ids = new Map<string, number>();
  readonly keys: string[] = [];
  constructor(readonly maxKeys = 2_000_000) {}

  get full(): boolean {
    return this.keys.length >= this.maxKeys;
  }

  idsOf(keys: readonly string[]): Int32Array {
    const out = new Int32Array(keys.length);
    keys.forEach((k, i) => {
      let id = this.ids.get(k);
      if (id === undefined) this.ids.set(k, (id = this.keys.push(k) - 1));
      out[i] = id;
    });
    return out;
  }

  clear(): void {
    this.ids.clear();
    this.keys.length = 0;
  }

  /** The same ids in a vocabulary of its own (the copy grows, or is cleared, without changing this one). */
  copy(): LabelVocabulary {
    const c = new LabelVocabulary(this.maxKeys);
    for (const k of this.keys) c.ids.set(k, c.keys.push(k) - 1);
    return c;
  }
}

/** Key ids of rows: row r's are ids[offsets[r]] .. ids[offsets[r + 1] - 1]. */
export interface RowKeyLists {
  offsets: ArrayLike<number>;
  ids: ArrayLike<number>;
}

/** Classes given as each member's own key-id array, as KeyCounter.top takes them: member rows over one RowKeyLists. */
export function keyListsOf(classes: ReadonlyArray<ReadonlyArray<ArrayLike<number>>>): {
  classes: Int32Array[];
  lists: RowKeyLists;
} {
  let rows = 0;
  let keys = 0;
  for (const c of classes) for (const ids of c) (rows++, (keys += ids.length));
  const offsets = new Int32Array(rows + 1);
  const ids = new Int32Array(keys);
  let r = 0;
  const out = classes.map((c) =>
    Int32Array.from(c, (list) => {
      ids.set(list, offsets[r]!);
      offsets[r + 1] = offsets[r]! + list.length;
      return r++;
    }),
  );
  return { classes: out, lists: { offsets, ids } };
}

/** Dense counts over a vocabulary, reused from request to request (the main thread runs one at a time). */
export class KeyCounter {
  private total = new Int32Array(1024);
  private cls = new Int32Array(1024);

  private spreadCount = new Int32Array(1024);
  /** The keys the classes of the last top() share (SHARED_KEY): a label skips a bigram with one of them. */
  lastShared = new Set<string>();

  /**
   * The n best keys of each class: classes[c] lists its rows, whose key ids `lists` holds; key(id)
   * names an id. Equal to ClassCounts.top over the same keys (same weights, same order), except that a
   * key the classes share (see SHARED_KEY) is never among them.
   */
  top(
    classes: ReadonlyArray<ArrayLike<number>>,
    lists: RowKeyLists,
    vocabSize: number,
    n: number,
    key: (id: number) => string,
  ): WeightedKey[][] {
    if (this.total.length < vocabSize) {
      this.total = new Int32Array(vocabSize * 2);
      this.cls = new Int32Array(vocabSize * 2);
      this.spreadCount = new Int32Array(vocabSize * 2);
    }
    const { total, cls, spreadCount } = this;
    const { offsets, ids } = lists;
    const touchedAll: number[] = [];
    let all = 0;
    // One pass over the rows: counts over all classes, in how many classes each key is common, and
    // each class's (key, count) pairs, kept so the weighing below need not count the rows again.
    let pairIds = new Int32Array(4096);
    let pairTf = new Int32Array(4096);
    let pairs = 0;
    const pairEnd = new Int32Array(classes.length);
    const sizes = new Float64Array(classes.length);
    classes.forEach((rows, c) => {
      const touched: number[] = [];
      let size = 0;
      for (let k = 0; k < rows.length; k++) {
        const r = rows[k]!;
        for (let i = offsets[r]!; i < offsets[r + 1]!; i++) {
          const id = ids[i]!;
          if (total[id]!++ === 0) touchedAll.push(id);
          if (cls[id]!++ === 0) touched.push(id);
        }
        size += offsets[r + 1]! - offsets[r]!;
      }
      all += size;
      sizes[c] = size;
      if (pairs + touched.length > pairIds.length) {
        const cap = Math.max(pairIds.length * 2, pairs + touched.length);
        const grownIds = new Int32Array(cap);
        const grownTf = new Int32Array(cap);
        grownIds.set(pairIds.subarray(0, pairs));
        grownTf.set(pairTf.subarray(0, pairs));
        pairIds = grownIds;
        pairTf = grownTf;
      }
      const common = SHARED_KEY.share * rows.length;
      for (const id of touched) {
        if (cls[id]! >= common) spreadCount[id]!++;
        pairIds[pairs] = id;
        pairTf[pairs++] = cls[id]!;
        cls[id] = 0;
      }
      pairEnd[c] = pairs;
    });
    const least = sharedBy(classes.length);
    this.lastShared = new Set(touchedAll.filter((id) => spreadCount[id]! >= least).map(key));
    const a = all / Math.max(1, classes.length);
    const out = classes.map((_, c) => {
      const size = sizes[c]!;
      const best: WeightedKey[] = [];
      for (let p = c > 0 ? pairEnd[c - 1]! : 0; p < pairEnd[c]!; p++) {
        const id = pairIds[p]!;
        const tf = pairTf[p]!;
        if (spreadCount[id]! >= least) continue;
        const weight = cTfIdf(tf, size, total[id]!, a);
        // Kept sorted, at most n: most keys fall below the n-th and cost one comparison.
        if (best.length === n && (weight < best[n - 1]!.weight || (weight === best[n - 1]!.weight && tf < best[n - 1]!.tf))) continue;
        const cand = { key: key(id), weight, tf };
        let at = best.length;
        while (at > 0 && byWeight(cand, best[at - 1]!) < 0) at--;
        if (at < n) {
          best.splice(at, 0, cand);
          if (best.length > n) best.pop();
        }
      }
      return best;
    });
    for (const id of touchedAll) ((total[id] = 0), (spreadCount[id] = 0));
    return out;
  }
}
