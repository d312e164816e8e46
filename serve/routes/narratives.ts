// Free reads of the narrative map (spec 4.2), never billed: trending (by momentum), search (BM25
// over labels, summaries and tags), one narrative (posts, creators, platform split; emergent ids
// from searches too, while held), and a narrative's trajectory over generations.
import Router from '@koa/router';
import { terms } from '../../core/analyzer.ts';
import { searchBm25 } from '../../core/bm25.ts';
import { storedFields } from '../content-item.ts';
import type { EmergentStore } from '../emergent-store.ts';
import type { LoadedGeneration } from '../generation.ts';
import { badRequest, notFound } from '../http-error.ts';
import type { Narrative } from '../maps.ts';
import { intParam, page, windowParam } from '../params.ts';

/** Trending order: momentum, then emergence, then size, then id (documented in docs/api.md). */
export function trendingOrder(a: Narrative, b: Narrative): number {
  return b.momentum_score - a.momentum_score || b.emerging_score - a.emerging_score || b.content_count - a.content_count || a.id.localeCompare(b.id);
}

interface MemberSplit {
  creators: Array<{ creatorId: number; platform: string; posts: number }>;
  platforms: Array<{ platform: string; posts: number; share: number }>;
  platformCodes: Set<number>;
}

// A tracked narrative's members do not change within a generation, and at 1M posts a narrative
// has tens of thousands of them: its creator and platform split is computed on first read and kept
// with the member list (freed with the generation).
const splits = new WeakMap<Int32Array, MemberSplit>();

function memberSplit(gen: LoadedGeneration, members: Int32Array): MemberSplit {
  const cached = splits.get(members);
  if (cached) return cached;
  const { platform, platforms: names, creatorId } = gen.content;
  const byCode = new Map<number, number>();
  const creators = new Map<number, Map<number, number>>();
  for (const r of members) {
    const code = platform[r]!;
    byCode.set(code, (byCode.get(code) ?? 0) + 1);
    const id = creatorId[r]!;
    if (Number.isNaN(id)) continue;
    const per = creators.get(id) ?? new Map<number, number>();
    per.set(code, (per.get(code) ?? 0) + 1);
    creators.set(id, per);
  }
  const name = (code: number) => names[code] ?? 'unknown';
  const split: MemberSplit = {
    creators: [...creators].flatMap(([id, per]) => [...per].map(([code, posts]) => ({ creatorId: id, platform: name(code), posts })))
      .sort((a, b) => b.posts - a.posts || a.creatorId - b.creatorId || a.platform.localeCompare(b.platform)).slice(0, 50),
    platforms: [...byCode].map(([code, posts]) => ({ platform: name(code), posts, share: posts / Math.max(1, members.length) }))
      .sort((a, b) => b.posts - a.posts || a.platform.localeCompare(b.platform)),
    platformCodes: new Set(byCode.keys()),
  };
  splits.set(members, split);
  return split;
}

function detail(gen: LoadedGeneration, narrative: Narrative, members: Int32Array, dailyCounts: number[], postLimit: number, postOffset: number) {
  const { creators, platforms } = memberSplit(gen, members);
  const posts = Array.from(members.subarray(postOffset, postOffset + postLimit), (r) => storedFields(gen, r));
  return {
    narrative, daily_counts: dailyCounts,
    posts: { items: posts, total: members.length, offset: postOffset, limit: postLimit, next_offset: postOffset + posts.length < members.length ? postOffset + posts.length : null },
    creators, platforms,
  };
}

export function narrativesRouter(emergent: EmergentStore): Router {
  const r = new Router();
  r.get('/narratives/trending', (ctx) => {
    const gen = ctx.state.gen as LoadedGeneration;
    const window = windowParam(ctx.query.window, '30d');
    const platform = typeof ctx.query.platform === 'string' ? ctx.query.platform.toLowerCase() : null;
    const { limit, offset } = page(ctx.query, 20, 100);
    let list = gen.maps.narratives.filter((n) => n.narrative.window_key === window);
    if (platform) {
      if (!gen.content.platforms.includes(platform)) throw badRequest(`unknown platform "${platform}" (platforms: ${gen.content.platforms.join(', ')})`);
      const code = gen.content.platforms.indexOf(platform);
      list = list.filter((n) => memberSplit(gen, n.members).platformCodes.has(code));
    }
    const ordered = list.map((n) => n.narrative).sort(trendingOrder);
    ctx.body = { window, generation: gen.id, items: ordered.slice(offset, offset + limit), total: ordered.length, offset, limit, next_offset: offset + limit < ordered.length ? offset + limit : null };
  });
  r.get('/narratives/search', (ctx) => {
    const gen = ctx.state.gen as LoadedGeneration;
    const q = typeof ctx.query.q === 'string' ? ctx.query.q.trim() : '';
    if (!q) throw badRequest('q is required: the words to look for in narrative labels and summaries');
    const window = ctx.query.window === undefined ? null : windowParam(ctx.query.window, '30d');
    const limit = intParam(ctx.query.limit, 'limit', 20, 1, 100);
    const index = gen.maps.narrativeText;
    const hits = index ? searchBm25(index, terms(q), gen.maps.narratives.length) : [];
    const items = hits.map((h) => ({ ...gen.maps.narratives[h.row]!.narrative, text_rank: h.score }))
      .filter((n) => window === null || n.window_key === window).slice(0, limit);
    ctx.body = { q, window, generation: gen.id, items };
  });
  r.get('/narratives/:id', (ctx) => {
    const gen = ctx.state.gen as LoadedGeneration;
    const { limit, offset } = page(ctx.query, 50, 500);
    const tracked = gen.maps.narrativeById.get(ctx.params.id!);
    if (tracked) {
      ctx.body = detail(gen, tracked.narrative, tracked.members, tracked.dailyCounts, limit, offset);
      return;
    }
    const e = emergent.get(ctx.params.id!, gen.id);
    if (!e) throw notFound(`no narrative ${ctx.params.id} in generation ${gen.id} (emergent narratives stay readable for an hour after the search that formed them)`);
    ctx.body = detail(gen, e.narrative, e.members, e.dailyCounts, limit, offset);
  });
  r.get('/narratives/:id/trajectory', (ctx) => {
    const gen = ctx.state.gen as LoadedGeneration;
    const n = gen.maps.narrativeById.get(ctx.params.id!);
    if (!n) throw notFound(`no tracked narrative ${ctx.params.id} in generation ${gen.id}`);
    ctx.body = { id: n.narrative.id, narrative_key: n.narrative.narrative_key, window_key: n.narrative.window_key, daily_counts: n.dailyCounts, points: n.trajectory };
  });
  return r;
}
