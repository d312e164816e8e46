// The window's vectors as the story clustering (stories.ts, word-bursts.ts) sees them: unit
// vectors by row, a group's summed vector, its centre and how close its members sit to it.
import { dot } from '../vectors/dot.ts';

export function unit(sum: Float64Array): Float32Array {
  let n = 0;
  for (let i = 0; i < sum.length; i++) n += sum[i]! * sum[i]!;
  n = Math.sqrt(n) || 1;
  return Float32Array.from(sum, (x) => x / n);
}

/** The window's unit vectors (`dim` each), indexed by row. */
export interface Space {
  vectors: Float32Array;
  dim: number;
}

export function sumOf({ vectors, dim }: Space, members: readonly number[]): Float64Array {
  const sum = new Float64Array(dim);
  for (const r of members) for (let i = 0; i < dim; i++) sum[i]! += vectors[r * dim + i]!;
  return sum;
}

export function cohesionOf({ vectors, dim }: Space, members: readonly number[], centre: Float32Array): number {
  let s = 0;
  for (const r of members) s += dot(vectors, r * dim, centre, 0, dim);
  return s / Math.max(1, members.length);
}
