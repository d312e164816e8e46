// What the narrative map's search reads (docs/fields.md, "Map search"), built once per generation:
//   narrative-text.bin     each narrative's headline: label, summary, top tags as #tag and the
//                          words of a compound tag (core/maps/tag-words.ts), BM25 postings
//   narrative-member-terms.bin  each narrative's member terms: for its most distinctive terms, how
//                               many of its posts hold each (postings in the same format, the count as tf)
// Row i of both is narratives.parquet row i.
import path from 'node:path';
import { terms } from '../../core/text/analyzer.ts';
import { buildBm25FromCounts, buildBm25FromTerms, saveBm25 } from '../../core/ranking/bm25.ts';
import { tagWords } from '../../core/maps/tag-words.ts';
import type { TermLists } from '../../core/text/term-lists.ts';
import type { NarrativeCorpus } from './corpus.ts';

/**
 * A narrative keeps at most this many member terms: a bound on the index (narratives x 1,000
 * postings of 6 bytes), which keeps every term that a story's own posts repeat. Its terms by
 * distinctiveness: posts holding it in the narrative x Lucene's idf over the corpus's posts.
 */
const MEMBER_TERMS = 1000;

interface NarrativeText {
  label: string;
  summary: string;
  topTags: readonly string[];
  members: ArrayLike<number>;
}

/** How many rows hold each term (each row counted once). */
function postsWithTerms(t: TermLists): Uint32Array {
  const df = new Uint32Array(t.vocab.length);
  const seen = new Int32Array(t.vocab.length).fill(-1);
  const rows = t.offsets.length - 1;
  for (let r = 0; r < rows; r++) {
    for (let i = t.offsets[r]!; i < t.offsets[r + 1]!; i++) {
      const id = t.ids[i]!;
      if (seen[id] !== r) ((seen[id] = r), df[id]!++);
    }
  }
  return df;
}

/** The terms a narrative's headline is searched by: its label, summary, tags and their words (`wordsOf`: tagWords). */
function headlineTerms(n: NarrativeText, wordsOf: (tag: string) => readonly string[]): string[] {
  return [...terms([n.label, n.summary, ...n.topTags.map((t) => `#${t}`)].join(' ')), ...n.topTags.flatMap(wordsOf)];
}

/** Counting scratch over the corpus's vocabulary, reused narrative after narrative. */
interface Scratch {
  count: Uint32Array;
  /** The visit (one per member of each narrative) that last counted each term: a term counts once per post. */
  seen: Int32Array;
  visit: number;
}

/** A narrative's member terms: ids and how many members hold each, the MEMBER_TERMS most distinctive. */
function memberTerms(t: TermLists, members: ArrayLike<number>, idf: Float64Array, s: Scratch): { ids: Uint32Array; counts: Uint32Array } {
  const { count, seen } = s;
  const touched: number[] = [];
  for (let m = 0; m < members.length; m++) {
    const r = members[m]!;
    const visit = ++s.visit;
    for (let i = t.offsets[r]!; i < t.offsets[r + 1]!; i++) {
      const id = t.ids[i]!;
      if (seen[id] === visit) continue;
      seen[id] = visit;
      if (count[id]!++ === 0) touched.push(id);
    }
  }
  const kept = [...touched];
  const weight = (id: number) => count[id]! * idf[id]!;
  if (kept.length > MEMBER_TERMS) kept.sort((a, b) => weight(b) - weight(a) || a - b).length = MEMBER_TERMS;
  kept.sort((a, b) => a - b);
  const out = { ids: Uint32Array.from(kept), counts: Uint32Array.from(kept, (id) => count[id]!) };
  for (const id of touched) count[id] = 0;
  return out;
}

/** Write both indexes of the map search into `artifacts`; returns their sizes for the stage's summary. */
export async function writeNarrativeText(
  artifacts: string,
  corpus: Pick<NarrativeCorpus, 'terms' | 'tagKeys' | 'tagNames'>,
  narratives: readonly NarrativeText[],
): Promise<{ headlineTerms: number; memberPostings: number; splitTags: number; ms: number }> {
  const t0 = performance.now();
  const corpusTerms = corpus.terms;
  const df = postsWithTerms(corpusTerms);
  // Posts carrying each tag (a row's tags are distinct: ingest keeps each once).
  const carrying = new Uint32Array(corpus.tagNames.length);
  for (let i = 0; i < corpus.tagKeys.ids.length; i++) carrying[corpus.tagKeys.ids[i]!]!++;
  const tagIds = new Map(corpus.tagNames.map((t, i) => [t, i]));
  const tagged = (tag: string) => carrying[tagIds.get(tag) ?? -1] ?? 0;
  const byName = new Map<string, number>();
  corpusTerms.vocab.forEach((w, i) => byName.set(w, i));
  const postsWith = (term: string) => df[byName.get(term) ?? -1] ?? 0;
  // Narratives of the four windows share most of their tags: each is split once.
  const splits = new Map<string, string[]>();
  const wordsOf = (tag: string) => splits.get(tag) ?? splits.set(tag, tagWords(tag, postsWith, tagged)).get(tag)!;
  const rows = corpusTerms.offsets.length - 1;
  const idf = Float64Array.from(df, (d) => Math.log(1 + (rows - d + 0.5) / (d + 0.5)));
  const headline = buildBm25FromTerms(narratives.map((n) => headlineTerms(n, wordsOf)));
  const scratch: Scratch = { count: new Uint32Array(corpusTerms.vocab.length), seen: new Int32Array(corpusTerms.vocab.length), visit: 0 };
  const members = buildBm25FromCounts(
    corpusTerms.vocab,
    narratives.map((n) => memberTerms(corpusTerms, n.members, idf, scratch)),
    narratives.map((n) => n.members.length),
  );
  await saveBm25(headline, path.join(artifacts, 'narrative-text.bin'));
  await saveBm25(members, path.join(artifacts, 'narrative-member-terms.bin'));
  return {
    headlineTerms: headline.vocab.size,
    memberPostings: members.docs.length,
    splitTags: [...splits.values()].filter((w) => w.length > 0).length,
    ms: Math.round(performance.now() - t0),
  };
}
