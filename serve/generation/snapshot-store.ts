// Which generation the server answers from, and the hot swap to the next one. Requests lease the
// current generation for their whole life; a new CURRENT is loaded in the background while the
// old one keeps serving, warmed up (the server's recent searches answered on it), then swapped in
// atomically (one assignment). The old generation is dropped once its last lease ends (the loader
// disposes of it: its search workers drop it too), so its memory is freed then and not before. The loader is the server's search engine
// (serve/search/search-engine.ts), which shares each generation with its workers.
import { dataDirLayout } from '../../core/infra/data-dir.ts';
import { generationDir, readCurrent } from '../../core/snapshots/generations.ts';
import type { Logger } from '../../core/infra/log.ts';
import type { LoadedGeneration } from './loaded-generation.ts';

interface Lease {
  gen: LoadedGeneration;
  release(): void;
}

/** How a store loads a generation and lets a retired one go. */
export interface GenerationLoader {
  /** Load the generation in `dir`; `previous` (the one being served) lends the segments both hold. */
  load(dir: string, previous: LoadedGeneration | null): Promise<LoadedGeneration>;
  /** Free what a retired generation holds outside this thread (its search workers' copies), once no request holds it. */
  dispose(gen: LoadedGeneration): Promise<void>;
}

export class SnapshotStore {
  private current: LoadedGeneration | null = null;
  private leases = new Map<LoadedGeneration, number>();
  private retired = new Set<LoadedGeneration>();
  private loading: Promise<void> | null = null;
  private timer: NodeJS.Timeout | null = null;
  private swapListeners: Array<(gen: LoadedGeneration, previous: LoadedGeneration | null) => void> = [];
  lastError: string | null = null;

  /**
   * `warmUp` runs on each new generation once it is loaded and before it is served (the server's
   * warm-up: serve/search/swap-warm-up.ts); the swap waits for it.
   */
  constructor(
    private readonly dataDir: string,
    private readonly log: Logger,
    private readonly loader: GenerationLoader,
    private readonly warmUp: (gen: LoadedGeneration) => Promise<void> = async () => undefined,
  ) {}

  /** Load the generation CURRENT names (an error when there is none). */
  async start(): Promise<LoadedGeneration> {
    await this.refresh();
    if (!this.current) throw new Error(`no published generation in ${this.dataDir}: run the pipeline first (npm run pipeline -- run)`);
    return this.current;
  }

  get generation(): LoadedGeneration | null {
    return this.current;
  }

  /**
   * Call `fn` with each generation swapped in from now on and the one it replaced (and at once with
   * the one served, if any, and null). `previous` is about to be released: keep what you need of it.
   */
  onSwap(fn: (gen: LoadedGeneration, previous: LoadedGeneration | null) => void): void {
    this.swapListeners.push(fn);
    if (this.current) fn(this.current, null);
  }

  /** Generations loaded but retired, still held by in-flight requests. */
  get draining(): number {
    return this.retired.size;
  }

  lease(): Lease {
    const gen = this.current;
    if (!gen) throw new Error('no generation loaded');
    this.leases.set(gen, (this.leases.get(gen) ?? 0) + 1);
    let released = false;
    return {
      gen,
      release: () => {
        if (released) return;
        released = true;
        const n = (this.leases.get(gen) ?? 1) - 1;
        if (n > 0) this.leases.set(gen, n);
        else {
          this.leases.delete(gen);
          if (this.retired.delete(gen)) this.free(gen);
        }
      },
    };
  }

  /** Check CURRENT; when it names another generation, load that one and swap it in. */
  async refresh(): Promise<void> {
    if (this.loading) return this.loading;
    this.loading = (async () => {
      try {
        const layout = dataDirLayout(this.dataDir);
        const id = await readCurrent(layout);
        if (!id || id === this.current?.id) return;
        const next = await this.loader.load(generationDir(layout, id), this.current);
        await this.warmUp(next).catch((err: Error) =>
          this.log.warn({ generation: next.id, err: err.message }, 'the warm-up failed; swapping cold'),
        );
        const old = this.current;
        this.current = next;
        this.lastError = null;
        for (const l of this.swapListeners) l(next, old);
        this.log.info({ generation: next.id, loadMs: next.loadMs, previous: old?.id ?? null }, 'serving generation');
        if (old) {
          if (this.leases.has(old)) this.retired.add(old);
          else this.free(old);
        }
      } catch (err) {
        // The generation being served stays; the next check tries again.
        this.lastError = (err as Error).message;
        this.log.error({ err: this.lastError }, 'could not load the new generation; still serving the previous one');
      } finally {
        this.loading = null;
      }
    })();
    return this.loading;
  }

  /** A retired generation no request holds: its search workers let it go; the collector does the rest. */
  private free(gen: LoadedGeneration): void {
    this.log.info({ generation: gen.id }, 'retired generation released');
    this.loader
      .dispose(gen)
      .catch((err: Error) => this.log.warn({ generation: gen.id, err: err.message }, 'search workers could not drop the generation'));
  }

  /** Check for a new generation every `ms`. */
  watch(ms: number): void {
    this.timer = setInterval(() => void this.refresh(), ms);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }
}
