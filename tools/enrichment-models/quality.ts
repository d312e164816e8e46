// How well the text enrichment reads real labelled tweets (TweetEval): tone macro-recall on
// sentiment/val, emotionMood accuracy on emotion/val, per-class recall, beside majority-class
// baselines. Measured by `npm run bench -- quality --part text` (which writes bench/RESULTS.md)
// and held to its floors by test/fast/enrichment.test.ts, so both read the same numbers.
import { emotionModel, emotionPosteriors, EMOTION_LABELS, moodsFromPosteriors } from '../../core/enrichment/emotion.ts';
import { outOfFoldTone, toneDesign } from './fit.ts';
import { enrichText } from '../../core/enrichment/enrich-text.ts';
import { TONE_LABELS, toneFrom, toneModel } from '../../core/enrichment/tone.ts';
import { loadSplit, TWEETEVAL_DIR } from '../../fixtures/tweeteval.ts';
import { vaderScores } from '../../core/enrichment/vader.ts';

export interface ClassScores {
  perClassRecall: Record<string, number>;
  macroRecall: number;
  accuracy: number;
  macroF1: number;
}

/** Recall per class, their mean (macro-recall), accuracy and macro-F1 of predicted vs true labels. */
function scoreLabels(pred: number[], gold: number[], names: readonly string[]): ClassScores {
  const K = names.length;
  const tp = new Array<number>(K).fill(0),
    support = new Array<number>(K).fill(0),
    predicted = new Array<number>(K).fill(0);
  gold.forEach((g, i) => {
    support[g] = support[g]! + 1;
    const p = pred[i]!;
    if (p >= 0 && p < K) predicted[p] = predicted[p]! + 1;
    if (p === g) tp[g] = tp[g]! + 1;
  });
  const recall = tp.map((t, k) => (support[k] ? t / support[k]! : 0));
  const f1 = tp.map((t, k) => (support[k]! + predicted[k]! ? (2 * t) / (support[k]! + predicted[k]!) : 0));
  return {
    perClassRecall: Object.fromEntries(names.map((n, k) => [n, recall[k]!])),
    macroRecall: recall.reduce((a, b) => a + b, 0) / K,
    accuracy: tp.reduce((a, b) => a + b, 0) / gold.length,
    macroF1: f1.reduce((a, b) => a + b, 0) / K,
  };
}

function majority(labels: number[], K: number): number {
  const n = new Array<number>(K).fill(0);
  for (const l of labels) n[l] = n[l]! + 1;
  return n.indexOf(Math.max(...n));
}

/** Everything the suite measures, without printing (the test's quality floor calls this too). */
export function measureTextQuality(dir = TWEETEVAL_DIR, withOutOfFold = true) {
  const sent = loadSplit('sentiment', 'val', dir);
  const emoVal = loadSplit('emotion', 'val', dir);
  const emoTrain = loadSplit('emotion', 'train', dir);

  // Tone: the shipped model, VADER alone (authors' fixed rule), majority class.
  const t0 = performance.now();
  const shipped: number[] = [];
  const vaderOnly: number[] = [];
  for (const text of sent.texts) {
    const v = vaderScores(text);
    shipped.push(TONE_LABELS.indexOf(toneFrom(v, emotionPosteriors(text, null, v)).tone));
    vaderOnly.push(v.compound >= 0.05 ? 2 : v.compound <= -0.05 ? 0 : 1);
  }
  const toneMs = performance.now() - t0;
  const sentMajority = majority(sent.labels, 3);
  const tone = {
    shippedInSample: scoreLabels(shipped, sent.labels, TONE_LABELS),
    outOfFold: withOutOfFold
      ? (() => {
          const { X, y } = toneDesign(emotionModel(), dir);
          return scoreLabels(outOfFoldTone(X, y, 10), y, TONE_LABELS);
        })()
      : null,
    vaderFixedRule: scoreLabels(vaderOnly, sent.labels, TONE_LABELS),
    majority: {
      label: TONE_LABELS[sentMajority]!,
      ...scoreLabels(
        sent.labels.map(() => sentMajority),
        sent.labels,
        TONE_LABELS,
      ),
    },
  };

  // Emotion: first mood of emotionMood; the same as enrichText reports it (neutral-tone gate); majority of train.
  const first: number[] = [];
  const gated: number[] = [];
  const t1 = performance.now();
  for (const text of emoVal.texts) {
    const v = vaderScores(text);
    const p = emotionPosteriors(text, null, v);
    const m = moodsFromPosteriors(p, v.english);
    first.push(m.moods[0] ? EMOTION_LABELS.indexOf(m.moods[0]) : -1);
    const e = enrichText(text, null);
    gated.push(e.emotionMood[0] ? EMOTION_LABELS.indexOf(e.emotionMood[0]) : -1);
  }
  const emotionMs = performance.now() - t1;
  const emoMajority = majority(emoTrain.labels, 4);
  const withMood = (texts: string[]) => texts.filter((t) => enrichText(t, null).emotionMood.length > 0).length / Math.max(1, texts.length);
  const emotion = {
    emotionMood: scoreLabels(first, emoVal.labels, EMOTION_LABELS),
    enrichTextGated: { ...scoreLabels(gated, emoVal.labels, EMOTION_LABELS), emitted: gated.filter((g) => g >= 0).length / gated.length },
    majority: {
      label: EMOTION_LABELS[emoMajority]!,
      source: 'emotion/train',
      ...scoreLabels(
        emoVal.labels.map(() => emoMajority),
        emoVal.labels,
        EMOTION_LABELS,
      ),
    },
    moodRateOnSentimentVal: {
      neutralLabelled: withMood(sent.texts.filter((_, i) => sent.labels[i] === 1)),
      polarLabelled: withMood(sent.texts.filter((_, i) => sent.labels[i] !== 1)),
    },
  };

  // Throughput of the whole text enrichment, one thread.
  const t2 = performance.now();
  for (const text of sent.texts) enrichText(text, null);
  const enrichMs = performance.now() - t2;

  return {
    data: { dir, sentimentVal: sent.texts.length, emotionVal: emoVal.texts.length, emotionTrain: emoTrain.texts.length },
    models: {
      tone: toneModel().version,
      emotion: emotionModel().version,
      emotionChosen: emotionModel().fit.chosen,
      emotionCandidates: emotionModel().fit.candidates,
    },
    tone,
    emotion,
    timing: {
      toneMsPerPost: toneMs / sent.texts.length,
      emotionPlusEnrichMsPerPost: emotionMs / emoVal.texts.length,
      enrichTextPostsPerSec: sent.texts.length / (enrichMs / 1000),
    },
  };
}
