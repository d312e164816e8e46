// The loader thread of the search pool (loader-thread.ts): reads one new generation (DuckDB
// queries, the row and content columns, label words, postings, vectors, maps) into
// SharedArrayBuffers and sends the parts to the main thread, which only makes views of them. Reading
// a generation on the main thread blocked its event loop for seconds at 100k posts, and every
// request waited behind it. The generation being served comes as its shared parts: their views
// lend the load the segments both hold, so those are not read again. One load per thread: the
// thread then ends, and the garbage of its reads goes with its heap (an idle thread kept it).
import os from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import { osThreadId } from '../../core/infra/workers/os-thread.ts';
import { generationView, loadGeneration, type GenerationParts, type LoadedElsewhere } from './loaded-generation.ts';

/** What the thread is asked to load: the generation in `dir`, beside the served one's parts. */
export interface LoaderTask {
  dir: string;
  previous: GenerationParts | null;
  /** This thread's nice value: above the serving threads', a load yields to searches on busy cores. */
  nice: number;
}
/** `nice`: the thread's nice value as the load ran (null where threads have none of their own). */
export type LoaderReply = { result: LoadedElsewhere; nice: number | null } | { error: string };

const port = parentPort;
if (!port) throw new Error('loader-worker.ts runs in a worker thread');

async function load({ dir, previous }: LoaderTask): Promise<LoadedElsewhere> {
  const held = previous ? await generationView(previous) : null;
  let parts: GenerationParts | null = null;
  const gen = await loadGeneration(dir, { previous: held, share: async (p) => void (parts = p) });
  return { parts: parts!, maps: gen.maps, posts: gen.posts, loadMs: gen.loadMs };
}

/**
 * Lower this thread's priority (Linux: a nice value is a thread's own, set through its thread id;
 * DuckDB's threads, started by this one, inherit it). Elsewhere the process's would change: left.
 */
function lowerPriority(nice: number): number | null {
  const tid = osThreadId();
  if (tid === null) return null;
  try {
    // Never above the priority it has (a process started under nice keeps its own).
    if (nice > os.getPriority(tid)) os.setPriority(tid, nice);
  } catch {
    // Not allowed here: the load runs at the priority it has.
  }
  return os.getPriority(tid);
}

const task = workerData as LoaderTask;
const nice = lowerPriority(task.nice);
load(task).then(
  (result) => port.postMessage({ result, nice } satisfies LoaderReply),
  (err: unknown) => port.postMessage({ error: err instanceof Error ? err.message : String(err) } satisfies LoaderReply),
);
