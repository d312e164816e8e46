// The loader thread of the search pool (loader-thread.ts): reads each new generation (DuckDB
// queries, the row and content columns, label words, postings, vectors, maps) into
// SharedArrayBuffers and sends the parts to the main thread, which only makes views of them. Reading
// a generation on the main thread blocked its event loop for seconds at 100k posts, and every
// request waited behind it. It keeps the index of each generation it loaded until told to drop it,
// so the next load takes the segments both hold from it instead of reading them again.
import { parentPort } from 'node:worker_threads';
import type { SearchIndex } from '../../core/ranking/search-index.ts';
import { loadGeneration, type GenerationParts, type LoadedElsewhere } from './loaded-generation.ts';

export type LoaderMessage = { id: number; kind: 'load'; dir: string; previous: string | null } | { id: number; kind: 'drop'; gen: string };
export type LoaderReply = { id: number; result: LoadedElsewhere | boolean } | { id: number; error: string };

const port = parentPort;
if (!port) throw new Error('loader-worker.ts runs in a worker thread');
/** Each loaded generation's index (only that is lent to the next load). */
const indexes = new Map<string, SearchIndex>();

async function load(dir: string, previous: string | null): Promise<LoadedElsewhere> {
  const held = previous === null ? undefined : indexes.get(previous);
  let parts: GenerationParts | null = null;
  const gen = await loadGeneration(dir, { previous: held ? { index: held } : null, share: async (p) => void (parts = p) });
  indexes.set(gen.id, gen.index);
  return { parts: parts!, maps: gen.maps, posts: gen.posts, loadMs: gen.loadMs };
}

port.on('message', (m: LoaderMessage) => {
  const done = m.kind === 'load' ? load(m.dir, m.previous) : Promise.resolve(indexes.delete(m.gen));
  done.then(
    (result) => port.postMessage({ id: m.id, result } satisfies LoaderReply),
    (err: unknown) => port.postMessage({ id: m.id, error: err instanceof Error ? err.message : String(err) } satisfies LoaderReply),
  );
});
