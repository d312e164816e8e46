// How the narratives of a publish relate by their posts (docs/api.md, "Alerts", "When a watch
// fires"): what the previous generation had of a narrative whose narrative_key it lacks (a rebuild
// re-splits stories and gives them new keys: the posts show they are the same), and which
// narratives of the new generation are one story told in several windows (so a watch gets one
// event per story). Each is computed once per narrative, on first need, however many watches ask;
// both are pure functions of the two generations, so every replica finds the same.
import { lowerBound, type SearchIndex } from '../../core/ranking/search-index.ts';
import { WINDOW_KEYS, type WindowKey } from '../../core/snapshots/windows.ts';
import type { LoadedNarrative, Maps } from '../generation/load-maps.ts';

/** A generation's posts by row. Rows differ between generations; a post's uuid does not. */
interface PostRows {
  uuid(row: number): string | null;
  /** Its published_at (epoch ms; NaN when not known). */
  publishedAt(row: number): number;
  /** The row of the post `uuid` published at `publishedAt`, -1 when the generation has no such post. */
  find(uuid: string, publishedAt: number): number;
}

/**
 * A loaded generation's rows: in (published_at, uuid) order end to end, so a post is found by a
 * binary search on its time. A post's times stay as first seen (docs/ingest-format.md, "Updates"),
 * so this finds what uuidRows does: replicas evaluating with either make the same events.
 */
export function indexRows(index: Pick<SearchIndex, 'rows' | 'uuid' | 'publishedAt'>): PostRows {
  // The three columns only: the rest of the index (graphs, postings) is not kept alive by this.
  const { rows, uuid: uuids, publishedAt: t } = index;
  return {
    uuid: (r) => uuids.get(r),
    publishedAt: (r) => t[r]!,
    find(uuid, at) {
      // Masked rows take the time of the row before them: every row of this time is looked at.
      for (let r = lowerBound(t, at); r < rows && t[r] === at; r++) if (uuids.get(r) === uuid) return r;
      return -1;
    },
  };
}

/** Rows known by their uuids alone (a generation read from disk for its maps only): found through a map made on first need. */
export function uuidRows(uuids: readonly string[]): PostRows {
  let rowOf: Map<string, number> | null = null;
  return {
    uuid: (r) => uuids[r] ?? null,
    publishedAt: () => NaN,
    find: (uuid) => (rowOf ??= new Map(uuids.map((u, r) => [u, r]))).get(uuid) ?? -1,
  };
}

/** One generation's narratives and posts. */
export interface LinkedSide {
  maps: Pick<Maps, 'narratives'>;
  rows: PostRows;
}

/** What the previous generation had of a narrative whose narrative_key it lacks. */
interface Predecessor {
  /** Its narrative of the same window holding more than half of the narrative's posts (at most one: a post is in one narrative per window). */
  sameWindow: LoadedNarrative | null;
  /** Whether it knew the story: one of its narratives, of any window, held more than half of the posts, or it had every one of them. */
  known: boolean;
}

/** For each window, the index (in `narratives`) of the narrative holding each row, -1 for none. */
function rowOwners(narratives: readonly LoadedNarrative[]): Map<string, Int32Array> {
  let rows = 0;
  for (const ln of narratives) for (const r of ln.members) rows = Math.max(rows, r + 1);
  const out = new Map<string, Int32Array>();
  narratives.forEach((ln, i) => {
    let owner = out.get(ln.narrative.window_key);
    if (!owner) out.set(ln.narrative.window_key, (owner = new Int32Array(rows).fill(-1)));
    for (const r of ln.members) owner[r] = i;
  });
  return out;
}

/** The narrative more than half of `members` belong to in `owner` (its index), else -1: a majority vote, then its count. */
function majority(members: Int32Array, owner: Int32Array): number {
  let pick = -1;
  let lead = 0;
  for (const r of members) {
    const o = owner[r]!;
    if (lead === 0) {
      pick = o;
      lead = 1;
    } else lead += o === pick ? 1 : -1;
  }
  if (pick < 0) return -1;
  let n = 0;
  for (const r of members) if (owner[r] === pick) n++;
  return n * 2 > members.length ? pick : -1;
}

/** A narrative's posts looked up in the previous generation: which of its narratives hold how many, and whether any post is new to it. */
function predecessorOf(before: LinkedSide, owners: Map<string, Int32Array>, after: PostRows, ln: LoadedNarrative): Predecessor {
  const held = new Map<number, number>();
  let fresh = false;
  for (const r of ln.members) {
    const uuid = after.uuid(r);
    const b = uuid === null ? -1 : before.rows.find(uuid, after.publishedAt(r));
    if (b < 0) fresh = true;
    else
      for (const owner of owners.values()) {
        const o = owner[b] ?? -1;
        if (o >= 0) held.set(o, (held.get(o) ?? 0) + 1);
      }
  }
  let sameWindow: LoadedNarrative | null = null;
  let known = !fresh;
  for (const [i, n] of held) {
    if (n * 2 <= ln.members.length) continue;
    known = true;
    const b = before.maps.narratives[i]!;
    if (b.narrative.window_key === ln.narrative.window_key) sameWindow = b;
  }
  return { sameWindow, known };
}

interface StoryLinks {
  /** What the previous generation had of a narrative (asked only of one whose narrative_key it lacks). */
  predecessor(ln: LoadedNarrative): Predecessor;
  /**
   * Its story: follow each narrative to the one of the nearest wider window holding more than
   * half of its posts, while there is one; the last is the story (its widest window's telling).
   */
  story(ln: LoadedNarrative): LoadedNarrative;
}

export function storyLinks(before: LinkedSide, after: LinkedSide): StoryLinks {
  let beforeOwners: Map<string, Int32Array> | null = null;
  let afterOwners: Map<string, Int32Array> | null = null;
  const predecessors = new Map<LoadedNarrative, Predecessor>();
  const stories = new Map<LoadedNarrative, LoadedNarrative>();
  const parentOf = (ln: LoadedNarrative): LoadedNarrative | null => {
    afterOwners ??= rowOwners(after.maps.narratives);
    // WINDOW_KEYS runs narrowest first.
    for (const w of WINDOW_KEYS.slice(WINDOW_KEYS.indexOf(ln.narrative.window_key as WindowKey) + 1)) {
      const owner = afterOwners.get(w);
      const i = owner ? majority(ln.members, owner) : -1;
      if (i >= 0) return after.maps.narratives[i]!;
    }
    return null;
  };
  const story = (ln: LoadedNarrative): LoadedNarrative => {
    let s = stories.get(ln);
    if (!s) {
      const parent = parentOf(ln);
      stories.set(ln, (s = parent ? story(parent) : ln));
    }
    return s;
  };
  return {
    predecessor(ln) {
      let p = predecessors.get(ln);
      if (!p) {
        beforeOwners ??= rowOwners(before.maps.narratives);
        predecessors.set(ln, (p = predecessorOf(before, beforeOwners, after.rows, ln)));
      }
      return p;
    },
    story,
  };
}
