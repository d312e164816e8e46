// A search worker thread (search-pool.ts): holds the ranking index of each generation it was asked
// to load (its own HNSW graphs over the shared vectors and postings) and runs the ranking core and
// the answer's clustering.
import { parentPort } from 'node:worker_threads';
import { loadSearchIndex, type SearchIndex } from '../../core/ranking/search-index.ts';
import { searchWithClusters } from './answer-clusters.ts';
import type { SearchWorkerMessage, SearchWorkerReply } from './search-pool.ts';

const port = parentPort;
if (!port) throw new Error('search-worker.ts runs in a worker thread');
const indexes = new Map<string, SearchIndex>();

async function handle(m: SearchWorkerMessage): Promise<unknown> {
  if (m.kind === 'load') {
    // The graphs of segments another held generation has are taken from it (the same files).
    if (!indexes.has(m.gen))
      indexes.set(m.gen, await loadSearchIndex(m.dir, { graphs: true, enrichment: false, shared: m.shared, held: [...indexes.values()] }));
    return true;
  }
  if (m.kind === 'drop') return indexes.delete(m.gen);
  const index = indexes.get(m.gen);
  if (!index) throw new Error(`generation ${m.gen} is not loaded in this search worker`);
  return searchWithClusters(index, m.params);
}

port.on('message', (m: SearchWorkerMessage) => {
  handle(m).then(
    (result) => port.postMessage({ id: m.id, result } satisfies SearchWorkerReply),
    (err: unknown) => port.postMessage({ id: m.id, error: err instanceof Error ? err.message : String(err) } satisfies SearchWorkerReply),
  );
});
