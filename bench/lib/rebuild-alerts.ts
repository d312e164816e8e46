// The alerts a full rebuild of unchanged data fires (the real-data bench, bench/suites/quality-real.ts;
// issue 45's bar: no new-narrative event): watches made before the rebuild, evaluated by the
// service's own evaluation (serve/alerts/evaluate.ts, pure: the server runs the same after each
// publish) between the generation before the rebuild and the one it published. The watches: a
// new_narrative watch on any narrative in each window, and one on any narrative in every window for
// a spike, any lifecycle change, and momentum crossing MOMENTUM_LEVEL upward.
import { dataDirLayout } from '../../core/infra/data-dir.ts';
import { generationDir, readManifest } from '../../core/snapshots/generations.ts';
import { readGenerationUuids } from '../../core/snapshots/segments.ts';
import { WINDOW_KEYS } from '../../core/snapshots/windows.ts';
import type { AlertCondition, Watch, WatchConditions } from '../../serve/alerts/alert-model.ts';
import { createEvaluation } from '../../serve/alerts/evaluate.ts';
import { uuidRows } from '../../serve/alerts/story-links.ts';
import { loadMaps } from '../../serve/generation/load-maps.ts';

export const MOMENTUM_LEVEL = 0.5;

export const CONDITIONS: readonly AlertCondition[] = ['new_narrative', 'spike', 'lifecycle', 'momentum'];

interface RebuildAlerts {
  before: string;
  after: string;
  /** The manifest of `after` names `before` as its previous generation (what the server compares with). */
  previousIsBefore: boolean;
  watches: number;
  /** Per window: the narratives before and after, those of after whose narrative_key before had, and the changes events carry by condition. */
  windows: Array<{ window: string; before: number; after: number; kept: number; events: Record<string, number>; newLabels: string[] }>;
}

function watchesMadeAt(createdAt: string): Watch[] {
  const watch = (id: string, windows: Watch['windows'], conditions: WatchConditions): Watch => ({
    id,
    account: 'bench',
    name: null,
    target: { kind: 'any' },
    windows,
    conditions,
    url: 'http://127.0.0.1/',
    created_at: createdAt,
    secret_version: 1,
    paused: null,
  });
  return [
    ...WINDOW_KEYS.map((w) => watch(`alw_new_${w}`, [w], { new_narrative: true })),
    watch('alw_changes', [...WINDOW_KEYS], { spike: true, lifecycle: {}, momentum: { level: MOMENTUM_LEVEL } }),
  ];
}

/** The events of watches made at `watchesAt` for the publish of `after` over `before`, both generations of `dataDir`. */
export async function rebuildAlerts(dataDir: string, before: string, after: string, watchesAt: string): Promise<RebuildAlerts> {
  const layout = dataDirLayout(dataDir);
  const [mb, ma] = [await readManifest(layout, before), await readManifest(layout, after)];
  const mapsBefore = await loadMaps(generationDir(layout, before), before);
  const mapsAfter = await loadMaps(generationDir(layout, after), after);
  // Each generation's posts by their uuids, as the server reads a previous generation from disk.
  const rowsOf = (g: string, m: { segments?: Parameters<typeof readGenerationUuids>[1] }) =>
    uuidRows(readGenerationUuids(generationDir(layout, g), m.segments ?? []));
  const evaluate = createEvaluation({
    after: { id: after, asOfIso: ma.as_of, computedAt: ma.computed_at, maps: mapsAfter, rows: rowsOf(after, ma), posts: () => [] },
    before: { id: before, asOfIso: mb.as_of, maps: mapsBefore, rows: rowsOf(before, mb) },
    baseUrl: 'http://127.0.0.1/api',
    now: new Date().toISOString(),
  });
  const watches = watchesMadeAt(watchesAt);
  const events = watches.flatMap(evaluate);
  const inWindow = (ns: typeof mapsAfter.narratives, w: string) => ns.filter((n) => n.narrative.window_key === w);
  return {
    before,
    after,
    previousIsBefore: ma.previous_generation === before,
    watches: watches.length,
    windows: WINDOW_KEYS.map((w) => {
      // An event covers one story in every window it changed in: counted here by its matches.
      const es = events.flatMap((e) => e.matches).filter((m) => m.window === w);
      const now = inWindow(mapsAfter.narratives, w);
      return {
        window: w,
        before: inWindow(mapsBefore.narratives, w).length,
        after: now.length,
        kept: now.filter((n) => n.narrative.narrative_key && mapsBefore.narrativeByKey.has(n.narrative.narrative_key)).length,
        events: Object.fromEntries(CONDITIONS.map((c) => [c, es.filter((m) => m.condition === c).length])),
        newLabels: es.filter((m) => m.condition === 'new_narrative').map((m) => m.label),
      };
    }),
  };
}
