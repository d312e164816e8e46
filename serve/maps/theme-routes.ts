// Free reads of the themes (docs/api.md, "Free reads"), never billed: a window's themes paged as the
// trending narratives are (GET /themes), each with its narratives, and one theme (GET /themes/{id})
// with its narratives in full and the posts a reader opens first. A theme is named by its id (one generation's) or its theme_key.
import Router from '@koa/router';
import type { ApiState } from '../generation/api-state.ts';
import { periodChange } from '../../core/maps/daily-signals.ts';
import type { LoadedGeneration } from '../generation/loaded-generation.ts';
import { notFound } from '../http/http-error.ts';
import { queryFrom } from '../http/query.ts';
import type { LoadedTheme } from '../generation/load-themes.ts';
import { themesQuery } from './map-queries.ts';
import { platformCode } from './platform-code.ts';
import { narrativeSplit } from '../generation/member-reads.ts';
import { sortedPage } from '../generation/trending-order.ts';
import { storedFields } from '../generation/content-item.ts';

/** The theme an id or theme_key names in this generation, or a 404 that says why. */
export function resolveTheme(gen: LoadedGeneration, id: string): { lt: LoadedTheme; resolvedBy: 'id' | 'theme_key' } {
  const byId = gen.maps.themeById.get(id);
  if (byId) return { lt: byId, resolvedBy: 'id' };
  const byKey = gen.maps.themeByKey.get(id);
  if (byKey) return { lt: byKey, resolvedBy: 'theme_key' };
  if (id.startsWith('tk-'))
    throw notFound(
      `theme key ${id} has no theme in generation ${gen.id}: the theme ended, or merged into another (GET /themes lists them)`,
    );
  throw notFound(
    `no theme ${id} in generation ${gen.id}: theme ids name a theme in one generation (keep its theme_key, tk-...); GET /themes lists them`,
  );
}

/** A theme's narratives as a list item carries them. */
function narrativesIn(lt: LoadedTheme) {
  return lt.narratives.map(({ narrative: n }) => ({
    id: n.id,
    narrative_key: n.narrative_key,
    label: n.label,
    content_count: n.content_count,
    momentum_score: n.momentum_score,
    burst_score: n.burst_score,
    lifecycle: n.lifecycle,
  }));
}

export function themesRouter(): Router {
  const r = new Router<ApiState>();
  r.get('/themes', (ctx) => {
    const gen = ctx.state.gen;
    const { window, platform, limit, offset, sort, daily } = queryFrom(themesQuery, ctx.query);
    const code = platformCode(gen, platform);
    const list = gen.maps.themes.filter(
      (t) => t.theme.window_key === window && (code === null || t.narratives.some((n) => narrativeSplit(gen, n).platformCodes.has(code))),
    );
    const { page, ...paging } = sortedPage(list, (t) => t.theme, { sort, offset, limit });
    ctx.body = {
      window,
      sort,
      generation: gen.id,
      items: page.map((t) => ({
        ...t.theme,
        narratives: narrativesIn(t),
        ...(daily ? { daily_counts: t.dailyCounts, period_change: periodChange(t.dailyCounts) } : {}),
      })),
      ...paging,
    };
  });
  r.get('/themes/:id', (ctx) => {
    const gen = ctx.state.gen;
    const id = ctx.params.id!;
    const { lt, resolvedBy } = resolveTheme(gen, id);
    ctx.body = {
      generation: gen.id,
      ...(resolvedBy === 'id' ? {} : { requested_id: id, resolved_by: resolvedBy }),
      theme: lt.theme,
      daily_counts: lt.dailyCounts,
      // What a reader opens first (docs/fields.md, central_content_uuids), as a narrative's detail shows them.
      central_posts: Array.from(lt.central, (r) => storedFields(gen, r)),
      narratives: lt.narratives.map((n) => n.narrative),
    };
  });
  return r;
}
