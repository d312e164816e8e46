// What the real-data bench measures on one published generation (bench/suites/quality-real.ts):
// per window its posts (published within the manifest's window bounds), narratives and themes
// (themes.parquet and narratives.theme_id where the generation has them), the story scores of
// both against the posts' truth (core/stats/story-metrics.ts), and each crisis's on-topic posts. What
// the API lists (trending's and the themes' order) is read through a server: served-lists.ts.
import fs from 'node:fs';
import path from 'node:path';
import { dataDirLayout } from '../../core/infra/data-dir.ts';
import { openDuckDB, sqlString } from '../../core/infra/duckdb.ts';
import { generationDir, readCurrent, readManifest } from '../../core/snapshots/generations.ts';
import { scoreStories, type PostTruth, type StoryScore } from '../../core/stats/story-metrics.ts';
import { WINDOW_KEYS } from '../../core/snapshots/windows.ts';
import type { Narrative } from '../../serve/generation/load-maps.ts';

interface LabelledCluster {
  label: string;
  size: number;
  reason: string;
  offTopicShare: number;
}

export interface WindowFigures {
  window: string;
  posts: number;
  narratives: number;
  /** null: the generation has no themes.parquet. */
  themes: number | null;
  narrative: StoryScore;
  theme: StoryScore | null;
  catchAlls: LabelledCluster[];
  /** Each crisis's on-topic posts in the window. */
  onTopicBy: Record<string, number>;
}

export interface GenerationFigures {
  generation: string;
  mode: string;
  windows: WindowFigures[];
}

/** What the benches read of a narrative to put it in trending's order. */
export type TrendingRow = Pick<
  Narrative,
  'id' | 'window_key' | 'label' | 'content_count' | 'momentum_score' | 'emerging_score' | 'burst_score'
>;

type NarrativeRow = Pick<Narrative, 'id' | 'window_key' | 'label' | 'content_count'> & {
  [column: string]: unknown;
  theme_id: string | null;
};

/** The current generation of `dataDir` scored against `truth` (every post's, by uuid). */
export async function generationFigures(dataDir: string, truth: ReadonlyMap<string, PostTruth>): Promise<GenerationFigures> {
  const layout = dataDirLayout(dataDir);
  const gen = (await readCurrent(layout))!;
  const manifest = await readManifest(layout, gen);
  const dir = generationDir(layout, gen);
  const f = (n: string) => sqlString(path.join(dir, n));
  const hasThemes = fs.existsSync(path.join(dir, 'themes.parquet'));
  const db = await openDuckDB();
  let narratives: NarrativeRow[];
  let members: Array<{ narrative_id: string; window_key: string; uuid: string }>;
  let posts: Array<{ uuid: string; published: number }>;
  let themes: Array<{ id: string; window_key: string; label: string }> = [];
  try {
    const columns = new Set(
      (await db.all<{ column_name: string }>(`DESCRIBE SELECT * FROM read_parquet(${f('narratives.parquet')})`)).map((r) => r.column_name),
    );
    const themeId = hasThemes && columns.has('theme_id') ? 'theme_id' : 'NULL::VARCHAR AS theme_id';
    narratives = (
      await db.all<NarrativeRow>(
        `SELECT id, window_key, label, content_count::INTEGER AS content_count, ${themeId}
         FROM read_parquet(${f('narratives.parquet')})`,
      )
    ).map((r) => ({ ...r, content_count: Number(r.content_count) }));
    members = await db.all(`SELECT narrative_id, window_key, uuid FROM read_parquet(${f('narrative-members.parquet')})`);
    posts = await db.all(`SELECT uuid, epoch_ms(published_at)::DOUBLE AS published FROM read_parquet(${f('posts.parquet')})`);
    if (hasThemes) themes = await db.all(`SELECT id, window_key, label FROM read_parquet(${f('themes.parquet')})`);
  } finally {
    db.close();
  }
  const membersOf = new Map<string, string[]>();
  for (const m of members) {
    const list = membersOf.get(m.narrative_id) ?? [];
    list.push(m.uuid);
    membersOf.set(m.narrative_id, list);
  }
  const truthOf = (u: string) => {
    const t = truth.get(u);
    if (!t) throw new Error(`post ${u} of ${gen} has no truth`);
    return t;
  };
  const windows = WINDOW_KEYS.map((w): WindowFigures => {
    const { start, end } = manifest.windows[w];
    const [s, e] = [Date.parse(start), Date.parse(end)];
    const inWindow = new Map(posts.filter((p) => p.published >= s && p.published <= e).map((p) => [p.uuid, truthOf(p.uuid)]));
    const ns = narratives.filter((n) => n.window_key === w);
    const narrativeClusters = new Map(ns.map((n) => [n.id, membersOf.get(n.id) ?? []]));
    const narrative = scoreStories(inWindow, narrativeClusters);
    let theme: StoryScore | null = null;
    const ts = themes.filter((t) => t.window_key === w);
    if (hasThemes) {
      // A theme's members: the union of its narratives' (a post is in at most one narrative of a window).
      const themeClusters = new Map(ts.map((t) => [t.id, [] as string[]]));
      for (const n of ns)
        if (n.theme_id !== null && themeClusters.has(n.theme_id)) themeClusters.get(n.theme_id)!.push(...narrativeClusters.get(n.id)!);
      theme = scoreStories(inWindow, themeClusters);
    }
    const labelOf = new Map(ns.map((n) => [n.id, n.label]));
    const onTopicBy: Record<string, number> = {};
    for (const t of inWindow.values()) if (t.crisis !== null) onTopicBy[t.crisis] = (onTopicBy[t.crisis] ?? 0) + 1;
    return {
      window: w,
      posts: inWindow.size,
      narratives: ns.length,
      themes: hasThemes ? ts.length : null,
      narrative,
      theme,
      catchAlls: narrative.catchAlls.map((c) => ({
        label: labelOf.get(c.id)!,
        size: c.size,
        reason: c.reason,
        offTopicShare: c.offTopicShare,
      })),
      onTopicBy,
    };
  });
  return { generation: gen, mode: manifest.run?.mode ?? '?', windows };
}
