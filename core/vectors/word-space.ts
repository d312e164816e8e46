// The word space of short posts: positive pointwise mutual information (PPMI) of feature
// co-occurrence within a window, whose top singular vectors give each feature (term or bigram
// bucket) a vector (Levy, Goldberg & Dagan 2015: PPMI + SVD with context smoothing 0.75 and the
// singular values to the power 0.5). A post is then the weighted sum of its features' vectors.
//
// Why not LSA's singular vectors of the post x feature matrix: a tweet holds a dozen features, so
// two tweets of one subject rarely share a word and LSA leaves them nearly orthogonal; the word
// space learns from the whole corpus that "god", "pray" and "church" go together, and places two
// posts close when their words are. On the 2,914 TweetEval stance tweets (five subjects), k-means
// at k = 5 reached NMI 0.32 on this space against 0.13-0.18 on LSA's (scikit-learn, by hand); through this
// module, 0.26 against 0.10.
//
// Hand-written with the embedder (core/vectors/embedder.ts), whose randomized SVD it feeds: a hash table of
// pair counts and a few loops over typed arrays, no native or Python dependency.

interface WordSpaceOptions {
  /** Features at most this many term positions apart co-occur. */
  window: number;
  /** Context distribution smoothing: context counts raised to this power. */
  alpha: number;
  /** Pairs seen fewer times carry no association (their PMI is noise). */
  minCount: number;
}

// minCount 2: pairs seen once are most pairs and mostly chance; dropping them halved the fit and
// kept the planted narratives' NMI (0.942 vs 0.924 with them, 20k posts of the quality bench).
const WORD_SPACE_DEFAULTS: WordSpaceOptions = { window: 8, alpha: 0.75, minCount: 2 };

/** A sparse row: column indices (ascending not required) and values. */
export interface SparseRow {
  idx: Uint32Array;
  val: Float32Array;
}

const EMPTY = 0xffffffff;

/** Counts of unordered bucket pairs (a < b), in open addressing with linear probing. */
class PairCounts {
  keys: Uint32Array;
  counts: Uint32Array;
  size = 0;
  constructor(capacity = 1 << 16) {
    this.keys = new Uint32Array(capacity).fill(EMPTY);
    this.counts = new Uint32Array(capacity);
  }
  add(key: number): void {
    if (this.size * 2 >= this.keys.length) this.grow();
    const mask = this.keys.length - 1;
    let h = Math.imul(key, 0x9e3779b1) >>> 0;
    for (;;) {
      const i = h & mask;
      const k = this.keys[i]!;
      if (k === key) {
        this.counts[i]!++;
        return;
      }
      if (k === EMPTY) {
        this.keys[i] = key;
        this.counts[i] = 1;
        this.size++;
        return;
      }
      h = i + 1;
    }
  }
  private grow(): void {
    const { keys, counts } = this;
    this.keys = new Uint32Array(keys.length * 2).fill(EMPTY);
    this.counts = new Uint32Array(keys.length * 2);
    this.size = 0;
    const mask = this.keys.length - 1;
    for (let j = 0; j < keys.length; j++) {
      const key = keys[j]!;
      if (key === EMPTY) continue;
      let i = (Math.imul(key, 0x9e3779b1) >>> 0) & mask;
      while (this.keys[i] !== EMPTY) i = (i + 1) & mask;
      this.keys[i] = key;
      this.counts[i] = counts[j]!;
      this.size++;
    }
  }
}

/**
 * The PPMI matrix of a sample's features, as one sparse row per bucket (empty rows for buckets
 * never seen). `features(doc)` lists a document's feature buckets by term position: position i
 * holds its unigram and the bigram ending at it (embedder.ts's hashedCounts order); `keep(b)` says
 * whether bucket b takes part (furniture and unweighted features do not). Buckets fit in 16 bits,
 * so a pair is one 32-bit key.
 */
export function ppmiRows(
  docs: ReadonlyArray<{ buckets: Uint32Array; positions: Uint32Array }>,
  buckets: number,
  keep: (bucket: number) => boolean,
  opts: WordSpaceOptions = WORD_SPACE_DEFAULTS,
): SparseRow[] {
  if (buckets > 1 << 16) throw new Error(`word space: ${buckets} buckets do not fit a 32-bit pair key`);
  const pairs = new PairCounts();
  for (const d of docs) {
    const n = d.buckets.length;
    for (let i = 0; i < n; i++) {
      const a = d.buckets[i]!;
      if (!keep(a)) continue;
      const pa = d.positions[i]!;
      for (let j = i + 1; j < n && d.positions[j]! - pa <= opts.window; j++) {
        const b = d.buckets[j]!;
        if (b === a || !keep(b)) continue;
        pairs.add(a < b ? a * buckets + b : b * buckets + a);
      }
    }
  }
  // Marginals of the symmetric count matrix, and the smoothed context distribution.
  const marginal = new Float64Array(buckets);
  const rowNnz = new Uint32Array(buckets);
  let total = 0;
  for (let i = 0; i < pairs.keys.length; i++) {
    const key = pairs.keys[i]!;
    const c = pairs.counts[i]!;
    if (key === EMPTY || c < opts.minCount) continue;
    const a = Math.floor(key / buckets);
    const b = key - a * buckets;
    marginal[a]! += c;
    marginal[b]! += c;
    total += 2 * c;
  }
  let smoothed = 0;
  const context = new Float64Array(buckets);
  for (let b = 0; b < buckets; b++) {
    context[b] = marginal[b]! ** opts.alpha;
    smoothed += context[b]!;
  }
  // pmi(a, b) = log(P(a, b) / (P(a) P_alpha(b))); the matrix is kept symmetric by smoothing both
  // sides' contexts alike (log c*T_a / (c_a^alpha c_b^alpha) with T_a = smoothed^2 / total).
  const logScale = Math.log((smoothed * smoothed) / Math.max(total, 1));
  const pmiOf = (i: number): number => {
    const key = pairs.keys[i]!;
    const c = pairs.counts[i]!;
    if (key === EMPTY || c < opts.minCount) return 0;
    const a = Math.floor(key / buckets);
    return Math.log(c) + logScale - Math.log(context[a]!) - Math.log(context[key - a * buckets]!);
  };
  // Two passes (count each row's entries, then fill), so no intermediate list of millions of pairs.
  for (let i = 0; i < pairs.keys.length; i++) {
    if (pmiOf(i) <= 0) continue;
    const a = Math.floor(pairs.keys[i]! / buckets);
    rowNnz[a]!++;
    rowNnz[pairs.keys[i]! - a * buckets]!++;
  }
  const rows: SparseRow[] = Array.from({ length: buckets }, (_, b) => ({
    idx: new Uint32Array(rowNnz[b]!),
    val: new Float32Array(rowNnz[b]!),
  }));
  const fill = new Uint32Array(buckets);
  for (let i = 0; i < pairs.keys.length; i++) {
    const v = pmiOf(i);
    if (v <= 0) continue;
    const a = Math.floor(pairs.keys[i]! / buckets);
    const b = pairs.keys[i]! - a * buckets;
    rows[a]!.idx[fill[a]!] = b;
    rows[a]!.val[fill[a]!++] = v;
    rows[b]!.idx[fill[b]!] = a;
    rows[b]!.val[fill[b]!++] = v;
  }
  return rows;
}
