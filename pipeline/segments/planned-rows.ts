// The planned generation's per-row data read across its segments (pipeline/segments/segment-plan.ts): each
// segment's files in its folder (this run's artifacts for a built one, the served generation's for a
// reused one), laid end to end in row order. What the map stages and the index stage read.
import fs from 'node:fs/promises';
import path from 'node:path';
import { sqlString } from '../../core/infra/duckdb.ts';
import { readTermLists, type TermLists } from '../../core/text/term-lists.ts';
import { plannedSegmentDir, type SegmentPlan } from './segment-plan.ts';
import type { StageContext } from '../context/stage-context.ts';
import { nonZeroMask } from '../../core/vectors/vector-space.ts';

/**
 * Every row's vector of one kind (text-vectors.f32 or visual-vectors.f32, rows x dim), and 1 for
 * each row that has one (all zeros: none). A segment whose graph holds no point of that kind (the
 * index stage counted them: a text-only corpus's visual vectors) has only zeros and is not read.
 */
export async function readPlannedVectors(
  ctx: StageContext,
  plan: SegmentPlan,
  kind: 'text' | 'visual',
  dim: number,
): Promise<{ vectors: Float32Array; hasVector: Uint8Array }> {
  const file = `${kind}-vectors.f32`;
  const vectors = new Float32Array(plan.rows * dim);
  const hasVector = new Uint8Array(plan.rows);
  for (const s of plan.segments) {
    if ((kind === 'text' ? s.textPoints : s.visualPoints) === 0) continue;
    const fh = await fs.open(path.join(plannedSegmentDir(ctx, plan, s), file));
    try {
      const bytes = (await fh.stat()).size;
      if (bytes !== s.rows * dim * 4)
        throw new Error(`segment ${s.id}: ${file} holds ${bytes / 4 / dim} rows of ${dim}, expected ${s.rows}`);
      // Read straight into place (no buffer per segment to copy from).
      const into = new Uint8Array(vectors.buffer, s.firstRow * dim * 4, bytes);
      for (let at = 0; at < bytes;) {
        const { bytesRead } = await fh.read(into, at, bytes - at, at);
        if (bytesRead === 0) throw new Error(`segment ${s.id}: ${file} ended early`);
        at += bytesRead;
      }
    } finally {
      await fh.close();
    }
    hasVector.set(nonZeroMask(vectors.subarray(s.firstRow * dim, (s.firstRow + s.rows) * dim), dim, s.rows), s.firstRow);
  }
  return { vectors, hasVector };
}

/** Every row's analysed terms, as ids into one vocabulary. */
export async function readPlannedDocTerms(ctx: StageContext, plan: SegmentPlan): Promise<TermLists> {
  const vocab: string[] = [];
  const index = new Map<string, number>();
  const parts: TermLists[] = [];
  let total = 0;
  for (const s of plan.segments) {
    const dt = await readTermLists(path.join(plannedSegmentDir(ctx, plan, s), 'doc-terms.bin'));
    if (dt.offsets.length - 1 !== s.rows)
      throw new Error(`segment ${s.id}: doc-terms.bin holds ${dt.offsets.length - 1} rows, expected ${s.rows}`);
    parts.push(dt);
    total += dt.ids.length;
  }
  const offsets = new Uint32Array(plan.rows + 1);
  const ids = new Uint32Array(total);
  let at = 0;
  let row = 0;
  for (const dt of parts) {
    const map = Uint32Array.from(dt.vocab, (w) => {
      let id = index.get(w);
      if (id === undefined) (index.set(w, (id = vocab.length)), vocab.push(w));
      return id;
    });
    for (let i = 0; i < dt.ids.length; i++) ids[at + i] = map[dt.ids[i]!]!;
    for (let r = 1; r < dt.offsets.length; r++) offsets[row + r] = at + dt.offsets[r]!;
    at += dt.ids.length;
    row += dt.offsets.length - 1;
  }
  return { vocab, offsets, ids };
}

/**
 * A FROM-able SQL expression of table `name` (segments/<id>/<name>.parquet) over every segment, row_id made global.
 * By name: a segment written before a column existed gives NULL for it.
 */
export function plannedTable(ctx: StageContext, plan: SegmentPlan, name: string): string {
  const parts = plan.segments.map((s) => {
    const file = sqlString(path.join(plannedSegmentDir(ctx, plan, s), `${name}.parquet`));
    return `SELECT row_id + ${s.firstRow} AS row_id, * EXCLUDE (row_id) FROM read_parquet(${file})`;
  });
  return `(${parts.join(' UNION ALL BY NAME ')})`;
}
