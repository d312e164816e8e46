// Which space a generation's vectors live in, and how a vector of ours reaches it.
//
// Teams that embed upstream send `text_embedding` / `visual_embedding` with their posts. When most
// rows carry one, those vectors are the space: a row with its own precomputed vector is indexed by
// it, and a row without one (and every query, which only our embedder can read) is carried over by
// a linear map from our space, fitted by ridge regression on the rows that have both:
//   W = argmin ||X W - Y||^2 + l ||W||^2 = (X^T X + l I)^-1 X^T Y,   l = RIDGE_LAMBDA x pairs / ownDim
// (X: our unit vectors, Y: theirs, unit length; l grows with the data so its pull stays the same). Otherwise the space is ours and W is absent.
// Stored beside the vectors as <name>-space.json (+ <name>-space.f32 holding W, row-major).
import fs from 'node:fs';
import path from 'node:path';
import { Matrix, solve } from 'ml-matrix';
import { writeFileAtomic } from '../infra/durable-fs.ts';

interface VectorSpaceInfo {
  /** 'computed': our own vectors; 'precomputed': the input's, with our vectors mapped in. */
  source: 'computed' | 'precomputed';
  /** Dimension of the vectors in this space. */
  dim: number;
  /** Dimension of our own vectors (the map's input). */
  ownDim: number;
  precomputedRows: number;
  mappedRows: number;
  lambda: number | null;
  /** Share of the variance of the precomputed vectors the map explains on its fitting rows (R^2). */
  mapR2: number | null;
}

export interface VectorSpace extends VectorSpaceInfo {
  /** ownDim x dim, row-major; null for 'computed'. */
  map: Float32Array | null;
}

export const RIDGE_LAMBDA = 1e-2;

/** Scale to unit length in place (a zero vector stays zero). */
export function normalise(v: Float32Array): Float32Array {
  let n = 0;
  for (let i = 0; i < v.length; i++) n += v[i]! * v[i]!;
  n = Math.sqrt(n);
  if (n > 0) for (let i = 0; i < v.length; i++) v[i]! /= n;
  return v;
}

/** Our vector in the space: itself, or its image under the map, unit length (zeros stay zeros). */
export function toSpace(space: VectorSpace | null, own: Float32Array): Float32Array {
  if (!space?.map) return own;
  const out = new Float32Array(space.dim);
  for (let i = 0; i < space.ownDim; i++) {
    const x = own[i]!;
    if (x === 0) continue;
    const o = i * space.dim;
    for (let j = 0; j < space.dim; j++) out[j]! += x * space.map[o + j]!;
  }
  return normalise(out);
}

/** Accumulates X^T X and X^T Y over pairs, then solves the ridge system. */
export class RidgeFit {
  private readonly xtx: Float64Array;
  private readonly xty: Float64Array;
  private yy = 0;
  pairs = 0;
  constructor(
    readonly ownDim: number,
    readonly dim: number,
  ) {
    this.xtx = new Float64Array(ownDim * ownDim);
    this.xty = new Float64Array(ownDim * dim);
  }

  add(x: Float32Array, y: Float32Array): void {
    const { ownDim: p, dim: q } = this;
    for (let i = 0; i < p; i++) {
      const xi = x[i]!;
      if (xi === 0) continue;
      for (let j = 0; j < p; j++) this.xtx[i * p + j]! += xi * x[j]!;
      for (let j = 0; j < q; j++) this.xty[i * q + j]! += xi * y[j]!;
    }
    for (let j = 0; j < q; j++) this.yy += y[j]! * y[j]!;
    this.pairs++;
  }

  solve(lambda = RIDGE_LAMBDA): { map: Float32Array; r2: number } {
    const { ownDim: p, dim: q } = this;
    const a = new Matrix(p, p);
    for (let i = 0; i < p; i++)
      for (let j = 0; j < p; j++) a.set(i, j, this.xtx[i * p + j]! + (i === j ? (lambda * Math.max(1, this.pairs)) / p : 0));
    const b = new Matrix(p, q);
    for (let i = 0; i < p; i++) for (let j = 0; j < q; j++) b.set(i, j, this.xty[i * q + j]!);
    const w = solve(a, b);
    const map = new Float32Array(p * q);
    // Residual sum of squares from the normal equations: ||Y||^2 - 2 tr(W^T X^T Y) + tr(W^T X^T X W).
    let cross = 0;
    let quad = 0;
    for (let i = 0; i < p; i++) {
      for (let j = 0; j < q; j++) {
        const wij = w.get(i, j);
        map[i * q + j] = wij;
        cross += wij * this.xty[i * q + j]!;
      }
    }
    for (let j = 0; j < q; j++) {
      for (let i = 0; i < p; i++) {
        let s = 0;
        for (let k = 0; k < p; k++) s += this.xtx[i * p + k]! * w.get(k, j);
        quad += w.get(i, j) * s;
      }
    }
    // Y rows are unit vectors, but their mean is not removed: R^2 against the uncentred total.
    const r2 = this.yy > 0 ? 1 - (this.yy - 2 * cross + quad) / this.yy : 0;
    return { map, r2 };
  }
}

export async function saveVectorSpace(dir: string, name: string, space: VectorSpace): Promise<void> {
  const { map, ...info } = space;
  await fs.promises.rm(path.join(dir, `${name}-space.f32`), { force: true });
  if (map) await writeFileAtomic(path.join(dir, `${name}-space.f32`), new Uint8Array(map.buffer, map.byteOffset, map.byteLength));
  await writeFileAtomic(path.join(dir, `${name}-space.json`), JSON.stringify(info));
}

export function loadVectorSpace(dir: string, name: string): VectorSpace {
  const info = JSON.parse(fs.readFileSync(path.join(dir, `${name}-space.json`), 'utf8')) as VectorSpaceInfo;
  // A precomputed space without a map (lambda null): no row needed placing and nothing maps in.
  if (info.source !== 'precomputed' || info.lambda === null) return { ...info, map: null };
  const raw = fs.readFileSync(path.join(dir, `${name}-space.f32`));
  const map = new Float32Array(raw.buffer.slice(raw.byteOffset, raw.byteOffset + raw.byteLength));
  if (map.length !== info.ownDim * info.dim)
    throw new Error(`${name}-space.f32 holds ${map.length} floats, expected ${info.ownDim * info.dim}`);
  return { ...info, map };
}

/** 1 for each of `rows` rows whose vector of `dim` is not all zeros, else 0. */
export function nonZeroMask(vectors: Float32Array, dim: number, rows: number): Uint8Array {
  const mask = new Uint8Array(rows);
  for (let r = 0; r < rows; r++) if (hasNonZero(vectors, dim, r)) mask[r] = 1;
  return mask;
}

/** Whether row `row` of `vectors` (rows of `dim`) has a vector at all (all zeros: none). */
function hasNonZero(vectors: Float32Array, dim: number, row: number): boolean {
  for (let i = row * dim, e = i + dim; i < e; i++) if (vectors[i] !== 0) return true;
  return false;
}
