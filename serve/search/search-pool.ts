// Search off the event loop: SEARCH_THREADS worker threads (search-worker.ts), each holding the
// HNSW graphs of the generations being served, so searches run on every core while the main
// thread answers HTTP, bills and builds answers. The big arrays (text vectors, BM25 postings)
// live in SharedArrayBuffers the main thread loaded once; a worker holds only its own graphs
// (hnswlib indexes cannot be shared between threads) and small columns. Hand-written because the
// pool must broadcast (load / drop a generation on every worker) as well as dispatch: a search
// goes to the worker with the fewest searches in flight.
import type { Worker } from 'node:worker_threads';
import { spawnTsWorker } from '../../core/workers/spawn.ts';
import { waitAtMost } from '../../core/wait-at-most.ts';
import type { SearchParams } from '../../core/ranking/search.ts';
import type { SearchOutcome } from './answer-clusters.ts';
import type { SharedIndexParts } from '../../core/ranking/search-index.ts';

export type SearchWorkerMessage =
  | { id: number; kind: 'load'; gen: string; dir: string; shared: SharedIndexParts }
  | { id: number; kind: 'drop'; gen: string }
  | { id: number; kind: 'search'; gen: string; params: SearchParams };
export type SearchWorkerReply = { id: number; result: unknown } | { id: number; error: string };

type DistributiveOmit<T, K extends keyof T> = T extends unknown ? Omit<T, K> : never;

interface Lane {
  worker: Worker;
  inFlight: number;
  alive: boolean;
  ready: Promise<void>;
  isReady: boolean;
}
interface Waiting {
  resolve: (r: any) => void;
  reject: (e: Error) => void;
  lane: Lane;
}

export class SearchPool {
  private readonly lanes: Lane[] = [];
  private readonly waiting = new Map<number, Waiting>();
  /** Generations every worker holds, so a replacement worker can load them too. */
  private readonly loaded = new Map<string, { dir: string; shared: SharedIndexParts }>();
  private nextId = 1;
  private closed = false;
  private drained: (() => void) | null = null;
  /** Workers that died and were replaced (for /health and the logs). */
  restarts = 0;

  constructor(
    readonly threads: number,
    private readonly onError: (err: Error) => void = () => undefined,
  ) {
    for (let i = 0; i < threads; i++) this.lanes.push(this.spawn());
  }

  /** The worker threads (operators and tests watch them). */
  get workers(): Worker[] {
    return this.lanes.map((l) => l.worker);
  }

  private spawn(): Lane {
    const lane: Lane = {
      worker: spawnTsWorker(new URL('./search-worker.ts', import.meta.url)),
      inFlight: 0,
      alive: true,
      ready: Promise.resolve(),
      isReady: true,
    };
    lane.worker.on('message', (m: SearchWorkerReply) => {
      const w = this.waiting.get(m.id);
      if (!w) return;
      this.waiting.delete(m.id);
      lane.inFlight--;
      if ('error' in m) w.reject(new Error(m.error));
      else w.resolve(m.result);
      if (this.waiting.size === 0) this.drained?.();
    });
    // A dead worker fails what it was doing (those searches answer 500 and release their holds)
    // and is replaced by a new one that loads the generations being served; until it is ready,
    // searches go to the other workers or wait for it.
    const died = (err: Error) => {
      if (!lane.alive) return;
      lane.alive = false;
      for (const [id, w] of this.waiting) if (w.lane === lane) (this.waiting.delete(id), w.reject(err));
      if (this.waiting.size === 0) this.drained?.();
      if (this.closed) return;
      this.onError(err);
      const next = this.spawn();
      this.restarts++;
      next.isReady = false;
      next.ready = (async () => {
        for (const [gen, { dir, shared }] of this.loaded) await this.send(next, { kind: 'load', gen, dir, shared });
        next.isReady = true;
      })();
      next.ready.catch((e: Error) => this.onError(e));
      this.lanes[this.lanes.indexOf(lane)] = next;
    };
    lane.worker.on('error', died);
    lane.worker.on('exit', (code) => died(new Error(`search worker exited with code ${code}`)));
    return lane;
  }

  private send<R>(lane: Lane, msg: DistributiveOmit<SearchWorkerMessage, 'id'>): Promise<R> {
    if (this.closed) return Promise.reject(new Error('search pool is closed'));
    if (!lane.alive) return Promise.reject(new Error('search worker is gone'));
    const id = this.nextId++;
    lane.inFlight++;
    return new Promise<R>((resolve, reject) => {
      this.waiting.set(id, { resolve, reject, lane });
      lane.worker.postMessage({ ...msg, id });
    });
  }

  /**
   * Every worker loads the generation (its graphs; the shared parts are not copied), one after
   * another: loading reads columns through DuckDB, and doing it in every thread at once stacked
   * their transient memory into the server's peak.
   */
  async load(gen: string, dir: string, shared: SharedIndexParts): Promise<void> {
    this.loaded.set(gen, { dir, shared });
    for (const l of this.lanes) await this.send(l, { kind: 'load', gen, dir, shared });
  }

  /** Every worker lets the generation go. */
  async drop(gen: string): Promise<void> {
    this.loaded.delete(gen);
    await Promise.all(this.lanes.filter((l) => l.alive).map((l) => this.send(l, { kind: 'drop', gen }).catch(() => undefined)));
  }

  async search(gen: string, params: SearchParams): Promise<SearchOutcome> {
    // The least busy ready worker; when none is ready (a replacement still loading), wait for one.
    let best: Lane | null = null;
    for (const l of this.lanes) if (l.alive && l.isReady && (!best || l.inFlight < best.inFlight)) best = l;
    if (!best) best = this.lanes.find((l) => l.alive) ?? null;
    if (!best) throw new Error('no search worker is running');
    await best.ready;
    return this.send<SearchOutcome>(best, { kind: 'search', gen, params });
  }

  /**
   * No new tasks; the ones in flight finish (at most `drainMs`), then the workers stop. Terminating
   * a worker in the middle of an hnswlib search aborts the whole process (a native exception
   * thrown into a dying thread), so close waits for the searches first.
   */
  async close(drainMs = 30_000): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.waiting.size > 0) await waitAtMost(new Promise<void>((resolve) => (this.drained = resolve)), drainMs);
    await Promise.all(this.lanes.map((l) => l.worker.terminate()));
  }
}
