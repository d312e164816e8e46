// A job retrieval thread (job-runner.ts): the ranking core with exact vector candidates
// (core/ranking/exact-neighbours.ts) over a generation's shared vectors, postings and row columns,
// so a job's deep retrieval never runs on the event loop or in the search workers. The thread
// lowers its own scheduling priority: on Linux a nice value belongs to the thread that sets it,
// so searches keep the cores first while jobs run.
import os from 'node:os';
import { answerTasks } from '../../core/infra/workers/task-worker.ts';
import { loadSearchIndex, type SearchIndex, type SharedIndexParts } from '../../core/ranking/search-index.ts';
import { search, type RankedRow, type SearchParams } from '../../core/ranking/search.ts';

export interface RetrievalTask {
  gen: string;
  dir: string;
  shared: SharedIndexParts;
  params: SearchParams;
}

const JOB_THREAD_NICE = 10;

try {
  os.setPriority(JOB_THREAD_NICE);
} catch {
  // Not permitted (or not supported) here: jobs still run, at normal priority.
}

/** The generations this thread has opened (the newest two: one being served, one draining). */
const indexes = new Map<string, Promise<SearchIndex>>();

answerTasks<RetrievalTask, RankedRow[]>(async (t) => {
  let index = indexes.get(t.gen);
  if (!index) {
    // The postings of segments another held generation has are taken from it.
    const others = [...indexes.values()];
    index = (async () => {
      const held = (await Promise.all(others.map((x) => x.catch(() => null)))).filter((x): x is SearchIndex => x !== null);
      return loadSearchIndex(t.dir, { graphs: false, enrichment: false, shared: t.shared, held });
    })();
    indexes.set(t.gen, index);
    while (indexes.size > 2) indexes.delete(indexes.keys().next().value!);
  }
  return { result: search(await index, t.params, { exact: true }) };
});
