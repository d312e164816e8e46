// Visual features of posts' media: a fixed-length vector per item (image, carousel, video) for
// similarity and clustering, and nameable elements (dominant colours, aesthetic style, layout,
// motion) derived from the same numbers. Decoding and the pixel maths run in a pool of worker
// threads (visual-worker.ts); the maths is in visual-compute.ts and the vocabularies in
// visual-palette.ts. docs/visual-features.md documents the vector layout and the rules.
//
// Items go out in small batches, at most two per worker, so a slow item never idles the pool and
// memory stays flat however long the list. A file that is missing or does not decode fails its
// own item ({vector: null, elements: null, error}). If a worker dies, a fresh one takes its place
// and the items it held are retried one at a time, each alone on a worker, so only an item that
// kills a worker again fails.
import os from 'node:os';
import type { Worker } from 'node:worker_threads';
import { spawnTsWorker } from '../../core/infra/workers/spawn.ts';
import type { WorkBatch, WorkItem, WorkReply } from './visual-worker.ts';

export { VISUAL_BLOCKS, VISUAL_DIM, VISUAL_FEATURES_VERSION } from './visual-compute.ts';
export { COLOR_NAMES, LAYOUT_VOCABULARY, MOTION_VOCABULARY, STYLE_VOCABULARY } from './visual-palette.ts';

export interface VisualItem {
  key: string;
  kind: 'image' | 'video' | 'carousel';
  /** Absolute paths. image: one; carousel: its images; video: its frames in order. */
  paths: string[];
}

export interface VisualElements {
  /** 1-3 names from COLOR_NAMES, most dominant first. */
  dominantColors: string[];
  /** Zero or more of STYLE_VOCABULARY, in vocabulary order. */
  aestheticStyle: string[];
  /** One of LAYOUT_VOCABULARY. */
  layout: string;
  /** Videos: one of MOTION_VOCABULARY (null when fewer than two frames); null for images and carousels. */
  motion: string | null;
}

interface VisualResult {
  vector: Float32Array | null;
  elements: VisualElements | null;
  error?: string;
}

interface VisualOptions {
  /** Worker threads; default os.availableParallelism(). */
  threads?: number;
  onProgress?: (done: number, total: number) => void;
}

const MAX_BATCH = 16;
const BATCHES_PER_WORKER = 2;

function spawn(): Worker {
  return spawnTsWorker(new URL('./visual-worker.ts', import.meta.url));
}

/** A batch in flight; a suspect is one item retried alone after a worker died holding it. */
interface Batch {
  items: WorkItem[];
  suspect: boolean;
}
interface Lane {
  worker: Worker;
  inflight: Map<number, Batch>;
  ready: boolean;
  dead: boolean;
}

export async function computeVisualFeatures(items: VisualItem[], opts: VisualOptions = {}): Promise<Map<string, VisualResult>> {
  const total = items.length;
  const results: Array<VisualResult | undefined> = new Array(total);
  const work: WorkItem[] = [];
  let done = 0;
  for (let i = 0; i < total; i++) {
    const it = items[i]!;
    if (it.kind !== 'image' && it.kind !== 'video' && it.kind !== 'carousel')
      results[i] = { vector: null, elements: null, error: `unknown kind ${String(it.kind)}` };
    else if (!Array.isArray(it.paths) || it.paths.length === 0) results[i] = { vector: null, elements: null, error: 'no media paths' };
    else if (it.kind === 'image' && it.paths.length !== 1)
      results[i] = { vector: null, elements: null, error: `an image has one path, got ${it.paths.length}` };
    else {
      work.push({ i, kind: it.kind, paths: it.paths });
      continue;
    }
    done++;
  }
  if (done > 0) opts.onProgress?.(done, total);

  if (work.length > 0) await runPool(work, results, done, opts);
  const out = new Map<string, VisualResult>();
  for (let i = 0; i < total; i++) out.set(items[i]!.key, results[i] ?? { vector: null, elements: null, error: 'not computed' });
  return out;
}

function runPool(work: WorkItem[], results: Array<VisualResult | undefined>, doneBefore: number, opts: VisualOptions): Promise<void> {
  return new VisualPool(work, results, doneBefore, opts).run();
}

/** One call's pool: lanes (a worker each) fed batches until every item is settled, or the workers cannot start. */
class VisualPool {
  private readonly total: number;
  private readonly batchSize: number;
  private readonly threads: number;
  private done: number;
  private next = 0;
  private batchId = 0;
  private pending: number;
  private startFailures = 0;
  private readonly retry: Batch[] = [];
  private readonly lanes: Lane[] = [];
  private settled = false;
  private end: (err?: Error) => void = () => undefined;

  constructor(
    private readonly work: WorkItem[],
    private readonly results: Array<VisualResult | undefined>,
    doneBefore: number,
    private readonly opts: VisualOptions,
  ) {
    this.total = results.length;
    const threadsWanted = Math.max(1, Math.floor(opts.threads ?? os.availableParallelism()));
    this.batchSize = Math.max(1, Math.min(MAX_BATCH, Math.ceil(work.length / (threadsWanted * BATCHES_PER_WORKER * 2))));
    this.threads = Math.min(threadsWanted, Math.ceil(work.length / this.batchSize));
    this.done = doneBefore;
    this.pending = work.length;
  }

  run(): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.end = (err) => (err ? reject(err) : resolve());
      for (let t = 0; t < this.threads; t++) this.start();
    });
  }

  /** Every lane's worker terminated, then the pool's promise settled (once). */
  private finish(err?: Error): void {
    if (this.settled) return;
    this.settled = true;
    const all = this.lanes.splice(0);
    for (const l of all) l.dead = true;
    const end = () => this.end(err);
    void Promise.all(all.map((l) => l.worker.terminate())).then(end, end);
  }

  /** Batches to the lane up to BATCHES_PER_WORKER, retries first. */
  private feed(lane: Lane): void {
    // A suspect runs alone on its worker, so if it kills the worker nothing else is lost.
    const busyWithSuspect = () => [...lane.inflight.values()].some((b) => b.suspect);
    while (
      !lane.dead &&
      lane.inflight.size < BATCHES_PER_WORKER &&
      !busyWithSuspect() &&
      (this.retry.length > 0 || this.next < this.work.length)
    ) {
      let batch: Batch;
      if (this.retry.length > 0) {
        if (this.retry[0]!.suspect && lane.inflight.size > 0) break;
        batch = this.retry.shift()!;
      } else {
        batch = { items: this.work.slice(this.next, this.next + this.batchSize), suspect: false };
        this.next += batch.items.length;
      }
      const id = this.batchId++;
      lane.inflight.set(id, batch);
      lane.worker.postMessage({ batch: id, items: batch.items } satisfies WorkBatch);
    }
  }

  /** `n` items done (computed or failed). */
  private settle(n: number): void {
    this.pending -= n;
    this.done += n;
    this.opts.onProgress?.(this.done, this.total);
    if (this.pending === 0) this.finish();
  }

  /** A lane's worker failed: its batches retried (or their suspect failed), a fresh worker started while work is left. */
  private fail(lane: Lane, err: Error): void {
    if (lane.dead || this.settled) return;
    lane.dead = true;
    const at = this.lanes.indexOf(lane);
    if (at >= 0) this.lanes.splice(at, 1);
    void lane.worker.terminate().catch(() => undefined);
    const held = [...lane.inflight.values()];
    lane.inflight.clear();
    let lost = 0;
    if (!lane.ready) {
      // It never loaded: its batches go to the next worker, up to a limit.
      this.retry.unshift(...held);
      if (++this.startFailures > this.threads + 2) {
        this.finish(new Error(`visual workers cannot start: ${err.message}`));
        return;
      }
    } else {
      // It died working. The items it held are retried one at a time on a worker of their own
      // (suspects); a suspect that kills its worker fails, so only the culprit is lost.
      for (const batch of held) {
        if (batch.suspect) {
          this.results[batch.items[0]!.i] = { vector: null, elements: null, error: `visual worker failed: ${err.message}` };
          lost++;
        } else {
          this.retry.unshift(...batch.items.map((it) => ({ items: [it], suspect: true })));
        }
      }
    }
    if (this.retry.length > 0 || this.next < this.work.length) this.start();
    if (lost > 0) this.settle(lost);
  }

  /** A new lane: its worker spawned, fed, and listened to. */
  private start(): void {
    const lane: Lane = { worker: spawn(), inflight: new Map(), ready: false, dead: false };
    this.lanes.push(lane);
    lane.worker.on('message', (reply: WorkReply) => this.receive(lane, reply));
    lane.worker.on('error', (err) => this.fail(lane, err));
    lane.worker.on('exit', (code) => this.fail(lane, new Error(`worker exited with code ${code}`)));
    this.feed(lane);
  }

  /** A worker's message: it is ready, or a batch's results. */
  private receive(lane: Lane, reply: WorkReply): void {
    if (lane.dead) return;
    if ('ready' in reply) {
      lane.ready = true;
      return;
    }
    const batch = lane.inflight.get(reply.batch);
    if (!batch) return;
    lane.inflight.delete(reply.batch);
    for (const r of reply.results) {
      this.results[r.i] =
        r.error === undefined ? { vector: r.vector, elements: r.elements } : { vector: null, elements: null, error: r.error };
    }
    this.feed(lane);
    this.settle(batch.items.length);
  }
}
