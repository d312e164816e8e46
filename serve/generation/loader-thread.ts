// The main thread's side of the loader thread (loader-worker.ts): a generation is read there and
// comes back as shared parts, made into this thread's LoadedGeneration by views alone
// (generationFrom). A thread per load, ended once its parts are here.
import type { Worker } from 'node:worker_threads';
import { spawnTsWorker } from '../../core/infra/workers/spawn.ts';
import { generationFrom, type GenerationParts, type LoadedElsewhere, type LoadedGeneration } from './loaded-generation.ts';
import type { LoaderReply, LoaderTask } from './loader-worker.ts';

const LOADER_WORKER = new URL('./loader-worker.ts', import.meta.url);

export class LoaderThread {
  /** Loads under way (close ends them). */
  private readonly running = new Set<Worker>();

  /** `nice`: the loader thread's nice value (loader-worker.ts), 0 as the serving threads. */
  constructor(private readonly nice = 0) {}

  /**
   * The generation in `dir`, read on a thread of its own; `previous` (the one served, with its
   * parts as the workers hold them) lends the segments both hold.
   */
  async load(
    dir: string,
    previous: { gen: LoadedGeneration; parts: GenerationParts } | null,
  ): Promise<{ gen: LoadedGeneration; elsewhere: LoadedElsewhere; nice: number | null }> {
    const task: LoaderTask = { dir, previous: previous?.parts ?? null, nice: this.nice };
    const w = spawnTsWorker(LOADER_WORKER, task);
    this.running.add(w);
    let reply: { result: LoadedElsewhere; nice: number | null };
    try {
      reply = await new Promise((resolve, reject) => {
        w.once('message', (m: LoaderReply) => ('error' in m ? reject(new Error(m.error)) : resolve(m)));
        w.once('error', reject);
        w.once('exit', (code) => reject(new Error(`the generation loader exited with code ${code}`)));
      });
    } finally {
      this.running.delete(w);
      await w.terminate();
    }
    const elsewhere = reply.result;
    return { gen: await generationFrom(elsewhere, previous ? [previous.gen.index] : []), elsewhere, nice: reply.nice };
  }

  async close(): Promise<void> {
    await Promise.all([...this.running].map((w) => w.terminate()));
  }
}
