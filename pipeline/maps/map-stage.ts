// The skeleton the map stages (narratives, patterns) share: per window (or scope) of the
// snapshot, the served generation's map; an incremental run merges the new posts into it, a full
// run (or a window with nothing served) clusters anew; the clusters are built, tracked across
// generations (keys carried over or made new) and written with their trajectory. Each stage
// supplies its own steps (MapStage): its corpus, how it clusters and describes a window, and the
// tables it writes.
import { createHash } from 'node:crypto';
import path from 'node:path';
import { writeFileAtomic } from '../../core/infra/durable-fs.ts';
import { WINDOW_KEYS, windowBounds } from '../../core/snapshots/windows.ts';
import type { MergedRange } from '../../core/clustering/merge-models.ts';
import { matchClusters, newMapKey, type Match, type MatchThresholds } from '../../core/clustering/tracking.ts';
import { rowWindows, uuidsOf, type PostColumns, type RowWindow } from './post-columns.ts';
import {
  continued,
  currentSpace,
  loadPreviousMap,
  writeTrajectory,
  type MapFiles,
  type PreviousEntry,
  type PreviousMap,
} from './previous-map.ts';
import { readPlan } from '../segments/plan-output.ts';
import type { SegmentPlan } from '../segments/segment-plan.ts';
import { requireArtifactSource, snapshotWhere, type ArtifactSource } from '../segments/snapshot-rows.ts';
import type { StageContext, StageSummary } from '../context/stage-context.ts';
import { StageAborted } from '../context/stage-context.ts';

/** What the skeleton reads of a stage's corpus: the posts' columns, the vectors it clusters. */
interface MapCorpus extends PostColumns {
  vectors: Float32Array;
  dim: number;
  hasVector: Uint8Array;
}

/** What the skeleton reads of a built cluster. */
interface MapCluster {
  centroid: Float32Array;
  /** Member rows, most central first. */
  members: number[];
  label: string;
}

/** One window's clusters as a stage built them, with the clustering's figures. */
export interface BuiltWindow<B> {
  clusters: B[];
  k: number;
  silhouette: number;
  rows: number;
  noise: number;
  warmStart: boolean;
}

/** A window after tracking: its clusters, the served entries they continue, and their keys. */
export interface TrackedWindow<B> {
  spec: RowWindow;
  built: BuiltWindow<B>;
  /** The served generation's entries of this window (in this run's rows). */
  previous: PreviousEntry[];
  /** The window's clusters when merged into the served ones (an incremental run), else null. */
  merged: MergedRange | null;
  /** Per cluster, the served entry it continues (an index into `previous`), or null. */
  matches: Array<Match | null>;
  /** Per cluster, its key: the continued entry's, or a new one. */
  keys: string[];
}

/** One run of a map stage, as its steps see it. */
export interface MapRun<C> {
  ctx: StageContext;
  plan: SegmentPlan;
  corpus: C;
  source: ArtifactSource;
  /** ctx.asOf as ISO text. */
  asOfIso: string;
  /** When this run computed the map (every row of its tables says so). */
  computedAt: string;
  /** Eight hex characters naming this run in new keys and ids. */
  runTag: string;
  previous: PreviousMap | null;
  /** The uuids of the rows named so far (every window's first members, and what the stage named). */
  named: Map<number, string>;
  /** Reads the uuids of some rows into `named`. */
  name(rows: Iterable<number>): Promise<void>;
}

/** Milliseconds the skeleton measured, for a stage's summary. */
interface MapTimes {
  /** Loading the corpus. */
  loadMs: number;
  /** Loading the served map and opening the stage's steps. */
  previousMs: number;
  /** Merging the new posts into the served windows (an incremental run). */
  mergeMs: number;
  /** From the last window built to the end. */
  writeMs: number;
  ms: number;
}

/** What a stage's write step leaves to the skeleton. */
export interface MapWritten<S extends StageSummary = StageSummary> {
  /** This run's trajectory rows (without generation and row_id). */
  trajectory: Array<Record<string, unknown>>;
  /** The stage's summary, given the times and each window's figures. */
  summary(times: MapTimes, windows: Record<string, unknown>): S;
}

/** A stage's steps for one run, opened once the served map is loaded. */
export interface MapSteps<B extends MapCluster, S extends StageSummary = StageSummary> {
  /** One window's clusters: `merged` when the skeleton merged them, else clustered anew near `prior` (the served centroids). */
  build(spec: RowWindow, prior: Float32Array[], merged: MergedRange | null): Promise<BuiltWindow<B>>;
  /** The stage's own work on a tracked window; returns what the window's summary adds. */
  window?(w: TrackedWindow<B>): Promise<Record<string, unknown>>;
  /** Writes the stage's tables from every tracked window. */
  write(windows: Array<TrackedWindow<B>>): Promise<MapWritten<S>>;
}

/** A map stage's own parts. */
export interface MapStage<C extends MapCorpus, B extends MapCluster, S extends StageSummary = StageSummary> {
  /** Also what its per-window summary calls its clusters. */
  name: 'narratives' | 'patterns';
  files: MapFiles;
  trajectoryColumns: Record<string, string>;
  keyPrefix: 'nk' | 'pk';
  /** What the run tag's hash starts with (each stage's own: the keys it makes stay what they were). */
  tagSeed: string;
  /** When a cluster continues a served one (tracking.ts's defaults without). */
  match?: MatchThresholds;
  /** The error without the features' artifacts, and with artifacts of another as-of or ingest. */
  missing: string;
  stale(s: ArtifactSource, asOfIso: string): string;
  loadCorpus(ctx: StageContext, plan: SegmentPlan): Promise<C>;
  /** An incremental run's clusters of the given windows, the new posts merged into the served ones. */
  merge(corpus: C, windows: Array<{ firstRow: number; previous: PreviousEntry[] }>): MergedRange[];
  open(run: MapRun<C>): Promise<MapSteps<B, S>>;
}

/** Runs a map stage: the skeleton above, with the stage's steps. */
export async function runMapStage<C extends MapCorpus, B extends MapCluster, S extends StageSummary>(
  ctx: StageContext,
  stage: MapStage<C, B, S>,
): Promise<S> {
  const t0 = performance.now();
  const source = await requireArtifactSource(ctx, path.join(ctx.layout.artifacts, 'source.json'), stage.missing, stage.stale);
  const plan = await readPlan(ctx);
  const corpus = await stage.loadCorpus(ctx, plan);
  const loadMs = performance.now() - t0;
  const run = await openRun(ctx, stage, plan, corpus, source);
  const steps = await stage.open(run);
  const previousMs = performance.now() - t0 - loadMs;

  const specs = rowWindows(corpus, await snapshotBounds(ctx, run.asOfIso), WINDOW_KEYS);
  const tm = performance.now();
  const merged = mergeServed(run, stage, specs);
  const mergeMs = performance.now() - tm;
  const windows: Array<TrackedWindow<B>> = [];
  const figures: Record<string, unknown> = {};
  for (const spec of specs) {
    if (ctx.signal.aborted) throw new StageAborted(stage.name);
    const tw = performance.now();
    const w = await trackWindow(run, stage, steps, spec, merged.get(spec.key) ?? null);
    const own = (await steps.window?.(w)) ?? {};
    windows.push(w);
    figures[spec.key] = {
      ...windowFigures(stage.name, w),
      ...own,
      ...(w.merged ? { newPosts: w.merged.placed } : {}),
      ms: Math.round(performance.now() - tw),
    };
  }

  const tWrite = performance.now();
  const written = await steps.write(windows);
  await writeTrajectory(ctx, path.basename(stage.files.trajectory, '.parquet'), stage.trajectoryColumns, run.previous, written.trajectory);
  await writeFileAtomic(path.join(ctx.layout.artifacts, `${stage.name}-source.json`), JSON.stringify(source));
  const now = performance.now();
  const ms = (t: number) => Math.round(t);
  return written.summary(
    { loadMs: ms(loadMs), previousMs: ms(previousMs), mergeMs: ms(mergeMs), writeMs: ms(now - tWrite), ms: ms(now - t0) },
    figures,
  );
}

/** The run's names and the served map. */
async function openRun<C extends MapCorpus, B extends MapCluster>(
  ctx: StageContext,
  stage: MapStage<C, B>,
  plan: SegmentPlan,
  corpus: C,
  source: ArtifactSource,
): Promise<MapRun<C>> {
  const asOfIso = ctx.asOf.toISOString();
  const computedAt = new Date().toISOString();
  const runTag = createHash('sha256')
    .update(`${stage.tagSeed}${asOfIso}\n${source.ingestVersion}\n${computedAt}`)
    .digest('hex')
    .slice(0, 8);
  const previous = await loadPreviousMap(ctx, plan, currentSpace(corpus), stage.files);
  const named = new Map<number, string>();
  const name = async (rows: Iterable<number>) => {
    const wanted = [...rows].filter((r) => !named.has(r));
    if (wanted.length) for (const [r, u] of await uuidsOf(ctx, wanted)) named.set(r, u);
  };
  return { ctx, plan, corpus, source, asOfIso, computedAt, runTag, previous, named, name };
}

/** The windows' bounds: each ends at as-of; "all" starts at the snapshot's earliest post. */
async function snapshotBounds(ctx: StageContext, asOfIso: string) {
  const db = await ctx.db();
  const [e] = await db.all<{ earliest: number | null }>(
    `SELECT epoch_ms(min(published_at))::DOUBLE AS earliest FROM posts WHERE ${snapshotWhere(asOfIso)}`,
  );
  return windowBounds(ctx.asOf, e?.earliest != null ? new Date(Number(e.earliest)) : null);
}

/**
 * An incremental run places the new posts into the served clusters (merge-models.ts), every
 * window's at once; a full run (or a window without served clusters) clusters anew: no entry.
 */
function mergeServed<C extends MapCorpus, B extends MapCluster>(
  run: MapRun<C>,
  stage: MapStage<C, B>,
  specs: RowWindow[],
): Map<string, MergedRange> {
  const served = (key: string) => run.previous?.byGroup.get(key) ?? [];
  const mergeable = run.plan.mode === 'incremental' ? specs.filter((spec) => served(spec.key).length > 0) : [];
  if (mergeable.length === 0) return new Map();
  const ranges = stage.merge(
    run.corpus,
    mergeable.map((spec) => ({ firstRow: spec.firstRow, previous: served(spec.key) })),
  );
  return new Map(mergeable.map((spec, i) => [spec.key, ranges[i]!]));
}

/** One window built and tracked: each cluster continues a served entry (its key kept) or gets a new key. */
async function trackWindow<C extends MapCorpus, B extends MapCluster>(
  run: MapRun<C>,
  stage: MapStage<C, B>,
  steps: MapSteps<B>,
  spec: RowWindow,
  merged: MergedRange | null,
): Promise<TrackedWindow<B>> {
  const previous = run.previous?.byGroup.get(spec.key) ?? [];
  const built = await steps.build(
    spec,
    previous.map((p) => p.centroid),
    merged,
  );
  const sides = built.clusters.map((c) => ({ centroid: c.centroid, members: c.members }));
  const matches = merged ? continued(sides, merged.origin, previous) : matchClusters(sides, previous, stage.match);
  await run.name(built.clusters.map((c) => c.members[0]!));
  const keys = built.clusters.map((c, i) => {
    const m = matches[i];
    return m ? previous[m.previous]!.key : newMapKey(stage.keyPrefix, spec.key, run.runTag, c.label, run.named.get(c.members[0]!)!);
  });
  return { spec, built, previous, merged, matches, keys };
}

/** The clustering's figures of a window, for the stage's summary. */
function windowFigures(noun: string, w: TrackedWindow<unknown>): Record<string, unknown> {
  const { built } = w;
  return {
    rows: built.rows,
    k: built.k,
    warmStart: built.warmStart,
    silhouette: Number(built.silhouette.toFixed(3)),
    [noun]: built.clusters.length,
    noise: built.noise,
    continued: w.matches.filter(Boolean).length,
  };
}
