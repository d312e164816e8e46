// The features stage (text part): every snapshot row's text (title, description, tags) goes
// through the shared analyzer once; the LSA embedder is fitted on the corpus and every row is
// embedded. Outputs, in snapshot row order:
//   artifacts/embedder.bin        the fitted model (published: queries embed with it)
//   artifacts/text-vectors.f32    rows x dim float32, unit length (zeros for rows without text)
//   intermediate/doc-terms.bin    vocabulary + each row's term ids, for the index stage's BM25
// and the visual features of rows with media (visual-stage.ts).
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { writeFileAtomic } from '../../core/durable-fs.ts';
import { embedderParamsFor, type EmbedderParams } from '../../core/embedder.ts';
import { ingestVersion, materialiseSnapshotRows, snapshotChunks, type ArtifactSource } from '../snapshot-rows.ts';
import type { Stage, StageContext, StageSummary } from '../stage-context.ts';
import { StageAborted } from '../stage-context.ts';
import { writeDocTerms } from '../doc-terms.ts';
import type { EmbedResult, EmbedTask, EmbedWorkerData, FitResult, FitTask } from './embed-task.ts';
import { loadBrandDictionary } from '../../core/enrichment/enrich-text.ts';
import { TaskPool } from '../../core/workers/task-pool.ts';
import { writeEnrichment } from './enrichment-stage.ts';
import { adoptPrecomputed } from './precomputed.ts';
import { saveVectorSpace } from '../../core/vector-space.ts';
import { DOC_SEP, TERM_SEP, type TextEnrichmentRow, type TextResult, type TextTask, type TextWorkerData } from './text-task.ts';
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

/** Rows a worker analyses per task: large enough to amortise messaging, small enough to balance. */
const CHUNK_ROWS = 2_000;

const EMBED_ROWS = 50_000;

/**
 * Every row's LSA vector, computed in worker threads from the saved model (the file queries will
 * load too), a range of rows a task; `progress` gets the rows done so far.
 */
/** The embedder fitted on every row's hashes in a worker thread (fit-worker.ts), saved to `modelFile`. */
async function fitInWorker(docHashes: Uint32Array[], params: EmbedderParams, modelFile: string, signal: AbortSignal): Promise<FitResult> {
  const offsets = new Uint32Array(docHashes.length + 1);
  docHashes.forEach((d, i) => (offsets[i + 1] = offsets[i]! + d.length));
  const hashes = new Uint32Array(offsets[docHashes.length]!);
  docHashes.forEach((d, i) => hashes.set(d, offsets[i]!));
  const pool = new TaskPool<FitTask, FitResult>(new URL('./fit-worker.ts', import.meta.url), { threads: 1 });
  // Stopped (the worker terminated) when the stage is abandoned or the visual features fail.
  const stopped = new Promise<never>((_, reject) => {
    if (signal.aborted) reject(new StageAborted('features'));
    signal.addEventListener('abort', () => reject(new StageAborted('features')), { once: true });
  });
  try {
    return await Promise.race([pool.run({ hashes, offsets, params, modelFile }, [hashes.buffer, offsets.buffer]), stopped]);
  } finally {
    await pool.close();
  }
}

async function embedAll(
  ctx: StageContext,
  modelFile: string,
  docHashes: Uint32Array[],
  dim: number,
  progress: (done: number) => void,
): Promise<Float32Array> {
  const rows = docHashes.length;
  const vectors = new Float32Array(rows * dim);
  if (rows === 0) return vectors;
  const pool = new TaskPool<EmbedTask, EmbedResult>(new URL('./embed-worker.ts', import.meta.url), {
    threads: Math.min(ctx.config.PIPELINE_THREADS ?? os.availableParallelism(), Math.ceil(rows / EMBED_ROWS)),
    workerData: { modelFile } satisfies EmbedWorkerData,
  });
  let done = 0;
  try {
    const tasks: Array<Promise<void>> = [];
    for (let first = 0; first < rows; first += EMBED_ROWS) {
      if (ctx.signal.aborted) throw new StageAborted('features');
      const end = Math.min(rows, first + EMBED_ROWS);
      const offsets = new Uint32Array(end - first + 1);
      for (let r = first; r < end; r++) offsets[r - first + 1] = offsets[r - first]! + docHashes[r]!.length;
      const hashes = new Uint32Array(offsets[end - first]!);
      for (let r = first; r < end; r++) hashes.set(docHashes[r]!, offsets[r - first]!);
      tasks.push(
        pool.run({ first, hashes, offsets }, [hashes.buffer, offsets.buffer]).then((res) => {
          vectors.set(res.vectors, res.first * dim);
          progress((done += end - first));
        }),
      );
    }
    await Promise.all(tasks);
  } finally {
    await pool.close();
  }
  return vectors;
}

export async function runFeatures(ctx: StageContext): Promise<StageSummary> {
  const db = await ctx.db();
  const asOf = ctx.asOf.toISOString();
  const rows = await materialiseSnapshotRows(
    db,
    asOf,
    'title, description, tags, language, content_type, media, text_embedding, visual_embedding',
  );
  const vocab = new Map<string, number>();
  const docIds: Uint32Array[] = new Array(rows);
  const docHashes: Uint32Array[] = new Array(rows);
  const enrichment: TextEnrichmentRow[] = new Array(rows);
  const bar = ctx.progress('features', rows * 2);
  let done = 0;
  // Analysis and enrichment run in worker threads; the replies are merged in chunk order, so the
  // vocabulary's ids (and every file built from them) do not depend on which worker was faster.
  const brandsFile = ctx.config.BRANDS_FILE ?? null;
  loadBrandDictionary(brandsFile); // a bad dictionary fails here, with its own message
  const pool = new TaskPool<TextTask, TextResult>(new URL('./text-worker.ts', import.meta.url), {
    workerData: { brandsFile } satisfies TextWorkerData,
  });
  const tText = performance.now();
  try {
    let merged: Promise<void> = Promise.resolve();
    const merge = (r: TextResult) => {
      const docs = r.terms.split(DOC_SEP);
      r.rows.forEach((row, i) => {
        const terms = docs[i] ? docs[i]!.split(TERM_SEP) : [];
        const ids = new Uint32Array(terms.length);
        for (let j = 0; j < terms.length; j++) {
          let id = vocab.get(terms[j]!);
          if (id === undefined) vocab.set(terms[j]!, (id = vocab.size));
          ids[j] = id;
        }
        docIds[row] = ids;
        docHashes[row] = r.hashes.subarray(r.offsets[i]!, r.offsets[i + 1]!);
        enrichment[row] = r.enrichment[i]!;
      });
      bar.update((done += r.rows.length));
    };
    for await (const block of snapshotChunks<TextRow>(db, 'row_id, title, description, tags, language', rows)) {
      for (let at = 0; at < block.length; at += CHUNK_ROWS) {
        if (ctx.signal.aborted) throw new StageAborted('features');
        const chunk = block.slice(at, at + CHUNK_ROWS);
        const task: TextTask = {
          rows: chunk.map((r) => Number(r.row_id)),
          texts: chunk.map(postText),
          languages: chunk.map((r) => r.language),
        };
        const reply = pool.run(task);
        reply.catch(() => undefined); // observed through `merged`
        merged = merged.then(() => reply).then(merge);
        // Bound memory: at most a few chunks waiting per worker.
        while (pool.inFlight > pool.size * 3) await Promise.race([reply, merged]);
      }
    }
    await merged;
  } finally {
    await pool.close();
  }
  const textMs = performance.now() - tText;

  const { artifacts, work } = ctx.layout;
  const intermediate = path.join(work, 'intermediate');
  await fs.mkdir(artifacts, { recursive: true });
  await fs.mkdir(intermediate, { recursive: true });
  const modelFile = path.join(artifacts, 'embedder.bin');
  // The fit runs in its own thread while this one drives the visual features' workers: on two
  // cores the two overlap instead of following each other.
  const t0 = performance.now();
  const stopFit = new AbortController();
  const onAbort = () => stopFit.abort();
  ctx.signal.addEventListener('abort', onAbort, { once: true });
  const fitting = fitInWorker(docHashes, embedderParamsFor(rows), modelFile, stopFit.signal).then((m) => ({
    ...m,
    ms: performance.now() - t0,
  }));
  fitting.catch(() => undefined); // awaited below, after the visual features
  let visual: Awaited<ReturnType<typeof computeVisualArtifacts>>;
  let model: FitResult & { ms: number };
  try {
    visual = await computeVisualArtifacts(ctx, rows);
    model = await fitting;
  } catch (err) {
    stopFit.abort();
    throw err;
  } finally {
    ctx.signal.removeEventListener('abort', onAbort);
  }
  const fitMs = model.ms;
  const dim = model.dim;
  const tEmbed = performance.now();
  const vectors = await embedAll(ctx, modelFile, docHashes, dim, (n) => bar.update(rows + n));
  bar.stop();
  const embedMs = performance.now() - tEmbed;

  // Precomputed text embeddings, when most rows carry one, become the text space (precomputed.ts).
  const text = await adoptPrecomputed(ctx, 'text_embedding', vectors, dim, rows);
  await writeFileAtomic(path.join(artifacts, 'text-vectors.f32'), new Uint8Array(text.vectors.buffer));
  await saveVectorSpace(artifacts, 'text', text.space);
  await writeDocTerms(path.join(intermediate, 'doc-terms.bin'), vocab, docIds);
  const enriched = await writeEnrichment(ctx, { partial: enrichment, styles: visual.styles, vocab, docIds });
  const source: ArtifactSource = { asOf, rows, ingestVersion: await ingestVersion(ctx) };
  await writeFileAtomic(path.join(intermediate, 'features-source.json'), JSON.stringify(source));
  return {
    rows,
    vocabulary: vocab.size,
    embedder: model.version,
    dim,
    textSpace: text.space.source,
    textDim: text.space.dim,
    textMs: Math.round(textMs),
    fitMs: Math.round(fitMs),
    embedMs: Math.round(embedMs),
    visualRows: visual.withMedia,
    visualSpace: visual.space,
    visualFailed: visual.failed,
    visualMs: visual.ms,
    themesMs: enriched.ms,
    withTone: enriched.withTone,
  };
}

export const featuresStage: Stage = {
  name: 'features',
  description: "analyse and embed every post's text (LSA fitted on the corpus); visual features of its media",
  run: runFeatures,
};
