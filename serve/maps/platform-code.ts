// The platform a list's `platform` parameter names (the split it filters by: serve/generation/member-reads.ts).
import type { LoadedGeneration } from '../generation/loaded-generation.ts';
import { badRequest } from '../http/http-error.ts';

/** The code of the platform a list's `platform` parameter names (case-insensitive), null without one; a 400 for one not served. */
export function platformCode(gen: LoadedGeneration, asked: string | undefined): number | null {
  if (asked === undefined) return null;
  const platform = asked.toLowerCase();
  const code = gen.content.platforms.indexOf(platform);
  if (code < 0) throw badRequest(`unknown platform "${platform}" (platforms: ${gen.content.platforms.join(', ')})`);
  return code;
}
