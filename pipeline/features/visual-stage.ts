// The visual half of the features stage: every snapshot row with local media gets a visual
// vector and its nameable elements, computed by the worker pool in pipeline/features/visual.ts.
//   artifacts/visual-vectors.f32       rows x dim float32 (zeros: no media, or unreadable); dim is VISUAL_DIM
//                                      unless precomputed visual embeddings were adopted (visual-space.json)
//   artifacts/visual-elements.parquet  row_id, dominant_colors, aesthetic_style, layout, motion, visual_error
import path from 'node:path';
import { writeFileAtomic } from '../../core/durable-fs.ts';
import { writeRowTable } from '../row-table.ts';
import { snapshotChunks } from '../snapshot-rows.ts';
import type { StageContext } from '../stage-context.ts';
import { StageAborted } from '../stage-context.ts';
import { computeVisualFeatures, VISUAL_DIM, type VisualItem } from './visual.ts';
import { adoptPrecomputed } from './precomputed.ts';
import { saveVectorSpace } from '../../core/vector-space.ts';

interface MediaRow {
  row_id: number;
  content_type: string;
  media: Array<{ kind: string; path: string | null; url: string | null; frames: string[] | null }>;
  [k: string]: unknown;
}

/** What the pool is asked for: an image's file, a video's frames (or its poster), a carousel's images. */
export function visualItem(row: MediaRow, root: string): VisualItem | null {
  const local = (p: string | null) => (p ? path.join(root, p) : null);
  const video = row.media.find((m) => m.kind === 'video');
  const paths = video
    ? (video.frames?.length ? video.frames : [video.path]).map(local)
    : row.media.filter((m) => m.kind === 'image').map((m) => local(m.path));
  const files = paths.filter((p): p is string => p !== null);
  if (files.length === 0) return null;
  return { key: String(row.row_id), kind: video ? 'video' : files.length > 1 ? 'carousel' : 'image', paths: files };
}

export async function computeVisualArtifacts(
  ctx: StageContext,
  rows: number,
): Promise<{ withMedia: number; failed: number; ms: number; space: string; styles: Map<number, string[]> }> {
  const db = await ctx.db();
  const t0 = performance.now();
  const vectors = new Float32Array(rows * VISUAL_DIM);
  const elements: Array<{
    row_id: number;
    dominant_colors: string[];
    aesthetic_style: string[];
    layout: string | null;
    motion: string | null;
    visual_error: string | null;
  }> = [];
  const styles = new Map<number, string[]>();
  let withMedia = 0;
  let failed = 0;
  const bar = ctx.progress('visual', rows);
  let seen = 0;
  // Chunks bound memory and let a SIGTERM stop between them.
  for await (const chunk of snapshotChunks<MediaRow>(db, 'row_id, content_type, media', rows, 20_000)) {
    if (ctx.signal.aborted) throw new StageAborted('features');
    const items = chunk.map((r) => visualItem(r, ctx.layout.root)).filter((x): x is VisualItem => x !== null);
    const results = items.length ? await computeVisualFeatures(items) : new Map();
    for (const item of items) {
      const r = results.get(item.key);
      const row = Number(item.key);
      withMedia++;
      if (!r?.vector || !r.elements) {
        failed++;
        elements.push({
          row_id: row,
          dominant_colors: [],
          aesthetic_style: [],
          layout: null,
          motion: null,
          visual_error: r?.error ?? 'no result',
        });
        continue;
      }
      vectors.set(r.vector, row * VISUAL_DIM);
      styles.set(row, r.elements.aestheticStyle);
      elements.push({
        row_id: row,
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
  // Precomputed visual embeddings, when most media rows carry one, become the visual space.
  const adopted = await adoptPrecomputed(ctx, 'visual_embedding', vectors, VISUAL_DIM, rows);
  await writeFileAtomic(path.join(ctx.layout.artifacts, 'visual-vectors.f32'), new Uint8Array(adopted.vectors.buffer));
  await saveVectorSpace(ctx.layout.artifacts, 'visual', adopted.space);
  await writeRowTable(
    ctx,
    'visual-elements',
    {
      row_id: 'BIGINT',
      dominant_colors: 'VARCHAR[]',
      aesthetic_style: 'VARCHAR[]',
      layout: 'VARCHAR',
      motion: 'VARCHAR',
      visual_error: 'VARCHAR',
    },
    elements,
  );
  return { withMedia, failed, ms: Math.round(performance.now() - t0), space: adopted.space.source, styles };
}
