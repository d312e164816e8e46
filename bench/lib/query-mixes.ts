// The query mixes of the api bench (issue 20): what real clients send, not only the queries the
// fixture planted. Built from the bench corpus itself, deterministically:
//   planted:  each planted narrative's keywords and hashtag (the ranking bench's queries);
//   frequent: the corpus's most frequent tags alone, pairs of its most frequent words, tag + word
//             (long posting lists: the expensive case for the lexical retriever);
//   long:     8-20 words of real posts, as a person pastes a sentence: up to LONG_QUERIES of them,
//             each sent once in a run (people paste different sentences; cycling a few hundred
//             would let the answer's per-row caches hold every row they return);
//   repeated: Zipf (s = 1) draws over a pool of 200 queries of the other three mixes, each with a
//             fixed window, as real traffic repeats itself (a cache can help here, and only here).
// Every query carries its window; the windows turn over the four keys.
import fs from 'node:fs';
import path from 'node:path';
import { termSurfaces } from '../../core/text/analyzer.ts';
import { seededRandom } from '../../core/stats/seeded-random.ts';
import { WINDOW_KEYS, type WindowKey } from '../../core/snapshots/windows.ts';
import { queriesFrom } from '../suites/ranking.ts';

export interface BenchQuery {
  query: string;
  window: WindowKey;
}

export const MIX_NAMES = ['planted', 'frequent', 'long', 'repeated'] as const;
export type MixName = (typeof MIX_NAMES)[number];

export interface QueryMixes {
  /** Each mix as the sequence clients send (cycled). */
  mixes: Record<MixName, BenchQuery[]>;
  /** What the frequent mix was built from (for the report). */
  topTags: string[];
  topWords: string[];
}

const POOL = 200;
/** Distinct long queries (a 10 s run at 1M posts sends a few thousand). */
const LONG_QUERIES = 20_000;
/** Posts read for word and tag frequencies and long queries (the first of the corpus's files). */
const READ_POSTS = 50_000;

function readPosts(corpusDir: string, n: number): Array<{ text: string; tags: string[] }> {
  const out: Array<{ text: string; tags: string[] }> = [];
  for (const f of fs
    .readdirSync(corpusDir)
    .filter((f) => f.endsWith('.ndjson'))
    .sort()) {
    for (const line of fs.readFileSync(path.join(corpusDir, f), 'utf8').split('\n')) {
      if (out.length >= n) return out;
      if (!line) continue;
      let r: { title?: unknown; description?: unknown; tags?: unknown };
      try {
        r = JSON.parse(line) as typeof r;
      } catch {
        continue; // the corpus plants malformed lines, as real feeds have them
      }
      if (!r || typeof r !== 'object') continue;
      const text = [r.title, r.description].filter((x): x is string => typeof x === 'string').join(' ');
      const tags = Array.isArray(r.tags) ? r.tags.filter((t): t is string => typeof t === 'string') : [];
      out.push({ text, tags });
    }
  }
  return out;
}

/** The `n` most frequent keys of a count map (ties by key, so the order is stable). */
function top(counts: Map<string, number>, n: number): string[] {
  return [...counts]
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
    .slice(0, n)
    .map(([k]) => k);
}

const windowAt = (i: number): WindowKey => WINDOW_KEYS[i % WINDOW_KEYS.length]!;

export function buildQueryMixes(corpusDir: string, truthFile: string, seed = 42): QueryMixes {
  const posts = readPosts(corpusDir, READ_POSTS);
  // Word frequency by document, as people wrote the word (its most common surface form).
  const df = new Map<string, number>();
  const surface = new Map<string, Map<string, number>>();
  const tagDf = new Map<string, number>();
  for (const p of posts) {
    const seen = new Set<string>();
    for (const [term, written] of termSurfaces(p.text)) {
      if (written.startsWith('#') || !/^\p{L}{3,}$/u.test(written)) continue;
      const forms = surface.get(term) ?? new Map<string, number>();
      forms.set(written.toLowerCase(), (forms.get(written.toLowerCase()) ?? 0) + 1);
      surface.set(term, forms);
      if (!seen.has(term)) (seen.add(term), df.set(term, (df.get(term) ?? 0) + 1));
    }
    for (const t of new Set(p.tags.map((t) => t.replace(/^#/, '').toLowerCase()))) if (t) tagDf.set(t, (tagDf.get(t) ?? 0) + 1);
  }
  const topWords = top(df, 20).map((t) => top(surface.get(t)!, 1)[0]!);
  const topTags = top(tagDf, 30);

  const frequent: BenchQuery[] = [];
  topTags.forEach((t) => frequent.push({ query: `#${t}`, window: windowAt(frequent.length) }));
  for (let a = 0; a < topWords.length && frequent.length < 30 + 120; a++)
    for (let b = a + 1; b < topWords.length && frequent.length < 30 + 120; b++)
      frequent.push({ query: `${topWords[a]} ${topWords[b]}`, window: windowAt(frequent.length) });
  for (let i = 0; frequent.length < POOL; i++)
    frequent.push({ query: `#${topTags[i % topTags.length]} ${topWords[(i * 7) % topWords.length]}`, window: windowAt(frequent.length) });

  const rand = seededRandom(seed);
  const long: BenchQuery[] = [];
  const order = posts.map((_, i) => i);
  for (let i = order.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [order[i], order[j]] = [order[j]!, order[i]!];
  }
  for (let i = 0; long.length < LONG_QUERIES && i < order.length; i++) {
    const p = posts[order[i]!]!;
    const words = p.text
      .replace(/\bhttps?:\/\/\S+|(^|\s)[@#]\S+/g, ' ')
      .split(/\s+/)
      .filter(Boolean);
    if (words.length < 8) continue;
    const n = Math.min(words.length, 8 + Math.floor(rand() * 13));
    long.push({ query: words.slice(0, n).join(' '), window: windowAt(long.length) });
  }

  const planted = queriesFrom(truthFile, 400).map((q, i) => ({ query: q.text, window: windowAt(Math.floor(i / 4)) }));

  // Zipf over a pool mixed from the three: rank r drawn with probability proportional to 1 / r.
  const pool = Array.from({ length: POOL }, (_, i) => [frequent, long, planted][i % 3]![Math.floor(i / 3)]!);
  const weights = pool.map((_, r) => 1 / (r + 1));
  const total = weights.reduce((a, b) => a + b, 0);
  const repeated: BenchQuery[] = [];
  for (let i = 0; i < 5000; i++) {
    let x = rand() * total;
    let r = 0;
    while (r < pool.length - 1 && (x -= weights[r]!) > 0) r++;
    repeated.push(pool[r]!);
  }
  return { mixes: { planted, frequent, long, repeated }, topTags, topWords };
}
