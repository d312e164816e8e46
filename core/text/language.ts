// The language a post is written in, told cheaply from its function words: the language whose
// stop list (the `stopword` package's, short lists of function words, as the analyzer uses) holds
// most of the text's words, with at least MIN_HITS of them and no tie. What a label needs to know is
// exactly which languages' function words its posts are written with (core/maps/label-words.ts),
// so counting them is the measure itself, not a proxy. On real tweets (TweetEval, CrisisLex T26):
// Italian tweets are told Italian at 48-61% (the rest too short to tell, or English), English ones
// another language than the five of the analyzer under 1%.
import { createRequire } from 'node:module';
import { fold } from './analyzer.ts';

const lists = createRequire(import.meta.url)('stopword') as Record<string, unknown>;

/** ISO 639-1 (stopwords-iso's keys) to the stopword package's ISO 639-3 lists. */
const LISTS: Record<string, string> = {
  af: 'afr',
  ar: 'ara',
  bg: 'bul',
  bn: 'ben',
  br: 'bre',
  ca: 'cat',
  cs: 'ces',
  da: 'dan',
  de: 'deu',
  el: 'ell',
  en: 'eng',
  eo: 'epo',
  es: 'spa',
  et: 'est',
  eu: 'eus',
  fa: 'fas',
  fi: 'fin',
  fr: 'fra',
  ga: 'gle',
  gl: 'glg',
  gu: 'guj',
  ha: 'hau',
  he: 'heb',
  hi: 'hin',
  hr: 'hrv',
  hu: 'hun',
  hy: 'hye',
  id: 'ind',
  it: 'ita',
  ja: 'jpn',
  ko: 'kor',
  ku: 'kur',
  la: 'lat',
  lt: 'lit',
  lv: 'lav',
  mr: 'mar',
  ms: 'msa',
  no: 'nob',
  nl: 'nld',
  pl: 'pol',
  pt: 'por',
  ro: 'ron',
  ru: 'rus',
  sk: 'slk',
  sl: 'slv',
  so: 'som',
  st: 'sot',
  sv: 'swe',
  sw: 'swa',
  th: 'tha',
  tl: 'tgl',
  tr: 'tur',
  uk: 'ukr',
  ur: 'urd',
  vi: 'vie',
  yo: 'yor',
  zh: 'zho',
  zu: 'zul',
};

/** Each word's languages (ISO 639-1). */
const LANGUAGES_OF: ReadonlyMap<string, readonly string[]> = (() => {
  const out = new Map<string, string[]>();
  for (const [iso1, iso3] of Object.entries(LISTS)) {
    const words = lists[iso3];
    if (!Array.isArray(words)) continue;
    for (const w of new Set((words as string[]).map(fold))) {
      const of = out.get(w);
      if (of) of.push(iso1);
      else out.set(w, [iso1]);
    }
  }
  return out;
})();

/** Function words a text needs for its language to be told. */
const MIN_HITS = 2;

const NOT_WORDS = /\bhttps?:\/\/\S+|\bwww\.\S+|[@#][\p{L}\p{N}_]+/gu;
const WORD = /\p{L}+(?:['’]\p{L}+)?/gu;

/** The text's language (ISO 639-1), or null when too few function words tell it. */
export function textLanguage(text: string): string | null {
  const hits = new Map<string, number>();
  for (const w of text.replace(NOT_WORDS, ' ').match(WORD) ?? []) {
    for (const l of LANGUAGES_OF.get(fold(w)) ?? []) hits.set(l, (hits.get(l) ?? 0) + 1);
  }
  let best: string | null = null;
  let most = MIN_HITS - 1;
  let tie = false;
  for (const [l, n] of hits) {
    if (n > most) ((best = l), (most = n), (tie = false));
    else if (n === most) tie = true;
  }
  return tie ? null : best;
}

/** Share of a cluster's texts (and at least 2 of them) a language needs to be one of the cluster's. */
const LANGUAGE_SHARE = 0.1;

/** The languages at least LANGUAGE_SHARE of the texts (and 2) are written in, given each text's (textLanguage). */
export function languagesOf(languages: Iterable<string | null>): Set<string> {
  const counts = new Map<string, number>();
  let n = 0;
  for (const l of languages) {
    n++;
    if (l) counts.set(l, (counts.get(l) ?? 0) + 1);
  }
  return new Set([...counts].filter(([, c]) => c >= 2 && c >= LANGUAGE_SHARE * n).map(([l]) => l));
}
