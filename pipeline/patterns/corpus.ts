// What the patterns stage reads about every row of the planned generation, in row order: the post
// columns (post-columns.ts), across its segments (planned-rows.ts) the visual vectors (in the
// visual space of the generation), and each row's nameable elements as "type:value" strings: the media's dominant
// colours, styles, layout and motion (visual-elements.parquet), the post's tags and its brands
// (enrichment.parquet). Elements name a pattern and tell what its posts share.
import { StringLists } from '../../core/infra/string-lists.ts';
import { loadVectorSpace } from '../../core/vectors/vector-space.ts';
import { plannedTable, readPlannedVectors } from '../segments/planned-rows.ts';
import { loadPostColumns, type PostColumns } from '../maps/post-columns.ts';
import type { SegmentPlan } from '../segments/segment-plan.ts';
import type { StageContext } from '../context/stage-context.ts';

export const ELEMENT_TYPES = ['color', 'style', 'layout', 'motion', 'tag', 'brand'] as const;
export type ElementType = (typeof ELEMENT_TYPES)[number];

export interface PatternCorpus extends PostColumns {
  vectors: Float32Array;
  dim: number;
  /** 1 where the row has a visual vector (media that could be read). */
  hasVector: Uint8Array;
  /** Per row with a visual vector, "type:value" strings, each at most once (none for the other rows). */
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

export async function loadPatternCorpus(ctx: StageContext, plan: SegmentPlan): Promise<PatternCorpus> {
  const posts = await loadPostColumns(ctx, plan);
  const { rows } = posts;
  const space = loadVectorSpace(ctx.layout.artifacts, 'visual');
  const { vectors, hasVector } = await readPlannedVectors(ctx, plan, 'visual', space.dim);
  // A masked row (a deleted post) is never a member.
  for (let r = 0; r < rows; r++) hasVector[r]! &= posts.live[r]!;

  const elements = new StringLists(rows);
  const db = await ctx.db();
  const enrichment = plannedTable(ctx, plan, 'enrichment');
  const visualElements = plannedTable(ctx, plan, 'visual-elements');
  for (let start = 0; start < rows; start += CHUNK) {
    // Only rows with a visual vector can be members, and only members' elements are read: a chunk of
    // text-only posts is not queried at all.
    if (!hasVector.subarray(start, start + CHUNK).includes(1)) continue;
    // enrichment.parquet has every row; visual-elements.parquet only rows with local media.
    const chunk = await db.all<ElementRow>(`SELECT e.row_id, v.dominant_colors, v.aesthetic_style, v.layout, v.motion, e.brand_products
      FROM ${enrichment} e LEFT JOIN ${visualElements} v USING (row_id)
      WHERE e.row_id >= ${start} AND e.row_id < ${start + CHUNK} ORDER BY e.row_id`);
    for (const r of chunk) {
      const row = Number(r.row_id);
      if (!hasVector[row]) continue;
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
