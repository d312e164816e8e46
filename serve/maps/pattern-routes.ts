// Free reads of the visual pattern map (spec 4.2, 2.6), never billed: browse (scope, sort, cursor),
// one pattern (its PatternDetail, representative content and lookalikes), its posts, its lookalikes.
import Router from '@koa/router';
import { storedFields } from '../generation/content-item.ts';
import type { LoadedGeneration } from '../generation/loaded-generation.ts';
import { badRequest, notFound } from '../http/http-error.ts';
import type { LoadedPattern } from './load-maps.ts';
import { intParam, windowParam } from '../http/params.ts';

export const PATTERN_SORTS = {
  contentCount: (a: LoadedPattern, b: LoadedPattern) => b.detail.contentCount - a.detail.contentCount,
  lateShare: (a: LoadedPattern, b: LoadedPattern) => (b.detail.lateShare ?? -1) - (a.detail.lateShare ?? -1),
  confidence: (a: LoadedPattern, b: LoadedPattern) => b.detail.confidence - a.detail.confidence,
  totalEngagement: (a: LoadedPattern, b: LoadedPattern) => b.detail.totalEngagement - a.detail.totalEngagement,
  firstSeenAt: (a: LoadedPattern, b: LoadedPattern) => b.detail.firstSeenAt.localeCompare(a.detail.firstSeenAt),
} as const;
type Sort = keyof typeof PATTERN_SORTS;

/**
 * Pattern reads page one way (docs/api.md, "Paging"): `limit` and an opaque `cursor`, answered with
 * `nextCursor` (null on the last page), as /usage does. A cursor is the offset into the list, bound
 * to the generation and to the list it came from (a scope and sort, or a pattern's posts).
 */
function encodeCursor(gen: string, list: string, order: string, offset: number): string {
  return Buffer.from(JSON.stringify([gen, list, order, offset])).toString('base64url');
}

function cursorParam(q: Record<string, unknown>, gen: string, list: string, order: string): number {
  if (q.offset !== undefined) throw badRequest('pattern reads page with cursor: pass the nextCursor of the previous page (offset is for narrative reads)');
  if (q.cursor === undefined) return 0;
  try {
    const [g, l, o, offset] = JSON.parse(Buffer.from(String(q.cursor), 'base64url').toString('utf8')) as [string, string, string, number];
    if (g === gen && l === list && o === order && Number.isInteger(offset) && offset >= 0) return offset;
  } catch {
    // fall through
  }
  throw badRequest(`invalid cursor (a cursor belongs to one generation and one list; this is generation ${gen})`);
}

function patternOf(gen: LoadedGeneration, key: string): LoadedPattern {
  const p = gen.maps.patternByKey.get(key);
  if (!p) {
    throw notFound(gen.maps.endedPatternKeys.has(key)
      ? `pattern ${key} has no entry in generation ${gen.id}: it ended, or merged into another (pattern keys are stable while a pattern lasts)`
      : `no pattern ${key}: not a pattern key of generation ${gen.id} or of an earlier one in its history`);
  }
  return p;
}

export function patternsRouter(): Router {
  const r = new Router();
  r.get('/intelligence/patterns', (ctx) => {
    const gen = ctx.state.gen as LoadedGeneration;
    const scope = windowParam(ctx.query.scope, '30d');
    const sort = (ctx.query.sort ?? 'contentCount') as string;
    if (!Object.hasOwn(PATTERN_SORTS, sort)) throw badRequest(`sort must be one of ${Object.keys(PATTERN_SORTS).join(', ')}`);
    const limit = intParam(ctx.query.limit, 'limit', 20, 1, 100);
    const offset = cursorParam(ctx.query, gen.id, scope, sort);
    const list = gen.maps.patterns.filter((p) => p.scope === scope)
      .sort((a, b) => PATTERN_SORTS[sort as Sort](a, b) || a.detail.patternKey.localeCompare(b.detail.patternKey));
    const items = list.slice(offset, offset + limit).map((p) => p.detail);
    ctx.body = { scope, sort, generation: gen.id, items, total: list.length, nextCursor: offset + limit < list.length ? encodeCursor(gen.id, scope, sort, offset + limit) : null };
  });
  r.get('/intelligence/patterns/:key', (ctx) => {
    const gen = ctx.state.gen as LoadedGeneration;
    const p = patternOf(gen, ctx.params.key!);
    ctx.body = { pattern: p.detail, representativeContent: p.representatives, lookalikes: p.lookalikes };
  });
  r.get('/intelligence/patterns/:key/content', (ctx) => {
    const gen = ctx.state.gen as LoadedGeneration;
    const p = patternOf(gen, ctx.params.key!);
    const limit = intParam(ctx.query.limit, 'limit', 50, 1, 500);
    const offset = cursorParam(ctx.query, gen.id, p.detail.patternKey, 'content');
    const items = Array.from(p.members.subarray(offset, offset + limit), (row) => storedFields(gen, row));
    const next = offset + items.length;
    ctx.body = { patternKey: p.detail.patternKey, generation: gen.id, items, total: p.members.length, nextCursor: next < p.members.length ? encodeCursor(gen.id, p.detail.patternKey, 'content', next) : null };
  });
  r.get('/intelligence/patterns/:key/lookalikes', (ctx) => {
    const gen = ctx.state.gen as LoadedGeneration;
    const p = patternOf(gen, ctx.params.key!);
    ctx.body = { patternKey: p.detail.patternKey, lookalikes: p.lookalikes };
  });
  return r;
}
