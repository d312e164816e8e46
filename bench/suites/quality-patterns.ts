// Visual-pattern quality on the fixture's planted motifs (part of `npm run bench -- quality`):
//   purity of scope `all`'s patterns (share of each pattern's members carrying its majority
//   planted motif; posts drawn without a motif count as a motif "none" of their own);
//   NMI against the motifs over the posts with a visual vector (noise a label of its own);
//   coverage: share of the motif-bearing posts that land in a pattern;
//   key stability: the pipeline re-run one day later on the same posts; share of the patterns of
//   scope all whose majority motif's pattern keeps its key.
import fs from 'node:fs';
import path from 'node:path';
import { loadConfig } from '../../core/infra/config.ts';
import { dataDirLayout } from '../../core/infra/data-dir.ts';
import { openDuckDB, sqlString } from '../../core/infra/duckdb.ts';
import { generationDir, readCurrent } from '../../core/snapshots/generations.ts';
import { createLogger } from '../../core/infra/log.ts';
import { generateCorpus } from '../../fixtures/generate.ts';
import { resolveStages, runStages } from '../../pipeline/run/runner.ts';
import { uuidsWithVector } from '../lib/generation-vectors.ts';
import { ari, nmi } from '../../core/stats/cluster-metrics.ts';
import { NARRATIVES_AS_OF } from './quality-narratives.ts';

const ROOT = path.resolve(import.meta.dirname, '..', '..');

async function run(dataDir: string, asOf: string): Promise<Record<string, number>> {
  const config = loadConfig({ ...process.env, DATA_DIR: dataDir, LOG_LEVEL: 'silent' });
  const r = await runStages(resolveStages(['run']), { config, log: createLogger('bench', 'silent'), asOf: new Date(asOf), tty: false });
  return Object.fromEntries(r.stages.map((s) => [s.stage, s.ms]));
}

interface Member {
  pattern_key: string;
  uuid: string;
}

async function patternMembers(dataDir: string): Promise<{ members: Member[]; withVector: string[]; labels: Map<string, string> }> {
  const layout = dataDirLayout(dataDir);
  const dir = generationDir(layout, (await readCurrent(layout))!);
  const db = await openDuckDB();
  try {
    const f = (n: string) => sqlString(path.join(dir, n));
    const members = await db.all<Member & Record<string, unknown>>(
      `SELECT pattern_key, uuid FROM read_parquet(${f('pattern-members.parquet')}) WHERE scope_key = 'all'`,
    );
    const labels = new Map(
      (
        await db.all<{ pattern_key: string; label: string }>(
          `SELECT pattern_key, label FROM read_parquet(${f('patterns.parquet')}) WHERE scope_key = 'all'`,
        )
      ).map((r) => [r.pattern_key, r.label]),
    );
    const posts = (await db.all<{ uuid: string }>(`SELECT uuid FROM read_parquet(${f('posts.parquet')})`)).map((r) => r.uuid);
    const visual = uuidsWithVector(dir, 'visual');
    return { members, withVector: posts.filter((u) => visual.has(u)), labels };
  } finally {
    db.close();
  }
}

interface PatternQuality {
  posts: number;
  patterns: number;
  motifs: number;
  purity: number;
  nmi: number;
  ari: number;
  coverage: number;
  keyStability: { kept: number; total: number };
  examples: Array<{ label: string; motif: string; share: number }>;
  stageMs: Record<string, number>;
}

async function measurePatternQuality(posts: number, seed = 42): Promise<PatternQuality> {
  const dataDir = path.join(ROOT, 'bench', '.cache', `patterns-${posts}`);
  const truthFile = `${dataDir}.truth.ndjson`;
  fs.rmSync(dataDir, { recursive: true, force: true });
  await generateCorpus({ posts, outDir: path.join(dataDir, 'landing', 'corpus'), truthFile, seed, asOf: NARRATIVES_AS_OF, media: true });
  const motif = new Map<string, string>();
  const motifNames = new Map<string, string>();
  for (const line of fs.readFileSync(truthFile, 'utf8').split('\n')) {
    if (!line) continue;
    const t = JSON.parse(line) as { type: string; uuid?: string; motif?: string | null; id?: string; name?: string };
    if (t.type === 'post') motif.set(t.uuid!, t.motif ?? 'none');
    else if (t.type === 'motif') motifNames.set(t.id!, t.name!);
  }
  const stageMs = await run(dataDir, NARRATIVES_AS_OF);
  const first = await patternMembers(dataDir);
  const byPattern = new Map<string, Map<string, number>>();
  for (const m of first.members) {
    const c = byPattern.get(m.pattern_key) ?? new Map<string, number>();
    const k = motif.get(m.uuid) ?? 'none';
    c.set(k, (c.get(k) ?? 0) + 1);
    byPattern.set(m.pattern_key, c);
  }
  const majorityOf = new Map<string, string>();
  let majority = 0;
  const examples: Array<{ label: string; motif: string; share: number }> = [];
  for (const [key, counts] of byPattern) {
    const [top, n] = [...counts].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))[0]!;
    majorityOf.set(key, top);
    majority += n;
    const size = [...counts.values()].reduce((a, b) => a + b, 0);
    examples.push({ label: first.labels.get(key) ?? '', motif: motifNames.get(top) ?? top, share: n / size });
  }
  const inPattern = new Map(first.members.map((m) => [m.uuid, m.pattern_key]));
  const truthLabels = first.withVector.map((u) => motif.get(u) ?? 'none');
  const predLabels = first.withVector.map((u) => inPattern.get(u) ?? 'noise');
  const motifPosts = first.withVector.filter((u) => (motif.get(u) ?? 'none') !== 'none');

  // Re-run one day later: same posts.
  const next = new Date(Date.parse(NARRATIVES_AS_OF) + 86_400_000).toISOString();
  stageMs.rerun = Object.values(await run(dataDir, next)).reduce((a, b) => a + b, 0);
  const second = await patternMembers(dataDir);
  const secondKeys = new Set(second.members.map((m) => m.pattern_key));
  let kept = 0;
  for (const key of byPattern.keys()) if (secondKeys.has(key)) kept++;

  return {
    posts: first.withVector.length,
    patterns: byPattern.size,
    motifs: motifNames.size,
    purity: majority / Math.max(1, first.members.length),
    nmi: nmi(truthLabels, predLabels),
    ari: ari(truthLabels, predLabels),
    coverage: motifPosts.filter((u) => inPattern.has(u)).length / Math.max(1, motifPosts.length),
    keyStability: { kept, total: byPattern.size },
    examples: examples.sort((a, b) => b.share - a.share),
    stageMs,
  };
}

export async function benchQualityPatterns(o: { posts: number; command: string }): Promise<void> {
  const { machine, writeResultsJson, writeResultsSection } = await import('../results-file.ts');
  const q = await measurePatternQuality(o.posts);
  const result = { date: new Date().toISOString(), machine: machine(), command: o.command, corpusPosts: o.posts, ...q };
  writeResultsJson('quality-patterns', result);
  const f = (x: number, d = 3) => x.toFixed(d);
  const pct = (a: number, b: number) => `${b ? ((100 * a) / b).toFixed(1) : '0.0'}% (${a}/${b})`;
  const md = `## Visual-pattern quality on the fixture's planted motifs

Command: \`${o.command}\` — ${result.date.slice(0, 10)}, ${result.machine}. A generated corpus of ${o.posts.toLocaleString('en-US')} posts with media (seed 42, ${q.motifs} planted motifs: palette x shape x layout), the whole pipeline as of ${NARRATIVES_AS_OF}, then again one day later on the same posts. Scope all; ${q.posts.toLocaleString('en-US')} posts with a visual vector.

| measure | value | bar |
|---|---|---|
| purity of patterns vs planted motifs (posts without a motif count as "none") | **${f(q.purity)}** | >= 0.9 (${q.purity >= 0.9 ? 'met' : 'missed'}) |
| NMI vs motifs (noise a label of its own) | ${f(q.nmi)} | |
| ARI, same | ${f(q.ari)} | |
| patterns found / planted motifs | ${q.patterns} / ${q.motifs} | |
| motif-bearing posts that land in a pattern | ${(100 * q.coverage).toFixed(1)}% | |
| pattern_key kept on the re-run a day later | **${pct(q.keyStability.kept, q.keyStability.total)}** | |

Labels next to the motif they found (first five by purity): ${q.examples
    .slice(0, 5)
    .map((e) => `"${e.label}" = ${e.motif} (${f(e.share, 2)})`)
    .join('; ')}. Stage times of the first run: ${Object.entries(q.stageMs)
    .filter(([k]) => k !== 'rerun')
    .map(([k, v]) => `${k} ${(v / 1000).toFixed(1)} s`)
    .join(', ')}; the whole re-run ${(q.stageMs.rerun! / 1000).toFixed(1)} s.`;
  writeResultsSection('quality-patterns', md);
  process.stdout.write(md + '\n');
}
