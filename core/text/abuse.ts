// Whether a post's text is profane or abusive, so that it never describes a cluster (its summary,
// its representative post, a word of its label: docs/fields.md, "Narratives").
//
// The lexicon is `obscenity` (npm, MIT, no dependencies, maintained): of the filters compared on
// real tweets (bad-words, leo-profanity, @2toad/profanity, glin-profanity), it alone matches the
// spellings people use to slip past a word list ("f*ck", "fuuuck", "sh1t", "fck") through its
// transformers (confusable characters, leet speak, repeated letters, inner punctuation), and it
// keeps false positives down with per-word whitelists ("shiitake", "Scunthorpe", "assess"); it
// was also ten times faster than bad-words. Its English set is trimmed and extended here:
// - words that name a subject rather than insult (sex, rape, porn, anatomy) are dropped: news of a
//   rape trial must be able to describe its story;
// - "negro" is dropped (black in Spanish and Portuguese: "humo negro" is no slur), "anal" too
//   (Italian "analisi", Turkish "kanal" matched it); Spanish "cumpleaños" is whitelisted for "cum";
// - the commonest Spanish, Italian and Portuguese swear words are added, whole words only (the
//   real data mixes those languages with English), and English insults it lacks ("hoe", "skank":
//   real tweets' labels read "hoe, skank, wanna").
// Digits-only tokens are not read (leet speak took the phone number "455902" for "ass"), nor are
// links and @handles (a handle is a name, "@arsenal"), nor a word's closing "!" (leet for "i").
import { DataSet, RegExpMatcher, englishDataset, englishRecommendedTransformers, parseRawPattern, pattern } from 'obscenity';
import { repairText } from './text-repair.ts';

/** English phrases dropped from obscenity's set: subjects, not abuse (see above). */
const DROPPED = new Set(['anal', 'anus', 'bestiality', 'incest', 'negro', 'penis', 'porn', 'rape', 'semen', 'sex', 'vagina']);

/** Whole-word swear words of the other languages of the data, and English insults obscenity lacks (a word boundary both sides). */
const EXTRA = [
  'hoe',
  'hoes',
  'skank',
  'thot',
  'puta',
  'putas',
  'puto',
  'putos',
  'mierda',
  'pendejo',
  'pendeja',
  'cabron',
  'gilipollas',
  'cazzo',
  'cazzi',
  'stronzo',
  'stronza',
  'vaffanculo',
  'merda',
  'caralho',
  'porra',
  'foda',
];

const dataset = new DataSet<{ originalWord: string }>()
  .addAll(englishDataset)
  .removePhrasesIf((p) => DROPPED.has(p.metadata?.originalWord ?? ''))
  .removePhrasesIf((p) => p.metadata?.originalWord === 'cum')
  .addPhrase((p) =>
    p
      .setMetadata({ originalWord: 'cum' })
      .addPattern(pattern`|cum`)
      .addWhitelistedTerm('cumu')
      .addWhitelistedTerm('cumb')
      .addWhitelistedTerm('cumpl'),
  );
// A doubled letter may be written single: the matcher collapses repeated letters before matching.
for (const w of EXTRA)
  dataset.addPhrase((p) => p.setMetadata({ originalWord: w }).addPattern(parseRawPattern(`|${w.replace(/(\p{L})\1/gu, '$1[$1]')}|`)));

/** Whole terms that cancel a match they overlap (words of the data's languages, set phrases). */
const ALLOWED = ['shiitake', 'fagiol', 'asse ', 'assest', 'assel', 'tit for tat'];

const built = dataset.build();
const matcher = new RegExpMatcher({
  ...built,
  whitelistedTerms: [...(built.whitelistedTerms ?? []), ...ALLOWED],
  ...englishRecommendedTransformers,
});

const URL_OR_HANDLE = /\bhttps?:\/\/\S+|\bwww\.\S+|[\p{L}\p{N}._-]+@[\p{L}\p{N}-]+\.\S+|(^|[^\p{L}\p{N}_])@[\p{L}\p{N}_.]+/giu;
const DIGITS_ONLY = /(^|[^\p{L}\p{N}])[\p{N}.,:/-]*\p{N}(?=$|[^\p{L}\p{N}])/gu;

/** Exclamation marks ending a word: leet speak reads "!" as "i", and "whore!" then ends in no word boundary. */
const BANGS = /(\p{L})!+(?=[^\p{L}\p{N}]|$)/gu;

/** The text the lexicon reads: without links, e-mail addresses, @handles, numbers and a word's closing "!". */
function lexiconText(text: string): string {
  return text.replace(URL_OR_HANDLE, ' ').replace(DIGITS_ONLY, '$1 ').replace(BANGS, '$1 ');
}

// A label term or hashtag is checked again in answer after answer (every candidate label word of
// every emergent narrative: the matcher was a sixth of their CPU), so short texts' verdicts are
// remembered; a verdict depends on the text alone. Bounded: cleared when full.
const SHORT_TEXT = 64;
const VERDICTS_HELD = 50_000;
const verdicts = new Map<string, boolean>();

/** Whether the lexicon flags a text (a post's title and description, a hashtag, a label term). */
export function isAbusive(text: string): boolean {
  if (text.length > SHORT_TEXT) return matcher.hasMatch(lexiconText(text));
  let flagged = verdicts.get(text);
  if (flagged === undefined) {
    if (verdicts.size >= VERDICTS_HELD) verdicts.clear();
    verdicts.set(text, (flagged = matcher.hasMatch(lexiconText(text))));
  }
  return flagged;
}

/**
 * Whether the lexicon flags a post: its title and description (core/maps/row-label-words.ts, labelText), repaired as the
 * analyzer repairs them. What the features stage stores per post and a cluster's flagged_share counts (docs/fields.md).
 */
export function flaggedPost(text: string): boolean {
  return isAbusive(repairText(text));
}
