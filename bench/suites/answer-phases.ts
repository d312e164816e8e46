// Where a search answer's time goes (part of `npm run bench -- answer-phases`): the api bench's
// generation loaded in this process with its graphs, and for each query mix (bench/lib/
// query-mixes.ts) every phase of an answer timed on one thread, nothing else running: the ranking
// core's plan (query terms and vector), the lexical candidates (BM25), the vector candidates (HNSW),
// fusion, the answer's clusters, the emergent and tracked narratives, the content items (from the rows'
// cached JSON) and creators, and the rest of the JSON. Two passes, both reported: the first with
// the rows new to the per-row caches (label words, JSON), the second with them warm. Means per
// answer (medians over a mix's queries are noisy on this machine).
import path from 'node:path';
import { terms } from '../../core/text/analyzer.ts';
import { fuse, graphCandidates, lexicalCandidates, planSearch, search, vectorCandidates } from '../../core/ranking/search.ts';
import { contentItemsJson, creatorsOf } from '../../serve/generation/content-item.ts';
import { loadGeneration } from '../../serve/generation/loaded-generation.ts';
import { clusterAnswer } from '../../serve/search/answer-clusters.ts';
import { utf8Concat } from '../../serve/search/answer-build.ts';
import { emergentNarratives, trackedNarratives } from '../../serve/search/answer-narratives.ts';
import { generationDir, readCurrent } from '../../core/snapshots/generations.ts';
import { dataDirLayout } from '../../core/infra/data-dir.ts';
import { buildQueryMixes, type MixName } from '../lib/query-mixes.ts';
import { machine, writeResultsJson, writeResultsSection } from '../results-file.ts';
import { ensureData } from './api.ts';

const PHASES = ['plan', 'bm25', 'hnsw', 'fuse', 'cluster', 'emergent', 'tracked', 'content', 'json'] as const;
type Phase = (typeof PHASES)[number];

export async function benchAnswerPhases(o: { posts: number; queries: number; command: string }): Promise<void> {
  const { dir, truth } = await ensureData(o.posts);
  const { mixes } = buildQueryMixes(truth.replace(/\.truth\.ndjson$/, ''), truth);
  const layout = dataDirLayout(dir);
  const gen = await loadGeneration(generationDir(layout, (await readCurrent(layout))!));
  const results: Array<{
    mix: MixName;
    pass: 'first' | 'warm';
    answers: number;
    ms: Record<Phase, number>;
    total: number;
    overlap: number;
  }> = [];
  for (const mix of ['planted', 'frequent', 'long'] as const) {
    for (let pass = 0; pass < 2; pass++) {
      const ms = Object.fromEntries(PHASES.map((p) => [p, 0])) as Record<Phase, number>;
      let answers = 0;
      let overlap = 0;
      for (const q of mixes[mix].slice(0, o.queries)) {
        const p = { query: q.query, limit: 100, window: q.window };
        let t = performance.now();
        const lap = (phase: Phase) => {
          const now = performance.now();
          ms[phase] += now - t;
          t = now;
        };
        const plan = planSearch(gen.index, p);
        lap('plan');
        if (!plan) continue;
        const lexical = lexicalCandidates(gen.index, plan);
        lap('bm25');
        const vector = plan.vector ? graphCandidates(gen.index.hnsw!, plan) : [];
        lap('hnsw');
        const ranked = fuse(gen.index, p, plan, lexical, vectorCandidates(gen.index, plan, lexical, vector));
        lap('fuse');
        const clusters = clusterAnswer(gen.index.vectors, ranked);
        lap('cluster');
        const emergent = emergentNarratives(gen, p.window, terms(p.query).join(' '), ranked, clusters);
        lap('emergent');
        const rows = ranked.map((r) => r.row);
        const tracked = trackedNarratives(gen, p.window, rows);
        lap('tracked');
        const content = contentItemsJson(gen, ranked);
        const creators = creatorsOf(gen, rows);
        lap('content');
        const rest = JSON.stringify({ creators, narratives: [...tracked, ...emergent.map((e) => e.narrative)], patterns: [] });
        utf8Concat(['"content":', ...content], `,${rest.slice(1, -1)}`);
        lap('json');
        answers++;
        // The served rows against the exact answer (search's reference: every posting scored, an exact vector
        // scan), untimed, on the first pass (the second serves the same rows).
        if (pass === 0) {
          const exact = search(gen.index, p, { reference: true }).map((r) => r.row);
          const served = new Set(rows);
          overlap += exact.length === 0 ? (rows.length === 0 ? 1 : 0) : exact.filter((r) => served.has(r)).length / exact.length;
        }
      }
      PHASES.forEach((p) => (ms[p] /= Math.max(1, answers)));
      results.push({
        mix,
        pass: pass ? 'warm' : 'first',
        answers,
        ms,
        total: PHASES.reduce((a, p) => a + ms[p], 0),
        overlap: pass === 0 ? overlap / Math.max(1, answers) : results[results.length - 1]!.overlap,
      });
    }
  }
  const result = { date: new Date().toISOString(), machine: machine(), command: o.command, posts: o.posts, generation: gen.id, results };
  writeResultsJson(`answer-phases-${o.posts}`, result);
  const md = `## Where an answer's time goes at ${o.posts.toLocaleString('en-US')} posts

Command: \`${o.command}\` — ${result.date.slice(0, 10)}, ${result.machine}. The api bench's generation (${path.basename(dir)}) loaded in one process with its graphs; each phase of an answer (limit 100) timed on one thread with nothing else running, for the first ${o.queries} queries of each mix (bench/lib/query-mixes.ts, each with its window), twice: the first pass with the rows new to the answer's per-row caches (their label words and JSON: the case of traffic that does not repeat itself), the second with them warm; mean ms per answer. What the api bench's CPU per search adds to this: the main thread (HTTP, billing, bytes), message passing, garbage collection on V8's helper threads, and the slowdown of threads sharing 2 cores.

| mix | pass | answers | ${PHASES.join(' | ')} | total | top-100 overlap with the exact answer (bar >= 0.98) |
|---|---|---|${PHASES.map(() => '---').join('|')}|---|---|
${results.map((r) => `| ${r.mix} | ${r.pass} | ${r.answers} | ${PHASES.map((p) => r.ms[p].toFixed(2)).join(' | ')} | **${r.total.toFixed(2)}** | ${r.overlap.toFixed(4)} |`).join('\n')}

Top-100 overlap: the share of the exact answer's rows (search's reference: BM25 with every posting of the query's lists scored, the vector candidates by an exact scan of the int8 vectors, the same fusion) that the served answer returns, mean over the mix's answers (an empty exact answer counts 1 when the served one is empty too).`;
  writeResultsSection(`answer-phases-${o.posts}`, md);
  process.stdout.write(md + '\n');
}
