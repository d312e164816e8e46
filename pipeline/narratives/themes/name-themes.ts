// A window's themes named: this generation's ids, and keys carried over from the served
// generation's themes they continue (matched as narratives are: core/clustering/tracking.ts, by
// centre cosine or member overlap, one to one), or new keys.
import { matchClusters, newMapKey } from '../../../core/clustering/tracking.ts';
import type { BuiltTheme } from './build.ts';
import type { PreviousTheme } from './previous-themes.ts';
import type { NamedTheme } from './theme-table.ts';

/** `<window>-<run tag>-t<nnn>`: names a theme in one generation (ids of narratives are `<window>-<run tag>-<nnn>`). */
export function themeId(window: string, runTag: string, i: number): string {
  return `${window}-${runTag}-t${String(i + 1).padStart(3, '0')}`;
}

export function nameThemes(
  window: string,
  runTag: string,
  themes: readonly BuiltTheme[],
  previous: readonly PreviousTheme[],
  uuidOf: (row: number) => string,
): NamedTheme[] {
  const matches = matchClusters(
    themes.map((t) => ({ centroid: t.centroid, members: t.members })),
    [...previous],
  );
  return themes.map((t, i) => {
    const m = matches[i];
    const p = m ? previous[m.previous]! : null;
    return {
      t,
      id: themeId(window, runTag, i),
      key: p ? p.key : newMapKey('tk', window, runTag, t.label, uuidOf(t.members[0]!)),
      match: m && p ? { id: p.id, cosine: m.cosine, overlap: m.overlap } : null,
    };
  });
}
