// Themes above narratives: the narratives of one window grouped into themes (an event, a subject)
// from the data, with no number of themes given (docs/fields.md, "Themes").
//   1. Average-linkage agglomerative clustering of the narratives' unit vectors, weighted by their
//      member counts: the linkage of two groups is the size-weighted mean cosine of their
//      narratives' centroids, L(A, B) = Σ n_i n_j cos(c_i, c_j) / (N_A N_B), so merging A and B
//      gives L(A∪B, C) = (N_A L(A, C) + N_B L(B, C)) / (N_A + N_B) (Lance-Williams). The pair with
//      the highest linkage merges first; no merge below minLinkageCosine is ever made, so
//      unrelated narratives are never forced together.
//   2. The cut: of every partition on the way (none merged, then after each merge), the one with the
//      highest size-weighted silhouette of the narratives (the finest of equals). A narrative i of
//      theme T, with distances d = 1 − cosine of centroids:
//        a(i) = Σ_{j∈T, j≠i} n_j d(i, j) / Σ_{j∈T, j≠i} n_j
//        b(i) = min(1 − unrelatedCosine, min over the other themes T' of Σ_{j∈T'} n_j d(i, j) / N_T')
//        s(i) = (b − a) / max(a, b), and 0 for a narrative alone in its theme (Rousseeuw's rule)
//        S    = Σ n_i s(i) / Σ n_i
//      b(i) is never farther than unrelated content (cosine unrelatedCosine): a window whose
//      narratives are all one story is one theme (its s(i) = its closeness to the rest), and a theme
//      is never kept for being less far from its neighbours than from nothing.
// The criterion (the linkage guard and the silhouette's reference) lives here, in THEME_CRITERION;
// the pipeline calls groupNarratives and nothing else decides a theme.

export interface ThemeCriterion {
  /** The lowest linkage (size-weighted mean centroid cosine) at which two groups may merge. */
  minLinkageCosine: number;
  /** The cosine of unrelated content: the farthest a narrative's nearest other theme counts as (b ≤ 1 − this). */
  unrelatedCosine: number;
}

/**
 * minLinkageCosine, on the pipeline's theme vectors (what a narrative says, a quarter text centroid
 * and three quarters words, joined with when it is told, its bursts: pipeline/narratives/themes/build.ts): on
 * the real crises (CrisisLexT6, the T26 set), window all, 0.25 gives a mean best-theme F1 of 0.88
 * and 0.92 (theme purity 0.886 and 0.913); 0.2 about the same F1 but joins everyday subjects with
 * little in common (CrisisLexT6's last week in 5 themes instead of 10: games, dreams and a cup in
 * one) and lowers CrisisLexT6's purity to 0.875; 0.3 splits the Queensland floods (0.87 and 0.92). Set at 0.25 on the words and centroids alone
 * (0.87 and 0.85 today), where 0.45 split a crisis into a dozen themes and 0.2 merged crises.
 * unrelatedCosine: texts with nothing in common are orthogonal.
 */
export const THEME_CRITERION: ThemeCriterion = { minLinkageCosine: 0.25, unrelatedCosine: 0 };

interface ThemeInput {
  /** Unit centroid. */
  centroid: ArrayLike<number>;
  /** Member count (its weight); at least 1. */
  size: number;
}

export interface ThemeGrouping {
  /** Each narrative's theme, themes numbered 0.. in the order of their first narrative. */
  themeOf: Int32Array;
  themes: number;
  /** S of the chosen cut (0 when every narrative is a theme of its own). */
  silhouette: number;
  /** Merges made before the cut. */
  merges: number;
  /** The lowest linkage merged (null when nothing was merged). */
  lowestLinkage: number | null;
}

function cosine(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let s = 0;
  for (let k = 0; k < a.length; k++) s += a[k]! * b[k]!;
  return s;
}

/** Group one window's narratives into themes (the header's two steps). Pure and deterministic. */
export function groupNarratives(items: readonly ThemeInput[], criterion: ThemeCriterion = THEME_CRITERION): ThemeGrouping {
  const n = items.length;
  const size = Float64Array.from(items, (x) => Math.max(1, x.size));
  const sim = new Float64Array(n * n);
  for (let i = 0; i < n; i++)
    for (let j = i; j < n; j++) {
      const c = i === j ? 1 : cosine(items[i]!.centroid, items[j]!.centroid);
      sim[i * n + j] = sim[j * n + i] = c;
    }
  // Group slots: a merge keeps the lower slot. link: linkage between active slots; weighted[i * n + g]:
  // Σ over group g's narratives j of n_j d(i, j), for the silhouette of every cut.
  const link = Float64Array.from(sim);
  const weighted = new Float64Array(n * n);
  for (let i = 0; i < n; i++) for (let j = 0; j < n; j++) weighted[i * n + j] = size[j]! * (1 - sim[i * n + j]!);
  const groupOf = Int32Array.from({ length: n }, (_, i) => i);
  const mass = Float64Array.from(size);
  const active = new Uint8Array(n).fill(1);
  const bestOf = new Int32Array(n).fill(-1);
  /** The slot whose linkage with g is highest (ties: the lower slot), -1 when g is alone. */
  const best = (g: number): number => {
    let at = -1;
    for (let h = 0; h < n; h++) if (h !== g && active[h] && (at < 0 || link[g * n + h]! > link[g * n + at]!)) at = h;
    return at;
  };
  for (let g = 0; g < n; g++) bestOf[g] = best(g);
  const far = 1 - criterion.unrelatedCosine;
  let total = 0;
  for (let i = 0; i < n; i++) total += size[i]!;

  const silhouetteNow = (): number => {
    let s = 0;
    for (let i = 0; i < n; i++) {
      const g = groupOf[i]!;
      const others = mass[g]! - size[i]!;
      if (others <= 0) continue;
      const a = weighted[i * n + g]! / others;
      let b = far;
      for (let h = 0; h < n; h++) if (h !== g && active[h]) b = Math.min(b, weighted[i * n + h]! / mass[h]!);
      const m = Math.max(a, b);
      if (m > 0) s += size[i]! * ((b - a) / m);
    }
    return total > 0 ? s / total : 0;
  };

  const merges: Array<[number, number]> = [];
  let bestScore = 0;
  let bestCut = 0;
  let lowest: number | null = null;
  for (;;) {
    // The highest linkage over active pairs (ties: the lowest slots).
    let a = -1;
    for (let g = 0; g < n; g++) {
      if (!active[g] || bestOf[g]! < 0) continue;
      if (a < 0 || link[g * n + bestOf[g]!]! > link[a * n + bestOf[a]!]!) a = g;
    }
    if (a < 0) break;
    const b0 = bestOf[a]!;
    const value = link[a * n + b0]!;
    if (value < criterion.minLinkageCosine) break;
    const [keep, gone] = a < b0 ? [a, b0] : [b0, a];
    // Lance-Williams for the size-weighted average linkage.
    for (let h = 0; h < n; h++) {
      if (!active[h] || h === keep || h === gone) continue;
      const l = (mass[keep]! * link[keep * n + h]! + mass[gone]! * link[gone * n + h]!) / (mass[keep]! + mass[gone]!);
      link[keep * n + h] = link[h * n + keep] = l;
    }
    for (let i = 0; i < n; i++) {
      weighted[i * n + keep]! += weighted[i * n + gone]!;
      if (groupOf[i] === gone) groupOf[i] = keep;
    }
    mass[keep]! += mass[gone]!;
    active[gone] = 0;
    bestOf[gone] = -1;
    for (let h = 0; h < n; h++) if (active[h] && (h === keep || bestOf[h] === keep || bestOf[h] === gone)) bestOf[h] = best(h);
    for (let h = 0; h < n; h++) {
      if (!active[h] || h === keep) continue;
      const cur = bestOf[h]!;
      if (cur < 0 || link[h * n + keep]! > link[h * n + cur]! || (link[h * n + keep] === link[h * n + cur] && keep < cur)) bestOf[h] = keep;
    }
    merges.push([keep, gone]);
    const score = silhouetteNow();
    if (score > bestScore + 1e-12) {
      bestScore = score;
      bestCut = merges.length;
      lowest = value;
    }
  }
  // Replay the chosen merges from singletons.
  const root = Int32Array.from({ length: n }, (_, i) => i);
  const find = (i: number): number => (root[i] === i ? i : (root[i] = find(root[i]!)));
  for (let m = 0; m < bestCut; m++) root[find(merges[m]![1])] = find(merges[m]![0]);
  const themeOf = new Int32Array(n);
  const number = new Map<number, number>();
  for (let i = 0; i < n; i++) {
    const r = find(i);
    if (!number.has(r)) number.set(r, number.size);
    themeOf[i] = number.get(r)!;
  }
  return { themeOf, themes: number.size, silhouette: bestScore, merges: bestCut, lowestLinkage: lowest };
}

/** A theme's centre: the unit mean of its narratives' unit centroids, each weighted by its member count (zeros for none). */
export function themeCentre(parts: readonly ThemeInput[], dim: number): Float32Array {
  const sum = new Float64Array(dim);
  for (const p of parts) for (let k = 0; k < dim; k++) sum[k]! += p.size * p.centroid[k]!;
  let norm = 0;
  for (let k = 0; k < dim; k++) norm += sum[k]! * sum[k]!;
  norm = Math.sqrt(norm) || 1;
  return Float32Array.from(sum, (x) => x / norm);
}
