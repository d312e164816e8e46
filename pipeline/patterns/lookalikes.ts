// Lookalikes: for each pattern, the other patterns of its scope that look most like it, with the
// evidence (docs/api.md, "Pattern entry"): centroidCosine (visual), tagJaccard (tags), and the recurrent elements both
// share (sharedElements, by type; corroborationCount is how many). Ranked by centroid cosine;
// definitions in docs/fields.md ("Patterns").
import { dot } from '../../core/vectors/dot.ts';
import type { BuiltPattern } from './build.ts';

const LOOKALIKES = 5;

interface SharedElement {
  value: string;
  selfSupport: number;
  neighborSupport: number;
}
export interface Lookalike {
  other: number;
  centroidCosine: number;
  tagJaccard: number;
  corroborationCount: number;
  sharedElements: Record<string, SharedElement[]>;
}

/** Cosine of two unit centroids. */
const cosine = (a: Float32Array, b: Float32Array): number => dot(a, 0, b, 0, a.length);

export function jaccard<T>(a: readonly T[], b: readonly T[]): number {
  const A = new Set(a);
  const B = new Set(b);
  if (A.size === 0 && B.size === 0) return 0;
  let inter = 0;
  for (const x of A) if (B.has(x)) inter++;
  return inter / (A.size + B.size - inter);
}

/** Lookalikes of patterns[i] among `patterns` (one scope), best first, at most `n`. */
export function lookalikesOf(patterns: readonly BuiltPattern[], i: number, n = LOOKALIKES): Lookalike[] {
  const self = patterns[i]!;
  const out: Lookalike[] = [];
  patterns.forEach((other, j) => {
    if (j === i) return;
    const sharedElements: Record<string, SharedElement[]> = {};
    let corroborationCount = 0;
    for (const e of self.recurrentElements) {
      const o = other.recurrentElements.find((x) => x.type === e.type && x.value === e.value);
      if (!o) continue;
      (sharedElements[e.type] ??= []).push({ value: e.value, selfSupport: e.support, neighborSupport: o.support });
      corroborationCount++;
    }
    out.push({
      other: j,
      centroidCosine: cosine(self.centroid, other.centroid),
      tagJaccard: jaccard(self.tags, other.tags),
      corroborationCount,
      sharedElements,
    });
  });
  return out.sort((a, b) => b.centroidCosine - a.centroidCosine || a.other - b.other).slice(0, n);
}
