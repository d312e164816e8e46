// Which words may name a narrative, and how a label shows them (docs/fields.md, "label").
// The analyzer's stop lists are kept short on purpose (a search for "anyone else" must still find
// those words); a label has the opposite need: it names what the posts are about, so function and
// filler words ("does", "anyone", "actually", "again") never name one. The label stop list is the
// stopwords-iso collection of every language the analyzer knows, with each word as the analyzer
// would index it (folded, plural-folded), so "does" also stops the fold's "doe"; a cluster's label
// also skips the stop words of any other language its posts are written in (labelSkip).
import { createRequire } from 'node:module';
import { fold, stem, termSurfaces } from '../text/analyzer.ts';
import { isAbusive } from '../text/abuse.ts';
import { shouts } from '../text/readable.ts';

const iso = createRequire(import.meta.url)('stopwords-iso') as Record<string, string[]>;
const LANGUAGES = ['en', 'es', 'pt', 'fr', 'de'];

/** The analyzer's form of a word: folded, the apostrophe tail cut, English plural fold (core/text/analyzer.ts). */
function indexForm(word: string): string {
  return stem(fold(word).replace(/['’].*$/, ''));
}

/** A language's stopwords-iso words as the analyzer indexes them (each folded, and in its index form). */
function stopWordsOf(lang: string): Set<string> {
  const out = new Set<string>();
  for (const w of iso[lang] ?? []) {
    out.add(fold(w));
    out.add(indexForm(w));
  }
  return out;
}

const LABEL_STOP: ReadonlySet<string> = new Set(LANGUAGES.flatMap((l) => [...stopWordsOf(l)]));

/** Whether an analysed term may be (part of) a label: it has a letter, two characters or more, and is no stop word. */
export function labelWord(term: string): boolean {
  return term.length > 1 && /\p{L}/u.test(term) && !LABEL_STOP.has(term);
}

const stopOf = new Map<string, ReadonlySet<string>>();

/**
 * What a cluster's label skips beyond the words no label has (labelWord): the stop words of the
 * other languages its posts are written in (`languages`, core/text/language.ts: "di", "che" of an
 * Italian cluster), and any word the abuse lexicon flags (core/text/abuse.ts).
 */
export function labelSkip(languages: Iterable<string>): (term: string) => boolean {
  const stops = [...languages]
    .filter((l) => !LANGUAGES.includes(l) && iso[l])
    .map((l) => {
      let s = stopOf.get(l);
      if (!s) stopOf.set(l, (s = stopWordsOf(l)));
      return s;
    });
  return (term) => stops.some((s) => s.has(term)) || isAbusive(term);
}

/**
 * Each label term's surface form: the spelling most often written for it in the given texts (the
 * analyzer's tokens, so a term maps back to exactly the words it came from). A word keeps capitals
 * inside it when mixed with lower case (BrightBrew, iPhone: a name), not a sentence's first capital;
 * written all in capitals it keeps them only when nearly always so written (NRA, not a shouted
 * WOW); a hashtag keeps its '#' and case. Ties go to the plain word over the hashtag, then the
 * first seen.
 */
export function surfaceForms(texts: Iterable<string>): Map<string, string> {
  const lists: Array<Array<readonly [string, string]>> = [];
  for (const text of texts) lists.push(shownSurfaces(text, termSurfaces(text)));
  return countSurfaces(lists);
}

/**
 * A text's [term, shownSurface] pairs from its termSurfaces (`analysed`), of the terms `keep` keeps;
 * a shouted text's words (core/text/readable.ts, shouts) count lower-case: its capitals say nothing
 * of how a word is spelled ("DARK" is no acronym).
 */
export function shownSurfaces(
  text: string,
  analysed: ReadonlyArray<readonly [string, string]>,
  keep: (term: string) => boolean = () => true,
): Array<readonly [string, string]> {
  const loud = shouts(text);
  const out: Array<readonly [string, string]> = [];
  for (const [term, raw] of analysed)
    if (keep(term)) out.push([term, shownSurface(loud && !raw.startsWith('#') ? raw.toLowerCase() : raw)]);
  return out;
}

/** How a word as written counts as a surface form: as written when a name, an acronym or a hashtag, else lower-case. */
function shownSurface(raw: string): string {
  return raw.startsWith('#') || (/\p{Lu}/u.test(raw.slice(1)) && /\p{Ll}/u.test(raw)) || isCaps(raw) ? raw : raw.toLowerCase();
}

/** surfaceForms from each text's [term, shownSurface] pairs. */
export function countSurfaces(lists: Iterable<ReadonlyArray<readonly [string, string]>>): Map<string, string> {
  const counts = new Map<string, Map<string, number>>();
  for (const list of lists) {
    for (const [term, surface] of list) {
      const m = counts.get(term) ?? new Map<string, number>();
      m.set(surface, (m.get(surface) ?? 0) + 1);
      counts.set(term, m);
    }
  }
  const out = new Map<string, string>();
  for (const [term, m] of counts) {
    // Capitals that are not nearly always there are shouting: folded into the lower-case form.
    let all = 0;
    for (const c of m.values()) all += c;
    for (const [s, c] of [...m]) {
      if (!isCaps(s) || c >= ACRONYM_SHARE * all) continue;
      m.delete(s);
      m.set(s.toLowerCase(), (m.get(s.toLowerCase()) ?? 0) + c);
    }
    let best = '';
    let n = 0;
    for (const [s, c] of m) if (c > n || (c === n && best.startsWith('#') && !s.startsWith('#'))) ((best = s), (n = c));
    out.set(term, best);
  }
  return out;
}

/** Share of a term's spellings in capitals that makes it an acronym (NRA) rather than shouting. */
const ACRONYM_SHARE = 0.8;

function isCaps(word: string): boolean {
  return !word.startsWith('#') && /\p{Lu}.*\p{Lu}/u.test(word) && !/\p{Ll}/u.test(word);
}

/** A label as people wrote its words: each term of each key replaced by its surface form when one was seen. */
export function showLabel(label: string, forms: ReadonlyMap<string, string>): string {
  return label
    .split(', ')
    .map((key) =>
      key
        .split(' ')
        .map((t) => forms.get(t) ?? t)
        .join(' '),
    )
    .join(', ');
}
