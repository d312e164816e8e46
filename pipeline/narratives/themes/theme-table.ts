// themes.parquet: one row per theme of every window (columns in docs/snapshot-tables.md, fields in
// docs/fields.md, "Themes"), in the order the narratives stage built them.
import type { Match } from '../../../core/clustering/tracking.ts';
import { FIGURE_COLUMNS, figureValues, HEAD_COLUMNS, READER_COLUMNS, readerValues } from '../figure-columns.ts';
import { writeRowTable } from '../../store/row-table.ts';
import type { StageContext } from '../../context/stage-context.ts';
import type { BuiltTheme } from './build.ts';

const THEME_COLUMNS = {
  id: 'VARCHAR',
  theme_key: 'VARCHAR',
  ...HEAD_COLUMNS,
  narrative_count: 'BIGINT',
  ...FIGURE_COLUMNS,
  ...READER_COLUMNS,
  daily_counts: 'INTEGER[]',
  previous_id: 'VARCHAR',
  match_cosine: 'DOUBLE',
  match_overlap: 'DOUBLE',
  row_id: 'BIGINT',
} as const;

export interface NamedTheme {
  t: BuiltTheme;
  id: string;
  key: string;
  /** The served generation's theme it continues (its id), and how it matched; null for a new one. */
  match: (Omit<Match, 'previous'> & { id: string }) | null;
}

export async function writeThemeTable(
  ctx: StageContext,
  themes: readonly NamedTheme[],
  computedAt: string,
  uuidOf: (row: number) => string | undefined,
): Promise<void> {
  const rows = themes.map(({ t, id, key, match }, i) => ({
    row_id: i,
    id,
    theme_key: key,
    window_key: t.window.key,
    window_start: t.window.start,
    window_end: t.window.end,
    computed_at: computedAt,
    label: t.label,
    summary: t.summary,
    narrative_count: t.narratives.length,
    ...figureValues(t, t.representative === null ? null : uuidOf(t.representative)),
    ...readerValues(t, uuidOf),
    daily_counts: Array.from(t.series.counts),
    previous_id: match?.id ?? null,
    match_cosine: match?.cosine ?? null,
    match_overlap: match?.overlap ?? null,
  }));
  await writeRowTable(ctx, 'themes', THEME_COLUMNS, rows);
}
