// The visual half of the features stage: every computed row with local media gets a visual vector
// (VISUAL_DIM, before any precomputed space is applied) and its nameable elements (the columns of
// visual-elements.parquet), computed by the worker pool in pipeline/features/visual.ts.
import path from 'node:path';
import { snapshotChunks } from '../segments/snapshot-rows.ts';
import type { StageContext } from '../context/stage-context.ts';
import { StageAborted } from '../context/stage-context.ts';
import { computeVisualFeatures, VISUAL_DIM, type VisualItem } from './visual.ts';

interface MediaRow {
  row_id: number;
  content_type: string;
  media: Array<{ kind: string; path: string | null; url: string | null; frames: string[] | null }>;
  [k: string]: unknown;
}

/** What the pool is asked for: an image's file, a video's frames (or its poster), a carousel's images. */
function visualItem(row: MediaRow, root: string): VisualItem | null {
  const local = (p: string | null) => (p ? path.join(root, p) : null);
  const video = row.media.find((m) => m.kind === 'video');
  const paths = video
    ? (video.frames?.length ? video.frames : [video.path]).map(local)
    : row.media.filter((m) => m.kind === 'image').map((m) => local(m.path));
  const files = paths.filter((p): p is string => p !== null);
  if (files.length === 0) return null;
  return { key: String(row.row_id), kind: video ? 'video' : files.length > 1 ? 'carousel' : 'image', paths: files };
}

interface VisualElementsRow {
  ci: number;
  dominant_colors: string[];
  aesthetic_style: string[];
  layout: string | null;
  motion: string | null;
  visual_error: string | null;
}

export const VISUAL_ELEMENT_COLUMNS = {
  dominant_colors: 'VARCHAR[]',
  aesthetic_style: 'VARCHAR[]',
  layout: 'VARCHAR',
  motion: 'VARCHAR',
  visual_error: 'VARCHAR',
} as const;

export interface ComputedVisual {
  /** rows x VISUAL_DIM, by ci (zeros: no media, or unreadable). */
  vectors: Float32Array;
  /** The rows with media, by ci. */
  elements: VisualElementsRow[];
  /** aestheticStyle of the rows whose media was read, by ci. */
  styles: Map<number, string[]>;
  withMedia: number;
  failed: number;
  ms: number;
}

/** The visual features of the `rows` computed rows of `snap` (by ci). */
export async function computeVisualRows(ctx: StageContext, rows: number): Promise<ComputedVisual> {
  const db = await ctx.db();
  const t0 = performance.now();
  const out: ComputedVisual = {
    vectors: new Float32Array(rows * VISUAL_DIM),
    elements: [],
    styles: new Map(),
    withMedia: 0,
    failed: 0,
    ms: 0,
  };
  const bar = ctx.progress('visual', rows);
  let seen = 0;
  // Chunks bound memory and let a SIGTERM stop between them.
  for await (const chunk of snapshotChunks<MediaRow>(db, 'ci AS row_id, content_type, media', rows, 20_000, 'ci')) {
    if (ctx.signal.aborted) throw new StageAborted('features');
    const items = chunk.map((r) => visualItem(r, ctx.layout.root)).filter((x): x is VisualItem => x !== null);
    const results = items.length ? await computeVisualFeatures(items) : new Map();
    for (const item of items) {
      const r = results.get(item.key);
      const ci = Number(item.key);
      out.withMedia++;
      if (!r?.vector || !r.elements) {
        out.failed++;
        out.elements.push({
          ci,
          dominant_colors: [],
          aesthetic_style: [],
          layout: null,
          motion: null,
          visual_error: r?.error ?? 'no result',
        });
        continue;
      }
      out.vectors.set(r.vector, ci * VISUAL_DIM);
      out.styles.set(ci, r.elements.aestheticStyle);
      out.elements.push({
        ci,
        dominant_colors: r.elements.dominantColors,
        aesthetic_style: r.elements.aestheticStyle,
        layout: r.elements.layout,
        motion: r.elements.motion,
        visual_error: null,
      });
    }
    bar.update((seen += chunk.length));
  }
  bar.stop();
  out.ms = Math.round(performance.now() - t0);
  return out;
}
