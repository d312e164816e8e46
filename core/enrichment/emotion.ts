// Per-post emotion (`emotionMood`): a softmax regression over analyzer terms plus VADER polarity
// tokens, fitted on TweetEval emotion/train only (SemEval-2018 tweets; `npm run bench -- quality --fit`
// rebuilds core/enrichment/emotion-model.json, see tools/enrichment-models/fit.ts). The vocabulary is the label set of that
// data: anger, joy, optimism, sadness.
//
//   moods      = [most probable label] + [second label when p2 >= SECOND_MOOD_MIN and p2 >= p1 / 2]
//   confidence = p1, the model's posterior of the first mood (0.25..1 for four labels), halved for
//                non-English posts; 0 with no moods
//
// Features: the English analyzer terms of the post (the model is English) plus synthetic tokens
// for the VADER compound c: `__vader:pos` (c >= 0.05), `__vader:neg` (c <= -0.05) or `__vader:neu`,
// and `__vader:pos+` / `__vader:neg+` when |c| > 0.5. A post none of whose terms the model knows
// gets no moods (the posterior would be the class prior plus the polarity tokens, not evidence).
// Non-English posts: only their emoji are read (as for tone), and the confidence is halved.
import fs from 'node:fs';
import path from 'node:path';
import { analyze } from '../text/analyzer.ts';
import { features, predict, type LinearTextModel } from './linear-text-model.ts';
import { vaderScores, type VaderScores } from './vader.ts';

export const EMOTION_LABELS = ['anger', 'joy', 'optimism', 'sadness'] as const;
export type Emotion = (typeof EMOTION_LABELS)[number];
export const EMOTION_MODEL_FILE = path.join(import.meta.dirname, 'emotion-model.json');
/** A second mood is reported only when at least this probable (and at least half the first). */
const SECOND_MOOD_MIN = 0.3;
const NON_ENGLISH_EMOTION_CONFIDENCE = 0.5;

export interface EmotionResult {
  moods: Emotion[];
  /** 0..1 (see the header). */
  confidence: number;
}

export interface EmotionPosteriors {
  /** P(label), EMOTION_LABELS order. */
  probs: number[];
  /** Number of the post's terms the model knows (synthetic VADER tokens excluded). */
  knownTerms: number;
}

let defaultModel: LinearTextModel | undefined;
export function emotionModel(): LinearTextModel {
  defaultModel ??= JSON.parse(fs.readFileSync(EMOTION_MODEL_FILE, 'utf8')) as LinearTextModel;
  return defaultModel;
}

function polarityTokens(compound: number): string[] {
  const out = [compound >= 0.05 ? '__vader:pos' : compound <= -0.05 ? '__vader:neg' : '__vader:neu'];
  if (Math.abs(compound) > 0.5) out.push(compound > 0 ? '__vader:pos+' : '__vader:neg+');
  return out;
}

/** Model features of a post: English terms (emoji only for non-English posts) plus polarity tokens. */
export function emotionFeatures(text: string, v: VaderScores, ngrams: LinearTextModel['ngrams'] = 'unigram'): string[] {
  const words = v.english ? features(text, ngrams) : analyze(text).emoji;
  return [...words, ...polarityTokens(v.compound)];
}

export function emotionPosteriors(
  text: string | null | undefined,
  language?: string | null,
  v?: VaderScores,
  model: LinearTextModel = emotionModel(),
): EmotionPosteriors {
  const scores = v ?? vaderScores(text, language);
  const f = text ? emotionFeatures(text, scores, model.ngrams) : polarityTokens(0);
  const p = predict(model, f);
  const knownTerms = f.filter((x) => !x.startsWith('__') && model.weights[x] !== undefined).length;
  return { probs: p.probs, knownTerms };
}

export function moodsFromPosteriors(p: EmotionPosteriors, english = true): EmotionResult {
  if (p.knownTerms === 0) return { moods: [], confidence: 0 };
  const order = p.probs.map((q, i) => [q, i] as const).sort((a, b) => b[0] - a[0]);
  const [first, second] = order;
  if (!first) return { moods: [], confidence: 0 };
  const moods: Emotion[] = [EMOTION_LABELS[first[1]]!];
  if (second && second[0] >= SECOND_MOOD_MIN && second[0] >= first[0] / 2) moods.push(EMOTION_LABELS[second[1]]!);
  return { moods, confidence: first[0] * (english ? 1 : NON_ENGLISH_EMOTION_CONFIDENCE) };
}

/** Emotion of one post: 0-2 labels from EMOTION_LABELS and a confidence in 0..1. */
export function emotionMood(text: string | null | undefined, language?: string | null): EmotionResult {
  if (!text) return { moods: [], confidence: 0 };
  const v = vaderScores(text, language);
  return moodsFromPosteriors(emotionPosteriors(text, language, v), v.english);
}
