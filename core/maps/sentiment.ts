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
export interface PostFeeling {
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
export const SENTIMENT_LABEL_THRESHOLD = 0.15;
export const MIXED_SHARE = 0.25;

export type Stance = 'critical' | 'mixed' | 'neutral' | 'supportive';

export function stanceOf(p: PostFeeling): Stance | null {
  if (!p.tone) return null;
  if (p.moods.some((m) => POSITIVE_MOODS.has(m)) && p.moods.some((m) => NEGATIVE_MOODS.has(m))) return 'mixed';
  return p.tone === 'positive' ? 'supportive' : p.tone === 'negative' ? 'critical' : 'neutral';
}

export function narrativeSentiment(posts: PostFeeling[]): NarrativeSentiment {
  const tones = { positive: 0, neutral: 0, negative: 0 };
  const stance = { critical: 0, mixed: 0, neutral: 0, supportive: 0 };
  let toned = 0;
  let stanced = 0;
  for (const p of posts) {
    if (p.tone === 'positive' || p.tone === 'neutral' || p.tone === 'negative') {
      tones[p.tone]++;
      toned++;
    }
    const s = stanceOf(p);
    if (s) (stance[s]++, stanced++);
  }
  const n = posts.length;
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
