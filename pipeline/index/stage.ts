// The index stage: BM25 postings from the features stage's doc-terms, and an HNSW graph
// (hnswlib-node, inner product on unit vectors = cosine) over the text vectors, labels = rows.
//   artifacts/bm25.bin     postings, term frequencies, document lengths
//   artifacts/text.hnsw    the HNSW graph (rows without text are left out: nothing to match)
//   artifacts/neighbour-scores.parquet  novelty and saturation from each row's HNSW neighbours
//   artifacts/source.json  which as-of and rows these artifacts describe (publish checks it)
import fs from 'node:fs/promises';
import path from 'node:path';
import hnswlib from 'hnswlib-node';
import { buildBm25, saveBm25 } from '../../core/bm25.ts';
import { writeFileAtomic } from '../../core/durable-fs.ts';
import { loadEmbedder } from '../../core/embedder.ts';
import { readDocTerms } from '../features/doc-terms.ts';
import { computeNeighbourScores } from './neighbour-scores.ts';
import { ingestVersion } from '../features/stage.ts';
import type { ArtifactSource } from '../snapshot-rows.ts';
import type { Stage, StageContext, StageSummary } from '../stage.ts';
import { StageAborted } from '../stage.ts';

export const HNSW_PARAMS = { m: 16, efConstruction: 200, seed: 42 };

export async function runIndex(ctx: StageContext): Promise<StageSummary> {
  const { artifacts, work } = ctx.layout;
  const intermediate = path.join(work, 'intermediate');
  const asOf = ctx.asOf.toISOString();
  let source: ArtifactSource;
  try {
    source = JSON.parse(await fs.readFile(path.join(intermediate, 'features-source.json'), 'utf8')) as ArtifactSource;
  } catch {
    throw new Error('no features to index: run the features stage first');
  }
  if (source.asOf !== asOf || source.ingestVersion !== (await ingestVersion(ctx))) {
    throw new Error(`features were computed for as-of ${source.asOf} (ingest version ${source.ingestVersion}); run the features stage for ${asOf} first`);
  }

  const t0 = performance.now();
  const dt = await readDocTerms(path.join(intermediate, 'doc-terms.bin'));
  const bm25 = buildBm25(dt.vocab, dt.offsets, dt.ids);
  await saveBm25(bm25, path.join(artifacts, 'bm25.bin'));
  const bm25Ms = performance.now() - t0;

  const t1 = performance.now();
  const model = await loadEmbedder(path.join(artifacts, 'embedder.bin'));
  const dim = model.params.dim;
  const raw = await fs.readFile(path.join(artifacts, 'text-vectors.f32'));
  const vectors = new Float32Array(raw.buffer, raw.byteOffset, raw.byteLength / 4);
  const rows = vectors.length / dim;
  if (rows !== source.rows) throw new Error(`text-vectors.f32 holds ${rows} rows, features said ${source.rows}`);
  const index = new hnswlib.HierarchicalNSW('ip', dim);
  index.initIndex(Math.max(rows, 1), HNSW_PARAMS.m, HNSW_PARAMS.efConstruction, HNSW_PARAMS.seed);
  const bar = ctx.progress('index', rows);
  let added = 0;
  for (let r = 0; r < rows; r++) {
    const v = vectors.subarray(r * dim, (r + 1) * dim);
    if (v.some((x) => x !== 0)) {
      index.addPoint(Array.from(v), r);
      added++;
    }
    if (r % 20_000 === 0) {
      bar.update(r);
      if (ctx.signal.aborted) throw new StageAborted('index');
    }
  }
  bar.stop();
  const tmp = path.join(artifacts, `.text.hnsw.${process.pid}`);
  index.writeIndexSync(tmp);
  await fs.rename(tmp, path.join(artifacts, 'text.hnsw'));
  const hnswMs = performance.now() - t1;
  const neighbours = await computeNeighbourScores(ctx, index, vectors, dim);
  await writeFileAtomic(path.join(artifacts, 'source.json'), JSON.stringify(source));
  return { rows, terms: dt.vocab.length, postings: bm25.docs.length, hnswPoints: added, bm25Ms: Math.round(bm25Ms), hnswMs: Math.round(hnswMs),
    noveltyScored: neighbours.scored, neighbourMs: neighbours.ms };
}

export const indexStage: Stage = {
  name: 'index',
  description: 'build BM25 postings and the HNSW text index over the features',
  run: runIndex,
};
