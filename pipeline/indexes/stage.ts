// The index stage: each segment the features stage built gets its BM25 postings (core/ranking/bm25.ts, from
// its doc-terms) and its HNSW graphs (core/ranking/segment-graphs.ts): text (inner product on unit
// vectors = cosine) and visual (cosine), built side by side in worker threads, an appended
// segment's graphs extended from its base's instead of rebuilt. Then the window tails of the text
// graphs (window-tails.ts: built, extended or kept, reused segments' too), and the novelty and
// saturation of the rows this run computed (neighbour-scores.ts). Reused segments' files are not
// touched (a new tail of one is written beside them, in this run's artifacts).
//   segments/<id>/bm25.bin, text.hnsw, visual.hnsw, neighbour-scores.parquet, text-from-<row>.hnsw
//   artifacts/segment-plan.json   the segment plan handed on with each built segment's graph points
//   artifacts/source.json         which as-of and rows these artifacts describe (publish checks it)
import fs from 'node:fs/promises';
import path from 'node:path';
import os from 'node:os';
import { buildBm25, saveBm25 } from '../../core/ranking/bm25.ts';
import { writeFileAtomic } from '../../core/infra/durable-fs.ts';
import { failpoint } from '../../core/infra/failpoints.ts';
import { readManifest } from '../../core/snapshots/generations.ts';
import { GRAPHS, tailFile, type GraphName } from '../../core/ranking/segment-graphs.ts';
import { segmentDir, type SegmentTail } from '../../core/snapshots/segments.ts';
import { loadVectorSpace } from '../../core/vectors/vector-space.ts';
import { TaskPool } from '../../core/infra/workers/task-pool.ts';
import { readTermLists } from '../../core/text/term-lists.ts';
import { readPlan, SEGMENT_PLAN } from '../segments/plan-output.ts';
import { plannedSegmentDir, servedSegmentDir, type PlannedSegment, type SegmentPlan } from '../segments/segment-plan.ts';
import { writeSegmentTable } from '../segments/segment-tables.ts';
import { requireArtifactSource } from '../segments/snapshot-rows.ts';
import type { Stage, StageContext } from '../context/stage-context.ts';
import { StageAborted } from '../context/stage-context.ts';
import type { BuildResult, HnswResult, HnswTask, NeighbourQuery } from './hnsw-task.ts';
import { NEIGHBOUR_COLUMNS, neighbourQueries, searchOtherSegments, writeNeighbourScores } from './neighbour-scores.ts';
import { planTails, startsIn, windowStartRows } from './window-tails.ts';

function buildGraph(
  ctx: StageContext,
  pool: TaskPool<HnswTask, HnswResult>,
  plan: SegmentPlan,
  seg: PlannedSegment,
  name: GraphName,
  dim: number,
  search: NeighbourQuery | null,
): Promise<BuildResult> {
  const dir = segmentDir(ctx.layout.artifacts, seg.id);
  return pool
    .run({
      kind: 'build',
      name,
      vectorsFile: path.join(dir, `${name}-vectors.f32`),
      dim,
      rows: seg.rows,
      base: seg.base ? { file: path.join(servedSegmentDir(plan, seg.base), GRAPHS[name].file), rows: seg.baseRows } : null,
      out: path.join(dir, GRAPHS[name].file),
      firstRow: seg.firstRow,
      search,
    })
    .then((r) => r as BuildResult);
}

/** Every segment's window tails built, extended or kept (window-tails.ts); sets each one's textTails. */
async function buildTails(
  ctx: StageContext,
  pool: TaskPool<HnswTask, HnswResult>,
  plan: SegmentPlan,
  dim: number,
): Promise<{ built: number; kept: number; points: number }> {
  const starts = await windowStartRows(ctx, plan.rows);
  const served = plan.previous ? ((await readManifest(ctx.layout, plan.previous.generation)).segments ?? []) : [];
  let built = 0;
  let kept = 0;
  const work = plan.segments.map(async (seg) => {
    const have: readonly SegmentTail[] =
      seg.action === 'reuse' ? (seg.textTails ?? []) : seg.base ? (served.find((s) => s.id === seg.base)?.textTails ?? []) : [];
    const out = segmentDir(ctx.layout.artifacts, seg.id);
    const tails = planTails(seg, startsIn(seg, starts), have, ctx.config.WINDOW_TAIL_MIN_ROWS);
    seg.textTails = await Promise.all(
      tails.map(async (w): Promise<SegmentTail> => {
        if (w.action === 'keep') return (kept++, { from: w.from, points: w.points });
        built++;
        await fs.mkdir(out, { recursive: true });
        const r = (await pool.run({
          kind: 'build',
          name: 'text',
          vectorsFile: path.join(plannedSegmentDir(ctx, plan, seg), 'text-vectors.f32'),
          dim,
          rows: seg.rows,
          base: w.action === 'extend' ? { file: path.join(servedSegmentDir(plan, seg.base!), tailFile(w.from)), rows: seg.baseRows } : null,
          from: w.from,
          out: path.join(out, tailFile(w.from)),
          firstRow: seg.firstRow,
          search: null,
        })) as BuildResult;
        return { from: w.from, points: r.points };
      }),
    );
  });
  await Promise.all(work);
  return { built, kept, points: plan.segments.reduce((a, s) => a + (s.textTails ?? []).reduce((b, t) => b + t.points, 0), 0) };
}

/** Each built segment's vector files hold the rows the plan gives it (the features stage wrote them). */
async function checkVectorFiles(artifacts: string, built: PlannedSegment[], dims: Record<GraphName, number>): Promise<void> {
  for (const seg of built) {
    for (const name of ['text', 'visual'] as const) {
      const bytes = (await fs.stat(path.join(segmentDir(artifacts, seg.id), `${name}-vectors.f32`))).size;
      if (bytes !== seg.rows * dims[name] * 4)
        throw new Error(`segment ${seg.id}: ${name}-vectors.f32 holds ${bytes / 4 / dims[name]} rows, the plan ${seg.rows}`);
    }
  }
}

/** Each built segment's BM25 postings (bm25.bin) from its doc terms; the terms and postings counted. */
async function buildPostings(ctx: StageContext, built: PlannedSegment[]): Promise<{ terms: number; postings: number }> {
  let terms = 0;
  let postings = 0;
  for (const seg of built) {
    ctx.signal.throwIfAborted();
    const dir = segmentDir(ctx.layout.artifacts, seg.id);
    const dt = await readTermLists(path.join(dir, 'doc-terms.bin'));
    const bm25 = buildBm25(dt.vocab, dt.offsets, dt.ids);
    await saveBm25(bm25, path.join(dir, 'bm25.bin'));
    terms += dt.vocab.length;
    postings += bm25.docs.length;
  }
  return { terms, postings };
}

/** The index stage's summary. */
type IndexSummary = {
  rows: number;
  /** Each built segment as id[+base]:rows:textPoints/visualPoints. */
  built: string;
  reused: number;
  terms: number;
  postings: number;
  bm25Ms: number;
  hnswMs: number;
  tails: string;
  tailMs: number;
  noveltyScored: number;
  neighbourMs: number;
};

async function runIndex(ctx: StageContext): Promise<IndexSummary> {
  const { artifacts, work } = ctx.layout;
  const source = await requireArtifactSource(
    ctx,
    path.join(work, 'intermediate', 'features-source.json'),
    'no features to index: run the features stage first',
    (s, at) => `features were computed for as-of ${s.asOf} (ingest version ${s.ingestVersion}); run the features stage for ${at} first`,
  );
  const plan = await readPlan(ctx);
  // Dimensions from the vector spaces: ours, or the input's precomputed embeddings (vector-space.ts).
  const dims: Record<GraphName, number> = {
    text: loadVectorSpace(artifacts, 'text').dim,
    visual: loadVectorSpace(artifacts, 'visual').dim,
  };
  const built = plan.segments.filter((s) => s.action === 'build');
  await checkVectorFiles(artifacts, built, dims);

  // The graphs build in worker threads (every text graph first: the longest work starts first) while this thread builds BM25.
  const threads = ctx.config.PIPELINE_THREADS ?? os.availableParallelism();
  const pool = new TaskPool<HnswTask, HnswResult>(new URL('./hnsw-worker.ts', import.meta.url), {
    threads: Math.max(1, Math.min(threads, built.length * 2)),
  });
  try {
    const t0 = performance.now();
    // The text graphs first (the longest work starts first); each also searches its new rows' neighbours in itself.
    const queries = await neighbourQueries(ctx, plan);
    const graphs = (['text', 'visual'] as const).map((name) =>
      built.map((seg) => buildGraph(ctx, pool, plan, seg, name, dims[name], name === 'text' ? queries.get(seg.id)!.query : null)),
    );
    for (const g of graphs.flat()) g.catch(() => undefined);
    const builtPoints = new Map(built.map((seg, i) => [seg.id, graphs[0]![i]!.then((r) => r.points)]));
    // The searches in other segments' graphs: at once for graphs this run reuses (an incremental run's), so they overlap the build.
    const others = built.map((seg) => searchOtherSegments(ctx, pool, plan, seg, queries.get(seg.id)!, dims.text, builtPoints));
    for (const o of others) o.catch(() => undefined);

    const tb = performance.now();
    const { terms, postings } = await buildPostings(ctx, built);
    const bm25Ms = performance.now() - tb;

    const [text, visual] = await Promise.all(graphs.map((g) => Promise.all(g)));
    const hnswMs = performance.now() - t0;
    if (ctx.signal.aborted) throw new StageAborted('index');
    built.forEach((seg, i) => {
      seg.textPoints = text![i]!.points;
      seg.visualPoints = visual![i]!.points;
    });
    const tt = performance.now();
    const tails = await buildTails(ctx, pool, plan, dims.text);
    const tailMs = performance.now() - tt;
    if (ctx.signal.aborted) throw new StageAborted('index');
    await ctx.outputs.put(SEGMENT_PLAN, plan);
    await failpoint('index.after-graphs', ctx.signal);

    const found = await Promise.all(others);
    const neighbourMs = performance.now() - t0;
    if (ctx.signal.aborted) throw new StageAborted('index');
    // Fewer than two points in all: nothing to compare, no row scored.
    const comparable = plan.segments.reduce((a, s) => a + s.textPoints, 0) >= 2;
    const computed = path.join(work, 'intermediate', 'computed-neighbour-scores.parquet');
    const scored = await writeNeighbourScores(
      ctx,
      plan,
      built.map((seg, i) => ({ q: queries.get(seg.id)!, own: comparable ? text![i]!.lists : null, others: found[i]! })),
      computed,
    );
    for (const seg of built) await writeSegmentTable(ctx, plan, seg, { name: 'neighbour-scores', columns: NEIGHBOUR_COLUMNS, computed });
    await writeFileAtomic(path.join(artifacts, 'source.json'), JSON.stringify(source));
    return {
      rows: plan.rows,
      built: built.map((s) => `${s.id}${s.base ? `+${s.base}` : ''}:${s.rows}:${s.textPoints}/${s.visualPoints}`).join(' '),
      reused: plan.segments.length - built.length,
      terms,
      postings,
      bm25Ms: Math.round(bm25Ms),
      hnswMs: Math.round(hnswMs),
      tails: `${tails.built} built, ${tails.kept} kept, ${tails.points} points`,
      tailMs: Math.round(tailMs),
      noveltyScored: scored,
      // From the stage's start: the searches overlap the builds.
      neighbourMs: Math.round(neighbourMs),
    };
  } finally {
    await pool.close();
  }
}

export const indexStage: Stage<'index', IndexSummary> = {
  name: 'index',
  description:
    "build each new segment's BM25 postings and HNSW text and visual graphs (an appended head's extended), then the new posts' neighbour scores",
  run: runIndex,
};
