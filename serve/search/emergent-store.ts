// Emergent narratives formed by searches, readable at /narratives/{id} for EMERGENT_TTL_MS after
// the search that formed them (each later search that forms the same one renews it), at most
// EMERGENT_MAX held (the oldest go first). In memory: they name rows of the generation that formed
// them, and a restart or a new generation starts afresh. With several replicas (DATABASE_URL) they
// are also shared through PostgreSQL (emergent-share.ts), so any replica reads them.
import type { EmergentNarrative } from './answer-narratives.ts';
import type { EmergentShare } from './emergent-share.ts';

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
    private readonly share: EmergentShare | null = null,
  ) {}

  put(generation: string, list: readonly EmergentNarrative[], expires = this.now() + this.ttlMs): void {
    for (const e of list) {
      this.entries.delete(e.narrative.id); // re-inserted last: Map order is age order
      this.entries.set(e.narrative.id, { e, generation, expires });
    }
    while (this.entries.size > this.max) this.entries.delete(this.entries.keys().next().value!);
    this.share?.write(generation, list, expires);
  }

  /** The narrative from memory, or from the replicas' shared table (kept here for the rest of its hour). */
  async find(id: string, generation: string): Promise<EmergentNarrative | null> {
    const here = this.get(id, generation);
    if (here || !this.share || !id.startsWith('em-')) return here;
    const shared = await this.share.read(id, generation);
    if (!shared) return null;
    this.entries.set(id, { e: shared.e, generation, expires: shared.expires });
    return shared.e;
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
