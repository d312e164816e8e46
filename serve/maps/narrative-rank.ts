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
import { terms } from '../../core/text/analyzer.ts';
import { BM25_B, BM25_K1, idfOf, type Bm25Index } from '../../core/ranking/bm25.ts';
import type { LoadedNarrative, Maps } from '../generation/load-maps.ts';

/** Members holding a term that give it half its weight in a narrative of average size. */
const MEMBER_HALF = 5;

/** The range of `term`'s postings in `index` (empty when it lacks the term). */
function range(index: Bm25Index | null, term: string): [number, number] {
  const t = index?.vocab.get(term);
  return index && t !== undefined ? [index.starts[t]!, index.starts[t + 1]!] : [0, 0];
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
    const [hs, he] = range(headline, term);
    const [ms, me] = range(members, term);
    let df = 0;
    for (let i = hs; i < he; i++) if (holds[headline!.docs[i]!] !== q) ((holds[headline!.docs[i]!] = q), df++);
    for (let i = ms; i < me; i++) if (holds[members!.docs[i]!] !== q) ((holds[members!.docs[i]!] = q), df++);
    if (df === 0) return;
    const w = idfOf(n, df);
    for (let i = hs; i < he; i++) {
      const d = headline!.docs[i]!;
      const hf = headline!.tfs[i]!;
      score[d]! += w * (1 + hf / (hf + BM25_K1 * (1 - BM25_B + (BM25_B * headline!.docLen[d]!) / avgHeadline)));
    }
    for (let i = ms; i < me; i++) {
      const d = members!.docs[i]!;
      const c = members!.tfs[i]!;
      score[d]! += (w * c) / (c + MEMBER_HALF * (1 - BM25_B + (BM25_B * sizes[d]!) / (avgSize || 1)));
    }
  });
  const out: Array<{ row: number; score: number }> = [];
  for (let d = 0; d < n; d++) if (score[d]! > 0) out.push({ row: d, score: score[d]! });
  return out.sort((a, b) => b.score - a.score || a.row - b.row);
}

/**
 * The map search of GET /narratives/search: the narratives whose text holds the words of `q` (the
 * analyzer's terms), by text rank, in `window` only when given, at most `limit` of them. Alert
 * watches on a query select their narratives with it too (serve/alerts/evaluate.ts).
 */
export function searchNarratives(
  maps: Pick<Maps, 'narratives' | 'narrativeText' | 'narrativeMemberTerms'>,
  q: string,
  window: string | null,
  limit: number,
): Array<{ ln: LoadedNarrative; score: number }> {
  const { narratives, narrativeText, narrativeMemberTerms } = maps;
  const sizes = narratives.map((n) => n.narrative.content_count);
  const out: Array<{ ln: LoadedNarrative; score: number }> = [];
  for (const h of rankNarratives(narrativeText, narrativeMemberTerms, sizes, terms(q))) {
    if (out.length >= limit) break;
    const ln = narratives[h.row]!;
    if (window === null || ln.narrative.window_key === window) out.push({ ln, score: h.score });
  }
  return out;
}
