// The one text analyzer: the pipeline indexes with it and the ranking core analyses queries with
// it, so a query term and a document term always mean the same thing.
//
// Steps: damaged text repaired (core/text/text-repair.ts: mojibake, HTML entities); Unicode NFKC;
// URLs, @mentions, #hashtags and emoji recognised before tokenising (they are social text's
// strongest signals); lower-case and diacritics folded (café = cafe); word tokens of letters and
// digits; stop words of the post's language (or of all supported languages when it is unknown)
// removed; a light English plural fold (phones = phone). Hashtags index as the tag and its
// camel-case parts (#LineupLeak -> lineupleak, lineup, leak).
import { deu, eng, fra, por, spa } from 'stopword';
import { repairText } from './text-repair.ts';

interface Analyzed {
  /** Index/query terms, in order, duplicates kept (term frequency matters). */
  terms: string[];
  hashtags: string[];
  mentions: string[];
  emoji: string[];
  urls: string[];
}

export const ANALYZER_VERSION = 'analyzer-3';

const STOP: Record<string, Set<string>> = {
  en: new Set(eng),
  es: new Set(spa),
  pt: new Set(por),
  fr: new Set(fra),
  de: new Set(deu),
};
// Social filler the general lists miss, dropped whatever the language.
const FILLER = new Set(['rt', 'via', 'amp', 'im', 'ive', 'dont', 'cant', 'thats', 'lol', 'ur']);
const ALL_STOP = new Set([...Object.values(STOP).flatMap((s) => [...s]), ...FILLER]);

const URL_RE = /\bhttps?:\/\/[^\s<>"']+|\bwww\.[^\s<>"']+/giu;
const MENTION_RE = /(^|[^\p{L}\p{N}_])@([\p{L}\p{N}_.]{1,50})/gu;
const HASHTAG_RE = /(^|[^\p{L}\p{N}_&])#([\p{L}\p{N}_]*\p{L}[\p{L}\p{N}_]*)/gu;
const EMOJI_RE = /\p{Extended_Pictographic}(?:\uFE0F|\u200D\p{Extended_Pictographic}|\p{Emoji_Modifier})*/gu;
const WORD_RE = /[\p{L}\p{N}]+(?:['’][\p{L}]+)?/gu;

const NON_ASCII = /[^\x00-\x7f]/;
/** Every match of URL_RE holds one of these (no other code point case-folds to h, t, p or w). */
const URL_HINT = /http|www\./i;
/** Whether a text can hold a URL (http... or www.): a fast test before a Unicode-aware URL pattern. */
export function mayHoldUrl(s: string): boolean {
  return URL_HINT.test(s);
}
const APOSTROPHE_TAIL = /['’].*$/;

export function fold(s: string): string {
  // Most tokens are ASCII, where decomposition and mark removal change nothing: lower-case only
  // (the analyzer's hottest step, once per token of every post and query).
  if (!NON_ASCII.test(s)) return s.toLowerCase();
  return s
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase();
}

// Words whose final s is not a plural, so the fold must leave them alone: "news" is not "new"
// (Porter2 keeps the same invariants), and -ics nouns (politics, physics) name a field, not many.
const NOT_PLURAL = new Set([
  'news',
  'series',
  'species',
  'lens',
  'always',
  'perhaps',
  'whereas',
  'towards',
  'afterwards',
  'besides',
  'nowadays',
  'sometimes',
  'chaos',
  'canvas',
  'atlas',
  'cosmos',
  'bias',
  'alias',
  'gps',
  'dns',
  'aws',
  'ios',
  'mars',
]);

/** Plural fold for English-looking words: cheap, and it joins the most common variant. */
export function stem(t: string): string {
  if (NOT_PLURAL.has(t) || t.endsWith('ics')) return t;
  if (t.length > 4 && t.endsWith('ies')) return `${t.slice(0, -3)}y`;
  if (t.length > 3 && t.endsWith('s') && !t.endsWith('ss') && !t.endsWith('us') && !t.endsWith('is')) return t.slice(0, -1);
  return t;
}

function camelParts(tag: string): string[] {
  const parts = tag.split(/(?<=\p{Ll})(?=\p{Lu})|(?<=\p{L})(?=\p{N})|(?<=\p{N})(?=\p{L})|_/u).filter((p) => p.length > 1);
  return parts.length > 1 ? parts : [];
}

// The enrichment reads a post through the analyzer several times (its terms, its URLs and emoji
// for VADER, its brand mentions), one post after another: the last few results are kept, and
// frozen, since callers share them.
const RECENT = 4;
const recent: Array<{ text: string; stop: Set<string>; out: Analyzed } | undefined> = new Array(RECENT);
let recentAt = 0;

export function analyze(text: string | null | undefined, language?: string | null): Analyzed {
  if (!text) return { terms: [], hashtags: [], mentions: [], emoji: [], urls: [] };
  const stop = (language && STOP[language.toLowerCase().slice(0, 2)]) || ALL_STOP;
  for (const r of recent) if (r && r.text === text && r.stop === stop) return r.out;
  const out = analyzeUncached(text, stop);
  for (const k of ['terms', 'hashtags', 'mentions', 'emoji', 'urls'] as const) Object.freeze(out[k]);
  recent[recentAt] = { text, stop, out: Object.freeze(out) };
  recentAt = (recentAt + 1) % RECENT;
  return out;
}

/**
 * The surface forms behind a text's terms, in order: [term, the word as written] for each word
 * token kept, ['#'-less tag, '#Tag'] for each hashtag. Labels show a term as people wrote it
 * ("does", not the plural fold's "doe"; "#SkincareScare", not "skincarescare").
 */
export function termSurfaces(text: string | null | undefined, language?: string | null): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  if (!text) return out;
  const stop = (language && STOP[language.toLowerCase().slice(0, 2)]) || ALL_STOP;
  analyzeUncached(text, stop, (term, surface) => out.push([term, surface]));
  return out;
}

/** A text's terms (as terms() gives them) and its surfaces (as termSurfaces() gives them), from one pass. */
export function termsAndSurfaces(
  text: string | null | undefined,
  language?: string | null,
): { terms: string[]; surfaces: Array<[string, string]> } {
  const surfaces: Array<[string, string]> = [];
  if (!text) return { terms: [], surfaces };
  const stop = (language && STOP[language.toLowerCase().slice(0, 2)]) || ALL_STOP;
  return { terms: analyzeUncached(text, stop, (term, surface) => surfaces.push([term, surface])).terms, surfaces };
}

function analyzeUncached(text: string, stop: Set<string>, seen?: (term: string, surface: string) => void): Analyzed {
  const out: Analyzed = { terms: [], hashtags: [], mentions: [], emoji: [], urls: [] };
  let s = repairText(text).normalize('NFKC');
  // Each pattern runs only where its mark can be in the text: most posts have no URL, mention or
  // emoji, and a Unicode-aware scan of the whole text for each cost more than the tokens themselves.
  if (mayHoldUrl(s))
    s = s.replace(URL_RE, (u) => {
      out.urls.push(u);
      return ' ';
    });
  if (s.includes('@'))
    s = s.replace(MENTION_RE, (_m, pre: string, name: string) => {
      out.mentions.push(name.toLowerCase());
      return `${pre} `;
    });
  const push = (raw: string) => {
    const t = fold(raw).replace(APOSTROPHE_TAIL, '');
    if (t.length < 2 && !/^\p{N}$/u.test(t)) return;
    if (stop.has(t) || FILLER.has(t)) return;
    const term = stem(t);
    out.terms.push(term);
    seen?.(term, raw.replace(APOSTROPHE_TAIL, ''));
  };
  if (s.includes('#'))
    s = s.replace(HASHTAG_RE, (_m, pre: string, tag: string) => {
      const folded = fold(tag);
      out.hashtags.push(folded);
      out.terms.push(folded);
      seen?.(folded, `#${tag}`);
      for (const p of camelParts(tag)) push(p);
      return `${pre} `;
    });
  if (NON_ASCII.test(s))
    s = s.replace(EMOJI_RE, (e) => {
      out.emoji.push(e);
      out.terms.push(e);
      return ' ';
    });
  for (const w of s.match(WORD_RE) ?? []) push(w);
  return out;
}

/** The terms of a query or document: what BM25 and the embedder see. */
export function terms(text: string | null | undefined, language?: string | null): string[] {
  return analyze(text, language).terms;
}
