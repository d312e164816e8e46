// The narrative map's text rank (GET /narratives/search; docs/fields.md, "Map search"): two fields
// per narrative, both precomputed by the narratives stage (pipeline/narratives/text-index.ts):
// its headline (label, summary, top tags and their words) and its member terms (how many of its
// posts hold each of its most distinctive terms). For each distinct query term t:
//   text_rank += idf(t) x (headline(t) + members(t))
//   idf(t)      Lucene's, over the narratives holding t in either field
//   headline(t) 0 if the headline lacks t, else 1 + hf / (hf + k1 (1 - b + b hl / avg hl))  (1 .. 2)
//   members(t)  c / (c + K (1 - b + b n / avg n)), c its posts holding t, n its posts  (0 .. 1)
// so a narrative named by a word ranks above one whose posts only mention it, and one where many
// posts mention it above one where a few do (half the weight at K posts of a narrative of average size).
import { BM25_B, BM25_K1, idfOf, type Bm25Index } from '../../core/bm25.ts';

/** Members holding a term that give it half its weight in a narrative of average size. */
export const MEMBER_HALF = 5;

/** Each posting of `term` in `index` as [document, tf], in document order. */
function* postings(index: Bm25Index | null, term: string): Generator<[number, number]> {
  const t = index?.vocab.get(term);
  if (!index || t === undefined) return;
  for (let i = index.starts[t]!; i < index.starts[t + 1]!; i++) yield [index.docs[i]!, index.tfs[i]!];
}

/** Narratives holding any of the terms, by text rank (ties: the lower row), with their scores. */
export function rankNarratives(
  headline: Bm25Index | null,
  members: Bm25Index | null,
  sizes: ArrayLike<number>,
  queryTerms: readonly string[],
): Array<{ row: number; score: number }> {
  const n = sizes.length;
  const score = new Float64Array(n);
  const holds = new Int32Array(n).fill(-1);
  let avgSize = 0;
  for (let i = 0; i < n; i++) avgSize += sizes[i]! / n;
  const avgHeadline = headline?.avgdl || 1;
  [...new Set(queryTerms)].forEach((term, q) => {
    const h = [...postings(headline, term)];
    const m = [...postings(members, term)];
    let df = 0;
    for (const [d] of [...h, ...m]) if (d < n && holds[d] !== q) ((holds[d] = q), df++);
    if (df === 0) return;
    const w = idfOf(n, df);
    for (const [d, hf] of h) {
      if (d >= n) continue;
      score[d]! += w * (1 + hf / (hf + BM25_K1 * (1 - BM25_B + (BM25_B * headline!.docLen[d]!) / avgHeadline)));
    }
    for (const [d, c] of m) {
      if (d >= n) continue;
      score[d]! += (w * c) / (c + MEMBER_HALF * (1 - BM25_B + (BM25_B * sizes[d]!) / (avgSize || 1)));
    }
  });
  const out: Array<{ row: number; score: number }> = [];
  for (let d = 0; d < n; d++) if (score[d]! > 0) out.push({ row: d, score: score[d]! });
  return out.sort((a, b) => b.score - a.score || a.row - b.row);
}
