// Which posts describing a cluster reads, for any cluster of rows (a window's narratives, a search
// answer's, themes): given its members (most central first), its label candidates and its top tags,
// the label, the summary and the representative post (label-and-summary.ts; docs/fields.md, "Narratives").
// The posts are read in rounds, each one batch for every cluster (one query in the pipeline):
//   1. the DESCRIBE_POSTS most central members: the languages of the label's stop words, the
//      label, and the representative among them;
//   2. when none of those is readable, or none readable says a word of the label, the next
//      DESCRIBE_DEEPER members, the representative then being the best of all read; none readable:
//      no representative, and the label is the summary;
//   3. for a label word none of the posts read wrote (the plural fold's "vega" of "Vegas"), up to
//      SPELLING_POSTS members that hold it (most central first, of the first SPELLING_SCAN), so
//      the label shows it as written.
import { DESCRIBE_POSTS, describeFromWords, type PostWords } from './label-and-summary.ts';
import { labelSkip, labelWord } from './label-words.ts';
import { LABEL_DEFAULTS, labelFrom } from './labels.ts';
import { languagesOf } from '../text/language.ts';
import { isAbusive } from '../text/abuse.ts';

/** Members read further down when none of the DESCRIBE_POSTS most central is readable, or none readable says a word of the label. */
export const DESCRIBE_DEEPER = 200;
/** Members read per label word for its spelling, of the first SPELLING_SCAN members. */
const SPELLING_POSTS = 20;
const SPELLING_SCAN = 5000;
/** Label candidates a cluster offers (c-TF-IDF's best keys): enough for a label once skipped keys are left out. */
export const LABEL_CANDIDATES = 24;
/** The label of a cluster with neither a label word nor a tag left. */
const UNTITLED = 'untitled';

export interface ClusterToDescribe {
  /** Member rows, most central first. */
  members: ArrayLike<number>;
  /** Label keys by c-TF-IDF weight, best first (label-counts.ts, KeyCounter.top). */
  candidates: ReadonlyArray<{ key: string }>;
  /** Top tags, best first: the label when no candidate is left. */
  tags: readonly string[];
}

/** What describing reads of the rows besides their texts. */
interface DescribeSources {
  /** The keys the clusters share (KeyCounter.lastShared): no label has them. */
  shared: ReadonlySet<string>;
  /** A row's analysed terms (round 3). */
  termsOf: (row: number) => Iterable<string>;
  /** Each row's interactions (likes + comments + shares): of equally typical posts, the more engaged describes the cluster. */
  interactions: ArrayLike<number>;
}

interface ClusterDescription {
  label: string;
  summary: string;
  /** The member the summary is cut from; null when no member read is readable. */
  representative: number | null;
}

/** members[from .. to), as far as there are members. */
function slice(members: ArrayLike<number>, from: number, to: number): number[] {
  const out: number[] = [];
  for (let i = from; i < Math.min(to, members.length); i++) out.push(members[i]!);
  return out;
}

/**
 * The rounds of describing a set of clusters: next() names the rows whose words the next round
 * needs (none: done), give() takes them (postWords of each row's text), result() describes.
 */
export class ClusterDescriber {
  private readonly words = new Map<number, PostWords>();
  /** Per cluster: the members read as its representative's candidates (rounds 1 and 2), and those read for spelling only. */
  private readonly candidates: number[][];
  private readonly spelling: number[][];
  private readonly labels: string[] = [];
  private round = 0;

  constructor(
    private readonly clusters: readonly ClusterToDescribe[],
    private readonly sources: DescribeSources,
  ) {
    this.candidates = clusters.map(() => []);
    this.spelling = clusters.map(() => []);
  }

  next(): number[] {
    const need = new Set<number>();
    const ask = (into: number[], rows: number[]) => {
      into.push(...rows);
      for (const r of rows) if (!this.words.has(r)) need.add(r);
    };
    while (need.size === 0 && this.round < 3) {
      this.round++;
      this.clusters.forEach((c, i) => {
        const read = this.candidates[i]!;
        if (this.round === 1) ask(read, slice(c.members, 0, DESCRIBE_POSTS));
        else if (this.round === 2) {
          this.labels[i] = this.label(c, read);
          if (!this.saysLabel(read, this.labels[i]!)) ask(read, slice(c.members, DESCRIBE_POSTS, DESCRIBE_POSTS + DESCRIBE_DEEPER));
        } else ask(this.spelling[i]!, this.spellingRows(c, this.labels[i]!, read));
      });
    }
    return [...need];
  }

  give(words: ReadonlyMap<number, PostWords>): void {
    for (const [r, w] of words) this.words.set(r, w);
  }

  /** The clusters' descriptions, once next() names no more rows; `textOf(row)` is the text a summary is cut from. */
  result(textOf: (row: number) => string): ClusterDescription[] {
    return this.clusters.map((_, i) => {
      const posts = this.candidates[i]!;
      const d = describeFromWords(
        this.labels[i]!,
        posts.map((r) => this.words.get(r)!),
        (j) => textOf(posts[j]!),
        this.spelling[i]!.map((r) => this.words.get(r)!),
        (j) => this.sources.interactions[posts[j]!]!,
      );
      return { label: d.label, summary: d.summary, representative: d.pick >= 0 ? posts[d.pick]! : null };
    });
  }

  /** The label of the candidates without the keys the cluster's languages and the lexicon skip; else a clean tag; else 'untitled'. */
  private label(c: ClusterToDescribe, central: readonly number[]): string {
    const skip = labelSkip(languagesOf(central.map((r) => this.words.get(r)!.language)));
    return labelFrom(c.candidates, LABEL_DEFAULTS.terms, this.sources.shared, skip) || c.tags.find((t) => !isAbusive(t)) || UNTITLED;
  }

  /** Whether a readable post of `rows` holds a word of the label. */
  private saysLabel(rows: readonly number[], label: string): boolean {
    const want = label.split(/[, ]+/);
    return rows.some((r) => {
      const p = this.words.get(r)!;
      return want.some((w) => p.summaryWords.has(w)) && p.readable();
    });
  }

  /** Members holding a label word none of the posts read wrote (round 3). */
  private spellingRows(c: ClusterToDescribe, label: string, read: readonly number[]): number[] {
    const seen = new Set<string>();
    for (const r of read) for (const [term] of this.words.get(r)!.surfaces) seen.add(term);
    const missing = new Map<string, number>();
    for (const w of label.split(/[, ]+/)) if (labelWord(w) && w !== UNTITLED && !seen.has(w)) missing.set(w, 0);
    const out: number[] = [];
    if (missing.size === 0) return out;
    const readSet = new Set(read);
    for (let m = 0; m < Math.min(c.members.length, SPELLING_SCAN) && missing.size > 0; m++) {
      const r = c.members[m]!;
      if (readSet.has(r)) continue;
      let holds = false;
      for (const t of this.sources.termsOf(r)) {
        const n = missing.get(t);
        if (n === undefined) continue;
        holds = true;
        if (n + 1 >= SPELLING_POSTS) missing.delete(t);
        else missing.set(t, n + 1);
      }
      if (holds) out.push(r);
    }
    return out;
  }
}

/** The descriptions of the clusters, their members' texts read in batches by `readTexts` (`wordsOf` of each). */
export async function describeClusters(
  clusters: readonly ClusterToDescribe[],
  sources: DescribeSources,
  readTexts: (rows: number[]) => Promise<Map<number, string>>,
  wordsOf: (text: string) => PostWords,
): Promise<ClusterDescription[]> {
  const d = new ClusterDescriber(clusters, sources);
  const texts = new Map<number, string>();
  for (let rows = d.next(); rows.length > 0; rows = d.next()) {
    const got = await readTexts(rows);
    const words = new Map<number, PostWords>();
    for (const r of rows) {
      const t = got.get(r) ?? '';
      texts.set(r, t);
      words.set(r, wordsOf(t));
    }
    d.give(words);
  }
  return d.result((r) => texts.get(r) ?? '');
}
