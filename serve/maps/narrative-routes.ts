// Free reads of the narrative map (docs/api.md, "Free reads"), never billed: trending (by burst, spread over themes), search (by
// labels, summaries, tags and the words of member posts: narrative-rank.ts), one narrative (the posts a reader opens first, all its
// posts, creators, platform split; emergent ids from searches too, while held), and a narrative's trajectory over generations.
import Router from '@koa/router';
import type { ApiState } from '../generation/api-state.ts';
import type { WindowKey } from '../../core/snapshots/windows.ts';
import { storedFields } from '../generation/content-item.ts';
import type { EmergentStore } from '../search/emergent-store.ts';
import { emergentCentral } from '../search/answer-narratives.ts';
import type { LoadedGeneration } from '../generation/loaded-generation.ts';
import { badRequest } from '../http/http-error.ts';
import type { Narrative, TrajectoryPoint } from '../generation/load-maps.ts';
import type { MemberSplit } from '../generation/map-types.ts';
import { resolveNarrative, type Resolved } from './narrative-lookup.ts';
import { searchNarratives } from './narrative-rank.ts';
import { queryFrom } from '../http/query.ts';
import { narrativeDetailQuery, narrativeSearchQuery, trendingQuery } from './map-queries.ts';
import { platformCode } from './platform-code.ts';
import { dailySeries, memberSplit, narrativeSplit } from '../generation/member-reads.ts';
import { resolveTheme } from './theme-routes.ts';
import { sortedPage } from '../generation/trending-order.ts';
import { periodChange } from '../../core/maps/daily-signals.ts';

// The benches read the trending order from here.
export { trendingOrder } from '../generation/trending-order.ts';

function detail(
  gen: LoadedGeneration,
  narrative: Narrative,
  rows: { members: Int32Array; central: Int32Array; split: MemberSplit },
  dailyCounts: number[],
  postLimit: number,
  postOffset: number,
) {
  const { members } = rows;
  const { creators, platforms } = rows.split;
  const posts = Array.from(members.subarray(postOffset, postOffset + postLimit), (r) => storedFields(gen, r));
  const theme = narrative.theme_id ? gen.maps.themeById.get(narrative.theme_id)?.theme : undefined;
  return {
    narrative,
    // The theme it belongs to, in short (GET /themes/{id} reads it whole); null for an emergent narrative.
    theme: theme ? { id: theme.id, theme_key: theme.theme_key, label: theme.label, narrative_count: theme.narrative_count } : null,
    daily_counts: dailyCounts,
    // What a reader opens first (docs/fields.md, central_content_uuids); `posts` keeps every member.
    central_posts: Array.from(rows.central, (r) => storedFields(gen, r)),
    posts: {
      items: posts,
      total: members.length,
      offset: postOffset,
      limit: postLimit,
      next_offset: postOffset + posts.length < members.length ? postOffset + posts.length : null,
    },
    creators,
    platforms,
  };
}

/** What an id resolved to, when it was not the narrative's own current id. */
function resolution(id: string, found: Resolved): Record<string, string> {
  return found.source === 'tracked' && found.resolvedBy !== 'id' ? { requested_id: id, resolved_by: found.resolvedBy } : {};
}

function pointOf(gen: LoadedGeneration, n: Narrative): TrajectoryPoint {
  return {
    generation: gen.id,
    as_of: gen.manifest.as_of,
    computed_at: n.computed_at,
    narrative_id: n.id,
    content_count: n.content_count,
    creator_count: n.creator_count,
    total_engagement: n.total_engagement,
    velocity: n.velocity,
    acceleration: n.acceleration,
    momentum_score: n.momentum_score,
    emerging_score: n.emerging_score,
    lifecycle: n.lifecycle,
    sentiment_score: n.sentiment_score,
  };
}

export function narrativesRouter(emergent: EmergentStore): Router {
  const r = new Router<ApiState>();
  r.get('/narratives/trending', (ctx) => {
    const gen = ctx.state.gen;
    const { window: asked, platform, limit, offset, sort, daily, theme: themeId, spread } = queryFrom(trendingQuery, ctx.query);
    const theme = themeId === undefined ? null : resolveTheme(gen, themeId).lt.theme;
    if (theme && asked && asked !== theme.window_key)
      throw badRequest(
        `theme ${themeId} is a theme of window ${theme.window_key}, not ${asked}: leave window out, or ask for window=${theme.window_key}`,
      );
    const window = asked ?? theme?.window_key ?? '30d';
    const code = platformCode(gen, platform);
    const list = gen.maps.narratives.filter(
      (n) =>
        n.narrative.window_key === window &&
        (theme === null || n.narrative.theme_id === theme.id) &&
        (code === null || narrativeSplit(gen, n).platformCodes.has(code)),
    );
    const themeOf = spread && theme === null ? (n: (typeof list)[number]) => n.narrative.theme_id ?? null : undefined;
    const { page, ...paging } = sortedPage(list, (n) => n.narrative, { sort, offset, limit, themeOf });
    ctx.body = {
      window,
      sort,
      spread: themeOf !== undefined,
      generation: gen.id,
      items: daily
        ? page.map((n) => ({ ...n.narrative, daily_counts: n.dailyCounts, period_change: periodChange(n.dailyCounts) }))
        : page.map((n) => n.narrative),
      ...paging,
    };
  });
  r.get('/narratives/search', (ctx) => {
    const gen = ctx.state.gen;
    const { q, window: only, limit } = queryFrom(narrativeSearchQuery, ctx.query);
    const window = only ?? null;
    const items = searchNarratives(gen.maps, q, window, limit).map((h) => ({ ...h.ln.narrative, text_rank: h.score }));
    ctx.body = { q, window, generation: gen.id, items };
  });
  r.get('/narratives/:id', async (ctx) => {
    const gen = ctx.state.gen;
    const { limit, offset } = queryFrom(narrativeDetailQuery, ctx.query);
    const id = ctx.params.id!;
    const found = await resolveNarrative(gen, emergent, id);
    const { narrative, members, dailyCounts } = found.source === 'tracked' ? found.ln : found.e;
    const central = found.source === 'tracked' ? found.ln.central : emergentCentral(gen, members);
    const split = found.source === 'tracked' ? narrativeSplit(gen, found.ln) : memberSplit(gen, members);
    ctx.body = {
      generation: gen.id,
      ...resolution(id, found),
      ...detail(gen, narrative, { members, central, split }, dailyCounts, limit, offset),
    };
  });
  r.get('/narratives/:id/trajectory', async (ctx) => {
    const gen = ctx.state.gen;
    const id = ctx.params.id!;
    // A story that has ended still has its history.
    const ended = !gen.maps.narrativeByKey.has(id) ? gen.maps.narrativeHistory.get(id) : undefined;
    if (ended) {
      ctx.body = {
        id: null,
        source: 'tracked',
        narrative_key: id,
        window_key: ended.window_key,
        generation: gen.id,
        ended: true,
        daily: [],
        daily_counts: [],
        points: ended.points,
      };
      return;
    }
    const found = await resolveNarrative(gen, emergent, id);
    const n = found.source === 'tracked' ? found.ln : found.e;
    const window = n.narrative.window_key as WindowKey;
    ctx.body = {
      id: n.narrative.id,
      source: n.narrative.source,
      narrative_key: n.narrative.narrative_key,
      window_key: window,
      generation: gen.id,
      ...resolution(id, found),
      ended: false,
      daily: (found.source === 'tracked' ? found.ln.reads?.daily : undefined) ?? dailySeries(gen, n.members, n.dailyCounts.length),
      daily_counts: n.dailyCounts,
      // An emergent narrative exists in this generation only: its one point is the narrative's figures now.
      points: found.source === 'tracked' ? found.ln.trajectory : [pointOf(gen, found.e.narrative)],
    };
  });
  return r;
}
