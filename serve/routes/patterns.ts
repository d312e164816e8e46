// Free reads of the visual pattern map (spec 4.2, 2.6), never billed: browse (scope, sort, cursor),
// one pattern (its PatternDetail, representative content and lookalikes), its posts, its lookalikes.
import Router from '@koa/router';
import { storedFields } from '../content-item.ts';
import type { LoadedGeneration } from '../generation.ts';
import { badRequest, notFound } from '../http-error.ts';
import type { LoadedPattern } from '../maps.ts';
import { intParam, page, windowParam } from '../params.ts';

export const PATTERN_SORTS = {
  contentCount: (a: LoadedPattern, b: LoadedPattern) => b.detail.contentCount - a.detail.contentCount,
  lateShare: (a: LoadedPattern, b: LoadedPattern) => (b.detail.lateShare ?? -1) - (a.detail.lateShare ?? -1),
  confidence: (a: LoadedPattern, b: LoadedPattern) => b.detail.confidence - a.detail.confidence,
  totalEngagement: (a: LoadedPattern, b: LoadedPattern) => b.detail.totalEngagement - a.detail.totalEngagement,
  firstSeenAt: (a: LoadedPattern, b: LoadedPattern) => b.detail.firstSeenAt.localeCompare(a.detail.firstSeenAt),
} as const;
type Sort = keyof typeof PATTERN_SORTS;

/** An opaque cursor: the offset into the sorted list, bound to the generation, scope and sort. */
function encodeCursor(gen: string, scope: string, sort: string, offset: number): string {
  return Buffer.from(JSON.stringify([gen, scope, sort, offset])).toString('base64url');
}

function decodeCursor(c: string, gen: string, scope: string, sort: string): number {
  try {
    const [g, s, o, offset] = JSON.parse(Buffer.from(c, 'base64url').toString('utf8')) as [string, string, string, number];
    if (g === gen && s === scope && o === sort && Number.isInteger(offset) && offset >= 0) return offset;
  } catch {
    // fall through
  }
  throw badRequest('invalid cursor (cursors belong to one generation, scope and sort)');
}

function patternOf(gen: LoadedGeneration, key: string): LoadedPattern {
  const p = gen.maps.patternByKey.get(key);
  if (!p) throw notFound(`no pattern ${key} in generation ${gen.id}`);
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
    const offset = typeof ctx.query.cursor === 'string' ? decodeCursor(ctx.query.cursor, gen.id, scope, sort) : 0;
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
    const { limit, offset } = page(ctx.query, 50, 500);
    const items = Array.from(p.members.subarray(offset, offset + limit), (row) => storedFields(gen, row));
    ctx.body = { patternKey: p.detail.patternKey, items, total: p.members.length, offset, limit, next_offset: offset + items.length < p.members.length ? offset + items.length : null };
  });
  r.get('/intelligence/patterns/:key/lookalikes', (ctx) => {
    const gen = ctx.state.gen as LoadedGeneration;
    const p = patternOf(gen, ctx.params.key!);
    ctx.body = { patternKey: p.detail.patternKey, lookalikes: p.lookalikes };
  });
  return r;
}
