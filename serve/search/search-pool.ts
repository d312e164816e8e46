// Search off the event loop, on every core, with one copy of the HNSW graphs:
//   - one graph worker (graph-worker.ts) holds the graphs of the generations being served and
//     answers vector-candidate requests (hnswlib indexes cannot be shared between threads, and a
//     copy per thread cost about 0.85 GB at 1M posts);
//   - SEARCH_THREADS answer workers (answer-worker.ts) do everything else of an answer: the
//     ranking core's plan and fusion, the answer's clusters, content items, creators, narratives,
//     patterns and the answer's JSON. They read the big parts (vectors, postings, row and content
//     columns, enrichment) in the SharedArrayBuffers the main thread loaded, and ask the graph
//     worker for vector candidates over a MessageChannel of their own;
//   - the main thread authenticates, bills and writes the bytes;
//   - a loader thread (serve/generation/loader-thread.ts) reads each new generation, so a swap's
//     reads never block the main thread's event loop.
// Hand-written because the pool must broadcast (load / drop a generation on every worker) as well
// as dispatch (an answer goes to the answer worker with the fewest in flight), and wire the
// channels again when a worker dies and is replaced. It is the worker-pool SearchEngine
// (search-engine.ts): the snapshot store loads generations through it. At most SEARCH_QUEUE_MAX
// searches are in it at once; one more is refused (SearchQueueFull: the 503 of docs/api.md).
import { MessageChannel, type MessagePort, type Worker } from 'node:worker_threads';
import { spawnTsWorker } from '../../core/infra/workers/spawn.ts';
import { waitAtMost } from '../../core/infra/wait-at-most.ts';
import type { SearchParams } from '../../core/ranking/search.ts';
import type { SharedIndexParts } from '../../core/ranking/search-index.ts';
import type { GenerationParts, LoadedGeneration } from '../generation/loaded-generation.ts';
import { LoaderThread } from '../generation/loader-thread.ts';
import type { AnswerRequest, BuiltAnswer, SearchOutcome } from './answer-build.ts';
import { assertSearchable, assertWithinLimit, SearchQueueFull, type SearchEngine } from './search-engine.ts';

export type GraphWorkerMessage =
  | { id: number; kind: 'load'; gen: string; dir: string; shared: SharedIndexParts }
  | { id: number; kind: 'drop'; gen: string }
  | { id: number; kind: 'connect'; port: MessagePort };
export type AnswerWorkerMessage =
  | { id: number; kind: 'load'; parts: GenerationParts }
  | { id: number; kind: 'drop'; gen: string }
  | { id: number; kind: 'graph'; port: MessagePort }
  | { id: number; kind: 'answer'; gen: string; request: AnswerRequest }
  | { id: number; kind: 'search'; gen: string; params: SearchParams };
export type WorkerReply = { id: number; result: unknown } | { id: number; error: string } | { thread: number | null };

type DistributiveOmit<T, K extends keyof T> = T extends unknown ? Omit<T, K> : never;

type Role = 'graph' | 'answer';
interface Lane {
  role: Role;
  worker: Worker;
  inFlight: number;
  alive: boolean;
  ready: Promise<void>;
  isReady: boolean;
  /** The worker's OS thread id (core/infra/workers/os-thread.ts), once it has said. */
  thread: number | null;
}
interface Waiting {
  resolve: (r: any) => void;
  reject: (e: Error) => void;
  lane: Lane;
}

/** The two workers' modules, beside this file. */
const GRAPH_WORKER = new URL('./graph-worker.ts', import.meta.url);
const ANSWER_WORKER = new URL('./answer-worker.ts', import.meta.url);

export interface PoolOptions {
  /** Answer workers (SEARCH_THREADS, at least one) beside the one graph worker. */
  threads: number;
  /** Searches in the pool at once, sent to a worker or waiting for one (SEARCH_QUEUE_MAX); one more is refused. */
  queueMax: number;
  /** A worker failed (it is replaced). */
  onError?: (err: Error) => void;
  /** The loader thread's nice value (LOADER_NICE; default 0: as the serving threads). */
  loaderNice?: number;
}

export class SearchPool implements SearchEngine {
  readonly threads: number;
  readonly queueMax: number;
  private readonly onError: (err: Error) => void;
  private graph: Lane;
  private readonly answers: Lane[] = [];
  private readonly waiting = new Map<number, Waiting>();
  /** Generations every worker holds, so a replacement worker can load them too. */
  private readonly loaded = new Map<string, GenerationParts>();
  /** The generations this pool loaded and has not disposed of (what searches may name). */
  private readonly held = new Set<LoadedGeneration>();
  /** Where generations are read (a thread of their own). */
  private readonly loader: LoaderThread;
  private nextId = 1;
  private closed = false;
  private drained: (() => void) | null = null;
  /** Searches in the pool now (at most queueMax). */
  private searching = 0;
  /** Workers that died and were replaced (for /health and the logs). */
  restarts = 0;

  constructor({ threads, queueMax, onError = () => undefined, loaderNice = 0 }: PoolOptions) {
    if (!(threads >= 1)) throw new Error(`a search pool needs at least one answer worker (${threads})`);
    if (!(Number.isInteger(queueMax) && queueMax >= 1)) throw new Error(`a search pool's queue holds at least one search (${queueMax})`);
    this.threads = threads;
    this.queueMax = queueMax;
    this.onError = onError;
    this.loader = new LoaderThread(loaderNice);
    this.graph = this.spawn('graph');
    for (let i = 0; i < threads; i++) this.answers.push(this.spawn('answer'));
    for (const a of this.answers) this.connect(a);
  }

  /** The worker threads (operators and tests watch them): the graph worker first. */
  get workers(): Worker[] {
    return [this.graph, ...this.answers].map((l) => l.worker);
  }

  /** Messages sent to the workers and not answered yet: searches in flight, generations loading (/metrics). */
  get pending(): number {
    return this.waiting.size;
  }

  /** The workers' OS thread ids (Linux; those known so far), for /proc/<pid>/task/<tid>/stat. */
  get threadIds(): number[] {
    return [this.graph, ...this.answers].flatMap((l) => (l.alive && l.thread !== null ? [l.thread] : []));
  }

  /** Until every worker has said which OS thread it is (at most `ms`). */
  async threadsKnown(ms = 10_000): Promise<number[]> {
    for (const until = Date.now() + ms; Date.now() < until && this.threadIds.length < 1 + this.answers.length;)
      await new Promise((r) => setTimeout(r, 10));
    return this.threadIds;
  }

  /** Until every worker (replacements included) has loaded the generations being served. */
  async allReady(): Promise<void> {
    await Promise.all([this.graph, ...this.answers].map((l) => l.ready));
  }

  /** A channel between the graph worker and an answer worker (the answer worker asks, the graph worker answers). */
  private connect(answer: Lane): void {
    const { port1, port2 } = new MessageChannel();
    this.post(this.graph, { kind: 'connect', port: port1 }, [port1]).catch((e: Error) => this.onError(e));
    this.post(answer, { kind: 'graph', port: port2 }, [port2]).catch((e: Error) => this.onError(e));
  }

  private spawn(role: Role): Lane {
    const lane: Lane = {
      role,
      worker: spawnTsWorker(role === 'graph' ? GRAPH_WORKER : ANSWER_WORKER),
      inFlight: 0,
      alive: true,
      ready: Promise.resolve(),
      isReady: true,
      thread: null,
    };
    lane.worker.on('message', (m: WorkerReply) => {
      if ('thread' in m) return void (lane.thread = m.thread);
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
    // answers go to the other workers or wait for it. A new graph worker is wired to every answer
    // worker again (their old channels died with it, failing the requests on them).
    const died = (err: Error) => {
      if (!lane.alive) return;
      lane.alive = false;
      for (const [id, w] of this.waiting) if (w.lane === lane) (this.waiting.delete(id), w.reject(err));
      if (this.waiting.size === 0) this.drained?.();
      if (this.closed) return;
      this.onError(err);
      const next = this.spawn(role);
      this.restarts++;
      next.isReady = false;
      if (role === 'graph') {
        this.graph = next;
        for (const a of this.answers) if (a.alive) this.connect(a);
      } else {
        this.answers[this.answers.indexOf(lane)] = next;
        this.connect(next);
      }
      next.ready = (async () => {
        for (const parts of this.loaded.values()) await this.loadOn(next, parts);
        next.isReady = true;
      })();
      next.ready.catch((e: Error) => this.onError(e));
    };
    lane.worker.on('error', died);
    lane.worker.on('exit', (code) => died(new Error(`search worker exited with code ${code}`)));
    return lane;
  }

  private post<R>(
    lane: Lane,
    msg: DistributiveOmit<GraphWorkerMessage | AnswerWorkerMessage, 'id'>,
    transfer: MessagePort[] = [],
  ): Promise<R> {
    if (this.closed) return Promise.reject(new Error('search pool is closed'));
    if (!lane.alive) return Promise.reject(new Error('search worker is gone'));
    const id = this.nextId++;
    lane.inFlight++;
    return new Promise<R>((resolve, reject) => {
      this.waiting.set(id, { resolve, reject, lane });
      lane.worker.postMessage({ ...msg, id }, transfer);
    });
  }

  private loadOn(lane: Lane, parts: GenerationParts): Promise<unknown> {
    return lane.role === 'graph'
      ? this.post(lane, { kind: 'load', gen: parts.id, dir: parts.dir, shared: parts.index })
      : this.post(lane, { kind: 'load', parts });
  }

  /**
   * Load a generation for the snapshot store: read on the loader thread into SharedArrayBuffers
   * (this thread only makes views of them: its event loop keeps answering meanwhile), then handed
   * to every worker before it counts as loaded (the graph worker loads its graphs; this thread keeps none).
   */
  async load(dir: string, previous: LoadedGeneration | null): Promise<LoadedGeneration> {
    const t0 = performance.now();
    const parts = previous ? this.loaded.get(previous.id) : undefined;
    const { gen, elsewhere } = await this.loader.load(dir, previous && parts ? { gen: previous, parts } : null);
    try {
      await this.share(elsewhere.parts);
    } catch (err) {
      await this.drop(gen.id);
      throw err;
    }
    gen.loadMs = Math.round(performance.now() - t0);
    this.held.add(gen);
    return gen;
  }

  /** A retired generation no request holds: every worker lets it go. */
  dispose(gen: LoadedGeneration): Promise<void> {
    this.held.delete(gen);
    return this.drop(gen.id);
  }

  /**
   * Every worker loads the generation (the graph worker its graphs; the shared parts are not
   * copied), one after another: loading reads files, and doing it in every thread at once stacked
   * their transient memory into the server's peak.
   */
  private async share(parts: GenerationParts): Promise<void> {
    this.loaded.set(parts.id, parts);
    for (const l of [this.graph, ...this.answers]) await this.loadOn(l, parts);
  }

  private async drop(gen: string): Promise<void> {
    this.loaded.delete(gen);
    await Promise.all(
      [this.graph, ...this.answers].filter((l) => l.alive).map((l) => this.post(l, { kind: 'drop', gen }).catch(() => undefined)),
    );
  }

  /** The least busy ready answer worker; when none is ready (a replacement still loading), wait for one. */
  private async answerLane(): Promise<Lane> {
    let best: Lane | null = null;
    for (const l of this.answers) if (l.alive && l.isReady && (!best || l.inFlight < best.inFlight)) best = l;
    if (!best) best = this.answers.find((l) => l.alive) ?? null;
    if (!best) throw new Error('no search worker is running');
    await best.ready;
    return best;
  }

  async answer(gen: LoadedGeneration, request: AnswerRequest): Promise<BuiltAnswer> {
    assertSearchable(request.params, gen, this.held.has(gen));
    const built = await this.queued(() => this.dispatch<BuiltAnswer>({ kind: 'answer', gen: gen.id, request }));
    assertWithinLimit(built.count, request.params);
    return built;
  }

  /** On every answer worker in turn (their per-row caches are their own); not counted against queueMax. */
  async warm(gen: LoadedGeneration, request: AnswerRequest): Promise<BuiltAnswer> {
    assertSearchable(request.params, gen, this.held.has(gen));
    let built: BuiltAnswer | null = null;
    for (const lane of this.answers) {
      if (!lane.alive) continue;
      await lane.ready;
      await this.graph.ready;
      built = await this.post<BuiltAnswer>(lane, { kind: 'answer', gen: gen.id, request });
    }
    if (!built) throw new Error('no search worker is running');
    assertWithinLimit(built.count, request.params);
    return built;
  }

  async search(gen: LoadedGeneration, params: SearchParams): Promise<SearchOutcome> {
    assertSearchable(params, gen, this.held.has(gen));
    const outcome = await this.queued(() => this.dispatch<SearchOutcome>({ kind: 'search', gen: gen.id, params }));
    assertWithinLimit(outcome.ranked.length, params);
    return outcome;
  }

  /** A search in the pool, counted until it is answered; refused when queueMax are in it already. */
  private async queued<R>(search: () => Promise<R>): Promise<R> {
    if (this.searching >= this.queueMax) throw new SearchQueueFull(this.queueMax);
    this.searching++;
    try {
      return await search();
    } finally {
      this.searching--;
    }
  }

  /** To the least busy ready answer worker, once the graph worker is ready too (the answer worker asks it itself). */
  private async dispatch<R>(msg: Extract<DistributiveOmit<AnswerWorkerMessage, 'id'>, { kind: 'answer' | 'search' }>): Promise<R> {
    const lane = await this.answerLane();
    await this.graph.ready;
    return this.post<R>(lane, msg);
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
    // Answer workers first: a graph worker stopped under them would fail their requests.
    await Promise.all(this.answers.map((l) => l.worker.terminate()));
    await this.graph.worker.terminate();
    await this.loader.close();
  }
}
