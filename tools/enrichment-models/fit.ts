// Builds the two small models the enrichment ships, deterministically, from the TweetEval subset:
//   emotion-model.json  fitted on emotion/train ONLY; the candidate (softmax regression at three
//                       L2 strengths, naive Bayes at two smoothings) with the best 5-fold
//                       cross-validated accuracy on train is refitted on all of train;
//   tone-model.json     the 33-number tone combiner (tone.ts), fitted on sentiment/val with
//                       class-balanced weights (no sentiment train split exists).
// Run: `npm run bench -- quality --fit` (or `npx tsx tools/enrichment-models/fit.ts`).
import fs from 'node:fs';
import { pathToFileURL } from 'node:url';
import { EMOTION_LABELS, EMOTION_MODEL_FILE, emotionFeatures, emotionPosteriors } from '../../core/enrichment/emotion.ts';
import {
  argmax,
  compact,
  denseProbs,
  fitDenseSoftmax,
  fitNaiveBayes,
  fitSoftmax,
  predict,
  type LinearTextModel,
} from '../../core/enrichment/linear-text-model.ts';
import { TONE_FEATURES, TONE_LABELS, TONE_MODEL_FILE, toneFeatures, type ToneModel } from '../../core/enrichment/tone.ts';
import { loadSplit, TWEETEVAL_DIR } from '../../fixtures/tweeteval.ts';
import { vaderScores } from '../../core/enrichment/vader.ts';

const EMOTION_MODEL_VERSION = 'emotion-1';
const TONE_MODEL_VERSION = 'tone-1';
const TONE_LAMBDA = 1e-3;
const FOLDS = 5;

type Candidate = { name: string; fit: (docs: string[][], y: number[]) => LinearTextModel };
const labels = [...EMOTION_LABELS];
const CANDIDATES: Candidate[] = [
  ...[3e-5, 1e-4, 3e-4].map((lambda) => ({
    name: `softmax-regression lambda=${lambda}`,
    fit: (d: string[][], y: number[]) => fitSoftmax(d, y, labels, { ngrams: 'unigram', minCount: 1, lambda }),
  })),
  ...[0.3, 1].map((alpha) => ({
    name: `naive-bayes alpha=${alpha}`,
    fit: (d: string[][], y: number[]) => fitNaiveBayes(d, y, labels, { ngrams: 'unigram', minCount: 1, alpha }),
  })),
];

function accuracy(m: LinearTextModel, docs: string[][], y: number[]): number {
  let ok = 0;
  docs.forEach((d, i) => {
    if (argmax(predict(m, d).probs) === y[i]) ok++;
  });
  return ok / docs.length;
}

function fitEmotionModel(dir = TWEETEVAL_DIR, log: (s: string) => void = () => {}): LinearTextModel {
  const train = loadSplit('emotion', 'train', dir);
  const docs = train.texts.map((t) => emotionFeatures(t, vaderScores(t, 'en')));
  const y = train.labels;
  const cv: Array<{ candidate: string; cvAccuracy: number }> = [];
  for (const c of CANDIDATES) {
    let sum = 0;
    for (let f = 0; f < FOLDS; f++) {
      const tr = docs.map((_, i) => i).filter((i) => i % FOLDS !== f);
      const te = docs.map((_, i) => i).filter((i) => i % FOLDS === f);
      const m = c.fit(
        tr.map((i) => docs[i]!),
        tr.map((i) => y[i]!),
      );
      sum += accuracy(
        m,
        te.map((i) => docs[i]!),
        te.map((i) => y[i]!),
      );
    }
    cv.push({ candidate: c.name, cvAccuracy: Number((sum / FOLDS).toFixed(4)) });
    log(`emotion ${c.name}: ${FOLDS}-fold CV accuracy on train ${(sum / FOLDS).toFixed(4)}`);
  }
  const best = cv.reduce((a, b) => (b.cvAccuracy > a.cvAccuracy ? b : a));
  const chosen = CANDIDATES.find((c) => c.name === best.candidate)!;
  const model = compact(chosen.fit(docs, y));
  return {
    ...model,
    version: EMOTION_MODEL_VERSION,
    fit: {
      ...model.fit,
      data: train.files,
      documents: docs.length,
      selection: `${FOLDS}-fold CV accuracy on train (fold = index mod ${FOLDS})`,
      candidates: cv,
      chosen: best.candidate,
      features: 'analyzer terms (English) + VADER polarity tokens',
    },
  };
}

/** The tone combiner's inputs for every sentiment/val tweet, under a given emotion model. */
export function toneDesign(emotion: LinearTextModel, dir = TWEETEVAL_DIR): { X: number[][]; y: number[]; files: string[] } {
  const val = loadSplit('sentiment', 'val', dir);
  const X = val.texts.map((t) => {
    const v = vaderScores(t, 'en');
    return toneFeatures(v, emotionPosteriors(t, 'en', v, emotion));
  });
  return { X, y: val.labels, files: val.files };
}

function fitToneWeights(X: number[][], y: number[]): number[][] {
  return fitDenseSoftmax(X, y, TONE_LABELS.length, { lambda: TONE_LAMBDA, balanced: true });
}

/** Out-of-fold tone predictions: each row scored by weights fitted on the other folds (fold = index mod k). */
export function outOfFoldTone(X: number[][], y: number[], k = 10): number[] {
  const pred = new Array<number>(X.length).fill(1);
  for (let f = 0; f < k; f++) {
    const tr = X.map((_, i) => i).filter((i) => i % k !== f);
    const W = fitToneWeights(
      tr.map((i) => X[i]!),
      tr.map((i) => y[i]!),
    );
    for (let i = f; i < X.length; i += k) pred[i] = argmax(denseProbs(W, X[i]!));
  }
  return pred;
}

function fitToneModel(emotion: LinearTextModel, dir = TWEETEVAL_DIR): ToneModel {
  const { X, y, files } = toneDesign(emotion, dir);
  const W = fitToneWeights(X, y).map((row) => row.map((w) => Number(w.toFixed(4))));
  return {
    kind: 'softmax-regression',
    version: TONE_MODEL_VERSION,
    labels: [...TONE_LABELS],
    features: [...TONE_FEATURES],
    weights: W,
    fit: {
      data: files,
      documents: X.length,
      lambda: TONE_LAMBDA,
      classWeights: 'balanced (n / (3 n_class))',
      optimiser: 'full-batch Adam, 1500 steps, lr 0.05',
      emotionModel: emotion.version,
    },
  };
}

/** JSON with one feature per line: small diffs when the model is rebuilt. */
function modelJson(model: object & { weights: unknown }): string {
  const { weights, ...rest } = model;
  const head = JSON.stringify(rest, null, 2).replace(/\n}$/, '');
  const rows = Array.isArray(weights)
    ? weights.map((w) => `    ${JSON.stringify(w)}`)
    : Object.entries(weights as Record<string, number[]>).map(([f, w]) => `    ${JSON.stringify(f)}: ${JSON.stringify(w)}`);
  const [open, close] = Array.isArray(weights) ? ['[', ']'] : ['{', '}'];
  return `${head},\n  "weights": ${open}\n${rows.join(',\n')}\n  ${close}\n}\n`;
}

export function fitAll(
  dir = TWEETEVAL_DIR,
  log: (s: string) => void = (s) => process.stderr.write(`${s}\n`),
): { emotion: string; tone: string } {
  const emotion = fitEmotionModel(dir, log);
  fs.writeFileSync(EMOTION_MODEL_FILE, modelJson(emotion));
  log(`wrote ${EMOTION_MODEL_FILE} (${Object.keys(emotion.weights).length} features, ${emotion.fit.chosen})`);
  const tone = fitToneModel(emotion, dir);
  fs.writeFileSync(TONE_MODEL_FILE, modelJson(tone));
  log(`wrote ${TONE_MODEL_FILE}`);
  return { emotion: EMOTION_MODEL_FILE, tone: TONE_MODEL_FILE };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) fitAll();
