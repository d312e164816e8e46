// The maps' clusters (narratives, patterns) of this run matched to those of the generation being
// served, window by window, so a continuing story keeps its key (`narrative_key`, `pattern_key`). A pair is a candidate when its centroids' cosine is
// at least MATCH_COSINE or their members overlap by at least MATCH_OVERLAP (overlap coefficient
// |A ∩ B| / min(|A|, |B|) of posts, as this run's rows: a shifting window drops old posts and adds new ones, so
// Jaccard would understate a continuing story); candidates are taken greedily by cosine + overlap,
// each narrative at most once. Unmatched clusters get a new key.
import { createHash } from 'node:crypto';

export const MATCH_COSINE = 0.8;
const MATCH_OVERLAP = 0.5;

export interface TrackedSide {
  centroid: Float32Array;
  /** Member posts as this run's rows, each once (the previous generation's members mapped to this run's rows). */
  members: ArrayLike<number>;
}
export interface PreviousNarrative extends TrackedSide {
  key: string;
}

/** Scratch marks by row, grown as needed (members are counted by marking, not by building sets of a million rows). */
let marks = new Int32Array(0);
function marksFor(sides: ReadonlyArray<ArrayLike<number>>): Int32Array {
  let max = -1;
  for (const s of sides) for (let i = 0; i < s.length; i++) if (s[i]! > max) max = s[i]!;
  if (marks.length <= max) marks = new Int32Array(Math.max(max + 1, marks.length * 2));
  return marks;
}

export function overlapCoefficient(a: ArrayLike<number>, b: ArrayLike<number>): number {
  if (a.length === 0 || b.length === 0) return 0;
  const m = marksFor([a, b]);
  for (let i = 0; i < a.length; i++) m[a[i]!] = 1;
  let n = 0;
  for (let i = 0; i < b.length; i++) n += m[b[i]!]!;
  for (let i = 0; i < a.length; i++) m[a[i]!] = 0;
  return n / Math.min(a.length, b.length);
}

/**
 * |current[c] ∩ previous[p]| for every pair: the previous sides' rows are marked with their index
 * (one pass over their members), then each current side counts its members' marks. Sides of one
 * clustering are disjoint; a row claimed twice falls back to pairwise counts.
 */
function intersections(current: readonly TrackedSide[], previous: readonly TrackedSide[]): Int32Array[] {
  const out = current.map(() => new Int32Array(previous.length));
  const m = marksFor([...current, ...previous].map((s) => s.members));
  let disjoint = true;
  previous.forEach((p, j) => {
    for (let i = 0; i < p.members.length; i++) {
      const r = p.members[i]!;
      if (m[r] !== 0) disjoint = false;
      m[r] = j + 1;
    }
  });
  if (disjoint)
    current.forEach((c, k) => {
      for (let i = 0; i < c.members.length; i++) {
        const j = m[c.members[i]!]!;
        if (j > 0) out[k]![j - 1]!++;
      }
    });
  for (const p of previous) for (let i = 0; i < p.members.length; i++) m[p.members[i]!] = 0;
  if (!disjoint)
    current.forEach((c, k) =>
      previous.forEach((p, j) => {
        out[k]![j] = Math.round(overlapCoefficient(c.members, p.members) * Math.min(c.members.length, p.members.length));
      }),
    );
  return out;
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
  const shared = intersections(current, previous);
  current.forEach((cur, c) => {
    previous.forEach((prev, p) => {
      if (prev.centroid.length !== cur.centroid.length) return;
      const cos = cosine(cur.centroid, prev.centroid);
      const small = Math.min(cur.members.length, prev.members.length);
      const ov = small === 0 ? 0 : shared[c]![p]! / small;
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

/** A new key (nk- for a narrative, tk- for a theme, pk- for a pattern): the window and a hash of what first named the cluster (stable text, no counter). */
export function newMapKey(prefix: 'nk' | 'tk' | 'pk', window: string, runTag: string, label: string, firstMember: string): string {
  return `${prefix}-${window}-${createHash('sha256').update(`${runTag}\n${label}\n${firstMember}`).digest('hex').slice(0, 10)}`;
}
