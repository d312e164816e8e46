// Per-post sentiment tone. The evidence is VADER's scores of the post (see vader.ts: lexicon,
// negation, boosters, caps, emoji) and the emotion model's posteriors (emotion.ts); a 3-class
// softmax regression over 11 numbers turns them into P(negative), P(neutral), P(positive):
//
//   x = [compound, pos, neg, |compound|, P(anger), P(joy), P(optimism), P(sadness),
//        has '?' (0/1), has '!' (0/1), 1]
//   P = softmax(W x);  tone = argmax P;  toneConfidence = max P
//
// W (3 x 11 = 33 numbers, core/enrichment/tone-model.json) is fitted with class-balanced weights
// on TweetEval sentiment/val (the only labelled 3-class data available; TweetEval's README allows
// tuning on train/val). Because that is also the data the quality bench reads, the bench reports
// the 10-fold out-of-fold figure (each tweet scored by a W fitted without it) as the estimate, and
// VADER alone with its authors' fixed +-0.05 rule as an untuned reference.
//
// toneConfidence is therefore the posterior under equal class priors: 1/3..1 for English posts.
// Non-English posts: only emoji/emoticons are read and the confidence is halved; a non-English
// post with none of them has `evidence` false (enrichText then reports tone null).
import fs from 'node:fs';
import path from 'node:path';
import { argmax, denseProbs } from './linear-text-model.ts';
import { emotionPosteriors, type EmotionPosteriors } from './emotion.ts';
import { vaderScores, type VaderScores } from './vader.ts';

export type Tone = 'negative' | 'neutral' | 'positive';
export const TONE_LABELS: readonly Tone[] = ['negative', 'neutral', 'positive'];
export const TONE_MODEL_FILE = path.join(import.meta.dirname, 'tone-model.json');
const NON_ENGLISH_TONE_CONFIDENCE = 0.5;
export const TONE_FEATURES = [
  'compound',
  'pos',
  'neg',
  'abs_compound',
  'p_anger',
  'p_joy',
  'p_optimism',
  'p_sadness',
  'has_question',
  'has_exclamation',
  'bias',
] as const;

export interface ToneModel {
  kind: 'softmax-regression';
  version: string;
  labels: Tone[];
  features: string[];
  /** One row per label, one weight per feature. */
  weights: number[][];
  fit: Record<string, unknown>;
}

export interface ToneResult {
  tone: Tone;
  /** 0..1: the posterior of `tone` (see the header). 0 when there was no evidence. */
  toneConfidence: number;
  /** P(negative), P(neutral), P(positive). */
  probs: number[];
  /** VADER compound, -1..1. */
  compound: number;
  /** False when nothing in the text carried sentiment the scorer can read. */
  evidence: boolean;
}

let defaultModel: ToneModel | undefined;
export function toneModel(): ToneModel {
  defaultModel ??= JSON.parse(fs.readFileSync(TONE_MODEL_FILE, 'utf8')) as ToneModel;
  return defaultModel;
}

export function toneFeatures(v: VaderScores, e: EmotionPosteriors): number[] {
  return [v.compound, v.pos, v.neg, Math.abs(v.compound), ...e.probs, v.text.includes('?') ? 1 : 0, v.text.includes('!') ? 1 : 0, 1];
}

/** Tone from precomputed VADER scores and emotion posteriors (enrichText shares them with emotionMood). */
export function toneFrom(v: VaderScores, e: EmotionPosteriors, model: ToneModel = toneModel()): ToneResult {
  if (!v.evidence) return { tone: 'neutral', toneConfidence: 0, probs: [0, 1, 0], compound: v.compound, evidence: false };
  const probs = denseProbs(model.weights, toneFeatures(v, e));
  const k = argmax(probs);
  return {
    tone: model.labels[k]!,
    toneConfidence: probs[k]! * (v.english ? 1 : NON_ENGLISH_TONE_CONFIDENCE),
    probs,
    compound: v.compound,
    evidence: true,
  };
}

/** Tone of one post. `language` is an ISO 639-1 code; unknown (or 'und') is read as English. */
export function tone(text: string | null | undefined, language?: string | null): ToneResult {
  const v = vaderScores(text, language);
  return toneFrom(v, emotionPosteriors(text, language, v));
}
