// The main thread's side of the loader thread (loader-worker.ts): a generation is read there and
// comes back as shared parts, made into this thread's LoadedGeneration by views alone
// (generationFrom). A loader that dies is replaced on the next load, which then reads every
// segment (the indexes it lent from died with it).
import type { Worker } from 'node:worker_threads';
import { spawnTsWorker } from '../../core/infra/workers/spawn.ts';
import { generationFrom, type LoadedElsewhere, type LoadedGeneration } from './loaded-generation.ts';
import type { LoaderMessage, LoaderReply } from './loader-worker.ts';

const LOADER_WORKER = new URL('./loader-worker.ts', import.meta.url);

type DistributiveOmit<T, K extends keyof T> = T extends unknown ? Omit<T, K> : never;

export class LoaderThread {
  private worker: Worker | null = null;
  private readonly waiting = new Map<number, { resolve: (r: unknown) => void; reject: (e: Error) => void }>();
  private nextId = 1;

  private spawn(): Worker {
    const w = spawnTsWorker(LOADER_WORKER);
    w.on('message', (m: LoaderReply) => {
      const p = this.waiting.get(m.id);
      if (!p) return;
      this.waiting.delete(m.id);
      if ('error' in m) p.reject(new Error(m.error));
      else p.resolve(m.result);
    });
    const died = (err: Error) => {
      if (this.worker !== w) return;
      this.worker = null;
      for (const p of this.waiting.values()) p.reject(err);
      this.waiting.clear();
    };
    w.on('error', died);
    w.on('exit', (code) => died(new Error(`the generation loader exited with code ${code}`)));
    return w;
  }

  private ask<R>(msg: DistributiveOmit<LoaderMessage, 'id'>): Promise<R> {
    const w = (this.worker ??= this.spawn());
    const id = this.nextId++;
    return new Promise<R>((resolve, reject) => {
      this.waiting.set(id, { resolve: resolve as (r: unknown) => void, reject });
      w.postMessage({ ...msg, id });
    });
  }

  /** The generation in `dir`, read on the loader thread (lending from `previous`, the one served); its parts go to the workers. */
  async load(dir: string, previous: LoadedGeneration | null): Promise<{ gen: LoadedGeneration; elsewhere: LoadedElsewhere }> {
    const elsewhere = await this.ask<LoadedElsewhere>({ kind: 'load', dir, previous: previous?.id ?? null });
    return { gen: await generationFrom(elsewhere, previous ? [previous.index] : []), elsewhere };
  }

  /** The loader lets a retired generation go. */
  async drop(gen: string): Promise<void> {
    if (this.worker) await this.ask<boolean>({ kind: 'drop', gen });
  }

  async close(): Promise<void> {
    const w = this.worker;
    this.worker = null;
    await w?.terminate();
  }
}
