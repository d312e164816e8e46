// Narratives on real text (part of `npm run bench -- quality`): the stance tweets of TweetEval's
// five targets (abortion, atheism, climate, feminist, hillary; train and val pooled) go through
// the whole pipeline as posts, and window all's narratives are compared with each tweet's target:
// NMI and ARI (noise a label of its own), and the purity of the narratives.
import fs from 'node:fs';
import path from 'node:path';
import { loadConfig } from '../../core/config.ts';
import { dataDirLayout } from '../../core/data-dir.ts';
import { openDuckDB, sqlString } from '../../core/duckdb.ts';
import { generationDir, readCurrent } from '../../core/generations.ts';
import { createLogger } from '../../core/log.ts';
import { TWEETEVAL_DIR } from '../../core/enrichment/tweeteval.ts';
import { resolveStages, runStages } from '../../pipeline/runner.ts';
import { ari, nmi } from '../../core/stats/cluster-metrics.ts';

const ROOT = path.resolve(import.meta.dirname, '..', '..');
const AS_OF = '2026-11-01T00:00:00.000Z';
export const STANCE_TARGETS = ['abortion', 'atheism', 'climate', 'feminist', 'hillary'] as const;
const SPREAD_MINUTES = 60 * 24 * 60;

/** The pooled stance tweets as ingestable posts, spread over the 60 days before as-of. */
export function stancePosts(dir = TWEETEVAL_DIR): Array<{ uuid: string; target: string; record: Record<string, unknown> }> {
  const out: Array<{ uuid: string; target: string; record: Record<string, unknown> }> = [];
  for (const target of STANCE_TARGETS) {
    for (const split of ['train', 'val']) {
      const file = path.join(dir, 'stance', target, `${split}_text.txt`);
      const lines = fs
        .readFileSync(file, 'utf8')
        .split('\n')
        .filter((l) => l.trim());
      lines.forEach((text, i) => {
        const uuid = `stance-${target}-${split}-${i}`;
        const n = out.length;
        const published = new Date(Date.parse(AS_OF) - (((n * 7919) % SPREAD_MINUTES) + 1) * 60_000).toISOString();
        out.push({
          uuid,
          target,
          record: { uuid, platform: 'x', published_at: published, description: text, creator_id: 1 + ((n * 31) % 997) },
        });
      });
    }
  }
  return out;
}

export interface StanceQuality {
  posts: number;
  narratives: number;
  nmi: number;
  ari: number;
  purity: number;
  noiseShare: number;
  ms: number;
}

export async function measureStanceNarratives(): Promise<StanceQuality> {
  const dataDir = path.join(ROOT, 'bench', '.cache', 'stance');
  fs.rmSync(dataDir, { recursive: true, force: true });
  fs.mkdirSync(path.join(dataDir, 'landing'), { recursive: true });
  const posts = stancePosts();
  fs.writeFileSync(path.join(dataDir, 'landing', 'stance.ndjson'), posts.map((p) => JSON.stringify(p.record)).join('\n') + '\n');
  const t0 = performance.now();
  const config = loadConfig({ ...process.env, DATA_DIR: dataDir, LOG_LEVEL: 'silent' });
  await runStages(resolveStages(['run']), { config, log: createLogger('bench', 'silent'), asOf: new Date(AS_OF), tty: false });
  const ms = performance.now() - t0;
  const layout = dataDirLayout(dataDir);
  const dir = generationDir(layout, (await readCurrent(layout))!);
  const db = await openDuckDB();
  let members: Array<{ narrative_id: string; uuid: string }>;
  let snapshot: string[];
  try {
    members = await db.all(
      `SELECT narrative_id, uuid FROM read_parquet(${sqlString(path.join(dir, 'narrative-members.parquet'))}) WHERE window_key = 'all'`,
    );
    snapshot = (await db.all<{ uuid: string }>(`SELECT uuid FROM read_parquet(${sqlString(path.join(dir, 'posts.parquet'))})`)).map(
      (r) => r.uuid,
    );
  } finally {
    db.close();
  }
  const target = new Map(posts.map((p) => [p.uuid, p.target]));
  const inNarrative = new Map(members.map((m) => [m.uuid, m.narrative_id]));
  const truth = snapshot.map((u) => target.get(u)!);
  const pred = snapshot.map((u) => inNarrative.get(u) ?? 'noise');
  const byNarrative = new Map<string, Map<string, number>>();
  for (const m of members) {
    const c = byNarrative.get(m.narrative_id) ?? new Map<string, number>();
    c.set(target.get(m.uuid)!, (c.get(target.get(m.uuid)!) ?? 0) + 1);
    byNarrative.set(m.narrative_id, c);
  }
  let majority = 0;
  for (const c of byNarrative.values()) majority += Math.max(...c.values());
  return {
    posts: snapshot.length,
    narratives: byNarrative.size,
    nmi: nmi(truth, pred),
    ari: ari(truth, pred),
    purity: majority / Math.max(1, members.length),
    noiseShare: pred.filter((p) => p === 'noise').length / Math.max(1, pred.length),
    ms,
  };
}

export async function benchQualityStance(o: { command: string }): Promise<void> {
  const { machine, writeResultsJson, writeResultsSection } = await import('../results-file.ts');
  const q = await measureStanceNarratives();
  const result = { date: new Date().toISOString(), machine: machine(), command: o.command, ...q };
  writeResultsJson('quality-stance', result);
  const f = (x: number, d = 3) => x.toFixed(d);
  const md = `## Narratives on real text: TweetEval stance targets

Command: \`${o.command}\` — ${result.date.slice(0, 10)}, ${result.machine}. The stance tweets of all five TweetEval targets (abortion, atheism, climate, feminist, hillary; train and val pooled, ${q.posts.toLocaleString('en-US')} tweets) ingested as posts spread over 60 days, the whole pipeline (${(q.ms / 1000).toFixed(1)} s), window all's narratives against each tweet's target.

| measure | value |
|---|---|
| NMI vs targets (noise a label of its own) | **${f(q.nmi)}** |
| ARI, same | ${f(q.ari)} |
| purity of the narratives (share of members with the narrative's majority target) | ${f(q.purity)} |
| narratives found / targets | ${q.narratives} / 5 |
| tweets left as noise | ${(100 * q.noiseShare).toFixed(1)}% |

Narratives are found without the targets (unsupervised, on an LSA embedding fitted on these few thousand short tweets alone). Purity says how far each narrative stays within one target; NMI also counts how finely the map splits the five targets.`;
  writeResultsSection('quality-stance', md);
  process.stdout.write(md + '\n');
}
