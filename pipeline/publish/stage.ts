// The publish stage: writes generation G+1 from the work store into a temporary directory,
// fsyncs every byte, writes manifest.json, renames the directory into place and only then
// switches CURRENT (write-temp, fsync, rename, fsync dir). A kill at any point leaves the previous
// generation served; leftovers of a killed publish are swept by the next one.
import fs from 'node:fs/promises';
import path from 'node:path';
import { num, sqlString, type DuckDB } from '../../core/duckdb.ts';
import { fsyncDir, fsyncTree, sha256File, writeFileAtomic } from '../../core/durable-fs.ts';
import { failpoint } from '../../core/failpoints.ts';
import {
  generationDir,
  generationId,
  generationNumber,
  listGenerations,
  readCurrent,
  SNAPSHOT_SCHEMA_VERSION,
  type Manifest,
  type ManifestFile,
} from '../../core/generations.ts';
import { SNAPSHOT_POST_COLUMNS } from '../../core/post-schema.ts';
import { windowBounds } from '../../core/windows.ts';
import { SNAPSHOT_ORDER, snapshotWhere, type ArtifactSource } from '../snapshot-rows.ts';
import type { Stage, StageContext, StageSummary } from '../stage-context.ts';

const PARQUET = `FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE 122880`;

/** The snapshot tables and the SQL that produces each from the work store's `posts`. */
function tableQueries(asOf: string): Record<string, string> {
  const asOfLit = `${sqlString(asOf)}::TIMESTAMPTZ`;
  return {
    // Posts published after as-of belong to a later snapshot.
    'posts.parquet': `SELECT ${SNAPSHOT_POST_COLUMNS.join(', ')} FROM posts
      WHERE ${snapshotWhere(asOf)} ORDER BY ${SNAPSHOT_ORDER}`,
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

async function checkArtifactsMatch(dir: string, asOf: string, rows: number): Promise<void> {
  for (const [file, stages] of ARTIFACT_SOURCES) {
    let source: ArtifactSource;
    try {
      source = JSON.parse(await fs.readFile(path.join(dir, file), 'utf8')) as ArtifactSource;
    } catch {
      continue; // not built yet (a publish of ingested posts only, or before narratives exist)
    }
    if (source.asOf !== asOf || source.rows !== rows) {
      throw new Error(
        `artifacts of ${stages} describe as-of ${source.asOf} with ${source.rows} rows, this ` +
          `publish is as-of ${asOf} with ${rows}: run ${stages} (or run) first`,
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

async function copyArtifacts(from: string, to: string): Promise<string[]> {
  let names: string[] = [];
  try {
    names = (await fs.readdir(from, { withFileTypes: true })).filter((e) => e.isFile() && !e.name.startsWith('.')).map((e) => e.name);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  for (const n of names) await fs.copyFile(path.join(from, n), path.join(to, n));
  return names.sort();
}

async function prune(ctx: StageContext, current: string): Promise<string[]> {
  const gens = await listGenerations(ctx.layout);
  const excess = gens.slice(0, Math.max(0, gens.length - ctx.config.KEEP_GENERATIONS)).filter((g) => g !== current);
  for (const g of excess) await fs.rm(generationDir(ctx.layout, g), { recursive: true, force: true });
  if (excess.length) await fsyncDir(ctx.layout.snapshots);
  return excess;
}

export async function runPublish(ctx: StageContext): Promise<StageSummary> {
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

  const asOf = ctx.asOf.toISOString();
  const files: ManifestFile[] = [];
  const counts: Record<string, number> = {};
  for (const [name, sql] of Object.entries(tableQueries(asOf))) {
    ctx.signal.throwIfAborted();
    await db.run(`COPY (${sql}) TO ${sqlString(path.join(tmp, name))} (${PARQUET})`);
    const [r] = await db.all(`SELECT count(*) AS n FROM read_parquet(${sqlString(path.join(tmp, name))})`);
    counts[name.replace('.parquet', '')] = num(r?.n);
    files.push(await describeFile(tmp, name, num(r?.n)));
  }
  await checkArtifactsMatch(layout.artifacts, asOf, counts.posts ?? 0);
  for (const name of await copyArtifacts(layout.artifacts, tmp)) files.push(await describeFile(tmp, name, null));
  await failpoint('publish.after-tables', ctx.signal);

  const [e] = await db.all<{ earliest: number | null }>(
    `SELECT epoch_ms(min(published_at)) AS earliest FROM posts WHERE published_at <= ?::TIMESTAMPTZ`,
    [asOf],
  );
  const manifest: Manifest = {
    schema_version: SNAPSHOT_SCHEMA_VERSION,
    generation: gen,
    previous_generation: previous,
    computed_at: new Date().toISOString(),
    as_of: asOf,
    windows: windowBounds(ctx.asOf, e?.earliest != null ? new Date(Number(e.earliest)) : null),
    embedder: null,
    files,
    counts,
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
  return { generation: gen, previous, asOf, counts, files: files.length, pruned, swept };
}

export const publishStage: Stage = {
  name: 'publish',
  description: 'write the next immutable generation (Parquet + artifacts + manifest) and switch CURRENT atomically',
  run: runPublish,
};
