// What a narrative's detail and trajectory read off ALL its members: the creator and platform
// split (GET /narratives/{id}, the lists' platform filter) and the daily series (trajectory). At
// 1M posts the largest narrative has over 100k members, and a first read of these cost 0.3-0.9 s
// on the main thread with 16 connections waiting (the map reads' p99); so a generation's tracked
// narratives get theirs when it loads (primeMemberReads: the loader thread, off the serving
// path), and an emergent narrative's (at most a search answer's rows) on first read.
import { DAY_MS } from '../../core/snapshots/windows.ts';
import { spikeDays } from '../../core/maps/daily-signals.ts';
import { feelingCodeOfIds, sentimentOfCounts } from '../../core/maps/sentiment.ts';
import type { SearchIndex } from '../../core/ranking/search-index.ts';
import type { MemberColumns } from '../../core/maps/members.ts';
import type { ContentColumns } from './content-columns.ts';
import type { DailyPoint, LoadedNarrative, MemberSplit } from './map-types.ts';
import { inRowOrder } from './row-order.ts';

/** What the member reads read of a generation (a GenerationData: loaded-generation.ts). */
interface Source {
  content: ContentColumns;
  index: Pick<SearchIndex, 'asOfMs' | 'publishedAt' | 'enrichment'>;
  members: MemberColumns;
}

/** Every tracked narrative's member reads, set on it (they travel with the maps to the main thread). */
export function primeMemberReads(gen: Source, narratives: readonly LoadedNarrative[]): void {
  for (const ln of narratives)
    ln.reads = { split: memberSplit(gen, ln.members), daily: dailySeries(gen, ln.members, ln.dailyCounts.length) };
}

/** A tracked narrative's split: primed at load, else computed now. */
export function narrativeSplit(gen: Source, ln: LoadedNarrative): MemberSplit {
  return ln.reads?.split ?? memberSplit(gen, ln.members);
}

// A map entry's members do not change within a generation: an emergent narrative's split is
// computed on first read and kept with its member list (freed with it).
const splits = new WeakMap<Int32Array, MemberSplit>();

/** Creators a detail lists (by posts). */
const TOP_CREATORS = 50;

/** The creator and platform split of `members` (kept with the member list). */
export function memberSplit(gen: Pick<Source, 'content'>, members: Int32Array): MemberSplit {
  const cached = splits.get(members);
  if (cached) return cached;
  const { platform, platforms: names, creatorId, creatorHandle } = gen.content;
  // One pass with flat counters, the members in row order: a Map and an array per creator, in rank
  // order, cost 0.3-0.9 s for a narrative of 100k members at 1M posts. Slot s is a creator; its
  // posts on platform code c are counts[s * P + c].
  let P = 1;
  for (const r of inRowOrder(members)) if (platform[r]! >= P) P = platform[r]! + 1;
  const byCode = new Float64Array(P);
  const slotOf = new Map<number, number>();
  const ids: number[] = [];
  const counts: number[] = [];
  for (const r of inRowOrder(members)) {
    const code = platform[r]!;
    byCode[code]!++;
    const id = creatorId[r]!;
    if (Number.isNaN(id)) continue;
    let slot = slotOf.get(id);
    if (slot === undefined) {
      slotOf.set(id, (slot = ids.length));
      ids.push(id);
      for (let c = 0; c < P; c++) counts.push(0);
    }
    counts[slot * P + code]!++;
  }
  const name = (code: number) => names[code] ?? 'unknown';
  const split: MemberSplit = {
    creators: topCreators(counts, P, ids, name).map(({ slot, code, posts }) => ({
      creatorId: ids[slot]!,
      creatorHandle: handleOf(members, ids[slot]!, creatorId, creatorHandle),
      platform: name(code),
      posts,
    })),
    platforms: [...byCode]
      .map((posts, code) => ({ code, posts }))
      .filter((p) => p.posts > 0)
      .map(({ code, posts }) => ({ platform: name(code), posts, share: posts / Math.max(1, members.length) }))
      .sort((a, b) => b.posts - a.posts || a.platform.localeCompare(b.platform)),
    platformCodes: new Set([...byCode.keys()].filter((code) => byCode[code]! > 0)),
  };
  splits.set(members, split);
  return split;
}

/**
 * The TOP_CREATORS (creator, platform) pairs with the most posts (ties: lower creator id, then
 * platform name), sorting only the pairs at or above the TOP_CREATORS-th count.
 */
function topCreators(counts: readonly number[], P: number, ids: readonly number[], name: (code: number) => string) {
  const histogram = new Map<number, number>();
  for (const n of counts) if (n > 0) histogram.set(n, (histogram.get(n) ?? 0) + 1);
  let floor = 1;
  let above = 0;
  for (const n of [...histogram.keys()].sort((a, b) => b - a)) {
    above += histogram.get(n)!;
    floor = n;
    if (above >= TOP_CREATORS) break;
  }
  const pairs: Array<{ slot: number; code: number; posts: number }> = [];
  for (let k = 0; k < counts.length; k++) if (counts[k]! >= floor) pairs.push({ slot: Math.floor(k / P), code: k % P, posts: counts[k]! });
  return pairs
    .sort((a, b) => b.posts - a.posts || ids[a.slot]! - ids[b.slot]! || name(a.code).localeCompare(name(b.code)))
    .slice(0, TOP_CREATORS);
}

/** A creator's handle: that of its first member row (in rank order) with one. */
function handleOf(members: Int32Array, id: number, creatorId: Float64Array, handles: { get(row: number): string | null }) {
  for (const r of members) {
    if (creatorId[r] !== id) continue;
    const handle = handles.get(r);
    if (handle !== null) return handle;
  }
  return null;
}

// Like the member split: kept with the member list.
const dailyByMembers = new WeakMap<Int32Array, DailyPoint[]>();

/**
 * The members' daily series over the narrative's window: day i starts at `start` and lasts 24 h,
 * the last one ending at the generation's as-of instant (as daily_counts); engagement is
 * likes + comments + shares of the day's posts; spike, sentiment_score and stance are the day's
 * (core/maps/daily-signals.ts, core/maps/sentiment.ts: the narrative's own formulas over that
 * day's posts).
 */
export function dailySeries(gen: Source, members: Int32Array, days: number): DailyPoint[] {
  const cached = dailyByMembers.get(members);
  if (cached) return cached;
  const series = countDays(gen, members, days);
  dailyByMembers.set(members, series);
  return series;
}

function countDays(gen: Source, members: Int32Array, days: number): DailyPoint[] {
  const asOfMs = gen.index.asOfMs;
  const { enrichment } = gen.index;
  const counts = Array.from({ length: days }, () => ({ posts: 0, interactions: 0, feelings: new Float64Array(8) }));
  for (const r of inRowOrder(members)) {
    const back = Math.floor((asOfMs - gen.index.publishedAt[r]!) / DAY_MS);
    if (back < 0 || back >= days) continue;
    const d = counts[days - 1 - back]!;
    d.posts++;
    d.interactions += gen.members.interactions[r]!;
    d.feelings[feelingCodeOfIds(enrichment.toneOf(r), enrichment.moods.idsOf(r), enrichment.moods.dict)]!++;
  }
  const spikes = spikeDays(counts.map((d) => d.posts));
  return counts.map((d, i) => {
    const feeling = sentimentOfCounts(d.feelings, d.posts);
    return {
      start: new Date(asOfMs - (days - i) * DAY_MS).toISOString(),
      content_count: d.posts,
      engagement: d.interactions,
      spike: spikes[i]!,
      sentiment_score: feeling.score,
      stance: feeling.breakdown.stance,
    };
  });
}
