// Labels of narratives by class-based TF-IDF (c-TF-IDF, as BERTopic does): all posts of a cluster
// are one document, and a term's weight in cluster c is
//   W(t, c) = tf(t, c) / |c|  x  ln(1 + A / f(t))
// with tf(t, c) the term's count in the cluster, |c| the cluster's total term count, f(t) its
// count over all clusters and A the mean number of terms per cluster. Terms frequent in a cluster
// and rare elsewhere win. The label is the top terms (bigrams of adjacent terms are candidates
// too, so "sourdough starter" beats "sourdough" + "starter"); top_tags ranks the posts' hashtags
// the same way.
import { labelWord } from './label-words.ts';

interface LabelOptions {
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

/**
 * A key the clusters share does not name any of them: one counted at least `share` times per row
 * of a cluster in `classes` of the clusters or more (and in at least minClasses) is a word most of
 * them use (a sign-off, a platform's furniture such as #fyp, "today"), however often it occurs in one.
 */
export const SHARED_KEY = { share: 0.05, classes: 0.25, minClasses: 3 } as const;

/** The least number of classes (of `classes`) that share a key (SHARED_KEY); Infinity when too few classes. */
export function sharedBy(classes: number): number {
  return classes >= SHARED_KEY.minClasses ? Math.max(SHARED_KEY.minClasses, SHARED_KEY.classes * classes) : Infinity;
}

/** Counts of keys per cluster, accumulated post by post. */
export class ClassCounts {
  readonly perClass: Array<Map<string, number>>;
  readonly total = new Map<string, number>();
  private readonly rows: number[];
  private shared: Set<string> | null = null;
  constructor(classes: number) {
    this.perClass = Array.from({ length: classes }, () => new Map());
    this.rows = new Array<number>(classes).fill(0);
  }

  add(c: number, keys: Iterable<string>): void {
    const m = this.perClass[c]!;
    this.rows[c]!++;
    this.shared = null;
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
    const shared = this.sharedKeys();
    const scored: WeightedKey[] = [];
    for (const [key, tf] of m) {
      if (!eligible(key) || shared.has(key)) continue;
      scored.push({ key, tf, weight: cTfIdf(tf, size, this.total.get(key)!, a) });
    }
    scored.sort(byWeight);
    return scored.slice(0, n).map(({ key, weight }) => ({ key, weight }));
  }

  /** Keys the classes share (SHARED_KEY). */
  sharedKeys(): Set<string> {
    if (this.shared) return this.shared;
    const spread = new Map<string, number>();
    this.perClass.forEach((m, c) => {
      for (const [k, n] of m) if (n >= SHARED_KEY.share * this.rows[c]!) spread.set(k, (spread.get(k) ?? 0) + 1);
    });
    const least = sharedBy(this.perClass.length);
    this.shared = new Set([...spread].filter(([, n]) => n >= least).map(([k]) => k));
    return this.shared;
  }
}

/**
 * A post's label candidates: its label words (label-words.ts), then the bigrams of adjacent ones
 * (a term that is no label word between two breaks the pair: "time" and "angeles" of "time in los
 * angeles" never make a bigram).
 */
export function labelKeys(terms: readonly string[]): string[] {
  return keysOfRuns(labelWordRuns(terms));
}

/** Stands between two label words that a word of no label separated (labelWordRuns). */
export const RUN_BREAK = '';

/**
 * What labelKeys reads of a post's terms, as the features stage stores it per row (label-words.bin,
 * core/maps/row-label-words.ts): its label words in order, RUN_BREAK between two that other words
 * separated.
 */
export function labelWordRuns(terms: readonly string[]): string[] {
  const out: string[] = [];
  let broken = false;
  for (const t of terms) {
    if (!labelWord(t)) {
      broken = true;
      continue;
    }
    if (broken && out.length > 0) out.push(RUN_BREAK);
    broken = false;
    out.push(t);
  }
  return out;
}

/** The label keys of labelWordRuns' words: each word, then each pair of adjacent words as a bigram. */
export function keysOfRuns(runs: readonly string[]): string[] {
  const words: string[] = [];
  const bigrams: string[] = [];
  let prev: string | null = null;
  for (const w of runs) {
    if (w === RUN_BREAK) {
      prev = null;
      continue;
    }
    words.push(w);
    if (prev !== null) bigrams.push(`${prev} ${w}`);
    prev = w;
  }
  return [...words, ...bigrams];
}

/**
 * Whether two words are one word's variants: the longer is the shorter (5 letters or more) and at
 * most 3 more characters (#allertameteo and #allertameteoSAR, brazil and brazilian).
 */
function variant(a: string, b: string): boolean {
  if (a.includes(' ') || b.includes(' ')) return false;
  const [short, long] = a.length <= b.length ? [a, b] : [b, a];
  return short.length >= 5 && long.length - short.length <= 3 && long.startsWith(short);
}

/**
 * The label from the top-weighted keys: a bigram absorbs the unigrams it contains, so the label
 * reads "sourdough starter, levain" rather than "sourdough starter, sourdough, starter", a
 * hashtag spelled as its words ("gamergate" and "gamer gate") is named once, and so is a word and
 * its variant (variant: "#allertameteo", "#allertameteoSAR"). A key with a word the
 * clusters share (`shared`, SHARED_KEY) or that `skip` names (label-words.ts, labelSkip: another
 * language's stop word, a profanity) is skipped, and so is a bigram of a hashtag and one of its own
 * parts ("hillaryclinton hillary").
 */
export function labelFrom(
  top: ReadonlyArray<{ key: string }>,
  n: number,
  shared: ReadonlySet<string> = new Set(),
  skip: (term: string) => boolean = () => false,
): string {
  const picked: string[] = [];
  const joined = (k: string) => k.split(' ').join('');
  for (const { key } of top) {
    if (picked.length >= n) break;
    const parts = key.split(' ');
    if (parts.some((w) => shared.has(w) || skip(w))) continue;
    if (parts.length === 2 && (parts[0]!.includes(parts[1]!) || parts[1]!.includes(parts[0]!))) continue;
    if (
      picked.some(
        (p) =>
          p === key ||
          p.split(' ').includes(key) ||
          parts.every((w) => p.split(' ').includes(w)) ||
          joined(p) === joined(key) ||
          variant(p, key),
      )
    )
      continue;
    // A bigram replaces unigrams already picked that it contains.
    for (let i = picked.length - 1; i >= 0; i--) if (parts.includes(picked[i]!)) picked.splice(i, 1);
    picked.push(key);
  }
  return picked.join(', ');
}
