// The inner product of two rows of flat Float32Arrays (the cosine, for unit vectors): the one
// definition the clustering, the patterns and their lookalikes share.

/** sum_i a[ao + i] * b[bo + i] for i < dim. */
export function dot(a: Float32Array, ao: number, b: Float32Array, bo: number, dim: number): number {
  let s = 0;
  for (let i = 0; i < dim; i++) s += a[ao + i]! * b[bo + i]!;
  return s;
}
