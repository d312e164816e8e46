// `npm run bench -- visual [--items N] [--runs R] [--threads T]`: visual feature throughput
// (thumbnails decoded and featurised per second) and peak RSS, median over R runs, each run in a
// fresh process. The items are the committed sample's media posts (images, carousels, videos),
// repeated in order until there are N of them; every file is read and decoded on every pass.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { computeVisualFeatures, VISUAL_DIM, VISUAL_FEATURES_VERSION, type VisualItem } from '../../pipeline/features/visual.ts';
import { machine, median, writeResultsJson, writeResultsSection, thousands } from '../results-file.ts';

interface VisualBenchOptions {
  items: number;
  runs: number;
  threads: number;
  command: string;
}

const ROOT = path.resolve(import.meta.dirname, '..', '..');
const POSTS_DIR = path.join(ROOT, 'fixtures', 'sample', 'posts');
const BAR_PER_SEC = 500;

/** The sample's posts with media, as visual items (first record of each uuid; the planted bad records that name missing files are left out). */
function sampleItems(): VisualItem[] {
  const out: VisualItem[] = [];
  const seen = new Set<string>();
  const abs = (p: string) => path.join(POSTS_DIR, p);
  for (const file of fs
    .readdirSync(POSTS_DIR)
    .filter((f) => f.endsWith('.ndjson'))
    .sort()) {
    for (const line of fs.readFileSync(path.join(POSTS_DIR, file), 'utf8').split('\n')) {
      let r: { uuid?: string; media?: Array<{ kind?: string; path?: string; frames?: string[] }> };
      try {
        r = JSON.parse(line);
      } catch {
        continue;
      }
      if (!r?.uuid || seen.has(r.uuid) || !Array.isArray(r.media) || r.media.length === 0) continue;
      seen.add(r.uuid);
      const m0 = r.media[0]!;
      const named = m0.kind === 'video' ? (m0.frames ?? []) : r.media.map((m) => m.path ?? '');
      if (named.length === 0 || !named.every((p) => typeof p === 'string' && fs.existsSync(abs(p)))) continue;
      if (m0.kind === 'video') out.push({ key: r.uuid, kind: 'video', paths: (m0.frames ?? []).map(abs) });
      else if (r.media.length > 1) out.push({ key: r.uuid, kind: 'carousel', paths: r.media.map((m) => abs(m.path ?? '')) });
      else out.push({ key: r.uuid, kind: 'image', paths: [abs(m0.path ?? '')] });
    }
  }
  return out;
}

interface RunResult {
  ms: number;
  items: number;
  thumbnails: number;
  errors: number;
  cpuMs: number;
  maxRssMiB: number;
}

/** Child process: one timed pass over N items; prints one JSON line. */
async function childRun(n: number, threads: number): Promise<void> {
  const base = sampleItems();
  const items = Array.from({ length: n }, (_, i) => ({ ...base[i % base.length]!, key: String(i) }));
  const thumbnails = items.reduce((a, it) => a + it.paths.length, 0);
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const results = await computeVisualFeatures(items, { threads });
  const ms = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  const errors = [...results.values()].filter((r) => r.error !== undefined).length;
  const out: RunResult = {
    ms,
    items: n,
    thumbnails,
    errors,
    cpuMs: (cpu.user + cpu.system) / 1000,
    maxRssMiB: process.resourceUsage().maxRSS / 1024,
  };
  process.stdout.write(JSON.stringify(out) + '\n');
}

export async function benchVisual(o: VisualBenchOptions): Promise<void> {
  const base = sampleItems();
  const kinds = { image: 0, carousel: 0, video: 0 };
  for (const it of base) kinds[it.kind]++;
  const files = new Set(base.flatMap((it) => it.paths)).size;
  const runs: RunResult[] = [];
  const load = os.loadavg()[0]!;
  for (let i = 0; i < o.runs; i++) {
    const r = spawnSync(process.execPath, ['--import', 'tsx', import.meta.filename, '--child', String(o.items), String(o.threads)], {
      encoding: 'utf8',
      maxBuffer: 1 << 24,
    });
    if (r.status !== 0) throw new Error(`visual bench child failed: ${r.stderr.slice(-2000)}`);
    const run = JSON.parse(r.stdout.trim().split('\n').pop()!) as RunResult;
    if (run.errors > 0) throw new Error(`visual bench: ${run.errors} items failed`);
    runs.push(run);
    process.stderr.write(
      `run ${i + 1}/${o.runs}: ${run.thumbnails} thumbnails in ${(run.ms / 1000).toFixed(1)} s = ${Math.round(run.thumbnails / (run.ms / 1000))}/s, peak RSS ${Math.round(run.maxRssMiB)} MiB\n`,
    );
  }
  const perSec = median(runs.map((r) => r.thumbnails / (r.ms / 1000)));
  const itemsPerSec = median(runs.map((r) => r.items / (r.ms / 1000)));
  const rss = median(runs.map((r) => r.maxRssMiB));
  const cpuMsPerThumb = median(runs.map((r) => r.cpuMs / r.thumbnails));
  // How much of the machine the runs got: CPU time of all threads over wall time.
  const coresUsed = median(runs.map((r) => r.cpuMs / r.ms));
  const thumbnails = runs[0]!.thumbnails;
  const result = {
    date: new Date().toISOString(),
    machine: machine(),
    command: o.command,
    version: VISUAL_FEATURES_VERSION,
    dim: VISUAL_DIM,
    items: o.items,
    thumbnails,
    runs: o.runs,
    threads: o.threads,
    loadAverageAtStart: load,
    sample: { items: base.length, files, ...kinds },
    medianThumbnailsPerSec: perSec,
    medianItemsPerSec: itemsPerSec,
    medianPeakRssMiB: rss,
    maxPeakRssMiB: Math.max(...runs.map((r) => r.maxRssMiB)),
    medianCpuMsPerThumbnail: cpuMsPerThumb,
    medianCoresUsed: coresUsed,
    bar: { thumbnailsPerSec: BAR_PER_SEC, met: perSec >= BAR_PER_SEC },
    perRun: runs,
  };
  writeResultsJson('visual', result);
  const f = thousands;
  const md = `## Visual features: ${f(o.items)} items (${f(thumbnails)} thumbnails) from the sample's media

Command: \`${o.command}\` — ${result.date.slice(0, 10)}, ${result.machine}, ${o.threads} worker threads; median of ${o.runs} runs, each in a fresh process; load average ${load.toFixed(2)} at start.

| | median | bar |
|---|---|---|
| thumbnails/s (decode with sharp + features) | ${f(perSec)} | >= ${BAR_PER_SEC} ${perSec >= BAR_PER_SEC ? '(met)' : '(NOT met)'} |
| items/s | ${f(itemsPerSec)} | |
| peak RSS (whole process, workers included) | ${f(rss)} MiB (max ${f(result.maxPeakRssMiB)} MiB) | |
| CPU per thumbnail (all threads) | ${cpuMsPerThumb.toFixed(2)} ms | |
| cores used (CPU time / wall time) | ${coresUsed.toFixed(2)} of ${os.availableParallelism()} | |

Items: the sample's ${base.length} media posts (${kinds.image} images, ${kinds.carousel} carousels, ${kinds.video} videos of 4 frames; ${files} distinct 64x64 JPEG/PNG files) repeated in order to ${f(o.items)} items. Timed: the whole \`computeVisualFeatures\` call, worker start-up included; every file is read and decoded on every pass (the OS page cache is warm). Version ${VISUAL_FEATURES_VERSION}, ${VISUAL_DIM} dimensions.`;
  writeResultsSection('visual', md);
  process.stdout.write(md + '\n');
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href && process.argv[2] === '--child') {
  await childRun(Number(process.argv[3]), Number(process.argv[4]));
}
