// Agreement of a clustering with planted labels: normalised mutual information (arithmetic-mean
// normalisation, as scikit-learn's default) and the adjusted Rand index (Hubert & Arabie).
// Noise is a label like any other on both sides.

function contingency(
  truth: string[],
  pred: string[],
): { table: Map<string, Map<string, number>>; a: Map<string, number>; b: Map<string, number>; n: number } {
  if (truth.length !== pred.length) throw new Error('label lists differ in length');
  const table = new Map<string, Map<string, number>>();
  const a = new Map<string, number>();
  const b = new Map<string, number>();
  truth.forEach((t, i) => {
    const p = pred[i]!;
    const row = table.get(t) ?? new Map<string, number>();
    row.set(p, (row.get(p) ?? 0) + 1);
    table.set(t, row);
    a.set(t, (a.get(t) ?? 0) + 1);
    b.set(p, (b.get(p) ?? 0) + 1);
  });
  return { table, a, b, n: truth.length };
}

const entropy = (m: Map<string, number>, n: number) => [...m.values()].reduce((h, c) => h - (c / n) * Math.log(c / n), 0);

export function nmi(truth: string[], pred: string[]): number {
  const { table, a, b, n } = contingency(truth, pred);
  if (n === 0) return 0;
  let mi = 0;
  for (const [t, row] of table) {
    for (const [p, c] of row) mi += (c / n) * Math.log((c * n) / (a.get(t)! * b.get(p)!));
  }
  const ha = entropy(a, n);
  const hb = entropy(b, n);
  return ha + hb === 0 ? 1 : (2 * mi) / (ha + hb);
}

export function ari(truth: string[], pred: string[]): number {
  const { table, a, b, n } = contingency(truth, pred);
  const c2 = (x: number) => (x * (x - 1)) / 2;
  let index = 0;
  for (const row of table.values()) for (const c of row.values()) index += c2(c);
  const sa = [...a.values()].reduce((s, x) => s + c2(x), 0);
  const sb = [...b.values()].reduce((s, x) => s + c2(x), 0);
  const expected = (sa * sb) / c2(n);
  const max = (sa + sb) / 2;
  return max === expected ? 1 : (index - expected) / (max - expected);
}
