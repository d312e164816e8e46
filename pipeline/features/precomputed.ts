// Precomputed embeddings from the input (`text_embedding`, `visual_embedding`): when at least
// ADOPT_SHARE of the rows that have a vector of ours also carry one, the input's vectors become the
// space of that kind, our vectors of the other rows mapped in (core/vectors/vector-space.ts). Below that
// share the input's vectors are kept in posts.parquet but not used: a space mixing a few foreign
// vectors with a mapped majority would rank by the map, not by the vectors the team sent.
import { normalise, RIDGE_LAMBDA, RidgeFit, toSpace, type VectorSpace } from '../../core/vectors/vector-space.ts';
import { snapshotChunks } from '../segments/snapshot-rows.ts';
import type { StageContext } from '../context/stage-context.ts';
import { StageAborted } from '../context/stage-context.ts';

const ADOPT_SHARE = 0.5;

/** A unit-length copy, or null for a zero or non-finite vector. */
function unit(values: ArrayLike<number>): Float32Array | null {
  const v = normalise(Float32Array.from(values));
  return v.every(Number.isFinite) && v.some((x) => x !== 0) ? v : null;
}

/**
 * The space for `column` given our vectors (rows x ownDim, zeros where we have none), decided on a
 * full run over every row. Reads the column from the features stage's `snap` table (row = ci). Returns the vectors in that space (ours unchanged
 * when the input's are not adopted) and the space's description.
 */
export async function adoptPrecomputed(
  ctx: StageContext,
  column: 'text_embedding' | 'visual_embedding',
  own: Float32Array,
  ownDim: number,
  rows: number,
): Promise<{ vectors: Float32Array; space: VectorSpace }> {
  const db = await ctx.db();
  const hasOwn = (r: number) => own.subarray(r * ownDim, (r + 1) * ownDim).some((x) => x !== 0);
  const [c] = await db.all<{ n: number; dim: number | null }>(
    `SELECT count(*)::BIGINT AS n, max(len(${column}))::INT AS dim FROM snap WHERE ${column} IS NOT NULL`,
  );
  const given = Number(c?.n ?? 0);
  let ownRows = 0;
  for (let r = 0; r < rows; r++) if (hasOwn(r)) ownRows++;
  const computed: VectorSpace = {
    source: 'computed',
    dim: ownDim,
    ownDim,
    precomputedRows: 0,
    mappedRows: 0,
    lambda: null,
    mapR2: null,
    map: null,
  };
  const dim = Number(c?.dim ?? 0);
  if (given === 0 || dim === 0 || given < ADOPT_SHARE * Math.max(ownRows, 1))
    return { vectors: own, space: { ...computed, precomputedRows: given } };

  // Their vectors by row, and the ridge fit on rows that have both.
  const theirs = new Float32Array(rows * dim);
  const present = new Uint8Array(rows);
  const fit = new RidgeFit(ownDim, dim);
  for await (const chunk of snapshotChunks<{ ci: number; v: number[] }>(db, `ci, ${column} AS v`, rows, 50_000, 'ci')) {
    if (ctx.signal.aborted) throw new StageAborted('features');
    for (const r of chunk) {
      if (!r.v) continue;
      const row = Number(r.ci);
      const y = unit(r.v);
      if (!y || y.length !== dim) continue;
      theirs.set(y, row * dim);
      present[row] = 1;
      if (hasOwn(row)) fit.add(own.subarray(row * ownDim, (row + 1) * ownDim), y);
    }
  }
  let unplaced = 0;
  for (let r = 0; r < rows; r++) if (!present[r] && hasOwn(r)) unplaced++;
  let solved: { map: Float32Array; r2: number } | null = null;
  if (fit.pairs >= 2 * ownDim) solved = fit.solve();
  // Too few rows with both to learn a map: rows without their vector could not be placed, and
  // queries (text) could not be carried into their space. Visual vectors have no queries, so when
  // no row needs placing (media-less posts that only carry embeddings) theirs are used as sent.
  else if (unplaced > 0 || column !== 'visual_embedding') return { vectors: own, space: { ...computed, precomputedRows: given } };
  const space: VectorSpace = {
    source: 'precomputed',
    dim,
    ownDim,
    precomputedRows: 0,
    mappedRows: 0,
    lambda: solved ? RIDGE_LAMBDA : null,
    mapR2: solved?.r2 ?? null,
    map: solved?.map ?? null,
  };
  const vectors = theirs;
  for (let row = 0; row < rows; row++) {
    if (present[row]) {
      space.precomputedRows++;
      continue;
    }
    if (!hasOwn(row)) continue;
    const u = unit(toSpace(space, own.subarray(row * ownDim, (row + 1) * ownDim)));
    if (u) (vectors.set(u, row * dim), space.mappedRows++);
  }
  return { vectors, space };
}

/**
 * The computed rows' vectors in the served generation's space (an incremental run keeps the space,
 * as it keeps the embedder): ours when the space is ours; in a precomputed space, a row's own
 * precomputed vector when it carries one of the space's dimension, else ours mapped in (zeros when
 * there is no map).
 */
export async function placeInSpace(
  ctx: StageContext,
  column: 'text_embedding' | 'visual_embedding',
  own: Float32Array,
  ownDim: number,
  rows: number,
  space: VectorSpace,
): Promise<Float32Array> {
  if (space.source === 'computed') return own;
  const db = await ctx.db();
  const out = new Float32Array(rows * space.dim);
  const placed = new Uint8Array(rows);
  for await (const chunk of snapshotChunks<{ ci: number; v: number[] | null }>(db, `ci, ${column} AS v`, rows, 50_000, 'ci')) {
    if (ctx.signal.aborted) throw new StageAborted('features');
    for (const r of chunk) {
      const y = r.v ? unit(r.v) : null;
      if (y && y.length === space.dim) (out.set(y, Number(r.ci) * space.dim), (placed[Number(r.ci)] = 1));
    }
  }
  for (let row = 0; row < rows; row++) {
    if (placed[row] || !space.map) continue;
    const mine = own.subarray(row * ownDim, (row + 1) * ownDim);
    if (!mine.some((x) => x !== 0)) continue;
    const u = unit(toSpace(space, mine));
    if (u) out.set(u, row * space.dim);
  }
  return out;
}
