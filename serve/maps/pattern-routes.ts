// Free reads of the visual pattern map (docs/api.md, "Free reads"), never billed: browse (scope, sort, cursor),
// one pattern (its PatternDetail, representative content and lookalikes), its posts, its lookalikes.
import Router from '@koa/router';
import type { ApiState } from '../generation/api-state.ts';
import { storedFields } from '../generation/content-item.ts';
import type { LoadedGeneration } from '../generation/loaded-generation.ts';
import { badRequest, notFound } from '../http/http-error.ts';
import type { LoadedPattern } from '../generation/load-maps.ts';
import { queryFrom } from '../http/query.ts';
import { PATTERN_SORT_KEYS, patternContentQuery, patternsBrowseQuery } from './map-queries.ts';

/** The browse orders, one per sort key of the query (map-queries.ts). */
const PATTERN_SORTS: Record<(typeof PATTERN_SORT_KEYS)[number], (a: LoadedPattern, b: LoadedPattern) => number> = {
  contentCount: (a: LoadedPattern, b: LoadedPattern) => b.detail.contentCount - a.detail.contentCount,
  lateShare: (a: LoadedPattern, b: LoadedPattern) => (b.detail.lateShare ?? -1) - (a.detail.lateShare ?? -1),
  confidence: (a: LoadedPattern, b: LoadedPattern) => b.detail.confidence - a.detail.confidence,
  totalEngagement: (a: LoadedPattern, b: LoadedPattern) => b.detail.totalEngagement - a.detail.totalEngagement,
  firstSeenAt: (a: LoadedPattern, b: LoadedPattern) => b.detail.firstSeenAt.localeCompare(a.detail.firstSeenAt),
};

/**
 * Pattern reads page one way (docs/api.md, "Paging"): `limit` and an opaque `cursor`, answered with
 * `nextCursor` (null on the last page), as /usage does. A cursor is the offset into the list, bound
 * to the generation and to the list it came from (a scope and sort, or a pattern's posts).
 */
function encodeCursor(gen: string, list: string, order: string, offset: number): string {
  return Buffer.from(JSON.stringify([gen, list, order, offset])).toString('base64url');
}

/** Where a page starts: 0 without a cursor; a cursor of another generation or list is a 400. */
function offsetOf(cursor: string | undefined, gen: string, list: string, order: string): number {
  if (cursor === undefined) return 0;
  try {
    const [g, l, o, offset] = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as [string, string, string, number];
    if (g === gen && l === list && o === order && Number.isInteger(offset) && offset >= 0) return offset;
  } catch {
    // fall through
  }
  throw badRequest(`invalid cursor (a cursor belongs to one generation and one list; this is generation ${gen})`);
}

/** Pattern reads have no offset: say so rather than ignore it (a client would read page one again and again). */
function refuseOffset(q: Record<string, unknown>): void {
  if (q.offset !== undefined)
    throw badRequest('pattern reads page with cursor: pass the nextCursor of the previous page (offset is for narrative reads)');
}

function patternOf(gen: LoadedGeneration, key: string): LoadedPattern {
  const p = gen.maps.patternByKey.get(key);
  if (!p) {
    throw notFound(
      gen.maps.endedPatternKeys.has(key)
        ? `pattern ${key} has no entry in generation ${gen.id}: it ended, or merged into another (pattern keys are stable while a pattern lasts)`
        : `no pattern ${key}: not a pattern key of generation ${gen.id} or of an earlier one in its history`,
    );
  }
  return p;
}

export function patternsRouter(): Router {
  const r = new Router<ApiState>();
  r.get('/intelligence/patterns', (ctx) => {
    const gen = ctx.state.gen;
    const { scope, sort, limit, cursor } = queryFrom(patternsBrowseQuery, ctx.query);
    refuseOffset(ctx.query);
    const offset = offsetOf(cursor, gen.id, scope, sort);
    const list = gen.maps.patterns
      .filter((p) => p.scope === scope)
      .sort((a, b) => PATTERN_SORTS[sort](a, b) || a.detail.patternKey.localeCompare(b.detail.patternKey));
    const items = list.slice(offset, offset + limit).map((p) => p.detail);
    ctx.body = {
      scope,
      sort,
      generation: gen.id,
      items,
      total: list.length,
      nextCursor: offset + limit < list.length ? encodeCursor(gen.id, scope, sort, offset + limit) : null,
    };
  });
  r.get('/intelligence/patterns/:key', (ctx) => {
    const gen = ctx.state.gen;
    const p = patternOf(gen, ctx.params.key!);
    ctx.body = { pattern: p.detail, representativeContent: p.representatives, lookalikes: p.lookalikes };
  });
  r.get('/intelligence/patterns/:key/content', (ctx) => {
    const gen = ctx.state.gen;
    const p = patternOf(gen, ctx.params.key!);
    const { limit, cursor } = queryFrom(patternContentQuery, ctx.query);
    refuseOffset(ctx.query);
    const offset = offsetOf(cursor, gen.id, p.detail.patternKey, 'content');
    const items = Array.from(p.members.subarray(offset, offset + limit), (row) => storedFields(gen, row));
    const next = offset + items.length;
    ctx.body = {
      patternKey: p.detail.patternKey,
      generation: gen.id,
      items,
      total: p.members.length,
      nextCursor: next < p.members.length ? encodeCursor(gen.id, p.detail.patternKey, 'content', next) : null,
    };
  });
  r.get('/intelligence/patterns/:key/lookalikes', (ctx) => {
    const gen = ctx.state.gen;
    const p = patternOf(gen, ctx.params.key!);
    ctx.body = { patternKey: p.detail.patternKey, lookalikes: p.lookalikes };
  });
  return r;
}
