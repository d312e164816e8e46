// A generation's themes (themes.parquet, docs/snapshot-tables.md), loaded with the narrative map:
// each theme as its Theme object (docs/api.md, "Theme") and its narratives (the loaded ones whose
// theme_id names it), in trending order. A generation published before themes has none.
import { pathExists } from '../../core/durable-fs.ts';
import { sqlString, type Row } from '../../core/duckdb.ts';
import type { LoadedNarrative } from './load-maps.ts';
import { trendingOrder } from './trending-order.ts';

export interface Theme {
  id: string;
  theme_key: string;
  label: string;
  summary: string;
  window_key: string;
  window_start: string;
  window_end: string;
  computed_at: string;
  narrative_count: number;
  content_count: number;
  creator_count: number;
  platform_count: number;
  total_engagement: string;
  emerging_score: number;
  momentum_score: number;
  velocity: number | null;
  acceleration: number | null;
  diffusion: number | null;
  lifecycle: string | null;
  trajectory_confidence: string | null;
  representative_content_uuid: string | null;
  sentiment_label: string | null;
  sentiment_score: number | null;
  sentiment_breakdown: Record<string, unknown> | null;
  top_tags: string[];
}

export interface LoadedTheme {
  theme: Theme;
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

const numOrNull = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));

function themeOf(r: Row): Theme {
  return {
    id: r.id as string,
    theme_key: r.theme_key as string,
    label: r.label as string,
    summary: r.summary as string,
    window_key: r.window_key as string,
    window_start: r.window_start as string,
    window_end: r.window_end as string,
    computed_at: r.computed_at as string,
    narrative_count: Number(r.narrative_count),
    content_count: Number(r.content_count),
    creator_count: Number(r.creator_count),
    platform_count: Number(r.platform_count),
    total_engagement: String(r.total_engagement),
    emerging_score: Number(r.emerging_score),
    momentum_score: Number(r.momentum_score),
    velocity: numOrNull(r.velocity),
    acceleration: numOrNull(r.acceleration),
    diffusion: numOrNull(r.diffusion),
    lifecycle: (r.lifecycle as string | null) ?? null,
    trajectory_confidence: (r.trajectory_confidence as string | null) ?? null,
    representative_content_uuid: (r.representative_content_uuid as string | null) ?? null,
    sentiment_label: (r.sentiment_label as string | null) ?? null,
    sentiment_score: numOrNull(r.sentiment_score),
    sentiment_breakdown: typeof r.sentiment_breakdown === 'string' ? (JSON.parse(r.sentiment_breakdown) as Record<string, unknown>) : null,
    top_tags: (r.top_tags as string[] | null) ?? [],
  };
}

/** The themes of `file` (themes.parquet), each with its narratives among `narratives`. */
export async function loadThemes(
  db: { all: (sql: string) => Promise<Row[]> },
  file: string,
  narratives: readonly LoadedNarrative[],
): Promise<ThemeMaps> {
  const out: ThemeMaps = { themes: [], themeById: new Map(), themeByKey: new Map() };
  if (!(await pathExists(file))) return out;
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
      narratives: (byTheme.get(theme.id) ?? []).sort((a, b) => trendingOrder(a.narrative, b.narrative)),
      dailyCounts: ((r.daily_counts as number[] | null) ?? []).map(Number),
    };
    out.themes.push(loaded);
    out.themeById.set(theme.id, loaded);
    out.themeByKey.set(theme.theme_key, loaded);
  }
  return out;
}
