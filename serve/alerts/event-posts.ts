// The posts an alert event carries (docs/api.md, "Alerts", "The event"): the one place that picks
// a narrative's posts for an event and says what of each is shown, so that which posts count as a
// narrative's central ones can change here alone.
import { summarise } from '../../core/maps/label-and-summary.ts';
import type { LoadedNarrative } from '../generation/load-maps.ts';
import type { GenerationData } from '../generation/loaded-generation.ts';
import type { AlertEvent } from './alert-model.ts';

/** Posts an event carries. */
export const EVENT_POSTS = 3;

/** A narrative's first central posts (the posts a reader opens first: no slur, no text twice; core/maps/central-posts.ts) as its event shows them. */
export function eventPosts(gen: Pick<GenerationData, 'index' | 'content'>, ln: LoadedNarrative): AlertEvent['posts'] {
  return Array.from(ln.central.subarray(0, EVENT_POSTS), (r) => {
    const title = gen.content.title.get(r);
    // The description, or the title on platforms that post none; cut as a narrative's summary is.
    const words = gen.content.description.get(r) || title;
    return {
      uuid: gen.index.uuid.get(r)!,
      title,
      text: words ? summarise(words) || null : null,
      url: gen.content.contentUrl.get(r),
    };
  });
}
