// Emergent narratives formed by searches, readable at /narratives/{id} for EMERGENT_TTL_MS after
// the search that formed them (each later search that forms the same one renews it), at most
// EMERGENT_MAX held (the oldest go first). In memory: they name rows of the generation that formed
// them, and a restart or a new generation starts afresh.
import type { EmergentNarrative } from './answer-narratives.ts';

export const EMERGENT_TTL_MS = 60 * 60 * 1000;
export const EMERGENT_MAX = 10_000;

interface Entry {
  e: EmergentNarrative;
  generation: string;
  expires: number;
}

export class EmergentStore {
  private entries = new Map<string, Entry>();

  constructor(
    private readonly ttlMs = EMERGENT_TTL_MS,
    private readonly max = EMERGENT_MAX,
    private readonly now = () => Date.now(),
  ) {}

  put(generation: string, list: readonly EmergentNarrative[]): void {
    const expires = this.now() + this.ttlMs;
    for (const e of list) {
      this.entries.delete(e.narrative.id); // re-inserted last: Map order is age order
      this.entries.set(e.narrative.id, { e, generation, expires });
    }
    while (this.entries.size > this.max) this.entries.delete(this.entries.keys().next().value!);
  }

  /** The narrative if it is still held and was formed on `generation`. */
  get(id: string, generation: string): EmergentNarrative | null {
    const hit = this.entries.get(id);
    if (!hit) return null;
    if (hit.expires <= this.now() || hit.generation !== generation) {
      this.entries.delete(id);
      return null;
    }
    return hit.e;
  }

  get size(): number {
    return this.entries.size;
  }
}
