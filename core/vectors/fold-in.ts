// Folding new words into a fitted embedder: a word the fit never learnt (a new name, a new
// hashtag) gets the direction of the posts that brought it, so search knows it as soon as a run
// publishes those posts, not only after the next refit (issue 37; docs/fields.md, "Text
// embedding"). This is the additive "à la carte" induction of a word vector from its contexts
// (Khodak et al. 2018, with the identity for their learnt transform): the mean of the unit vectors
// of the posts that hold the word, each embedded with the words the model already knows. Cheap (one
// embedding a post) and incremental, unlike a refit, which moves every vector.
import { embedHashes, findId, isKnown, type EmbedderModel, type FoldedWords } from './embedder.ts';

export const FOLD_IN = {
  /** A word in fewer of the run's posts keeps no vector: one post is too thin a context to stand for it. */
  minDocs: 2,
  /** At most this many words folded by one run (the most frequent first), so an hourly run stays bounded. */
  maxWords: 20_000,
  /** At most this many folded words in a model (in memory: 4 x (dim + 2) bytes each); the daily refit starts over. */
  maxTotal: 200_000,
  /** A word's direction from at most this many of its posts: enough for a mean, and a full run at 1M posts stays bounded. */
  maxContexts: 32,
  /** Rounds of folding: the second reads the posts with the first round's new words too. */
  passes: 2,
} as const;

/**
 * A folded word's length: the median norm of the projection rows of the NEAR learnt features
 * nearest to it in idf. A learnt word's row is shorter the rarer it is (the word space gives rare
 * words little of its top singular directions), so a rare new word weighs in a post like a learnt
 * word of its rarity, not like a common one (which once made a word shared by a few of a story's
 * posts pull them into a story of their own).
 */
function rowNormByIdf(model: EmbedderModel): (idf: number) => number {
  const { buckets, dim } = model.params;
  const rows = Array.from(model.known ?? [], (id) => {
    const o = (id % buckets) * dim;
    let n = 0;
    for (let c = 0; c < dim; c++) n += model.projection[o + c]! ** 2;
    return { idf: model.idf[id % buckets]!, norm: Math.sqrt(n) };
  })
    .filter((r) => r.norm > 0)
    .sort((a, b) => a.idf - b.idf);
  if (rows.length === 0) return () => 1;
  return (idf) => {
    let lo = 0;
    let hi = rows.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (rows[mid]!.idf < idf) lo = mid + 1;
      else hi = mid;
    }
    const from = Math.max(0, Math.min(lo - (NEAR >> 1), rows.length - NEAR));
    const near = rows.slice(from, from + NEAR).map((r) => r.norm);
    near.sort((a, b) => a - b);
    return near[near.length >> 1]!;
  };
}

const NEAR = 64;

/**
 * The model with the words of `docs` it does not know folded in: every term (a unigram: names,
 * hashtags) neither known to the fit nor folded before, in at least FOLD_IN.minDocs of the posts.
 * Its vector: the normalised mean of the unit vectors of those posts (up to FOLD_IN.maxContexts of
 * them, in order; posts of no known word have none), as long as a learnt word's of its idf;
 * its idf: as the fit's, log((N + 1) / (df + 1)) + 1 with N the fit's documents and df its posts here.
 * @param docs the term hashes of a run's computed posts
 * @param opts.skip words not to fold (an incremental run's words the served posts already hold: they
 *   were learnt, folded or left out with those posts, and the new posts alone would describe them
 *   unlike the full run that reads them all)
 */
export function foldInWords(
  model: EmbedderModel,
  docs: readonly Uint32Array[],
  opts: { skip?: (hash: number) => boolean } = {},
): { model: EmbedderModel; folded: number } {
  const room = Math.min(FOLD_IN.maxWords, FOLD_IN.maxTotal - model.folded.ids.length);
  const isNew = (h: number) => !isKnown(model, h) && findId(model.folded.ids, h) < 0 && !opts.skip?.(h);
  const df = new Map<number, number>();
  for (const d of docs) for (const h of new Set(d)) if (isNew(h)) df.set(h, (df.get(h) ?? 0) + 1);
  const words = [...df]
    .filter(([, n]) => n >= FOLD_IN.minDocs)
    .sort((a, b) => b[1] - a[1] || a[0] - b[0])
    .slice(0, Math.max(0, room))
    .map(([h]) => h);
  if (words.length === 0) return { model, folded: 0 };
  const lengthFor = rowNormByIdf(model);
  // Pass 1 reads the posts through the words the model knew; each later pass through those and the
  // new words of the pass before, so new words that go together (a name and its story's other new
  // words) take each other's direction as a refit would learn it.
  let out = { model, folded: 0 };
  for (let pass = 0; pass < FOLD_IN.passes; pass++) {
    const sums = contextSums(out.model, docs, words);
    out = withFolded(model, words, sums, (h) => Math.log((model.documents + 1) / (df.get(h)! + 1)) + 1, lengthFor);
  }
  return out;
}

/** Per word: the sum of the unit vectors of its posts (up to FOLD_IN.maxContexts of them, in order) under `model`. */
function contextSums(model: EmbedderModel, docs: readonly Uint32Array[], words: readonly number[]): Float64Array {
  const { dim } = model.params;
  const slot = new Map(words.map((h, i) => [h, i]));
  const sums = new Float64Array(words.length * dim);
  const contexts = new Uint32Array(words.length);
  const vector = new Float32Array(dim);
  for (const d of docs) {
    const mine = [...new Set(d)].filter((h) => slot.has(h) && contexts[slot.get(h)!]! < FOLD_IN.maxContexts);
    if (mine.length === 0) continue;
    embedHashes(model, d, vector);
    if (!vector.some((x) => x !== 0)) continue;
    for (const h of mine) {
      const i = slot.get(h)!;
      contexts[i]!++;
      for (let c = 0; c < dim; c++) sums[i * dim + c]! += vector[c]!;
    }
  }
  return sums;
}

/** `base` with `words` added (those with any context), each the direction of its sum at the length of a learnt word of its idf. */
function withFolded(
  base: EmbedderModel,
  words: readonly number[],
  sums: Float64Array,
  idfOf: (h: number) => number,
  lengthFor: (idf: number) => number,
): { model: EmbedderModel; folded: number } {
  const { dim } = base.params;
  const added: Array<{ id: number; idf: number; from: Float32Array }> = [];
  words.forEach((h, i) => {
    let n = 0;
    for (let c = 0; c < dim; c++) n += sums[i * dim + c]! ** 2;
    // A word only in posts of no known word has no context to take a direction from.
    if (n === 0) return;
    const idf = idfOf(h);
    const scale = lengthFor(idf) / Math.sqrt(n);
    const v = new Float32Array(dim);
    for (let c = 0; c < dim; c++) v[c] = sums[i * dim + c]! * scale;
    added.push({ id: h, idf, from: v });
  });
  const old = base.folded;
  const all = [
    ...Array.from(old.ids, (id, j) => ({ id, idf: old.idf[j]!, from: old.vectors.subarray(j * dim, (j + 1) * dim) })),
    ...added,
  ].sort((a, b) => a.id - b.id);
  const folded: FoldedWords = {
    ids: new Uint32Array(all.length),
    idf: new Float32Array(all.length),
    vectors: new Float32Array(all.length * dim),
  };
  all.forEach((w, j) => {
    folded.ids[j] = w.id;
    folded.idf[j] = w.idf;
    folded.vectors.set(w.from, j * dim);
  });
  return { model: { ...base, folded }, folded: added.length };
}
