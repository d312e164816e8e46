// The loader thread of the search pool (loader-thread.ts): reads one new generation (DuckDB
// queries, the row and content columns, label words, postings, vectors, maps) into
// SharedArrayBuffers and sends the parts to the main thread, which only makes views of them. Reading
// a generation on the main thread blocked its event loop for seconds at 100k posts, and every
// request waited behind it. The generation being served comes as its shared parts: their views
// lend the load the segments both hold, so those are not read again. One load per thread: the
// thread then ends, and the garbage of its reads goes with its heap (an idle thread kept it).
import { parentPort, workerData } from 'node:worker_threads';
import { generationView, loadGeneration, type GenerationParts, type LoadedElsewhere } from './loaded-generation.ts';

/** What the thread is asked to load: the generation in `dir`, beside the served one's parts. */
export interface LoaderTask {
  dir: string;
  previous: GenerationParts | null;
}
export type LoaderReply = { result: LoadedElsewhere } | { error: string };

const port = parentPort;
if (!port) throw new Error('loader-worker.ts runs in a worker thread');

async function load({ dir, previous }: LoaderTask): Promise<LoadedElsewhere> {
  const held = previous ? await generationView(previous) : null;
  let parts: GenerationParts | null = null;
  const gen = await loadGeneration(dir, { previous: held, share: async (p) => void (parts = p) });
  return { parts: parts!, maps: gen.maps, posts: gen.posts, loadMs: gen.loadMs };
}

load(workerData as LoaderTask).then(
  (result) => port.postMessage({ result } satisfies LoaderReply),
  (err: unknown) => port.postMessage({ error: err instanceof Error ? err.message : String(err) } satisfies LoaderReply),
);
