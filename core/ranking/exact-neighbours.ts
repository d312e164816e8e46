// Exact nearest rows by a scan of the int8 row vectors (core/vectors/quantized-vectors.ts), for the deep
// retrievals of asynchronous jobs: thousands of candidates, where HNSW would need an ef of the
// same size and the worker running it would have to hold its own graphs. A scan of a window reads
// only shared memory, finds the true neighbours, and at 1M rows costs a fraction of a second,
// which an asynchronous job can spend.
import type { QuantizedVectors } from '../vectors/quantized-vectors.ts';
import type { Neighbour } from './segment-graphs.ts';

/** The k rows >= start most similar to q (inner product on the decoded vectors), best first, ties by row. */
export function exactNeighbours(vectors: QuantizedVectors, q: ArrayLike<number>, k: number, start = 0): Neighbour[] {
  if (k <= 0) return [];
  // A min-heap of the best k so far (similarity, then the larger row first out).
  const sims = new Float64Array(k);
  const rows = new Int32Array(k);
  let size = 0;
  const worse = (i: number, j: number) => sims[i]! < sims[j]! || (sims[i] === sims[j] && rows[i]! > rows[j]!);
  const swap = (i: number, j: number) => {
    const s = sims[i]!;
    sims[i] = sims[j]!;
    sims[j] = s;
    const r = rows[i]!;
    rows[i] = rows[j]!;
    rows[j] = r;
  };
  const down = (i: number) => {
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < size && worse(l, m)) m = l;
      if (r < size && worse(r, m)) m = r;
      if (m === i) return;
      swap(i, m);
      i = m;
    }
  };
  for (let row = Math.max(0, start); row < vectors.rows; row++) {
    if (!vectors.hasVector(row)) continue;
    const sim = vectors.dot(q, row);
    if (size < k) {
      sims[size] = sim;
      rows[size] = row;
      for (let i = size++; i > 0;) {
        const p = (i - 1) >> 1;
        if (!worse(i, p)) break;
        swap(i, p);
        i = p;
      }
    } else if (sim > sims[0]!) {
      sims[0] = sim;
      rows[0] = row;
      down(0);
    }
  }
  const out: Neighbour[] = [];
  for (let i = 0; i < size; i++) out.push({ row: rows[i]!, sim: sims[i]! });
  return out.sort((a, b) => b.sim - a.sim || a.row - b.row);
}
