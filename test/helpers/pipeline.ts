// Runs pipeline stages in-process against a test data directory, and reads what they produced.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../core/infra/config.ts';
import { dataDirLayout } from '../../core/infra/data-dir.ts';
import { openDuckDB, sqlString, type Row } from '../../core/infra/duckdb.ts';
import { generationDir, readCurrent, type Manifest } from '../../core/snapshots/generations.ts';
import { loadGraphs, type GraphName, type LoadedGraphs } from '../../core/ranking/segment-graphs.ts';
import { readDeletedRows, segmentDir, withFirstRows } from '../../core/snapshots/segments.ts';
import { loadVectorSpace } from '../../core/vectors/vector-space.ts';
import { createLogger } from '../../core/infra/log.ts';
import { resolveStages, runStages, type RunResult } from '../../pipeline/run/runner.ts';
import { ROOT } from './child.ts';
import { tmpDir, writeLines } from './tmp.ts';

export const AS_OF = new Date('2026-11-01T00:00:00Z');

/** A fresh data dir whose landing holds the committed sample (posts and media). */
export function sampleDataDir(): string {
  const d = tmpDir();
  fs.cpSync(path.join(ROOT, 'fixtures', 'sample', 'posts'), path.join(d, 'landing', 'sample'), { recursive: true });
  return d;
}

/** What a shared full run on the sample starts from: its env, as-of, and files landed beside the sample. */
interface SampleRun {
  env?: Record<string, string>;
  asOf?: Date;
  /** Extra landing files, by path under landing/, as their records. */
  landing?: Record<string, unknown[]>;
}

/**
 * A fresh data dir as a full run on the committed sample (and `landing`'s files) leaves it: the run
 * is made once for each distinct {env, asOf, landing} (sharedDataDir), and each call gets its own
 * copy of it, so tests stay independent.
 * For tests that start from that run: read what it published, serve it, run on from it. A test that
 * needs the run's own result (its RunResult, what it did while running) or a run of its own kind
 * (another env, a failpoint, a child process) runs its own.
 */
export function pipedSampleDir(run: SampleRun = {}): Promise<string> {
  return sharedDataDir(...sampleRun(run));
}

/** pipedSampleDir's run copied into the empty folder `d`: for a sharedDataDir build that runs on from it. */
export async function pipedSampleInto(d: string, run: SampleRun = {}): Promise<void> {
  copyDataDir(await template(...sampleRun(run)), d);
}

/** The key and the build of a full run on the sample. */
function sampleRun(run: SampleRun): [string, (d: string) => Promise<void>] {
  const asOf = run.asOf ?? AS_OF;
  return [JSON.stringify([run.env ?? {}, asOf.toISOString(), run.landing ?? {}]), (d) => sampleRunInto(d, run, asOf)];
}

/**
 * A fresh data dir as `build` leaves the empty folder it is given: built once for each `key` (per
 * test run under test/run.ts, else per process: sharedTemplate), into a template that outlives the
 * tests, and each call gets its own copy of it (copyDataDir). The same key must always build the
 * same data dir.
 */
export async function sharedDataDir(key: string, build: (d: string) => Promise<void>): Promise<string> {
  const from = await template(key, build);
  const d = tmpDir();
  copyDataDir(from, d);
  return d;
}

const templates = new Map<string, Promise<string>>();

function template(key: string, build: (d: string) => Promise<void>): Promise<string> {
  let t = templates.get(key);
  if (!t) {
    t = sharedTemplate(key, build);
    templates.set(key, t);
  }
  return t;
}

/** The full run on the sample (and `landing`) into the empty folder `d`. */
async function sampleRunInto(d: string, run: SampleRun, asOf: Date): Promise<void> {
  fs.cpSync(path.join(ROOT, 'fixtures', 'sample', 'posts'), path.join(d, 'landing', 'sample'), { recursive: true });
  for (const [file, records] of Object.entries(run.landing ?? {})) writeLines(path.join(d, 'landing', file), records);
  await runPipeline(d, ['run'], asOf, run.env);
}

/**
 * The template folder of `key`, built by `build` once: once per test process, or, under test/run.ts
 * (TEST_SAMPLE_RUNS: a folder it makes for the whole run and removes after), once per test run,
 * shared by every file: the first process to need it builds it aside and renames it into place
 * (atomic); one that finds it there copies it. Two that build at once both succeed, one's kept.
 */
async function sharedTemplate(key: string, build: (d: string) => Promise<void>): Promise<string> {
  const shared = process.env.TEST_SAMPLE_RUNS;
  if (!shared) {
    const d = fs.mkdtempSync(path.join(os.tmpdir(), 'ci-test-base-'));
    process.once('exit', () => fs.rmSync(d, { recursive: true, force: true }));
    await build(d);
    return d;
  }
  const final = path.join(shared, createHash('sha256').update(key).digest('hex').slice(0, 16));
  if (fs.existsSync(final)) return final;
  const aside = `${final}.${process.pid}`;
  fs.rmSync(aside, { recursive: true, force: true });
  fs.mkdirSync(aside, { recursive: true });
  await build(aside);
  try {
    fs.renameSync(aside, final);
  } catch (err) {
    // Another process renamed its build into place first: use that one.
    if (!fs.existsSync(final)) throw err;
    fs.rmSync(aside, { recursive: true, force: true });
  }
  return final;
}

/**
 * A copy of a data dir (no process using it) at another path: files with their mtimes, and the hard
 * links within it (a generation's segment files and the work store's artifacts are one file) kept
 * as links. A data dir holds no absolute path (landing files are known by their path under landing/).
 */
function copyDataDir(from: string, to: string, links = new Map<string, string>()): void {
  fs.mkdirSync(to, { recursive: true });
  for (const e of fs.readdirSync(from, { withFileTypes: true })) {
    const [src, dst] = [path.join(from, e.name), path.join(to, e.name)];
    if (e.isDirectory()) {
      copyDataDir(src, dst, links);
      continue;
    }
    if (!e.isFile()) throw new Error(`copyDataDir: ${src} is neither a file nor a folder`);
    const st = fs.statSync(src);
    const same = st.nlink > 1 ? links.get(`${st.dev}:${st.ino}`) : undefined;
    if (same) {
      fs.linkSync(same, dst);
      continue;
    }
    fs.copyFileSync(src, dst);
    fs.utimesSync(dst, st.atime, st.mtime);
    if (st.nlink > 1) links.set(`${st.dev}:${st.ino}`, dst);
  }
}

export async function runPipeline(
  dataDir: string,
  stages: string[] = ['run'],
  asOf = AS_OF,
  env: Record<string, string> = {},
  opts: { allowRewind?: boolean; full?: boolean } = {},
): Promise<RunResult> {
  const config = loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent', ...env });
  return runStages(resolveStages(stages), { config, log: createLogger('test', 'silent'), asOf, tty: false, ...opts });
}

export function summaryOf(r: RunResult, stage: string): Record<string, unknown> {
  const s = r.stages.find((x) => x.stage === stage);
  if (!s) throw new Error(`no stage ${stage} in run`);
  return s.summary;
}

/** Rows of a table of the current generation, read back with a fresh DuckDB. */
export async function readSnapshot(dataDir: string, table: string, select = '*', where = ''): Promise<Row[]> {
  const layout = dataDirLayout(dataDir);
  const gen = await readCurrent(layout);
  if (!gen) throw new Error('no current generation');
  const db = await openDuckDB();
  try {
    await db.run(`SET TimeZone = 'UTC'`);
    return await db.all(`SELECT ${select} FROM ${tableSql(generationDir(layout, gen), table)} ${where}`);
  } finally {
    db.close();
  }
}

/** Column names of a table of the current generation, in order. */
export async function describeSnapshot(dataDir: string, table: string): Promise<Array<{ column_name: string }>> {
  const layout = dataDirLayout(dataDir);
  const gen = await readCurrent(layout);
  if (!gen) throw new Error('no current generation');
  const db = await openDuckDB();
  try {
    return await db.all(`SELECT column_name FROM (DESCRIBE SELECT * FROM ${tableSql(generationDir(layout, gen), table)})`);
  } finally {
    db.close();
  }
}

function manifestSegments(genDir: string) {
  const m = JSON.parse(fs.readFileSync(path.join(genDir, 'manifest.json'), 'utf8')) as Manifest;
  return withFirstRows(m.segments ?? []);
}

/** FROM-able SQL of a generation's table: its file, or a per-segment table (core/snapshots/segments.ts) laid end to end, row_id global. */
function tableSql(genDir: string, table: string): string {
  const top = path.join(genDir, `${table}.parquet`);
  if (fs.existsSync(top)) return `read_parquet(${sqlString(top)})`;
  const parts = manifestSegments(genDir).map(
    (s) =>
      `SELECT row_id + ${s.firstRow} AS row_id, * EXCLUDE (row_id) FROM read_parquet(${sqlString(path.join(segmentDir(genDir, s.id), `${table}.parquet`))})`,
  );
  // By name: a segment written before a column existed lacks it.
  return `(${parts.join(' UNION ALL BY NAME ')})`;
}

/** Every row's vector of a generation (its segments' text- or visual-vectors.f32 end to end). */
export function generationVectors(genDir: string, name: GraphName): Float32Array {
  const parts = manifestSegments(genDir).map((s) => fs.readFileSync(path.join(segmentDir(genDir, s.id), `${name}-vectors.f32`)));
  const all = Buffer.concat(parts);
  return new Float32Array(all.buffer.slice(all.byteOffset, all.byteOffset + all.byteLength));
}

/** A generation's HNSW graphs, masked rows marked. */
export function generationGraphs(genDir: string, name: GraphName): LoadedGraphs {
  const dim = loadVectorSpace(genDir, name).dim;
  const sources = manifestSegments(genDir).map((s) => ({
    id: s.id,
    dir: segmentDir(genDir, s.id),
    firstRow: s.firstRow,
    rows: s.rows,
    points: name === 'text' ? s.textPoints : s.visualPoints,
    tails: name === 'text' ? s.textTails : [],
  }));
  return loadGraphs(name, dim, sources, readDeletedRows(genDir));
}
