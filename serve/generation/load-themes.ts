// A generation's themes (themes.parquet, docs/snapshot-tables.md), loaded with the narrative map:
// each theme as its Theme object (docs/api.md, "Theme") and its narratives (the loaded ones whose
// theme_id names it), in trending order. A generation published before themes has none.
import { pathExists } from '../../core/infra/durable-fs.ts';
import { sqlString, type DuckDB, type Row } from '../../core/infra/duckdb.ts';
import type { LoadedNarrative } from './map-types.ts';
import { centralRowsOf, countFields, num, seriesFields, windowFields } from './map-rows.ts';
import { trendingOrder } from './trending-order.ts';

export type Theme = { id: string; theme_key: string; label: string; summary: string } & ReturnType<typeof windowFields> & {
    narrative_count: number;
  } & ReturnType<typeof countFields> &
  ReturnType<typeof seriesFields> & { top_tags: string[] };

export interface LoadedTheme {
  theme: Theme;
  /** The posts a reader opens first (central_content_uuids), as rows; none in a generation published before them. */
  central: Int32Array;
  /** Its narratives, by the trending order. */
  narratives: LoadedNarrative[];
  dailyCounts: number[];
}

export interface ThemeMaps {
  themes: LoadedTheme[];
  themeById: Map<string, LoadedTheme>;
  /** The current theme of each stable key (theme_key). */
  themeByKey: Map<string, LoadedTheme>;
}

function themeOf(r: Row): Theme {
  return {
    id: r.id as string,
    theme_key: r.theme_key as string,
    label: r.label as string,
    summary: r.summary as string,
    ...windowFields(r),
    narrative_count: num(r.narrative_count),
    ...countFields(r),
    ...seriesFields(r),
    top_tags: (r.top_tags as string[] | null) ?? [],
  };
}

/** The themes of `file` (themes.parquet), each with its narratives among `narratives` (whose members are in `membersFile`). */
export async function loadThemes(
  db: Pick<DuckDB, 'all'>,
  file: string,
  membersFile: string,
  narratives: readonly LoadedNarrative[],
): Promise<ThemeMaps> {
  const out: ThemeMaps = { themes: [], themeById: new Map(), themeByKey: new Map() };
  if (!(await pathExists(file))) return out;
  const central = await centralRowsOf(db, file, membersFile);
  const byTheme = new Map<string, LoadedNarrative[]>();
  for (const n of narratives) {
    const t = n.narrative.theme_id;
    if (!t) continue;
    const list = byTheme.get(t);
    if (list) list.push(n);
    else byTheme.set(t, [n]);
  }
  for (const r of await db.all(`SELECT * FROM read_parquet(${sqlString(file)}) ORDER BY row_id`)) {
    const theme = themeOf(r);
    const loaded: LoadedTheme = {
      theme,
      central: central?.get(theme.id) ?? new Int32Array(0),
      narratives: (byTheme.get(theme.id) ?? []).sort((a, b) => trendingOrder(a.narrative, b.narrative)),
      dailyCounts: ((r.daily_counts as number[] | null) ?? []).map(Number),
    };
    out.themes.push(loaded);
    out.themeById.set(theme.id, loaded);
    out.themeByKey.set(theme.theme_key, loaded);
  }
  return out;
}
