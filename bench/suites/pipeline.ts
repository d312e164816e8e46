// `npm run bench -- pipeline --posts N --stages ingest[,publish] [--runs R] [--format F]`:
// pipeline throughput (posts/s) and peak RSS, median over R runs, each on a fresh data dir in a
// fresh process, beside DuckDB's bare bulk load of the same files (the peer).
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { generateCorpus } from '../../fixtures/generate.ts';
import { machine, median, writeResultsJson, writeResultsSection, thousands } from '../results-file.ts';

interface PipelineBenchOptions {
  posts: number;
  stages: string[];
  runs: number;
  format: 'ndjson' | 'csv' | 'parquet';
  seed: number;
  command: string;
  /** off: text only; vectors: posts with pictures carry a precomputed visual_embedding (the patterns stage at scale). */
  media: 'off' | 'vectors';
  /** Keep the last run's data dir here (e.g. for the api bench) instead of removing it. */
  keep?: string;
}

export const AS_OF = '2026-11-01T00:00:00.000Z';
const ROOT = path.resolve(import.meta.dirname, '..', '..');

export async function corpus(o: PipelineBenchOptions): Promise<{ dir: string; records: number; genMs: number }> {
  const dir = path.join(ROOT, 'bench', '.cache', `corpus-${o.posts}-seed${o.seed}-${o.format}${o.media === 'vectors' ? '-vectors' : ''}`);
  const meta = path.join(dir, '.summary.json');
  if (!fs.existsSync(meta)) {
    fs.rmSync(dir, { recursive: true, force: true });
    process.stderr.write(`generating ${o.posts} posts (${o.format}, media ${o.media}) into ${dir} ...\n`);
    const s = await generateCorpus({
      posts: o.posts,
      outDir: dir,
      seed: o.seed,
      asOf: AS_OF,
      media: false,
      visualEmbeddings: o.media === 'vectors',
      format: o.format,
      truthFile: `${dir}.truth.ndjson`,
    });
    fs.writeFileSync(meta, JSON.stringify(s));
  }
  const s = JSON.parse(fs.readFileSync(meta, 'utf8'));
  return { dir, records: s.records, genMs: s.ms };
}

export function child(script: string, args: string[]): Record<string, any> {
  const r = spawnSync(process.execPath, ['--import', 'tsx', path.join(ROOT, 'bench', script), ...args], {
    encoding: 'utf8',
    maxBuffer: 1 << 26,
  });
  if (r.status !== 0) throw new Error(`${script} failed: ${r.stderr.slice(-2000)}`);
  return JSON.parse(r.stdout.trim().split('\n').pop()!);
}

/** A fresh data dir whose landing/ holds the corpus files, hard-linked (no copy of 0.5 GB per run). */
export function freshDataDir(corpusDir: string): string {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-pipeline-'));
  const landing = path.join(d, 'landing', 'corpus');
  fs.mkdirSync(landing, { recursive: true });
  for (const f of fs.readdirSync(corpusDir)) {
    if (f.startsWith('.')) continue;
    const src = path.join(corpusDir, f);
    if (!fs.statSync(src).isFile()) continue;
    try {
      fs.linkSync(src, path.join(landing, f));
    } catch {
      fs.copyFileSync(src, path.join(landing, f));
    }
  }
  return d;
}

/** The stages in a child process on a fresh data dir holding the corpus, removed afterwards (or moved to `keep`). */
export function runStagesFresh(corpusDir: string, stages: string[], keep?: string): Record<string, any> {
  const d = freshDataDir(corpusDir);
  let kept = false;
  try {
    const r = child('run-stages.ts', [d, AS_OF, ...stages]);
    if (keep) {
      fs.rmSync(keep, { recursive: true, force: true });
      fs.mkdirSync(path.dirname(keep), { recursive: true });
      try {
        fs.renameSync(d, keep);
      } catch {
        fs.cpSync(d, keep, { recursive: true });
      }
      kept = true;
    }
    return r;
  } finally {
    fs.rmSync(d, { recursive: true, force: true });
    if (kept) process.stderr.write(`data dir kept at ${keep}\n`);
  }
}

export async function benchPipeline(o: PipelineBenchOptions): Promise<void> {
  const c = await corpus(o);
  const ingestOnly = o.stages.every((s) => s === 'ingest' || s === 'publish');
  if (!ingestOnly) return benchFullPipeline(o, c);
  const ours: Array<Record<string, any>> = [];
  const peer: Array<Record<string, any>> = [];
  for (let i = 0; i < o.runs; i++) {
    ours.push(runStagesFresh(c.dir, o.stages));
    // The peer is a bulk load: a fair comparison for ingest only.
    if (ingestOnly) peer.push(child('run-peer-load.ts', [c.dir]));
    process.stderr.write(
      `run ${i + 1}/${o.runs}: ours ${(ours[i]!.ms / 1000).toFixed(1)} s${ingestOnly ? `, peer ${(peer[i]!.ms / 1000).toFixed(1)} s` : ''}\n`,
    );
  }
  const oursMs = median(ours.map((r) => r.ms));
  const peerMs = median(peer.map((r) => r.ms));
  const ingest = ours[0]!.summaries.ingest ?? {};
  const result = {
    date: new Date().toISOString(),
    machine: machine(),
    command: o.command,
    posts: o.posts,
    records: c.records,
    format: o.format,
    stages: o.stages,
    runs: o.runs,
    ours: {
      medianMs: oursMs,
      recordsPerSec: c.records / (oursMs / 1000),
      maxRssMiB: Math.max(...ours.map((r) => r.maxRssMiB)),
      stageMsMedian: Object.fromEntries(o.stages.map((s) => [s, median(ours.map((r) => r.stageMs[s]))])),
      ingest,
    },
    peer: {
      name: 'DuckDB bare bulk load (no validation)',
      medianMs: peerMs,
      recordsPerSec: c.records / (peerMs / 1000),
      maxRssMiB: Math.max(...peer.map((r) => r.maxRssMiB)),
    },
    ratioToPeer: oursMs / peerMs,
  };
  writeResultsJson('pipeline', result);
  const f = thousands;
  const md = `## Pipeline: ${o.stages.join(' + ')} of ${f(o.posts)} posts (${o.format}, media off)

Command: \`${o.command}\` — ${result.date.slice(0, 10)}, ${result.machine}; median of ${o.runs} runs, each a fresh data dir in a fresh process.

| | median time | records/s | posts/s | peak RSS |
|---|---|---|---|---|
| ours: ${o.stages.join(' + ')} (validate, normalise, quarantine, upsert${o.stages.includes('publish') ? ', publish' : ''}) | ${(oursMs / 1000).toFixed(1)} s | ${f(result.ours.recordsPerSec)} | ${f(o.posts / (oursMs / 1000))} | ${f(result.ours.maxRssMiB)} MiB |
| peer: DuckDB bare bulk load, no validation | ${(peerMs / 1000).toFixed(1)} s | ${f(result.peer.recordsPerSec)} | ${f(o.posts / (peerMs / 1000))} | ${f(result.peer.maxRssMiB)} MiB |

Records include re-observations and planted bad records; posts/s counts distinct posts. Timed: the whole run in the child (open the work store, hash and read the files, validate, quarantine, merge, commit, close). Ours takes ${result.ratioToPeer.toFixed(2)}x the peer's time. Records read ${f(Number(ingest.read ?? 0))} = accepted ${f(Number(ingest.accepted ?? 0))} + updated ${f(Number(ingest.updated ?? 0))} + quarantined ${f(Number(ingest.quarantined ?? 0))}. Stage medians: ${o.stages.map((s) => `${s} ${((result.ours.stageMsMedian[s] ?? 0) / 1000).toFixed(1)} s`).join(', ')}.`;
  writeResultsSection('pipeline', md);
  process.stdout.write(md + '\n');
}

/** Every stage on the corpus: stage times against the bars (features + index, whole pipeline), peak RSS. */
async function benchFullPipeline(o: PipelineBenchOptions, c: { dir: string; records: number }): Promise<void> {
  const runs: Array<Record<string, any>> = [];
  for (let i = 0; i < o.runs; i++) {
    runs.push(runStagesFresh(c.dir, o.stages, i === o.runs - 1 ? o.keep : undefined));
    process.stderr.write(`run ${i + 1}/${o.runs}: ${(runs[i]!.ms / 1000).toFixed(1)} s\n`);
  }
  const stageMs = Object.fromEntries(o.stages.map((s) => [s, median(runs.map((r) => r.stageMs[s] ?? 0))]));
  const totalMs = median(runs.map((r) => r.ms));
  const fiMs = median(runs.map((r) => (r.stageMs.features ?? 0) + (r.stageMs.index ?? 0)));
  const mapMs = median(runs.map((r) => (r.stageMs.narratives ?? 0) + (r.stageMs.patterns ?? 0)));
  const result = {
    date: new Date().toISOString(),
    machine: machine(),
    command: o.command,
    posts: o.posts,
    records: c.records,
    format: o.format,
    stages: o.stages,
    runs: o.runs,
    media: o.media,
    totalMs,
    featuresPlusIndexMs: fiMs,
    narrativesPlusPatternsMs: mapMs,
    stageMs,
    maxRssMiB: Math.max(...runs.map((r) => r.maxRssMiB)),
    summaries: runs[0]!.summaries,
  };
  // 1M posts keeps the section's plain name; other sizes get their own, so a curve over sizes (100k, 300k, 1M) stays side by side.
  const base = o.media === 'vectors' ? 'pipeline-full-vectors' : 'pipeline-full';
  const section = o.posts === 1_000_000 ? base : `${base}-${o.posts}`;
  writeResultsJson(section, result);
  const f = thousands;
  const sec = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
  const sum = result.summaries as Record<string, Record<string, unknown>>;
  const detail = (stage: string, keys: string[]) =>
    keys
      .filter((k) => sum[stage]?.[k] !== undefined)
      .map((k) => `${k} ${sec(Number(sum[stage]![k]))}`)
      .join(', ');
  const md = `## Pipeline: every stage on ${f(o.posts)} posts (${o.format}, ${o.media === 'vectors' ? 'precomputed visual embeddings for posts with pictures' : 'media off'})

Command: \`${o.command}\` — ${result.date.slice(0, 10)}, ${result.machine}; median of ${o.runs} run(s), each a fresh data dir in a fresh process.

| | median | bar |
|---|---|---|
${o.stages.map((s) => `| ${s} | ${sec(stageMs[s]!)} | |`).join('\n')}
| features + index | **${sec(fiMs)}** | under 10 min (${fiMs < 600_000 ? 'met' : 'missed'}) |
| narratives + patterns | **${sec(mapMs)}** | under 5 min (${mapMs < 300_000 ? 'met' : 'missed'}) |
| whole run | **${sec(totalMs)}** | under 15 min (${totalMs < 900_000 ? 'met' : 'missed'}) |
| peak RSS (whole process, workers included) | ${f(result.maxRssMiB)} MiB | under 8 GiB |

Inside the stages (first run): features: ${detail('features', ['textMs', 'fitMs', 'embedMs', 'visualMs', 'themesMs'])} (text = analysis and enrichment in worker threads); index: ${detail('index', ['bm25Ms', 'hnswMs', 'neighbourMs'])} (HNSW shards ${String(sum.index?.textShards ?? '')}, built in parallel)${
    sum.patterns
      ? `; patterns: ${Object.entries((sum.patterns.scopes ?? {}) as Record<string, { rows: number; patterns: number }>)
          .map(([k, v]) => `${k} ${f(v.rows)} posts -> ${v.patterns}`)
          .join(', ')}`
      : ''
  }.`;
  writeResultsSection(section, md);
  process.stdout.write(md + '\n');
}
