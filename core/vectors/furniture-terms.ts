// Boilerplate is not a story: the embedder's fit finds, from the corpus itself, the terms and
// bigrams that posts of every kind share (sign-offs such as "the full statement is linked below",
// "link in bio", platform furniture such as #fyp, a hashtag every post of a data set carries) and
// gives them no weight, so they pull no posts together and no query towards them.
//
// How: the fit sample, embedded by a first fit, is cut into `clusters` groups by k-means (the
// corpus's broad topics, roughly); a feature present in at least `share` of a group's posts, in at
// least `spread` of the groups (and 3), is furniture: a story's words concentrate in its own
// groups, furniture's spread over most of them. Few, large groups (12) and half of them: with many
// small groups, a big topic's own words spread over its several groups and were taken for
// furniture (measured on the TweetEval stance tweets: 5 topics). This is the narratives' rule for
// a word the clusters share (core/maps/labels.ts, SHARED_KEY), applied before the clustering.
import { seedCentres } from '../stats/kmeans-plus-plus.ts';
import { lloydKMeans } from '../stats/lloyd-kmeans.ts';

interface FurnitureOptions {
  clusters: number;
  share: number;
  spread: number;
  /** Sample posts clustered: the first of the fit's (its sample is in key order, so these are a consistent sample too). */
  sample: number;
  seed: number;
}

export const FURNITURE_DEFAULTS: FurnitureOptions = { clusters: 12, share: 0.02, spread: 0.5, sample: 10_000, seed: 42 };

/**
 * The furniture features of a sample, each with how much of its weight it loses (0..1]:
 * `features[i]` lists post i's features (hash buckets, each once), `vectors` its unit embedding
 * (rows x dim). The rule is soft, so that two fits of nearly the same posts agree: a group counts
 * min(1, n / common) (not 0 or 1 at the share), and the weight lost rises from 0 at a spread of
 * `least` - 2 groups to all of it at `least` + 2. With a hard cut, a tenth of the furniture
 * features flipped in or out between a fit and a fit of the same posts less 0.1% (a feature just
 * at the cut), and with them the vectors of every post holding one: a query's exact top-200
 * neighbours agreed at 0.900 between the two fits (200k posts of the 1M bench corpus), 0.994
 * without the furniture step, 0.971 with a ramp of +-1 group, 0.982 with this one (+-2).
 */
export function furnitureFeatures(
  features: ReadonlyArray<ArrayLike<number>>,
  vectors: Float32Array,
  dim: number,
  opts: FurnitureOptions = FURNITURE_DEFAULTS,
): Array<[feature: number, weight: number]> {
  const idx = Array.from({ length: Math.min(features.length, opts.sample) }, (_, i) => i);
  // At least ~50 posts a group, so that `share` of a group is a count and not one post.
  const k = Math.min(opts.clusters, Math.floor(idx.length / 50));
  if (k < 4) return [];
  const data = new Float64Array(idx.length * dim);
  idx.forEach((i, r) => data.set(vectors.subarray(i * dim, (i + 1) * dim), r * dim));
  const init = Float64Array.from(seedCentres(vectors, dim, idx, k, opts.seed).flat());
  const { clusters } = lloydKMeans(data, dim, init, 20, 1e-4);
  const sizes = new Uint32Array(k);
  for (const c of clusters) sizes[c]!++;
  const perGroup = Array.from({ length: k }, () => new Map<number, number>());
  idx.forEach((i, r) => {
    const m = perGroup[clusters[r]!]!;
    const f = features[i]!;
    for (let j = 0; j < f.length; j++) m.set(f[j]!, (m.get(f[j]!) ?? 0) + 1);
  });
  const spreadOver = new Map<number, number>();
  perGroup.forEach((m, c) => {
    const common = Math.max(2, opts.share * sizes[c]!);
    for (const [f, n] of m) spreadOver.set(f, (spreadOver.get(f) ?? 0) + Math.min(1, n / common));
  });
  const least = Math.max(3, opts.spread * k);
  return [...spreadOver]
    .map(([f, spread]) => [f, Math.min(1, Math.max(0, (spread - (least - 2)) / 4))] as [number, number])
    .filter(([, w]) => w > 0)
    .sort((a, b) => a[0] - b[0]);
}
