// VADER (Hutto & Gilbert 2014), the rule-based social-media sentiment model: a 7,500-entry
// human-rated lexicon plus rules for negation ("not good"), boosters ("very"), ALL CAPS, "!!!",
// "but" and idioms; package `vader-sentiment` (the JavaScript port by the VADER authors' org), run
// through vader-engine.ts (the package's own scorer with a faster tokenizer).
//
// Before VADER reads a post, the project analyzer finds its URLs and emoji: URLs and @mentions are
// removed (no sentiment, and "@user" noise), HTML entities decoded and curly apostrophes made ASCII
// (VADER's negation list spells "don't"), hashtags lose the '#' and are split at camel case
// (#SoHappy -> So Happy), and each emoji becomes a lexicon word of similar valence (the JavaScript
// port has no emoji table; the Python VADER 3.3 likewise turns emoji into words). Negation words
// are lower-cased ("NOT happy"): the JavaScript port compares them case-sensitively, so a
// shouted negation would otherwise be missed.
//
// Non-English posts: VADER's lexicon is English, so only language-independent signals are read
// (emoji and Western emoticons); `evidence` says whether any of them carried sentiment.
import { analyze } from '../text/analyzer.ts';
import { polarityScores } from './vader-engine.ts';

export interface VaderScores {
  /** Normalised sum of valences, -1..1. */
  compound: number;
  /** Shares of positive, negative and neutral words (sum 1, or all 0 when there were no words). */
  pos: number;
  neg: number;
  neu: number;
  /** The text VADER read (after the preparation above). */
  text: string;
  /** English (or unknown language) posts: any readable text. Other languages: any rated emoji/emoticon. */
  evidence: boolean;
  english: boolean;
}

/** Emoji -> a VADER lexicon word of similar valence (lexicon rating in the comment, -4..4). */
const EMOJI_WORD: Record<string, string> = {
  // joy / laughter
  '😀': 'smiling',
  '😃': 'smiling',
  '😄': 'smiling',
  '😁': 'smiling',
  '😆': 'lol',
  '😊': 'happy',
  '☺': 'smiling',
  '🙂': 'smile',
  '😂': 'lol',
  '🤣': 'rofl',
  '😅': 'smile',
  '😹': 'lol',
  '😸': 'smiling',
  '😺': 'smiling',
  '🤩': 'wow',
  '🥳': 'celebrate',
  '😇': 'blessed',
  '😋': 'yummy',
  '😎': 'cool',
  '🤗': 'hug',
  '😉': 'playful',
  '😜': 'playful',
  '😝': 'playful',
  '😛': 'playful',
  // love (love 3.2)
  '😍': 'love',
  '🥰': 'love',
  '😘': 'kisses',
  '😻': 'love',
  '❤': 'love',
  '♥': 'love',
  '💕': 'love',
  '💖': 'love',
  '💗': 'love',
  '💘': 'love',
  '💝': 'love',
  '💞': 'love',
  '💓': 'love',
  '🧡': 'love',
  '💛': 'love',
  '💚': 'love',
  '💙': 'love',
  '💜': 'love',
  '🤍': 'love',
  '😚': 'kisses',
  '😙': 'kisses',
  '💋': 'kiss',
  // approval / celebration
  '👍': 'good',
  '👌': 'ok',
  '👏': 'applause',
  '🙌': 'applause',
  '💪': 'strong',
  '🔥': 'cool',
  '✨': 'sparkle',
  '🌟': 'sparkle',
  '⭐': 'sparkle',
  '💯': 'perfect',
  '🙏': 'thanks',
  '🎉': 'celebrate',
  '🎊': 'celebrate',
  '🏆': 'win',
  '🥇': 'win',
  '🎁': 'gift',
  '🎂': 'party',
  '🍾': 'cheers',
  '🥂': 'cheers',
  '☀': 'sunshine',
  '🌞': 'sunshine',
  '🌈': 'sunshine',
  '😌': 'smile',
  // sadness (sad -2.1, tears -0.9: 😭 is often laughter on social media, so it is rated mildly)
  '😢': 'sad',
  '😥': 'sad',
  '😭': 'tears',
  '😞': 'disappointed',
  '😔': 'sad',
  '😟': 'worried',
  '🙁': 'sad',
  '☹': 'sad',
  '😕': 'disappointed',
  '💔': 'heartbroken',
  '😿': 'sad',
  '🥺': 'sad',
  '😓': 'sad',
  // anger / disgust / fear / tiredness
  '😡': 'furious',
  '😠': 'angry',
  '🤬': 'furious',
  '👿': 'angry',
  '😤': 'frustrated',
  '😒': 'annoyed',
  '🙄': 'annoyed',
  '😩': 'ugh',
  '😫': 'exhausted',
  '😖': 'ugh',
  '😣': 'ugh',
  '🤦': 'ugh',
  '😱': 'terrified',
  '😨': 'scared',
  '😰': 'worried',
  '🤢': 'disgusted',
  '🤮': 'disgusting',
  '💩': 'crap',
  '👎': 'bad',
  '😷': 'sick',
  '🤒': 'ill',
  '🖕': 'hate',
  '😬': 'awkward',
};

/** Emoji with skin-tone modifiers, variation selectors and joiners reduced to the base pictograph. */
function baseEmoji(e: string): string {
  return [...e.replace(/[\u{1F3FB}-\u{1F3FF}\uFE0F\uFE0E]/gu, '')][0] ?? '';
}

function emojiWord(e: string): string | undefined {
  return EMOJI_WORD[baseEmoji(e)];
}

// Western emoticons VADER's lexicon rates (a subset, for non-English posts where words are not scored).
const EMOTICON_RE = /(?:^|\s)([:;=8xX][-'^o]?[)(\]\[dDpP/\\|*3]+|<3+|[)(\]\[dD/\\][-'^o]?[:;=8])(?=\s|$)/g;

// VADER's negation words (vaderSentiment.js NEGATE), matched case-insensitively here.
const NEGATE = new Set([
  'aint',
  'arent',
  'cannot',
  'cant',
  'couldnt',
  'darent',
  'didnt',
  'doesnt',
  "ain't",
  "aren't",
  "can't",
  "couldn't",
  "daren't",
  "didn't",
  "doesn't",
  'dont',
  'hadnt',
  'hasnt',
  'havent',
  'isnt',
  'mightnt',
  'mustnt',
  'neither',
  "don't",
  "hadn't",
  "hasn't",
  "haven't",
  "isn't",
  "mightn't",
  "mustn't",
  'neednt',
  "needn't",
  'never',
  'none',
  'nope',
  'nor',
  'not',
  'nothing',
  'nowhere',
  'oughtnt',
  'shant',
  'shouldnt',
  'uhuh',
  'wasnt',
  'werent',
  "oughtn't",
  "shan't",
  "shouldn't",
  'uh-uh',
  "wasn't",
  "weren't",
  'without',
  'wont',
  'wouldnt',
  "won't",
  "wouldn't",
  'rarely',
  'seldom',
  'despite',
]);

function splitHashtag(tag: string): string {
  return tag.split(/(?<=\p{Ll})(?=\p{Lu})|(?<=\p{L})(?=\p{N})|(?<=\p{N})(?=\p{L})|_/u).join(' ');
}

/** The text as VADER should read it (see the header). */
export function prepareForVader(text: string, englishWords = true): string {
  const a = analyze(text);
  let s = text.normalize('NFKC');
  for (const u of a.urls) s = s.split(u).join(' ');
  s = decodeEntities(s).replace(/[\u2018\u2019\u02BC]/g, "'");
  s = s.replace(/(^|[^\p{L}\p{N}_])@[\p{L}\p{N}_.]{1,50}/gu, '$1 ');
  const emojiWords: string[] = [];
  // The analyzer's emoji (with modifiers and joiners), longest first so a ZWJ sequence goes whole.
  for (const e of [...new Set(a.emoji)].sort((x, y) => y.length - x.length)) {
    const parts = s.split(e);
    const w = emojiWord(e);
    for (let i = 1; i < parts.length && w; i++) emojiWords.push(w);
    s = parts.join(w ? ` ${w} ` : ' ');
  }
  if (!englishWords) {
    const emoticons = [...s.matchAll(EMOTICON_RE)].map((m) => m[1] ?? '');
    return [...emojiWords, ...emoticons].join(' ');
  }
  s = s.replace(/(^|[^\p{L}\p{N}_&])#([\p{L}\p{N}_]+)/gu, (_m, pre: string, tag: string) => `${pre}${splitHashtag(tag)}`);
  s = s.replace(/[A-Za-z][A-Za-z'-]*/g, (w) => (w !== w.toLowerCase() && NEGATE.has(w.toLowerCase()) ? w.toLowerCase() : w));
  return s.replace(/\s+/g, ' ').trim();
}

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", '#39': "'" };
function decodeEntities(s: string): string {
  return s.replace(/&(amp|lt|gt|quot|apos|#39);/g, (_m, e: string) => ENTITIES[e] ?? _m);
}

function isEnglishOrUnknown(language?: string | null): boolean {
  return !language || language.toLowerCase().slice(0, 2) === 'en' || language.toLowerCase() === 'und';
}

/** VADER scores of a post. `language` is an ISO 639-1 code; unknown (or 'und') is read as English. */
export function vaderScores(text: string | null | undefined, language?: string | null): VaderScores {
  const english = isEnglishOrUnknown(language);
  const s = text ? prepareForVader(text, english) : '';
  if (!s) return { compound: 0, pos: 0, neg: 0, neu: 0, text: s, evidence: false, english };
  const p = polarityScores(s);
  return { compound: p.compound, pos: p.pos, neg: p.neg, neu: p.neu, text: s, evidence: english || p.pos + p.neg > 0, english };
}
