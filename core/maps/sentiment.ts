// How a narrative's posts feel, from their per-post enrichment (docs/enrichment.md):
//   sentiment_score  (positive - negative) / posts with a tone, in -1..1 (null when none has one)
//   sentiment_label  positive above 0.15, negative below -0.15; otherwise mixed when both positive
//                    and negative posts are at least 25% of the toned posts, else neutral
//   breakdown        coverage = toned / posts; dominant_tone = the most frequent tone;
//                    stance shares among posts with a stance (they sum to 1), stance_coverage
// A post's stance toward its narrative is read off its tone and moods, as a proxy (no stance
// model is trained here): supportive = positive tone; critical = negative tone; mixed = a
// positive mood (joy, optimism) and a negative one (anger, sadness) together, whatever the tone;
// neutral = neutral tone. Posts without a tone have no stance.
interface PostFeeling {
  tone: string | null;
  moods: readonly string[];
}

export interface NarrativeSentiment {
  label: string | null;
  score: number | null;
  breakdown: {
    coverage: number;
    dominant_tone: string | null;
    stance: { critical: number; mixed: number; neutral: number; supportive: number } | null;
    stance_coverage: number;
  };
}

const POSITIVE_MOODS = new Set(['joy', 'optimism']);
const NEGATIVE_MOODS = new Set(['anger', 'sadness']);
const SENTIMENT_LABEL_THRESHOLD = 0.15;
const MIXED_SHARE = 0.25;

export type Stance = 'critical' | 'mixed' | 'neutral' | 'supportive';

const TONE_CODES = ['negative', 'neutral', 'positive'] as const;
/** The code of a post without a tone. */
const NO_TONE = 3;
const MIXED = 4;

/**
 * A post's feeling as one small code: its tone (0 negative, 1 neutral, 2 positive, 3 none) plus 4
 * when its moods hold a positive one and a negative one. The pipeline reads it as one byte per
 * row (feelingCodeSql), not a tone string and a list of moods per post.
 */
export function feelingCode(p: PostFeeling): number {
  const t = p.tone ? TONE_CODES.indexOf(p.tone as (typeof TONE_CODES)[number]) : -1;
  const mixed = p.moods.some((m) => POSITIVE_MOODS.has(m)) && p.moods.some((m) => NEGATIVE_MOODS.has(m));
  return (t < 0 ? NO_TONE : t) + (mixed ? MIXED : 0);
}

// Each mood dictionary's entries as kinds (1 positive, 2 negative), read once per dictionary and
// grown with it: a narrative's daily series reads the feelings of 100k members, and building each
// member's mood list cost more than the rest of the read.
const moodKinds = new WeakMap<readonly string[], number[]>();

/** feelingCode of a post whose moods are given as ids into `dict` (a StringLists row). */
export function feelingCodeOfIds(tone: string | null, moodIds: ArrayLike<number>, dict: readonly string[]): number {
  let kinds = moodKinds.get(dict);
  if (!kinds) moodKinds.set(dict, (kinds = []));
  for (let i = kinds.length; i < dict.length; i++) kinds.push(POSITIVE_MOODS.has(dict[i]!) ? 1 : NEGATIVE_MOODS.has(dict[i]!) ? 2 : 0);
  let seen = 0;
  for (let i = 0; i < moodIds.length; i++) seen |= kinds[moodIds[i]!]!;
  const t = tone ? TONE_CODES.indexOf(tone as (typeof TONE_CODES)[number]) : -1;
  return (t < 0 ? NO_TONE : t) + (seen === 3 ? MIXED : 0);
}

/** feelingCode in SQL, over a tone column and a moods (VARCHAR[]) column. */
export function feelingCodeSql(tone: string, moods: string): string {
  const list = (set: Set<string>) => `[${[...set].map((m) => `'${m}'`).join(', ')}]`;
  const t = `CASE ${tone} ${TONE_CODES.map((x, i) => `WHEN '${x}' THEN ${i}`).join(' ')} ELSE ${NO_TONE} END`;
  const mixed = `coalesce(list_has_any(${moods}, ${list(POSITIVE_MOODS)}) AND list_has_any(${moods}, ${list(NEGATIVE_MOODS)}), false)`;
  return `(${t} + CASE WHEN ${mixed} THEN ${MIXED} ELSE 0 END)`;
}

/** Per code: the post's stance (no tone, none; mixed moods, mixed; else by tone). */
const STANCE_OF_CODE: Array<Stance | null> = Array.from({ length: 8 }, (_, code) => {
  const t = code & 3;
  if (t === NO_TONE) return null;
  if (code & MIXED) return 'mixed';
  return t === 2 ? 'supportive' : t === 0 ? 'critical' : 'neutral';
});

/** The sentiment of posts given by their feeling codes. */
export function sentimentOfCodes(codes: ArrayLike<number>, rows: ArrayLike<number>): NarrativeSentiment {
  const counts = new Float64Array(8);
  for (let i = 0; i < rows.length; i++) counts[codes[rows[i]!]!]!++;
  return sentimentOfCounts(counts, rows.length);
}

export function narrativeSentiment(posts: PostFeeling[]): NarrativeSentiment {
  const counts = new Float64Array(8);
  for (const p of posts) counts[feelingCode(p)]!++;
  return sentimentOfCounts(counts, posts.length);
}

/** The sentiment of n posts from the count of each feeling code among them (8 codes, feelingCode). */
export function sentimentOfCounts(counts: Float64Array, n: number): NarrativeSentiment {
  const tones = { positive: 0, neutral: 0, negative: 0 };
  const stance = { critical: 0, mixed: 0, neutral: 0, supportive: 0 };
  let toned = 0;
  let stanced = 0;
  counts.forEach((c, code) => {
    if (c === 0) return;
    const t = code & 3;
    if (t !== NO_TONE) ((tones[TONE_CODES[t]!] += c), (toned += c));
    const s = STANCE_OF_CODE[code];
    if (s) ((stance[s] += c), (stanced += c));
  });
  if (toned === 0) return { label: null, score: null, breakdown: { coverage: 0, dominant_tone: null, stance: null, stance_coverage: 0 } };
  const score = (tones.positive - tones.negative) / toned;
  const label =
    score > SENTIMENT_LABEL_THRESHOLD
      ? 'positive'
      : score < -SENTIMENT_LABEL_THRESHOLD
        ? 'negative'
        : tones.positive >= MIXED_SHARE * toned && tones.negative >= MIXED_SHARE * toned
          ? 'mixed'
          : 'neutral';
  const dominant = (Object.entries(tones) as Array<[string, number]>).sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))[0]![0];
  const share = (x: number) => (stanced ? x / stanced : 0);
  return {
    label,
    score,
    breakdown: {
      coverage: toned / n,
      dominant_tone: dominant,
      stance: stanced
        ? {
            critical: share(stance.critical),
            mixed: share(stance.mixed),
            neutral: share(stance.neutral),
            supportive: share(stance.supportive),
          }
        : null,
      stance_coverage: stanced / n,
    },
  };
}
