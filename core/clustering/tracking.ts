// The maps' clusters (narratives, patterns) of this run matched to those of the generation being
// served, window by window, so a continuing story keeps its key (`narrative_key`, `pattern_key`). A pair is a candidate when its centroids' cosine is
// at least MATCH_COSINE or their members overlap by at least MATCH_OVERLAP (overlap coefficient
// |A ∩ B| / min(|A|, |B|) of post uuids: a shifting window drops old posts and adds new ones, so
// Jaccard would understate a continuing story); candidates are taken greedily by cosine + overlap,
// each narrative at most once. Unmatched clusters get a new key.
import { createHash } from 'node:crypto';

export const MATCH_COSINE = 0.8;
export const MATCH_OVERLAP = 0.5;

export interface TrackedSide {
  centroid: Float32Array;
  members: Set<string>;
}
export interface PreviousNarrative extends TrackedSide {
  key: string;
}

export function overlapCoefficient(a: Set<string>, b: Set<string>): number {
  if (a.size === 0 || b.size === 0) return 0;
  const [small, large] = a.size <= b.size ? [a, b] : [b, a];
  let n = 0;
  for (const x of small) if (large.has(x)) n++;
  return n / small.size;
}

function cosine(a: Float32Array, b: Float32Array): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i]! * b[i]!;
  return s;
}

export interface Match {
  previous: number;
  cosine: number;
  overlap: number;
}

export interface MatchThresholds {
  cosine: number;
  overlap: number;
}

/** For each current narrative (or pattern), the previous one it continues, or null. */
export function matchClusters(
  current: TrackedSide[],
  previous: TrackedSide[],
  at: MatchThresholds = { cosine: MATCH_COSINE, overlap: MATCH_OVERLAP },
): Array<Match | null> {
  const cands: Array<{ c: number; p: number; cos: number; ov: number }> = [];
  current.forEach((cur, c) => {
    previous.forEach((prev, p) => {
      if (prev.centroid.length !== cur.centroid.length) return;
      const cos = cosine(cur.centroid, prev.centroid);
      const ov = overlapCoefficient(cur.members, prev.members);
      if (cos >= at.cosine || ov >= at.overlap) cands.push({ c, p, cos, ov });
    });
  });
  cands.sort((x, y) => y.cos + y.ov - (x.cos + x.ov) || x.c - y.c || x.p - y.p);
  const out: Array<Match | null> = current.map(() => null);
  const taken = new Set<number>();
  for (const k of cands) {
    if (out[k.c] || taken.has(k.p)) continue;
    out[k.c] = { previous: k.p, cosine: k.cos, overlap: k.ov };
    taken.add(k.p);
  }
  return out;
}

/** A new key (nk- for a narrative, pk- for a pattern): the window and a hash of what first named the cluster (stable text, no counter). */
export function newMapKey(prefix: 'nk' | 'pk', window: string, runTag: string, label: string, firstMember: string): string {
  return `${prefix}-${window}-${createHash('sha256').update(`${runTag}\n${label}\n${firstMember}`).digest('hex').slice(0, 10)}`;
}
