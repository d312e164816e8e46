// A small linear text classifier over the analyzer's terms: features, inference, and the two
// fitting methods used for `emotionMood` (multinomial naive Bayes and L2-regularised softmax
// regression). Both produce the same stored form, so inference is one code path:
//   score_c = bias_c + sum over features f of x_f * weight_{f,c};  P(c) = softmax(score)_c
// where x_f is the feature count (naive Bayes) or, for softmax regression, presence (0/1) divided
// by sqrt(number of distinct features in the post) (an L2-normalised binary vector).
import { terms } from '../text/analyzer.ts';

type Scaling = 'count' | 'l2binary';

export interface LinearTextModel {
  kind: 'naive-bayes' | 'softmax-regression';
  version: string;
  labels: string[];
  /** 'unigram' or 'unigram+bigram' (bigrams of adjacent analyzer terms, joined by a space). */
  ngrams: 'unigram' | 'unigram+bigram';
  scaling: Scaling;
  bias: number[];
  /** feature -> one weight per label. */
  weights: Record<string, number[]>;
  /** How it was fitted: data, hyper-parameters, cross-validated accuracy. */
  fit: Record<string, unknown>;
}

/** Features of a text: analyzer terms (English analysis: the models are fitted on English posts), plus bigrams. */
export function features(text: string, ngrams: LinearTextModel['ngrams']): string[] {
  const t = terms(text, 'en');
  if (ngrams === 'unigram') return t;
  const out = [...t];
  for (let i = 1; i < t.length; i++) out.push(`${t[i - 1]} ${t[i]}`);
  return out;
}

function counts(fs: string[]): Map<string, number> {
  const m = new Map<string, number>();
  for (const f of fs) m.set(f, (m.get(f) ?? 0) + 1);
  return m;
}

interface Prediction {
  /** Posterior per label, same order as model.labels. */
  probs: number[];
  /** Number of the post's features the model knows (0 = no evidence; probs are then the prior). */
  known: number;
}

export function predict(model: LinearTextModel, fs: string[]): Prediction {
  const c = counts(fs);
  const known = [...c.keys()].filter((f) => model.weights[f] !== undefined);
  const scale = model.scaling === 'l2binary' ? (known.length ? 1 / Math.sqrt(known.length) : 0) : 1;
  const s = [...model.bias];
  for (const f of known) {
    const w = model.weights[f]!;
    const x = model.scaling === 'count' ? c.get(f)! : scale;
    for (let k = 0; k < s.length; k++) s[k] = s[k]! + x * w[k]!;
  }
  return { probs: softmax(s), known: known.length };
}

export function softmax(s: number[]): number[] {
  const m = Math.max(...s);
  const e = s.map((v) => Math.exp(v - m));
  const z = e.reduce((a, b) => a + b, 0);
  return e.map((v) => v / z);
}

export function argmax(xs: number[]): number {
  let b = 0;
  for (let i = 1; i < xs.length; i++) if (xs[i]! > xs[b]!) b = i;
  return b;
}

/** Features seen in at least `minCount` training documents. */
function vocabulary(docs: string[][], minCount: number): string[] {
  const df = new Map<string, number>();
  for (const d of docs) for (const f of new Set(d)) df.set(f, (df.get(f) ?? 0) + 1);
  return [...df]
    .filter(([, n]) => n >= minCount)
    .map(([f]) => f)
    .sort();
}

interface FitOptions {
  ngrams: LinearTextModel['ngrams'];
  minCount: number;
}

/** Multinomial naive Bayes with Laplace/Lidstone smoothing alpha; class priors from the data. */
export function fitNaiveBayes(docs: string[][], y: number[], labels: string[], o: FitOptions & { alpha: number }): LinearTextModel {
  const vocab = vocabulary(docs, o.minCount);
  const index = new Map(vocab.map((f, i) => [f, i]));
  const K = labels.length;
  const tc = vocab.map(() => new Array<number>(K).fill(0));
  const total = new Array<number>(K).fill(0);
  const nDocs = new Array<number>(K).fill(0);
  docs.forEach((d, i) => {
    const k = y[i]!;
    nDocs[k]!++;
    for (const f of d) {
      const j = index.get(f);
      if (j === undefined) continue;
      tc[j]![k]!++;
      total[k]!++;
    }
  });
  const V = vocab.length;
  const weights: Record<string, number[]> = {};
  vocab.forEach((f, j) => {
    weights[f] = tc[j]!.map((n, k) => Math.log((n + o.alpha) / (total[k]! + o.alpha * V)));
  });
  const bias = nDocs.map((n) => Math.log(n / docs.length));
  return {
    kind: 'naive-bayes',
    version: '',
    labels,
    ngrams: o.ngrams,
    scaling: 'count',
    bias,
    weights,
    fit: { alpha: o.alpha, minCount: o.minCount },
  };
}

/** Softmax regression, L2 penalty lambda, full-batch Adam (deterministic: zero init, fixed steps). */
export function fitSoftmax(
  docs: string[][],
  y: number[],
  labels: string[],
  o: FitOptions & { lambda: number; steps?: number; lr?: number },
): LinearTextModel {
  const vocab = vocabulary(docs, o.minCount);
  const index = new Map(vocab.map((f, i) => [f, i]));
  const K = labels.length;
  const V = vocab.length;
  const N = docs.length;
  const rows = docs.map((d) => [...new Set(d.map((f) => index.get(f)).filter((j): j is number => j !== undefined))]);
  const W = new Float64Array(V * K);
  const b = new Float64Array(K);
  const gW = new Float64Array(V * K);
  const gb = new Float64Array(K);
  const mW = new Float64Array(V * K),
    vW = new Float64Array(V * K),
    mb = new Float64Array(K),
    vb = new Float64Array(K);
  const steps = o.steps ?? 300,
    lr = o.lr ?? 0.1,
    b1 = 0.9,
    b2 = 0.999,
    eps = 1e-8;
  const s = new Float64Array(K);
  for (let t = 1; t <= steps; t++) {
    gW.fill(0);
    gb.fill(0);
    for (let i = 0; i < N; i++) {
      const r = rows[i]!;
      const x = r.length ? 1 / Math.sqrt(r.length) : 0;
      for (let k = 0; k < K; k++) {
        let v = b[k]!;
        for (const j of r) v += x * W[j * K + k]!;
        s[k] = v;
      }
      const p = softmax([...s]);
      for (let k = 0; k < K; k++) {
        const g = (p[k]! - (y[i] === k ? 1 : 0)) / N;
        gb[k] = gb[k]! + g;
        for (const j of r) gW[j * K + k] = gW[j * K + k]! + g * x;
      }
    }
    for (let q = 0; q < V * K; q++) gW[q] = gW[q]! + o.lambda * W[q]!;
    const c1 = 1 - b1 ** t,
      c2 = 1 - b2 ** t;
    for (let q = 0; q < V * K; q++) {
      mW[q] = b1 * mW[q]! + (1 - b1) * gW[q]!;
      vW[q] = b2 * vW[q]! + (1 - b2) * gW[q]! ** 2;
      W[q] = W[q]! - (lr * (mW[q]! / c1)) / (Math.sqrt(vW[q]! / c2) + eps);
    }
    for (let k = 0; k < K; k++) {
      mb[k] = b1 * mb[k]! + (1 - b1) * gb[k]!;
      vb[k] = b2 * vb[k]! + (1 - b2) * gb[k]! ** 2;
      b[k] = b[k]! - (lr * (mb[k]! / c1)) / (Math.sqrt(vb[k]! / c2) + eps);
    }
  }
  const weights: Record<string, number[]> = {};
  vocab.forEach((f, j) => {
    weights[f] = Array.from({ length: K }, (_, k) => W[j * K + k]!);
  });
  return {
    kind: 'softmax-regression',
    version: '',
    labels,
    ngrams: o.ngrams,
    scaling: 'l2binary',
    bias: [...b],
    weights,
    fit: { lambda: o.lambda, minCount: o.minCount, steps, lr },
  };
}

/** Round weights to `digits` decimals and drop features whose weights are all ~0 (compact JSON). */
export function compact(model: LinearTextModel, digits = 3): LinearTextModel {
  const r = (v: number) => Number(v.toFixed(digits));
  const weights: Record<string, number[]> = {};
  for (const [f, w] of Object.entries(model.weights)) {
    const rw = w.map(r);
    if (model.kind === 'naive-bayes' || rw.some((v) => v !== 0)) weights[f] = rw;
  }
  return { ...model, bias: model.bias.map(r), weights };
}

/** Scores of a dense feature vector under a K x D weight matrix, as probabilities. */
export function denseProbs(W: number[][], x: number[]): number[] {
  return softmax(W.map((w) => w.reduce((a, v, d) => a + v * (x[d] ?? 0), 0)));
}

/**
 * Softmax regression on dense features (the last feature should be the constant 1, the bias; it is
 * not penalised). `balanced` weights each class by n / (K * n_class), which maximises macro-recall
 * rather than accuracy and makes the posteriors those of equal class priors. Full-batch Adam.
 */
export function fitDenseSoftmax(
  X: number[][],
  y: number[],
  K: number,
  o: { lambda: number; steps?: number; lr?: number; balanced?: boolean },
): number[][] {
  const D = X[0]?.length ?? 0;
  const N = X.length;
  const steps = o.steps ?? 1500,
    lr = o.lr ?? 0.05,
    b1 = 0.9,
    b2 = 0.999,
    eps = 1e-8;
  const n = new Array<number>(K).fill(0);
  for (const c of y) n[c] = n[c]! + 1;
  const cw = n.map((c) => (o.balanced ? (c ? N / (K * c) : 0) : 1));
  const W = Array.from({ length: K }, () => new Array<number>(D).fill(0));
  const m = Array.from({ length: K }, () => new Array<number>(D).fill(0));
  const v = Array.from({ length: K }, () => new Array<number>(D).fill(0));
  for (let t = 1; t <= steps; t++) {
    const g = Array.from({ length: K }, () => new Array<number>(D).fill(0));
    for (let i = 0; i < N; i++) {
      const x = X[i]!;
      const p = denseProbs(W, x);
      const wi = cw[y[i]!]! / N;
      for (let k = 0; k < K; k++) {
        const gk = wi * (p[k]! - (y[i] === k ? 1 : 0));
        const row = g[k]!;
        for (let d = 0; d < D; d++) row[d] = row[d]! + gk * x[d]!;
      }
    }
    const c1 = 1 - b1 ** t,
      c2 = 1 - b2 ** t;
    for (let k = 0; k < K; k++) {
      for (let d = 0; d < D; d++) {
        const gd = g[k]![d]! + (d < D - 1 ? o.lambda * W[k]![d]! : 0);
        m[k]![d] = b1 * m[k]![d]! + (1 - b1) * gd;
        v[k]![d] = b2 * v[k]![d]! + (1 - b2) * gd * gd;
        W[k]![d] = W[k]![d]! - (lr * (m[k]![d]! / c1)) / (Math.sqrt(v[k]![d]! / c2) + eps);
      }
    }
  }
  return W;
}
