// Which narrative an id names, for the detail and trajectory reads. Ids a client may hold:
//   a current id         this generation's tracked narrative (ids are per generation);
//   a narrative_key      the stable key (nk-...): the current generation's narrative of that story;
//   an earlier id        an id of an earlier generation still in the trajectory history: the
//                        narrative its key leads to now, or a 404 that says the story has ended;
//   an emergent id       em-..., formed by a search on this generation, readable for an hour
//                        (on every replica: emergent-store.ts).
// The answer says what the id resolved to (docs/api.md, "Ids a client can keep").
import type { EmergentStore } from '../search/emergent-store.ts';
import type { LoadedGeneration } from '../generation/loaded-generation.ts';
import { notFound } from '../http/http-error.ts';
import type { LoadedNarrative } from '../generation/load-maps.ts';
import type { EmergentNarrative } from '../search/answer-narratives.ts';

export type Resolved =
  | { source: 'tracked'; ln: LoadedNarrative; resolvedBy: 'id' | 'narrative_key' | 'earlier_generation_id' }
  | { source: 'emergent'; e: EmergentNarrative };

export async function resolveNarrative(gen: LoadedGeneration, emergent: EmergentStore, id: string): Promise<Resolved> {
  const { maps } = gen;
  const current = maps.narrativeById.get(id);
  if (current) return { source: 'tracked', ln: current, resolvedBy: 'id' };
  const byKey = maps.narrativeByKey.get(id);
  if (byKey) return { source: 'tracked', ln: byKey, resolvedBy: 'narrative_key' };
  const earlier = maps.earlierNarrativeIds.get(id);
  if (earlier) {
    const now = maps.narrativeByKey.get(earlier.narrative_key);
    if (now) return { source: 'tracked', ln: now, resolvedBy: 'earlier_generation_id' };
    throw notFound(
      `narrative ${id} of generation ${earlier.generation} belongs to story ` +
        `${earlier.narrative_key}, which has no narrative in generation ${gen.id} (it ended, or ` +
        `merged into another); its history: GET /narratives/${earlier.narrative_key}/trajectory`,
    );
  }
  if (id.startsWith('nk-') && maps.narrativeHistory.has(id)) {
    throw notFound(
      `story ${id} has no narrative in generation ${gen.id} (it ended, or merged into another); its history: GET /narratives/${id}/trajectory`,
    );
  }
  const e = await emergent.find(id, gen.id);
  if (e) return { source: 'emergent', e };
  if (id.startsWith('em-'))
    throw notFound(
      `no emergent narrative ${id} in generation ${gen.id}: emergent narratives stay readable ` +
        `for an hour after the search that formed them, on the generation it ran on`,
    );
  throw notFound(`no narrative ${id}: not an id of generation ${gen.id} or of an earlier one in its history, nor a narrative_key`);
}
