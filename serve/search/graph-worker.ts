// The graph worker of the search pool (search-pool.ts): holds the HNSW graphs of each generation it
// was asked to load (hnswlib indexes cannot be shared between threads; the vectors and postings it
// reads beside them are the main thread's shared buffers) and answers the answer workers' requests
// for a plan's vector candidates, each on the channel the pool gave that worker.
import { parentPort, type MessagePort } from 'node:worker_threads';
import { osThreadId } from '../../core/infra/workers/os-thread.ts';
import { loadSearchIndex, type SearchIndex } from '../../core/ranking/search-index.ts';
import { graphCandidates } from '../../core/ranking/search.ts';
import { prefetchGraphs } from './graph-prefetch.ts';
import type { GraphWorkerMessage, WorkerReply } from './search-pool.ts';

const port = parentPort;
if (!port) throw new Error('graph-worker.ts runs in a worker thread');
const indexes = new Map<string, SearchIndex>();
// First message: which OS thread this is (the pool reports it; operators and the api bench read its CPU).
port.postMessage({ thread: osThreadId() } satisfies WorkerReply);

/** A request for vector candidates (answer-worker.ts): the plan's query vector, depth and window start. */
export interface CandidatesRequest {
  id: number;
  gen: string;
  vector: Float32Array;
  depth: number;
  start: number;
}
/** The candidates, best first: rows and their similarities. */
export type CandidatesReply = { id: number; rows: Int32Array; sims: Float32Array } | { id: number; error: string };

function candidates(m: CandidatesRequest): CandidatesReply {
  const index = indexes.get(m.gen);
  if (!index?.hnsw) return { id: m.id, error: `generation ${m.gen} is not loaded in the graph worker` };
  const found = graphCandidates(index.hnsw, { vector: m.vector, depth: m.depth, start: m.start });
  return { id: m.id, rows: Int32Array.from(found, (n) => n.row), sims: Float32Array.from(found, (n) => n.sim) };
}

function serve(channel: MessagePort): void {
  channel.on('message', (m: CandidatesRequest) => {
    let reply: CandidatesReply;
    try {
      reply = candidates(m);
    } catch (err) {
      reply = { id: m.id, error: err instanceof Error ? err.message : String(err) };
    }
    channel.postMessage(reply, 'rows' in reply ? [reply.rows.buffer as ArrayBuffer, reply.sims.buffer as ArrayBuffer] : []);
  });
  channel.on('close', () => channel.removeAllListeners());
}

async function handle(m: GraphWorkerMessage): Promise<unknown> {
  if (m.kind === 'connect') {
    serve(m.port);
    return true;
  }
  if (m.kind === 'load') {
    // The graphs of segments another held generation has are taken from it (the same files); the
    // new ones are read first without blocking this thread's searches (graph-prefetch.ts).
    if (!indexes.has(m.gen)) {
      const held = [...indexes.values()];
      const fresh = await prefetchGraphs(m.dir, held);
      const lent = fresh ? [fresh, ...held] : held;
      indexes.set(m.gen, await loadSearchIndex(m.dir, { graphs: true, enrichment: false, shared: m.shared, held: lent }));
    }
    return true;
  }
  return indexes.delete(m.gen);
}

port.on('message', (m: GraphWorkerMessage) => {
  handle(m).then(
    (result) => port.postMessage({ id: m.id, result } satisfies WorkerReply),
    (err: unknown) => port.postMessage({ id: m.id, error: err instanceof Error ? err.message : String(err) } satisfies WorkerReply),
  );
});
