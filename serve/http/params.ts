// Query-string parameters of the free reads, validated with messages that name the problem.
import { WINDOW_KEYS, type WindowKey } from '../../core/windows.ts';
import { badRequest } from './http-error.ts';

type Query = Record<string, string | string[] | undefined>;

export function intParam(v: unknown, name: string, dflt: number, min: number, max: number): number {
  if (v === undefined) return dflt;
  if (typeof v !== 'string' || !/^-?\d+$/.test(v)) throw badRequest(`${name} must be an integer`);
  const n = Number(v);
  if (n < min || n > max) throw badRequest(`${name} must be between ${min} and ${max}`);
  return n;
}

export function windowParam(v: unknown, dflt: WindowKey): WindowKey {
  if (v === undefined) return dflt;
  if (typeof v !== 'string' || !(WINDOW_KEYS as readonly string[]).includes(v)) throw badRequest(`window must be one of ${WINDOW_KEYS.join(', ')}`);
  return v as WindowKey;
}

/** limit and offset of a paged list. */
export function page(q: Query, dflt: number, max: number): { limit: number; offset: number } {
  return { limit: intParam(q.limit, 'limit', dflt, 1, max), offset: intParam(q.offset, 'offset', 0, 0, 10_000_000) };
}
