// The served generation's themes as this run matches its own to them (core/clustering/tracking.ts,
// as narratives are): per window, each theme's id and key, its members (the members of its
// narratives, already in this run's rows: the narratives' previous map) and its centre from its
// narratives' centres in this run's space (themeCentre). No extra file is read for the members:
// a theme is its narratives (themes.parquet names the themes, narratives.parquet's theme_id their narratives).
import fs from 'node:fs/promises';
import path from 'node:path';
import { sqlString } from '../../../core/infra/duckdb.ts';
import { generationDir } from '../../../core/snapshots/generations.ts';
import { themeCentre } from '../../../core/clustering/themes.ts';
import type { PreviousNarrative } from '../../../core/clustering/tracking.ts';
import type { PreviousMap } from '../../maps/previous-map.ts';
import type { StageContext } from '../../context/stage-context.ts';

export interface PreviousTheme extends PreviousNarrative {
  id: string;
}

/** Per window, the served generation's themes (none when it has no themes.parquet: a generation before themes). */
export async function loadPreviousThemes(ctx: StageContext, previous: PreviousMap | null): Promise<Map<string, PreviousTheme[]>> {
  const out = new Map<string, PreviousTheme[]>();
  if (!previous) return out;
  const dir = generationDir(ctx.layout, previous.generation);
  const file = (n: string) => sqlString(path.join(dir, n));
  try {
    await fs.access(path.join(dir, 'themes.parquet'));
  } catch {
    return out;
  }
  const db = await ctx.db();
  const links = await db.all<{ narrative: string; id: string; key: string; grp: string }>(
    `SELECT n.id AS narrative, t.id, t.theme_key AS key, t.window_key AS grp
       FROM read_parquet(${file('narratives.parquet')}) n JOIN read_parquet(${file('themes.parquet')}) t ON t.id = n.theme_id
       ORDER BY t.row_id, n.row_id`,
  );
  const themeOf = new Map(links.map((l) => [l.narrative, l]));
  for (const [grp, entries] of previous.byGroup) {
    const byTheme = new Map<string, { id: string; key: string; parts: typeof entries }>();
    for (const e of entries) {
      const t = themeOf.get(e.id);
      if (!t || t.grp !== grp) continue;
      const theme = byTheme.get(t.id) ?? { id: t.id, key: t.key, parts: [] };
      theme.parts.push(e);
      byTheme.set(t.id, theme);
    }
    const dim = entries[0]?.centroid.length ?? 0;
    out.set(
      grp,
      [...byTheme.values()].map((t) => {
        const members = new Int32Array(t.parts.reduce((a, p) => a + p.members.length, 0));
        let at = 0;
        for (const p of t.parts) (members.set(p.members, at), (at += p.members.length));
        return {
          id: t.id,
          key: t.key,
          members,
          centroid: themeCentre(
            t.parts.map((p) => ({ centroid: p.centroid, size: p.members.length })),
            dim,
          ),
        };
      }),
    );
  }
  return out;
}
