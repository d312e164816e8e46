// The index stage: BM25 postings from the features stage's doc-terms, and HNSW graphs (hnswlib-node)
// over the text vectors (inner product on unit vectors = cosine) and the visual vectors (cosine),
// split into time shards built side by side in worker threads (core/ranking/hnsw-shards.ts).
//   artifacts/bm25.bin                      postings, term frequencies, document lengths
//   artifacts/text-hnsw.json, text.<i>.hnsw     text graphs; labels = rows; rows without text left out
//   artifacts/visual-hnsw.json, visual.<i>.hnsw visual graphs; rows without a visual vector left out
//   artifacts/neighbour-scores.parquet      novelty and saturation from each row's text neighbours
//   artifacts/source.json                   which as-of and rows these artifacts describe (publish checks it)
import fs from 'node:fs/promises';
import path from 'node:path';
import os from 'node:os';
import { buildBm25, saveBm25 } from '../../core/bm25.ts';
import { sqlString } from '../../core/duckdb.ts';
import { writeFileAtomic } from '../../core/durable-fs.ts';
import { loadVectorSpace } from '../../core/vector-space.ts';
import {
  HNSW_PARAMS,
  planShards,
  shardPoints,
  shardSetFile,
  VISUAL_HNSW_PARAMS,
  type HnswParams,
  type HnswSpace,
  type ShardSet,
} from '../../core/ranking/hnsw-shards.ts';
import { WINDOW_KEYS, windowBounds } from '../../core/windows.ts';
import { readDocTerms } from '../doc-terms.ts';
import { requireArtifactSource, snapshotWhere } from '../snapshot-rows.ts';
import type { Stage, StageContext, StageSummary } from '../stage-context.ts';
import { StageAborted } from '../stage-context.ts';
import { TaskPool } from '../../core/workers/task-pool.ts';
import type { BuildResult, HnswResult, HnswTask } from './hnsw-task.ts';
import { computeNeighbourScores } from './neighbour-scores.ts';

/** Row where each window starts (rows are in published_at order): shard boundaries snap to these. */
async function windowStartRows(ctx: StageContext, asOf: string): Promise<number[]> {
  const db = await ctx.db();
  const bounds = windowBounds(ctx.asOf, null);
  const cols = WINDOW_KEYS.filter((w) => w !== 'all').map(
    (w) => `count(*) FILTER (WHERE published_at < ${sqlString(bounds[w].start)}::TIMESTAMPTZ)::BIGINT AS "${w}"`,
  );
  const [r] = await db.all<Record<string, number>>(`SELECT ${cols.join(', ')} FROM posts WHERE ${snapshotWhere(asOf)}`);
  return Object.values(r ?? {}).map(Number);
}

interface Graph {
  name: string;
  space: HnswSpace;
  dim: number;
  vectorsFile: string;
  params: HnswParams;
}

function buildGraph(pool: TaskPool<HnswTask, HnswResult>, artifacts: string, g: Graph, ranges: Array<[number, number]>): Promise<ShardSet> {
  const parts = ranges.map(([firstRow, endRow], i) => {
    const file = `${g.name}.${i}.hnsw`;
    return pool
      .run({
        kind: 'build',
        vectorsFile: g.vectorsFile,
        dim: g.dim,
        firstRow,
        endRow,
        space: g.space,
        params: g.params,
        out: path.join(artifacts, file),
      })
      .then((r) => ({ file, firstRow, endRow, points: (r as BuildResult).points }));
  });
  return Promise.all(parts).then(async (shards) => {
    const set: ShardSet = { space: g.space, dim: g.dim, params: g.params, shards };
    await writeFileAtomic(shardSetFile(artifacts, g.name), JSON.stringify(set));
    return set;
  });
}

export async function runIndex(ctx: StageContext): Promise<StageSummary> {
  const { artifacts, work } = ctx.layout;
  const intermediate = path.join(work, 'intermediate');
  const asOf = ctx.asOf.toISOString();
  const source = await requireArtifactSource(
    ctx,
    path.join(intermediate, 'features-source.json'),
    'no features to index: run the features stage first',
    (s, at) => `features were computed for as-of ${s.asOf} (ingest version ${s.ingestVersion}); run the features stage for ${at} first`,
  );
  const rows = source.rows;
  // Dimensions from the vector spaces: ours, or the input's precomputed embeddings (vector-space.ts).
  const text: Graph = {
    name: 'text',
    space: 'ip',
    dim: loadVectorSpace(artifacts, 'text').dim,
    vectorsFile: path.join(artifacts, 'text-vectors.f32'),
    params: HNSW_PARAMS,
  };
  const visual: Graph = {
    name: 'visual',
    space: 'cosine',
    dim: loadVectorSpace(artifacts, 'visual').dim,
    vectorsFile: path.join(artifacts, 'visual-vectors.f32'),
    params: VISUAL_HNSW_PARAMS,
  };
  for (const g of [text, visual]) {
    const bytes = (await fs.stat(g.vectorsFile)).size;
    if (bytes !== rows * g.dim * 4)
      throw new Error(`${path.basename(g.vectorsFile)} holds ${bytes / 4 / g.dim} rows, features said ${rows}`);
  }
  for (const f of await fs.readdir(artifacts))
    if (/^(text|visual)(\.\d+\.hnsw|-hnsw\.json)$|^text\.hnsw$/.test(f)) await fs.rm(path.join(artifacts, f));

  // The graphs build in worker threads while this thread builds BM25.
  const threads = ctx.config.PIPELINE_THREADS ?? os.availableParallelism();
  const ranges = planShards(rows, await windowStartRows(ctx, asOf), ctx.config.HNSW_MIN_SHARD_ROWS);
  const pool = new TaskPool<HnswTask, HnswResult>(new URL('./hnsw-worker.ts', import.meta.url), {
    threads: Math.min(threads, Math.max(2, ranges.length)),
  });
  try {
    const t0 = performance.now();
    const textSet = buildGraph(pool, artifacts, text, ranges);
    // The visual graph in the same shards, queued behind the text shards: both threads stay busy.
    const visualSet = buildGraph(pool, artifacts, visual, ranges);
    textSet.catch(() => undefined);
    visualSet.catch(() => undefined);

    const tb = performance.now();
    const dt = await readDocTerms(path.join(intermediate, 'doc-terms.bin'));
    const bm25 = buildBm25(dt.vocab, dt.offsets, dt.ids);
    await saveBm25(bm25, path.join(artifacts, 'bm25.bin'));
    const bm25Ms = performance.now() - tb;

    const [ts, vs] = await Promise.all([textSet, visualSet]);
    const hnswMs = performance.now() - t0;
    if (ctx.signal.aborted) throw new StageAborted('index');
    const neighbours = await computeNeighbourScores(ctx, pool, {
      dir: artifacts,
      name: 'text',
      vectorsFile: text.vectorsFile,
      rows,
      points: shardPoints(ts),
    });
    await writeFileAtomic(path.join(artifacts, 'source.json'), JSON.stringify(source));
    return {
      rows,
      terms: dt.vocab.length,
      postings: bm25.docs.length,
      textShards: ts.shards.map((s) => `${s.firstRow}-${s.endRow}:${s.points}`).join(' '),
      hnswPoints: shardPoints(ts),
      visualPoints: shardPoints(vs),
      bm25Ms: Math.round(bm25Ms),
      hnswMs: Math.round(hnswMs),
      noveltyScored: neighbours.scored,
      neighbourMs: neighbours.ms,
    };
  } finally {
    await pool.close();
  }
}

export const indexStage: Stage = {
  name: 'index',
  description: 'build BM25 postings and the HNSW text and visual graphs (time shards, in parallel) over the features',
  run: runIndex,
};
