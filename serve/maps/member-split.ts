// The creator and platform split of a map entry's members (a narrative's, a theme's narratives'),
// for its detail and the lists' platform filter.
import type { LoadedGeneration } from '../generation/loaded-generation.ts';
import { badRequest } from '../http/http-error.ts';

interface MemberSplit {
  creators: Array<{ creatorId: number; creatorHandle: string | null; platform: string; posts: number }>;
  platforms: Array<{ platform: string; posts: number; share: number }>;
  platformCodes: Set<number>;
}

// A tracked narrative's members do not change within a generation, and at 1M posts a narrative
// has tens of thousands of them: its creator and platform split is computed on first read and kept
// with the member list (freed with the generation).
const splits = new WeakMap<Int32Array, MemberSplit>();

export function memberSplit(gen: LoadedGeneration, members: Int32Array): MemberSplit {
  const cached = splits.get(members);
  if (cached) return cached;
  const { platform, platforms: names, creatorId, creatorHandle } = gen.content;
  const byCode = new Map<number, number>();
  const creators = new Map<number, Map<number, number>>();
  const handles = new Map<number, string>();
  for (const r of members) {
    const code = platform[r]!;
    byCode.set(code, (byCode.get(code) ?? 0) + 1);
    const id = creatorId[r]!;
    if (Number.isNaN(id)) continue;
    const per = creators.get(id) ?? new Map<number, number>();
    per.set(code, (per.get(code) ?? 0) + 1);
    creators.set(id, per);
    if (!handles.has(id)) {
      const handle = creatorHandle.get(r);
      if (handle !== null) handles.set(id, handle);
    }
  }
  const name = (code: number) => names[code] ?? 'unknown';
  const split: MemberSplit = {
    creators: [...creators]
      .flatMap(([id, per]) =>
        [...per].map(([code, posts]) => ({ creatorId: id, creatorHandle: handles.get(id) ?? null, platform: name(code), posts })),
      )
      .sort((a, b) => b.posts - a.posts || a.creatorId - b.creatorId || a.platform.localeCompare(b.platform))
      .slice(0, 50),
    platforms: [...byCode]
      .map(([code, posts]) => ({ platform: name(code), posts, share: posts / Math.max(1, members.length) }))
      .sort((a, b) => b.posts - a.posts || a.platform.localeCompare(b.platform)),
    platformCodes: new Set(byCode.keys()),
  };
  splits.set(members, split);
  return split;
}

/** The code of the platform a list's `platform` parameter names (case-insensitive), null without one; a 400 for one not served. */
export function platformCode(gen: LoadedGeneration, asked: string | undefined): number | null {
  if (asked === undefined) return null;
  const platform = asked.toLowerCase();
  const code = gen.content.platforms.indexOf(platform);
  if (code < 0) throw badRequest(`unknown platform "${platform}" (platforms: ${gen.content.platforms.join(', ')})`);
  return code;
}
