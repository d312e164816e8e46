// An answer worker of the search pool (search-pool.ts): builds whole search answers (answer-build.ts)
// on views of the generations the main thread loaded (their big parts read in place from
// SharedArrayBuffers), asking the graph worker for each plan's vector candidates over the channel
// the pool wired. The answer's JSON goes back as bytes, transferred, not copied.
import { parentPort, type MessagePort } from 'node:worker_threads';
import { failpoint } from '../../core/infra/failpoints.ts';
import { osThreadId } from '../../core/infra/workers/os-thread.ts';
import type { SearchPlan } from '../../core/ranking/search.ts';
import type { Neighbour } from '../../core/ranking/segment-graphs.ts';
import { generationView, type GenerationData } from '../generation/loaded-generation.ts';
import { answerHere, rankHere } from './answer-build.ts';
import { inheritRowWords } from './answer-narratives.ts';
import type { CandidatesReply, CandidatesRequest } from './graph-worker.ts';
import type { AnswerWorkerMessage, WorkerReply } from './search-pool.ts';

const port = parentPort;
if (!port) throw new Error('answer-worker.ts runs in a worker thread');
const views = new Map<string, GenerationData>();
port.postMessage({ thread: osThreadId() } satisfies WorkerReply);

/** The channel to the graph worker, and its requests in flight. */
let graph: MessagePort | null = null;
let nextRequest = 1;
const pending = new Map<number, { resolve: (n: Neighbour[]) => void; reject: (e: Error) => void }>();

function failPending(why: string): void {
  for (const p of pending.values()) p.reject(new Error(why));
  pending.clear();
}

function useGraph(channel: MessagePort): void {
  // A new channel means the graph worker was replaced: what was asked of the old one is lost.
  graph?.close();
  failPending('the graph worker was replaced');
  graph = channel;
  channel.on('message', (m: CandidatesReply) => {
    const p = pending.get(m.id);
    if (!p) return;
    pending.delete(m.id);
    if ('error' in m) p.reject(new Error(m.error));
    else p.resolve(Array.from(m.rows, (row, i) => ({ row, sim: m.sims[i]! })));
  });
  channel.on('close', () => {
    if (graph === channel) failPending('the graph worker is gone');
  });
}

function vectorCandidates(gen: string, plan: SearchPlan): Promise<Neighbour[]> {
  if (!graph) return Promise.reject(new Error('no graph worker is connected'));
  const id = nextRequest++;
  const channel = graph;
  return new Promise((resolve, reject) => {
    pending.set(id, { resolve, reject });
    channel.postMessage({ id, gen, vector: plan.vector!, depth: plan.depth, start: plan.start } satisfies CandidatesRequest);
  });
}

function view(gen: string): GenerationData {
  const v = views.get(gen);
  if (!v) throw new Error(`generation ${gen} is not loaded in this answer worker`);
  return v;
}

async function handle(m: AnswerWorkerMessage): Promise<{ result: unknown; transfer?: ArrayBuffer[] }> {
  switch (m.kind) {
    case 'graph':
      useGraph(m.port);
      return { result: true };
    case 'load':
      if (!views.has(m.parts.id)) {
        const held = [...views.values()];
        // The postings of segments a held generation has are its parsed objects: only new segments are parsed.
        const view = await generationView(
          m.parts,
          held.map((v) => v.index),
        );
        // The rows' words this thread knows on the generation served stay known where the rows are the same posts.
        const served = held[held.length - 1];
        if (served) inheritRowWords(served, view);
        views.set(m.parts.id, view);
      }
      return { result: true };
    case 'drop':
      return { result: views.delete(m.gen) };
    case 'search':
      return { result: await rankHere(view(m.gen), m.params, (plan) => vectorCandidates(m.gen, plan)) };
    case 'answer': {
      // A test parks an answer here to hold its place in the pool's queue (test/fast/search-queue.test.ts).
      await failpoint('search.answer-worker');
      const built = await answerHere(view(m.gen), m.request, (plan) => vectorCandidates(m.gen, plan));
      return { result: built, transfer: [built.json.buffer as ArrayBuffer] };
    }
  }
}

port.on('message', (m: AnswerWorkerMessage) => {
  handle(m).then(
    ({ result, transfer }) => port.postMessage({ id: m.id, result } satisfies WorkerReply, transfer ?? []),
    (err: unknown) => port.postMessage({ id: m.id, error: err instanceof Error ? err.message : String(err) } satisfies WorkerReply),
  );
});
