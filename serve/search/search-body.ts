// The POST /search body (docs/api.md), validated strictly: only query, limit and window; every
// problem named in the 400's message.
import { z } from 'zod';
import type { WindowKey } from '../../core/snapshots/windows.ts';
import { bodyLimitField, queryTextField, strictBody } from '../http/body-fields.ts';
import { badRequest } from '../http/http-error.ts';
import { windowField } from '../http/query.ts';

export const SEARCH_LIMIT_MAX = 300;
export const SEARCH_LIMIT_DEFAULT = 100;
export const SEARCH_WINDOW_DEFAULT: WindowKey = '30d';
export const searchBodySchema = z.strictObject(
  {
    query: queryTextField(),
    limit: bodyLimitField(SEARCH_LIMIT_MAX).default(SEARCH_LIMIT_DEFAULT),
    window: windowField().default(SEARCH_WINDOW_DEFAULT),
  },
  strictBody('query, limit and window'),
);

export interface SearchBody {
  query: string;
  limit: number;
  window: WindowKey;
}

export function parseSearchBody(body: unknown): SearchBody {
  const r = searchBodySchema.safeParse(body);
  if (!r.success) throw badRequest(r.error.issues.map((i) => i.message).join('; '));
  return r.data;
}
