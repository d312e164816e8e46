// The words of a compound hashtag, for the narrative map's search (docs/fields.md, "Map search").
// Ingest lower-cases tags (docs/ingest-format.md), so #FerryStrike reaches the maps as "ferrystrike"
// and its case changes are gone; many tags are written in lower case in the first place. A tag is
// therefore split against the corpus's own vocabulary: "ferrystrike" -> ferry, strike when both
// are words the posts use. The tag itself stays a term as well; its words are added to it.
import { stem, terms } from '../text/analyzer.ts';

const TAG_SPLIT = {
  /** A word of a tag has this many letters or more ("ferry", not "fe"); stop words join words at any length over 1. */
  minLetters: 3,
  /** ...and at least this many posts of the corpus hold it (a typo or a name seen once is no word). */
  minPosts: 2,
  /** Longer tags are not split (the split's cost grows with the square of the length). */
  maxLetters: 40,
} as const;

interface Step {
  parts: number;
  /** Sum of ln(posts holding each word): among splits into as few parts, the commonest words win. */
  weight: number;
  from: number;
  word: string | null;
}

/**
 * A folded tag's words (analysed terms, in order), or [] when it is not a compound of two words or
 * more that the corpus knows, or when it is a word in its own right: more posts hold it than twice
 * `tagged`, the posts carrying the tag ("#friday" is not "fri day": most posts that say friday are
 * not tagged with it; every post carrying a tag holds it as a term). The split has as few parts as
 * possible, each a word held by `postsWith` >= minPosts posts (an analysed term with a letter: no
 * stop word) or a stop word between them ("stoptheferrystrike" -> stop, ferry, strike); the whole
 * tag is never one of its own parts, but a part may be a compound tag of its own, whose words follow
 * it ("stoptheferrystrike" -> stop, ferrystrike, ferry, strike when #ferrystrike is a tag too).
 * Digits part a tag as case changes do ("strike2026" -> strike, 2026).
 */
export function tagWords(tag: string, postsWith: (term: string) => number, tagged: (tag: string) => number): string[] {
  if (postsWith(stem(tag)) > 2 * tagged(tag)) return [];
  const chunks = tag.match(/\p{L}+|\p{N}+/gu) ?? [];
  const out: string[] = [];
  for (const chunk of chunks) {
    if (/^\p{N}/u.test(chunk)) {
      out.push(...terms(chunk));
      continue;
    }
    const whole = chunks.length > 1 ? known(chunk, postsWith) : null;
    const words = whole ? [whole] : split(chunk, postsWith);
    if (words === null) continue;
    for (const w of words) out.push(w, ...tagWords(w, postsWith, tagged));
  }
  return out.length >= 2 ? out : [];
}

/** The part's term when it is a word of the corpus, else null (a stop word never is: the analyzer indexes none). */
function known(part: string, postsWith: (term: string) => number): string | null {
  if (part.length < TAG_SPLIT.minLetters) return null;
  const t = stem(part);
  return postsWith(t) >= TAG_SPLIT.minPosts ? t : null;
}

/** Short parts already asked whether they are stop words (a tag's parts repeat across tags: "the", "day"); bounded. */
const stopAnswers = new Map<string, boolean>();

/** Whether the part is a stop word (the analyzer drops it); stop words are short, longer parts are not asked. */
function isStop(part: string): boolean {
  if (part.length < 2 || part.length > 6) return false;
  let stop = stopAnswers.get(part);
  if (stop === undefined) {
    if (stopAnswers.size >= 100_000) stopAnswers.clear();
    stopAnswers.set(part, (stop = terms(part).length === 0));
  }
  return stop;
}

/** The terms of the best split of a run of letters into two words or more, or null when none exists. */
function split(chunk: string, postsWith: (term: string) => number): string[] | null {
  const n = chunk.length;
  if (n > TAG_SPLIT.maxLetters || n < 2 * TAG_SPLIT.minLetters) return null;
  const best: Array<Step | null> = new Array<Step | null>(n + 1).fill(null);
  best[0] = { parts: 0, weight: 0, from: -1, word: null };
  for (let j = 1; j <= n; j++) {
    for (let i = 0; i < j; i++) {
      const before = best[i];
      if (!before || (i === 0 && j === n)) continue;
      const part = chunk.slice(i, j);
      const word = known(part, postsWith);
      // A stop word joins words ("the" in stoptheferrystrike): the analyzer drops it, so it adds no weight.
      const stop = word === null && isStop(part);
      if (word === null && !stop) continue;
      const step: Step = {
        parts: before.parts + 1,
        weight: before.weight + (word ? Math.log(postsWith(word)) : 0),
        from: i,
        word,
      };
      const cur = best[j];
      if (!cur || step.parts < cur.parts || (step.parts === cur.parts && step.weight > cur.weight)) best[j] = step;
    }
  }
  const words: string[] = [];
  for (let at = n; at > 0; at = best[at]!.from) {
    const s = best[at];
    if (!s) return null;
    if (s.word) words.unshift(s.word);
  }
  return words.length >= 2 ? words : null;
}
