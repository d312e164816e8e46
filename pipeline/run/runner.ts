// Runs stages in order under the run lock, with one work-store connection, per-stage timings in
// the JSON log, and clean abandonment on an abort signal (SIGTERM): the running DuckDB query is
// interrupted, its transaction rolls back, and the previous generation stays served.
import type { Config } from '../../core/infra/config.ts';
import { dataDirLayout, type DataDirLayout } from '../../core/infra/data-dir.ts';
import type { DuckDB } from '../../core/infra/duckdb.ts';
import type { Logger } from '../../core/infra/log.ts';
import { readCurrent, readManifest } from '../../core/snapshots/generations.ts';
import { acquireLock, LockHeld, type Lock } from '../../core/infra/lock.ts';
import { writeLastRun, type LastRun } from '../../core/infra/pipeline-run.ts';
import { acquireAdvisoryLock } from '../../core/infra/postgres/advisory-lock.ts';
import { createProgress } from '../context/progress.ts';
import { StageAborted, type Stage, type StageContext } from '../context/stage-context.ts';
import { StageOutputs } from '../context/stage-output.ts';
import { STAGES, type PipelineStage, type StageName, type StageSummaries } from './stage-list.ts';
import { openWorkStore } from '../store/work-store.ts';

// Time names carry their unit: a Date is `asOf`, epoch milliseconds `asOfMs`, ISO 8601 text `asOfIso`.
// Names a file or a JSON result already holds keep theirs (as_of in manifests; asOf in RunResult, the
// stage summaries, segment-plan.json and the artifacts' source files, ISO text).
interface RunOptions {
  config: Config;
  log: Logger;
  asOf?: Date;
  signal?: AbortSignal;
  tty?: boolean;
  /** Run even when `asOf` is older than the served generation's (--allow-rewind). */
  allowRewind?: boolean;
  /** A full rebuild (--full) instead of an incremental run. */
  full?: boolean;
}

/** A run as of an instant older than the served generation's, refused without --allow-rewind. */
export class RewindRefused extends Error {}

/**
 * A run as of an instant before the served generation's would publish the corpus as it was then
 * (posts published since left out), and a running server would switch to it: refused unless asked
 * for, with what it would do.
 */
async function refuseRewind(layout: ReturnType<typeof dataDirLayout>, asOf: Date, db: () => Promise<DuckDB>): Promise<void> {
  const current = await readCurrent(layout);
  if (!current) return;
  const m = await readManifest(layout, current);
  if (asOf.getTime() >= Date.parse(m.as_of)) return;
  const rows = await (
    await db()
  ).all<{ n: number }>(`SELECT count(*) AS n FROM posts WHERE published_at <= ?::TIMESTAMPTZ`, [asOf.toISOString()]);
  throw new RewindRefused(
    `--as-of ${asOf.toISOString()} is older than the served generation ${current} (as of ${m.as_of}): the run would publish the posts ` +
      `published by then (${Number(rows[0]?.n ?? 0)} posts, against ${m.counts.posts ?? 'its'} in ${current}) as the next generation, and a running server ` +
      `would switch to it. Leave --as-of out (now), give an instant after ${m.as_of}, or pass --allow-rewind to publish the older view on purpose.`,
  );
}

/** A stage's name, time and summary: one of each stage's (StageResult<'publish'> is publish's). */
type StageResult<N extends StageName = StageName> = { [K in N]: { stage: K; ms: number; summary: StageSummaries[K] } }[N];

export interface RunResult {
  /** ISO text (the JSON's name). */
  asOf: string;
  ms: number;
  stages: StageResult[];
}

/** The PostgreSQL advisory lock of a pipeline run (one run at a time per DATABASE_URL). */
export const PIPELINE_LOCK = 'content-intelligence pipeline';

export async function runStages(stages: readonly PipelineStage[], opts: RunOptions): Promise<RunResult> {
  const layout = dataDirLayout(opts.config.dataDir);
  const signal = opts.signal ?? new AbortController().signal;
  const asOf = opts.asOf ?? new Date();
  const lock = await acquireLock(layout.lock).catch((err) => {
    if (err instanceof LockHeld) throw new LockHeld(err.owner, 'another pipeline run holds the lock');
    throw err;
  });
  // Several machines on one DATA_DIR share DATABASE_URL: one run at a time among all of them.
  let shared: Lock | null = null;
  if (opts.config.DATABASE_URL) {
    try {
      shared = await acquireAdvisoryLock(opts.config.DATABASE_URL, PIPELINE_LOCK);
    } catch (err) {
      await lock.release();
      if (err instanceof LockHeld) throw new LockHeld(err.owner, 'another pipeline run (on this or another machine) holds the lock');
      throw err;
    }
  }
  let db: DuckDB | null = null;
  const onAbort = () => db?.conn.interrupt();
  signal.addEventListener('abort', onAbort);
  const t0 = performance.now();
  const startedAt = new Date();
  const results: StageResult[] = [];
  const reused = new Map<string, Promise<unknown>>();
  try {
    const ctx: StageContext = {
      config: opts.config,
      layout,
      asOf,
      full: opts.full,
      log: opts.log,
      signal,
      progress: (label, total) => createProgress(opts.log, label, total, { tty: opts.tty }),
      db: async () =>
        (db ??= await openWorkStore(layout, { memoryLimit: opts.config.DUCKDB_MEMORY_LIMIT, threads: opts.config.DUCKDB_THREADS })),
      reuse: <T>(key: string, load: () => Promise<T>) => {
        let v = reused.get(key);
        if (!v) {
          reused.set(key, (v = load()));
          v.catch(() => reused.delete(key));
        }
        return v as Promise<T>;
      },
      outputs: new StageOutputs(layout, asOf),
    };
    if (!opts.allowRewind) await refuseRewind(layout, asOf, ctx.db);
    for (const stage of stages) {
      if (signal.aborted) throw new StageAborted(stage.name);
      opts.log.info({ stage: stage.name, asOf: asOf.toISOString() }, 'stage started');
      const result = await runStage(stage, ctx);
      // The log line leaves out the per-file reports (ingest's perFile): the result keeps them.
      const brief = Object.fromEntries(Object.entries(result.summary).filter(([k]) => k !== 'perFile'));
      opts.log.info({ stage: stage.name, ms: result.ms, summary: brief }, 'stage finished');
      results.push(result);
    }
    const run = { asOf: asOf.toISOString(), ms: Math.round(performance.now() - t0), stages: results };
    await recordRun(layout, opts, startedAt, run, null);
    return run;
  } catch (err) {
    if (!(err instanceof RewindRefused))
      await recordRun(layout, opts, startedAt, { asOf: asOf.toISOString(), ms: Math.round(performance.now() - t0), stages: results }, err);
    throw err;
  } finally {
    reused.clear();
    signal.removeEventListener('abort', onAbort);
    (db as DuckDB | null)?.close();
    await (shared as Lock | null)?.release();
    await lock.release();
  }
}

/** One stage run and timed; abandoned (StageAborted) when the signal fired. */
async function runStage<N extends StageName>(stage: Stage<N, StageSummaries[N]>, ctx: StageContext): Promise<StageResult<N>> {
  const s0 = performance.now();
  let summary: StageSummaries[N];
  try {
    summary = await stage.run(ctx);
  } catch (err) {
    if (ctx.signal.aborted) throw new StageAborted(stage.name);
    throw err;
  }
  return { stage: stage.name, ms: Math.round(performance.now() - s0), summary };
}

/** DATA_DIR/work/last-run.json, which the server's /metrics reads; a run's outcome never depends on writing it. */
async function recordRun(layout: DataDirLayout, opts: RunOptions, startedAt: Date, run: RunResult, err: unknown): Promise<void> {
  const published = run.stages.find((s) => s.stage === 'publish')?.summary;
  await writeLastRun(layout, {
    started_at: startedAt.toISOString(),
    finished_at: new Date().toISOString(),
    ms: run.ms,
    as_of: run.asOf,
    mode: published?.mode ?? (opts.full ? 'full' : 'incremental'),
    ok: err === null,
    error: err === null ? null : err instanceof Error ? err.message : String(err),
    stages: run.stages.map((s) => ({ stage: s.stage, ms: s.ms })),
    generation: published?.generation ?? null,
    ingest: ingestFigures(run),
  }).catch((e: Error) => opts.log.warn({ err: e.message }, 'could not write the last run (work/last-run.json) for /metrics'));
}

/** The ingest stage's figures for last-run.json (null when it did not finish in this run). */
function ingestFigures(run: RunResult): LastRun['ingest'] {
  const s = run.stages.find((x) => x.stage === 'ingest')?.summary;
  return s
    ? { ingested: s.accepted + s.updated, quarantined: s.quarantined, quarantined_by_reason: s.quarantinedBy, deleted: s.deleted }
    : null;
}

/** `run` = every stage; otherwise the named stages. */
export function resolveStages(names: string[]): PipelineStage[] {
  if (names.length === 1 && names[0] === 'run') return [...STAGES];
  return names.map((n) => {
    const s = STAGES.find((x) => x.name === n);
    if (!s) throw new Error(`unknown stage "${n}" (stages: ${STAGES.map((x) => x.name).join(', ')}, or run)`);
    return s;
  });
}
