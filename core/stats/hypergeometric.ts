// The exact hypergeometric test and Benjamini-Hochberg control, for admitting a tracked narrative
// into a search answer: of N rows in the window, K belong to the narrative; the search returned n
// rows, k of them members. Under "the answer ignores the narrative", k ~ Hypergeometric(N, K, n).
// Hand-written: a few lines of well-known maths, where a statistics library would be a large
// dependency for one function.

// Lanczos approximation (g = 7, n = 9), accurate to ~15 digits for x > 0.
const LANCZOS = [
  0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313, -176.61502916214059, 12.507343278686905,
  -0.13857109526572012, 9.9843695780195716e-6, 1.5056327351493116e-7,
];

function logGamma(x: number): number {
  if (x < 0.5) return Math.log(Math.PI / Math.abs(Math.sin(Math.PI * x))) - logGamma(1 - x);
  const z = x - 1;
  let a = LANCZOS[0]!;
  const t = z + 7.5;
  for (let i = 1; i < 9; i++) a += LANCZOS[i]! / (z + i);
  return 0.5 * Math.log(2 * Math.PI) + (z + 0.5) * Math.log(t) - t + Math.log(a);
}

function logChoose(n: number, k: number): number {
  return logGamma(n + 1) - logGamma(k + 1) - logGamma(n - k + 1);
}

/** P(X >= k) for X ~ Hypergeometric(population N, successes K, draws n): the upper tail, exact. */
export function hypergeometricUpperTail(N: number, K: number, n: number, k: number): number {
  const lo = Math.max(0, n - (N - K));
  const hi = Math.min(n, K);
  if (k <= lo) return 1;
  if (k > hi) return 0;
  // p(i) from its log, then the ratio p(i+1)/p(i) = (K-i)(n-i) / ((i+1)(N-K-n+i+1)).
  let p = Math.exp(logChoose(K, k) + logChoose(N - K, n - k) - logChoose(N, n));
  let sum = 0;
  for (let i = k; i <= hi; i++) {
    sum += p;
    p *= ((K - i) * (n - i)) / ((i + 1) * (N - K - n + i + 1));
    if (p < sum * 1e-17) break;
  }
  return Math.min(1, sum);
}

/** z-score of k against the hypergeometric mean and variance (for ranking and display). */
export function hypergeometricZ(N: number, K: number, n: number, k: number): number {
  if (N <= 1) return 0;
  const mean = (n * K) / N;
  const variance = (n * K * (N - K) * (N - n)) / (N * N * (N - 1));
  return variance > 0 ? (k - mean) / Math.sqrt(variance) : 0;
}

/** Which of the p-values pass Benjamini-Hochberg at false discovery rate q (m = all tests made). */
export function benjaminiHochberg(pValues: readonly number[], q: number, m = pValues.length): boolean[] {
  const order = pValues.map((p, i) => ({ p, i })).sort((a, b) => a.p - b.p || a.i - b.i);
  let cutoff = -1;
  order.forEach(({ p }, rank) => {
    if (p <= ((rank + 1) / m) * q) cutoff = rank;
  });
  const pass = pValues.map(() => false);
  for (let r = 0; r <= cutoff; r++) pass[order[r]!.i] = true;
  return pass;
}
