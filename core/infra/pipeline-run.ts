// The last pipeline run, as the runner leaves it in DATA_DIR/work/last-run.json after every run
// (finished or failed) and the server's /metrics reads it at each scrape: the pipeline and the
// server share only this file and its shape, never code (serve/ does not import pipeline/).
import fs from 'node:fs/promises';
import type { DataDirLayout } from './data-dir.ts';
import { writeFileAtomic } from './durable-fs.ts';

export interface LastRun {
  started_at: string;
  finished_at: string;
  ms: number;
  /** The snapshot's instant (--as-of, or the start). */
  as_of: string;
  /** As the publish stage planned it (a run asked for incremental may have to be full); as asked when it did not get there. */
  mode: 'full' | 'incremental';
  ok: boolean;
  /** The error's message when the run failed (or was abandoned on a signal); null when it finished. */
  error: string | null;
  /** The stages that finished, in order, with their durations (a failed run: those before the failure). */
  stages: Array<{ stage: string; ms: number }>;
  /** The generation published (null when the run published none). */
  generation: string | null;
  /**
   * What its ingest stage took in (null when it did not run or finish): records ingested (new and
   * updated posts), quarantined (and by the field their first reason names), posts deleted.
   */
  ingest?: { ingested: number; quarantined: number; quarantined_by_reason: Record<string, number>; deleted: number } | null;
}

/** Replace the file at once (a scrape sees the old run or the new one, never half of one). */
export function writeLastRun(layout: DataDirLayout, run: LastRun): Promise<void> {
  return writeFileAtomic(layout.lastRun, JSON.stringify(run) + '\n');
}

/** The last run, or null when no run left one (or the file cannot be read as one). */
export async function readLastRun(layout: DataDirLayout): Promise<LastRun | null> {
  let text: string;
  try {
    text = await fs.readFile(layout.lastRun, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
  try {
    const run = JSON.parse(text) as LastRun;
    return Array.isArray(run.stages) && typeof run.ok === 'boolean' ? run : null;
  } catch {
    return null;
  }
}
