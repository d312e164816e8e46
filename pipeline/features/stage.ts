// The features stage (text part): every snapshot row's text (title, description, tags) goes
// through the shared analyzer once; the LSA embedder is fitted on the corpus and every row is
// embedded. Outputs, in snapshot row order:
//   artifacts/embedder.bin        the fitted model (published: queries embed with it)
//   artifacts/text-vectors.f32    rows x dim float32, unit length (zeros for rows without text)
//   intermediate/doc-terms.bin    vocabulary + each row's term ids, for the index stage's BM25
// and the visual features of rows with media (visual-stage.ts).
import fs from 'node:fs/promises';
import path from 'node:path';
import { analyze } from '../../core/analyzer.ts';
import { writeFileAtomic } from '../../core/durable-fs.ts';
import { embedderParamsFor, embedHashes, fitEmbedder, saveEmbedder, termHashes } from '../../core/embedder.ts';
import { materialiseSnapshotRows, snapshotChunks, type ArtifactSource } from '../snapshot-rows.ts';
import type { Stage, StageContext, StageSummary } from '../stage.ts';
import { StageAborted } from '../stage.ts';
import { writeDocTerms } from './doc-terms.ts';
import { computeEnrichment } from './enrichment-stage.ts';
import { computeVisualArtifacts } from './visual-stage.ts';

interface TextRow {
  row_id: number;
  title: string | null;
  description: string | null;
  tags: string[];
  language: string | null;
  [k: string]: unknown;
}

/** The text a post is searched and embedded by: title, description and its tags as hashtags. */
export function postText(r: { title: string | null; description: string | null; tags: string[] }): string {
  return [r.title ?? '', r.description ?? '', ...(r.tags ?? []).map((t) => `#${t}`)].join(' ');
}

export async function ingestVersion(ctx: StageContext): Promise<number> {
  const db = await ctx.db();
  const [r] = await db.all<{ v: number }>(`SELECT coalesce(max(version), 0)::BIGINT AS v FROM stage_state WHERE stage = 'ingest'`);
  return Number(r?.v ?? 0);
}

export async function runFeatures(ctx: StageContext): Promise<StageSummary> {
  const db = await ctx.db();
  const asOf = ctx.asOf.toISOString();
  const rows = await materialiseSnapshotRows(db, asOf, 'title, description, tags, language, content_type, media');
  const vocab = new Map<string, number>();
  const docIds: Uint32Array[] = new Array(rows);
  const docHashes: Uint32Array[] = new Array(rows);
  const texts: string[] = new Array(rows);
  const languages: Array<string | null> = new Array(rows);
  const bar = ctx.progress('features', rows * 2);
  let done = 0;
  for await (const chunk of snapshotChunks<TextRow>(db, 'row_id, title, description, tags, language', rows)) {
    if (ctx.signal.aborted) throw new StageAborted('features');
    for (const r of chunk) {
      const text = postText(r);
      texts[Number(r.row_id)] = text;
      languages[Number(r.row_id)] = r.language;
      const terms = analyze(text, r.language).terms;
      const ids = new Uint32Array(terms.length);
      terms.forEach((t, i) => {
        let id = vocab.get(t);
        if (id === undefined) vocab.set(t, (id = vocab.size));
        ids[i] = id;
      });
      docIds[Number(r.row_id)] = ids;
      docHashes[Number(r.row_id)] = termHashes(terms);
    }
    bar.update((done += chunk.length));
  }

  const t0 = performance.now();
  const model = fitEmbedder(docHashes, embedderParamsFor(rows));
  const fitMs = performance.now() - t0;
  const dim = model.params.dim;
  const vectors = new Float32Array(rows * dim);
  for (let i = 0; i < rows; i++) {
    embedHashes(model, docHashes[i]!, vectors.subarray(i * dim, (i + 1) * dim));
    if (i % 50_000 === 0) {
      bar.update(rows + i);
      if (ctx.signal.aborted) throw new StageAborted('features');
    }
  }
  bar.stop();

  const { artifacts, work } = ctx.layout;
  const intermediate = path.join(work, 'intermediate');
  await fs.mkdir(artifacts, { recursive: true });
  await fs.mkdir(intermediate, { recursive: true });
  await saveEmbedder(model, path.join(artifacts, 'embedder.bin'));
  await writeFileAtomic(path.join(artifacts, 'text-vectors.f32'), new Uint8Array(vectors.buffer));
  await writeDocTerms(path.join(intermediate, 'doc-terms.bin'), vocab, docIds);
  const visual = await computeVisualArtifacts(ctx, rows);
  const enrichment = await computeEnrichment(ctx, { texts, languages, vocab, docIds });
  const source: ArtifactSource = { asOf, rows, ingestVersion: await ingestVersion(ctx) };
  await writeFileAtomic(path.join(intermediate, 'features-source.json'), JSON.stringify(source));
  return { rows, vocabulary: vocab.size, embedder: model.version, dim, fitMs: Math.round(fitMs), visualRows: visual.withMedia, visualFailed: visual.failed, visualMs: visual.ms, enrichmentMs: enrichment.ms, withTone: enrichment.withTone };
}

export const featuresStage: Stage = {
  name: 'features',
  description: 'analyse and embed every post\'s text (LSA fitted on the corpus); visual features of its media',
  run: runFeatures,
};
