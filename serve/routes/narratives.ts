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

function detail(gen: LoadedGeneration, narrative: Narrative, members: Int32Array, dailyCounts: number[], postLimit: number, postOffset: number) {
  const creators = new Map<string, { creatorId: number; platform: string; posts: number }>();
  const platforms = new Map<string, number>();
  for (const r of members) {
    const p = gen.content.platforms[gen.content.platform[r]!] ?? 'unknown';
    platforms.set(p, (platforms.get(p) ?? 0) + 1);
    const id = gen.content.creatorId[r]!;
    if (Number.isNaN(id)) continue;
    const k = `${id}\u0000${p}`;
    const c = creators.get(k) ?? { creatorId: id, platform: p, posts: 0 };
    c.posts++;
    creators.set(k, c);
  }
  const posts = Array.from(members.subarray(postOffset, postOffset + postLimit), (r) => storedFields(gen, r));
  return {
    narrative, daily_counts: dailyCounts,
    posts: { items: posts, total: members.length, offset: postOffset, limit: postLimit, next_offset: postOffset + posts.length < members.length ? postOffset + posts.length : null },
    creators: [...creators.values()].sort((a, b) => b.posts - a.posts || a.creatorId - b.creatorId).slice(0, 50),
    platforms: [...platforms].map(([platform, posts]) => ({ platform, posts, share: posts / Math.max(1, members.length) })).sort((a, b) => b.posts - a.posts || a.platform.localeCompare(b.platform)),
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
      list = list.filter((n) => n.members.some((row) => gen.content.platform[row] === code));
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
