// The inner product of two rows of flat Float32Arrays (the cosine, for unit vectors): the one
// definition the clustering, the patterns and their lookalikes share.

/** sum_i a[ao + i] * b[bo + i] for i < dim. Four running sums: a third faster than one (no chain of dependent adds). */
export function dot(a: Float32Array, ao: number, b: Float32Array, bo: number, dim: number): number {
  let s0 = 0;
  let s1 = 0;
  let s2 = 0;
  let s3 = 0;
  let i = 0;
  for (; i + 3 < dim; i += 4) {
    s0 += a[ao + i]! * b[bo + i]!;
    s1 += a[ao + i + 1]! * b[bo + i + 1]!;
    s2 += a[ao + i + 2]! * b[bo + i + 2]!;
    s3 += a[ao + i + 3]! * b[bo + i + 3]!;
  }
  for (; i < dim; i++) s0 += a[ao + i]! * b[bo + i]!;
  return s0 + s1 + s2 + s3;
}
