// What the patterns stage reads about every snapshot row, in row order: the post columns
// (post-columns.ts), the visual vectors (visual-vectors.f32, in the visual space of the
// generation), and each row's nameable elements as "type:value" strings: the media's dominant
// colours, styles, layout and motion (visual-elements.parquet), the post's tags and its brands
// (enrichment.parquet). Elements name a pattern and tell what its posts share.
import fs from 'node:fs/promises';
import path from 'node:path';
import { sqlString } from '../../core/duckdb.ts';
import { StringLists } from '../../core/string-lists.ts';
import { loadVectorSpace, nonZeroMask } from '../../core/vector-space.ts';
import { loadPostColumns, type PostColumns } from '../post-columns.ts';
import type { StageContext } from '../stage-context.ts';

export const ELEMENT_TYPES = ['color', 'style', 'layout', 'motion', 'tag', 'brand'] as const;
export type ElementType = (typeof ELEMENT_TYPES)[number];

export interface PatternCorpus extends PostColumns {
  vectors: Float32Array;
  dim: number;
  /** 1 where the row has a visual vector (media that could be read). */
  hasVector: Uint8Array;
  /** Per row, "type:value" strings, each at most once. */
  elements: StringLists;
}

interface ElementRow {
  row_id: number;
  dominant_colors: string[] | null;
  aesthetic_style: string[] | null;
  layout: string | null;
  motion: string | null;
  brand_products: string[] | null;
  [k: string]: unknown;
}

const CHUNK = 100_000;

export async function loadPatternCorpus(ctx: StageContext, expectedRows: number): Promise<PatternCorpus> {
  const posts = await loadPostColumns(ctx, expectedRows);
  const { rows } = posts;
  const { artifacts } = ctx.layout;
  const space = loadVectorSpace(artifacts, 'visual');
  const raw = await fs.readFile(path.join(artifacts, 'visual-vectors.f32'));
  const vectors = new Float32Array(raw.buffer, raw.byteOffset, raw.byteLength / 4);
  if (vectors.length !== rows * space.dim) throw new Error(`visual-vectors.f32 holds ${vectors.length / space.dim} rows, expected ${rows}`);
  const hasVector = nonZeroMask(vectors, space.dim, rows);

  const elements = new StringLists(rows);
  const db = await ctx.db();
  const file = (name: string) => sqlString(path.join(artifacts, `${name}.parquet`));
  for (let start = 0; start < rows; start += CHUNK) {
    // enrichment.parquet has every row; visual-elements.parquet only rows with local media.
    const chunk = await db.all<ElementRow>(`SELECT e.row_id, v.dominant_colors, v.aesthetic_style, v.layout, v.motion, e.brand_products
      FROM read_parquet(${file('enrichment')}) e LEFT JOIN read_parquet(${file('visual-elements')}) v USING (row_id)
      WHERE e.row_id >= ${start} AND e.row_id < ${start + CHUNK} ORDER BY e.row_id`);
    for (const r of chunk) {
      const row = Number(r.row_id);
      const list = new Set<string>();
      for (const c of r.dominant_colors ?? []) list.add(`color:${c}`);
      for (const s of r.aesthetic_style ?? []) list.add(`style:${s}`);
      if (r.layout) list.add(`layout:${r.layout}`);
      if (r.motion) list.add(`motion:${r.motion}`);
      for (const t of posts.tags[row] ?? []) list.add(`tag:${t}`);
      for (const b of r.brand_products ?? []) list.add(`brand:${b}`);
      elements.set(row, [...list]);
    }
  }
  elements.seal();
  return { ...posts, vectors, dim: space.dim, hasVector, elements };
}

/** Split "type:value". */
export function parseElement(e: string): { type: ElementType; value: string } {
  const i = e.indexOf(':');
  return { type: e.slice(0, i) as ElementType, value: e.slice(i + 1) };
}
