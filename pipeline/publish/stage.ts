// The publish stage: writes generation G+1 from the work store into a temporary directory,
// fsyncs every byte, writes manifest.json, renames the directory into place and only then
// switches CURRENT (write-temp, fsync, rename, fsync dir). A kill at any point leaves the previous
// generation served; leftovers of a killed publish are swept by the next one.
// The time segments (core/snapshots/segments.ts) are hard-linked into the new generation, the reused ones
// from the served generation, the built ones from this run's artifacts: every generation holds all
// its files (deleting an older one never breaks a newer one), and a reused segment costs no copy.
import fs from 'node:fs/promises';
import path from 'node:path';
import { num, sqlString, type DuckDB } from '../../core/infra/duckdb.ts';
import { fsyncDir, fsyncTree, pathExists, sha256File, writeFileAtomic } from '../../core/infra/durable-fs.ts';
import { failpoint } from '../../core/infra/failpoints.ts';
import {
  generationDir,
  generationId,
  generationNumber,
  listGenerations,
  readCurrent,
  readManifest,
  SNAPSHOT_SCHEMA_VERSION,
  type EmbedderInfo,
  type Manifest,
  type ManifestFile,
} from '../../core/snapshots/generations.ts';
import { SNAPSHOT_POST_COLUMNS } from '../../core/snapshots/post-schema.ts';
import { windowBounds } from '../../core/snapshots/windows.ts';
import { DELETED_ROWS_FILE, SEGMENTS_DIR, segmentDir } from '../../core/snapshots/segments.ts';
import { tailFile } from '../../core/ranking/segment-graphs.ts';
import { readPlan } from '../segments/plan-output.ts';
import { maskedRows, plannedSegmentDir, type PlannedSegment, type SegmentPlan } from '../segments/segment-plan.ts';
import type { ArtifactSource } from '../segments/snapshot-rows.ts';
import type { Stage, StageContext } from '../context/stage-context.ts';

const PARQUET = `FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE 122880`;

/** The snapshot tables and the SQL that produces each from the work store's `posts`. */
function tableQueries(asOfIso: string): Record<string, string> {
  const asOfLit = `${sqlString(asOfIso)}::TIMESTAMPTZ`;
  return {
    // The live posts at their rows (plan_rows: segment-plan.ts); posts published after as-of belong to a later snapshot.
    'posts.parquet': `SELECT r.row_id, ${SNAPSHOT_POST_COLUMNS.map((c) => `p.${c}`).join(', ')} FROM plan_rows r JOIN posts p USING (uuid)
      ORDER BY r.row_id`,
    'creators.parquet': `SELECT creator_id, platform,
        arg_max(creator_handle, observed_at) AS creator_handle,
        arg_max(follower_count, observed_at) AS follower_count,
        count(*) AS post_count,
        sum(like_count + comment_count + share_count) AS total_engagement,
        min(published_at) AS first_post_at, max(published_at) AS last_post_at
      FROM posts WHERE creator_id IS NOT NULL AND published_at <= ${asOfLit}
      GROUP BY creator_id, platform ORDER BY creator_id, platform`,
  };
}

/** Per-row artifacts must describe exactly the rows being published. */
/** Each stage that writes per-row artifacts leaves a <stage>source.json: all must describe this publish. */
const ARTIFACT_SOURCES: Array<[file: string, stages: string]> = [
  ['source.json', 'the features and index stages'],
  ['narratives-source.json', 'the narratives stage'],
  ['patterns-source.json', 'the patterns stage'],
];

async function checkArtifactsMatch(dir: string, asOfIso: string, rows: number | null): Promise<void> {
  for (const [file, stages] of ARTIFACT_SOURCES) {
    let source: ArtifactSource;
    try {
      source = JSON.parse(await fs.readFile(path.join(dir, file), 'utf8')) as ArtifactSource;
    } catch {
      continue; // not built yet (a publish of ingested posts only, or before narratives exist)
    }
    if (source.asOf !== asOfIso || (rows !== null && source.rows !== rows)) {
      throw new Error(
        `artifacts of ${stages} describe as-of ${source.asOf} with ${source.rows} rows, this ` +
          `publish is as-of ${asOfIso} with ${rows}: run ${stages} (or run) first`,
      );
    }
  }
}

async function sweepLeftovers(snapshots: string): Promise<string[]> {
  const swept: string[] = [];
  for (const name of await fs.readdir(snapshots)) {
    if (name.startsWith('.tmp-')) {
      await fs.rm(path.join(snapshots, name), { recursive: true, force: true });
      swept.push(name);
    }
  }
  return swept;
}

async function describeFile(dir: string, name: string, rows: number | null): Promise<ManifestFile> {
  const p = path.join(dir, name);
  const st = await fs.stat(p);
  return { name, bytes: st.size, sha256: await sha256File(p), rows };
}

/** This run's notes to itself, not part of a generation. */
const NOT_PUBLISHED = new Set(['segment-plan.json', 'embedder.json']);

async function copyArtifacts(from: string, to: string): Promise<string[]> {
  let names: string[] = [];
  try {
    names = (await fs.readdir(from, { withFileTypes: true }))
      .filter((e) => e.isFile() && !e.name.startsWith('.') && !NOT_PUBLISHED.has(e.name))
      .map((e) => e.name);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  for (const n of names) await fs.copyFile(path.join(from, n), path.join(to, n));
  return names.sort();
}

/** A hard link of `from` at `to`, or a copy where the filesystem cannot link. */
async function linkOrCopy(from: string, to: string): Promise<void> {
  try {
    await fs.link(from, to);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== 'EXDEV' && code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'EMLINK') throw err;
    await fs.copyFile(from, to);
  }
}

const TAIL_FILE = /^text-from-\d+\.hnsw$/;

/** Where a planned segment's files are: the window tails it keeps wherever they are (a reused segment's new ones in the artifacts). */
async function segmentFiles(ctx: StageContext, plan: SegmentPlan, s: PlannedSegment): Promise<Array<[name: string, from: string]>> {
  const dir = plannedSegmentDir(ctx, plan, s);
  const out: Array<[string, string]> = (await fs.readdir(dir)).filter((n) => !TAIL_FILE.test(n)).map((n) => [n, path.join(dir, n)]);
  for (const t of s.textTails ?? []) {
    const name = tailFile(t.from);
    const built = path.join(segmentDir(ctx.layout.artifacts, s.id), name);
    out.push([name, (await pathExists(built)) ? built : path.join(dir, name)]);
  }
  return out.sort((a, b) => (a[0] < b[0] ? -1 : 1));
}

/**
 * Every planned segment into the generation's segments/ folder, linked; returns their manifest
 * entries (a reused segment's from the served manifest: its files did not change).
 */
async function linkSegments(ctx: StageContext, plan: SegmentPlan, to: string, served: Manifest | null): Promise<ManifestFile[]> {
  const known = new Map((served?.files ?? []).map((f) => [f.name, f]));
  const out: ManifestFile[] = [];
  for (const s of plan.segments) {
    ctx.signal.throwIfAborted();
    const dir = segmentDir(to, s.id);
    await fs.mkdir(dir, { recursive: true });
    for (const [name, from] of await segmentFiles(ctx, plan, s)) {
      await linkOrCopy(from, path.join(dir, name));
      const entry = `${SEGMENTS_DIR}/${s.id}/${name}`;
      const before = s.action === 'reuse' ? known.get(entry) : undefined;
      out.push(before ?? (await describeFile(to, entry, null)));
    }
  }
  return out;
}

/** The snapshot tables (tableQueries) into `dir`, with their manifest entries and row counts. */
async function writeTables(
  ctx: StageContext,
  db: DuckDB,
  dir: string,
  asOfIso: string,
): Promise<{ files: ManifestFile[]; counts: Record<string, number> }> {
  const files: ManifestFile[] = [];
  const counts: Record<string, number> = {};
  for (const [name, sql] of Object.entries(tableQueries(asOfIso))) {
    ctx.signal.throwIfAborted();
    await db.run(`COPY (${sql}) TO ${sqlString(path.join(dir, name))} (${PARQUET})`);
    const [r] = await db.all(`SELECT count(*) AS n FROM read_parquet(${sqlString(path.join(dir, name))})`);
    counts[name.replace('.parquet', '')] = num(r?.n);
    files.push(await describeFile(dir, name, num(r?.n)));
  }
  return { files, counts };
}

async function prune(ctx: StageContext, current: string): Promise<string[]> {
  const gens = await listGenerations(ctx.layout);
  const excess = gens.slice(0, Math.max(0, gens.length - ctx.config.KEEP_GENERATIONS)).filter((g) => g !== current);
  for (const g of excess) await fs.rm(generationDir(ctx.layout, g), { recursive: true, force: true });
  if (excess.length) await fsyncDir(ctx.layout.snapshots);
  return excess;
}

/** The publish stage's summary. */
type PublishSummary = {
  generation: string;
  previous: string | null;
  /** ISO text (the summary's name). */
  asOf: string;
  mode: SegmentPlan['mode'];
  counts: Manifest['counts'];
  files: number;
  pruned: string[];
  swept: string[];
};

async function runPublish(ctx: StageContext): Promise<PublishSummary> {
  const db: DuckDB = await ctx.db();
  const { layout } = ctx;
  await fs.mkdir(layout.snapshots, { recursive: true });
  const swept = await sweepLeftovers(layout.snapshots);
  const previous = await readCurrent(layout);
  const existing = await listGenerations(layout);
  const last = existing.length ? generationNumber(existing[existing.length - 1]!)! : 0;
  const gen = generationId(last + 1);
  const tmp = path.join(layout.snapshots, `.tmp-${gen}-${process.pid}`);
  await fs.mkdir(tmp);

  const asOfIso = ctx.asOf.toISOString();
  await checkArtifactsMatch(layout.artifacts, asOfIso, null);
  const plan = await readPlan(ctx);
  await checkArtifactsMatch(layout.artifacts, asOfIso, plan.rows);
  // The tables are written by DuckDB's threads while this thread copies, links and hashes the
  // artifacts and segment files: the two took turns before, each leaving a core idle.
  const tables = writeTables(ctx, db, tmp, asOfIso);
  tables.catch(() => undefined); // awaited below, after the files
  let artifacts: ManifestFile[];
  try {
    artifacts = [];
    for (const name of await copyArtifacts(layout.artifacts, tmp)) artifacts.push(await describeFile(tmp, name, null));
    const served = previous ? await readManifest(layout, previous) : null;
    artifacts.push(...(await linkSegments(ctx, plan, tmp, served)));
  } finally {
    await tables.catch(() => undefined);
  }
  const { files: tableFiles, counts } = await tables;
  if (counts.posts !== plan.liveRows)
    throw new Error(`the snapshot has ${counts.posts} posts, the segment plan ${plan.liveRows}: run the features stage (or run) first`);
  const files = [...tableFiles, ...artifacts];
  const masked = maskedRows(plan);
  await writeFileAtomic(path.join(tmp, DELETED_ROWS_FILE), new Uint8Array(masked.buffer));
  files.push(await describeFile(tmp, DELETED_ROWS_FILE, null));
  counts.rows = plan.rows;
  counts.masked = masked.length;
  await failpoint('publish.after-tables', ctx.signal);

  const [e] = await db.all<{ earliest: number | null }>(
    `SELECT epoch_ms(min(published_at)) AS earliest FROM posts WHERE published_at <= ?::TIMESTAMPTZ`,
    [asOfIso],
  );
  const manifest: Manifest = {
    schema_version: SNAPSHOT_SCHEMA_VERSION,
    generation: gen,
    previous_generation: previous,
    computed_at: new Date().toISOString(),
    as_of: asOfIso,
    windows: windowBounds(ctx.asOf, e?.earliest != null ? new Date(Number(e.earliest)) : null),
    embedder: JSON.parse(await fs.readFile(path.join(layout.artifacts, 'embedder.json'), 'utf8')) as EmbedderInfo,
    files,
    counts,
    segments: plan.segments.map((s) => ({
      id: s.id,
      from: s.from,
      to: s.to,
      rows: s.rows,
      textPoints: s.textPoints,
      visualPoints: s.visualPoints,
      textTails: s.textTails ?? [],
      builtIn: s.action === 'build' ? gen : s.builtIn,
      last: s.last,
    })),
    last_segment: plan.lastSegment,
    run: {
      mode: plan.mode,
      full_because: plan.fullBecause,
      built: plan.segments.filter((s) => s.action === 'build').map((s) => s.id),
      reused: plan.segments.filter((s) => s.action === 'reuse').map((s) => s.id),
    },
  };
  await fs.writeFile(path.join(tmp, 'manifest.json'), JSON.stringify(manifest, null, 2) + '\n');
  await fsyncTree(tmp);
  await failpoint('publish.before-rename', ctx.signal);

  const final = generationDir(layout, gen);
  await fs.rename(tmp, final);
  await fsyncDir(layout.snapshots);
  await failpoint('publish.before-current-switch', ctx.signal);

  await writeFileAtomic(layout.current, `${gen}\n`);
  const pruned = await prune(ctx, gen);
  return { generation: gen, previous, asOf: asOfIso, mode: plan.mode, counts, files: files.length, pruned, swept };
}

export const publishStage: Stage<'publish', PublishSummary> = {
  name: 'publish',
  description: 'write the next immutable generation (Parquet + artifacts + manifest) and switch CURRENT atomically',
  run: runPublish,
};
