// Labels of narratives by class-based TF-IDF (c-TF-IDF, as BERTopic does): all posts of a cluster
// are one document, and a term's weight in cluster c is
//   W(t, c) = tf(t, c) / |c|  x  ln(1 + A / f(t))
// with tf(t, c) the term's count in the cluster, |c| the cluster's total term count, f(t) its
// count over all clusters and A the mean number of terms per cluster. Terms frequent in a cluster
// and rare elsewhere win. The label is the top terms (bigrams of adjacent terms are candidates
// too, so "sourdough starter" beats "sourdough" + "starter"); top_tags ranks the posts' hashtags
// the same way.
export interface LabelOptions {
  terms: number;
  tags: number;
}

export const LABEL_DEFAULTS: LabelOptions = { terms: 3, tags: 5 };

/** c-TF-IDF weight of a key counted tf times in a class of `size` keys, f times over all classes; a = mean keys per class. */
export function cTfIdf(tf: number, size: number, f: number, a: number): number {
  return (tf / size) * Math.log(1 + a / f);
}

export interface WeightedKey {
  key: string;
  weight: number;
  tf: number;
}

/** Label order: higher weight, then more frequent, then alphabetical. */
export function byWeight(x: WeightedKey, y: WeightedKey): number {
  return y.weight - x.weight || y.tf - x.tf || (x.key < y.key ? -1 : x.key > y.key ? 1 : 0);
}

/** Counts of keys per cluster, accumulated post by post. */
export class ClassCounts {
  readonly perClass: Array<Map<string, number>>;
  readonly total = new Map<string, number>();
  constructor(classes: number) {
    this.perClass = Array.from({ length: classes }, () => new Map());
  }

  add(c: number, keys: Iterable<string>): void {
    const m = this.perClass[c]!;
    for (const k of keys) {
      m.set(k, (m.get(k) ?? 0) + 1);
      this.total.set(k, (this.total.get(k) ?? 0) + 1);
    }
  }

  /** The n keys of class c with the highest c-TF-IDF weight (ties: more frequent, then alphabetical). */
  top(c: number, n: number, eligible: (key: string) => boolean = () => true): Array<{ key: string; weight: number }> {
    const m = this.perClass[c]!;
    let size = 0;
    for (const v of m.values()) size += v;
    if (size === 0) return [];
    let all = 0;
    for (const v of this.total.values()) all += v;
    const a = all / Math.max(1, this.perClass.length);
    const scored: WeightedKey[] = [];
    for (const [key, tf] of m) {
      if (!eligible(key)) continue;
      scored.push({ key, tf, weight: cTfIdf(tf, size, this.total.get(key)!, a) });
    }
    scored.sort(byWeight);
    return scored.slice(0, n).map(({ key, weight }) => ({ key, weight }));
  }
}

/** A post's label candidates: its terms and adjacent-term bigrams (hashtags and emoji excluded). */
export function labelKeys(terms: readonly string[]): string[] {
  const words = terms.filter((t) => /\p{L}/u.test(t) && t.length > 1);
  const out = [...words];
  for (let i = 1; i < words.length; i++) out.push(`${words[i - 1]} ${words[i]}`);
  return out;
}

/**
 * The label from the top-weighted keys: a bigram absorbs the unigrams it contains, so the label
 * reads "sourdough starter, levain" rather than "sourdough starter, sourdough, starter".
 */
export function labelFrom(top: Array<{ key: string }>, n: number): string {
  const picked: string[] = [];
  for (const { key } of top) {
    if (picked.length >= n) break;
    const parts = key.split(' ');
    if (picked.some((p) => p === key || p.split(' ').includes(key) || parts.every((w) => p.split(' ').includes(w)))) continue;
    // A bigram replaces unigrams already picked that it contains.
    for (let i = picked.length - 1; i >= 0; i--) if (parts.includes(picked[i]!)) picked.splice(i, 1);
    picked.push(key);
  }
  return picked.join(', ');
}
