// Whether a post's text can stand for a cluster before a reader (its summary and representative
// post: docs/fields.md, "Narratives"). A post is unreadable when it is
//   abusive          the profanity/abuse lexicon flags it (abuse.ts);
//   mentions-links   more than half of its tokens are @mentions or links (a reply chain, a link drop);
//   hashtags         more than half of its tokens are hashtags (a tag run says no sentence);
//   few-words        fewer than MIN_WORDS plain words are left (words of letters, "RT" not counted);
//   shouting         written in capitals: more than 70% of the letters of its plain words, of at
//                    least 20 letters (an acronym such as NRA is not shouting).
// A token is a whitespace-separated piece with a letter or digit in it (emoji and punctuation alone
// are not counted either way).
import { repairText } from './text-repair.ts';
import { isAbusive } from './abuse.ts';

type Unreadable = 'abusive' | 'mentions-links' | 'hashtags' | 'few-words' | 'shouting';

/** Plain words a readable post keeps besides its mentions, links and hashtags. */
const MIN_WORDS = 4;
const MOSTLY = 0.5;
const CAPS = 0.7;
const CAPS_MIN_LETTERS = 20;

const LINK = /^(?:https?:\/\/|www\.)/i;
const MENTION = /^[^\p{L}\p{N}]*@[\p{L}\p{N}_]/u;
const HASHTAG = /^[^\p{L}\p{N}]*#[\p{L}\p{N}_]*\p{L}/u;
const HAS_WORD_CHAR = /[\p{L}\p{N}]/u;
const RETWEET = /^RT:?$/;

interface Counts {
  tokens: number;
  /** @mentions and links. */
  marks: number;
  tags: number;
  /** Plain words, and the letters of them, capitals among them. */
  words: number;
  letters: number;
  upper: number;
}

function counts(text: string): Counts {
  const c: Counts = { tokens: 0, marks: 0, tags: 0, words: 0, letters: 0, upper: 0 };
  for (const t of text.split(/\s+/)) {
    if (!HAS_WORD_CHAR.test(t)) continue;
    c.tokens++;
    if (LINK.test(t) || MENTION.test(t)) c.marks++;
    else if (HASHTAG.test(t)) c.tags++;
    else if (!RETWEET.test(t) && /\p{L}/u.test(t)) {
      c.words++;
      for (const ch of t) {
        if (/\p{Lu}/u.test(ch)) (c.letters++, c.upper++);
        else if (/\p{L}/u.test(ch)) c.letters++;
      }
    }
  }
  return c;
}

function shouting(c: Counts): boolean {
  return c.letters >= CAPS_MIN_LETTERS && c.upper > CAPS * c.letters;
}

/** Whether a text is written in capitals (the rule above): its words' capitals are no acronyms then. */
export function shouts(text: string): boolean {
  return shouting(counts(repairText(text)));
}

/** Why a text cannot describe a cluster, or null when it can. */
export function unreadable(text: string): Unreadable | null {
  const s = repairText(text);
  if (isAbusive(s)) return 'abusive';
  const c = counts(s);
  if (c.marks > MOSTLY * c.tokens) return 'mentions-links';
  if (c.tags > MOSTLY * c.tokens) return 'hashtags';
  if (c.words < MIN_WORDS) return 'few-words';
  if (shouting(c)) return 'shouting';
  return null;
}

/** Whether a text can describe a cluster (unreadable gives no reason). */
export function readable(text: string): boolean {
  return unreadable(text) === null;
}
