// The features stage. It plans the next generation's time segments (segment-plan.ts), then computes
// the per-post features of the rows that need them (every post on a full run, the new posts on an
// incremental one) and writes each built segment's files (segment-writer.ts, segment-tables.ts):
//   - text: analysis and enrichment in worker threads (text-analysis.ts); the text embedder fitted on
//     every post (full run, in its own thread beside the visual features) or kept from the served
//     generation (incremental: refit-rule.ts decides when a run must refit, i.e. be full); the rows
//     embedded with it (embedding.ts);
//   - visual: vectors and elements of the rows' media (visual-stage.ts);
//   - spaces: precomputed embeddings adopted or not on a full run (precomputed.ts), kept after.
// Generation-level outputs in artifacts/: embedder.bin, embedder.json (what it was fitted on),
// text-space.json, visual-space.json, segment-plan.json; per built segment: segments/<id>/.
import fs from 'node:fs/promises';
import path from 'node:path';
import { readDocumentFrequencies } from '../../core/ranking/bm25.ts';
import { sqlString } from '../../core/infra/duckdb.ts';
import { writeFileAtomic } from '../../core/infra/durable-fs.ts';
import { failpoint } from '../../core/infra/failpoints.ts';
import { EMBEDDER_MODEL, embedderKnows, embedderParamsFor, hashTerm, loadEmbedder, saveEmbedder } from '../../core/vectors/embedder.ts';
import { FOLD_IN, foldInWords } from '../../core/vectors/fold-in.ts';
import type { EmbedderInfo } from '../../core/snapshots/generations.ts';
import { SEGMENTS_DIR, segmentDir } from '../../core/snapshots/segments.ts';
import { loadVectorSpace, saveVectorSpace } from '../../core/vectors/vector-space.ts';
import { fitCutoff, fitsBeforeCutoff, refitBecause } from './refit-rule.ts';
import { writeRowTable } from '../store/row-table.ts';
import type { Progress } from '../context/progress.ts';
import { SEGMENT_PLAN } from '../segments/plan-output.ts';
import { planSegments, type SegmentPlan } from '../segments/segment-plan.ts';
import { writeSegmentTable } from '../segments/segment-tables.ts';
import { ingestVersion, materialiseSnapshotRows, type ArtifactSource } from '../segments/snapshot-rows.ts';
import type { Stage, StageContext } from '../context/stage-context.ts';
import { embedAll, fitInWorker } from './embedding.ts';
import { ENRICHMENT_COLUMNS, themeIdf, writeComputedEnrichment } from './enrichment-stage.ts';
import { adoptPrecomputed, placeInSpace } from './precomputed.ts';
import { writeSegmentFeatures, type ComputedRows } from './segment-writer.ts';
import { analyseText, startTextPool, type AnalysedText } from './text-analysis.ts';
import { VISUAL_DIM } from './visual.ts';
import { computeVisualRows, VISUAL_ELEMENT_COLUMNS, type ComputedVisual } from './visual-stage.ts';

/** Document frequencies of `wanted` terms over the served generation's segments (the themes' idf on an incremental run). */
async function servedDocumentFrequencies(plan: SegmentPlan, wanted: Set<string>): Promise<{ docs: number; df: Map<string, number> }> {
  const out = { docs: 0, df: new Map<string, number>() };
  if (!plan.previous) return out;
  const manifest = JSON.parse(await fs.readFile(path.join(plan.previous.dir, 'manifest.json'), 'utf8')) as {
    segments?: Array<{ id: string }>;
  };
  for (const s of manifest.segments ?? []) {
    const r = await readDocumentFrequencies(path.join(segmentDir(plan.previous.dir, s.id), 'bm25.bin'), wanted);
    out.docs += r.docs;
    for (const [t, n] of r.df) out.df.set(t, (out.df.get(t) ?? 0) + n);
  }
  return out;
}

/**
 * The rows a full run's fit reads (refit-rule.ts): those published before the as-of's UTC day, or
 * every row of a young corpus; `asOfIso`: what the fit saw (the cut-off, or the as-of).
 */
async function fitRows(ctx: StageContext, docHashes: Uint32Array[]): Promise<{ docs: Uint32Array[]; asOfIso: string }> {
  const db = await ctx.db();
  const cutoff = fitCutoff(ctx.asOf);
  const res = await db.columns(
    `SELECT s.ci::INTEGER AS ci FROM snap s JOIN posts p USING (uuid) WHERE p.published_at < ${sqlString(cutoff.toISOString())}::TIMESTAMPTZ ORDER BY s.ci`,
  );
  const before = res.ci as number[];
  if (!fitsBeforeCutoff(before.length, docHashes.length)) return { docs: docHashes, asOfIso: ctx.asOf.toISOString() };
  return { docs: before.map((ci) => docHashes[ci]!), asOfIso: cutoff.toISOString() };
}

/**
 * The words of the computed posts (an incremental run's new posts; every post on a full run) that
 * the model does not know, folded into the model file (core/vectors/fold-in.ts): new names are searchable
 * before the next refit, and a full run folds in the same way the words its fit did not learn (rare
 * words, a bucket lost to a commoner word, a word outside the fit's sample, the as-of's day).
 * `served` gives the served posts' document frequencies of words (none on a full run). Returns the
 * model's folded words, all runs' together.
 */
async function foldNewWords(
  modelFile: string,
  docs: Uint32Array[],
  served: (words: Set<string>) => Promise<Map<string, number>>,
  words: Iterable<string>,
): Promise<{ added: number; total: number }> {
  const model = await loadEmbedder(modelFile);
  // An incremental run folds only the words its new posts bring to the corpus: a word the served
  // posts hold in FOLD_IN.minDocs or more was learnt, folded or left out by the run that read them.
  const unknown = new Set([...words].filter((w) => !embedderKnows(model, w)));
  const held = new Set([...(await served(unknown))].filter(([, n]) => n >= FOLD_IN.minDocs).map(([w]) => hashTerm(w)));
  const { model: next, folded } = foldInWords(model, docs, { skip: (h) => held.has(h) });
  if (folded > 0) await saveEmbedder(next, modelFile);
  return { added: folded, total: next.folded.ids.length };
}

/** The features stage's summary. */
type FeaturesSummary = {
  mode: SegmentPlan['mode'];
  fullBecause: string | null;
  rows: number;
  liveRows: number;
  /** Rows this run analysed and embedded. */
  computed: number;
  /** Each segment as id:action[+base]:rows. */
  segments: string;
  vocabulary: number;
  embedder: string;
  foldedWords: number;
  dim: number;
  textSpace: string;
  textDim: number;
  planMs: number;
  textMs: number;
  fitMs: number;
  embedMs: number;
  visualRows: number;
  visualSpace: string;
  visualFailed: number;
  visualMs: number;
  themesMs: number;
  segmentWriteMs: number;
  withTone: number;
};

async function runFeatures(ctx: StageContext): Promise<FeaturesSummary> {
  const { artifacts, work } = ctx.layout;
  const { plan, rows, planMs, bar, text } = await planAndAnalyse(ctx);
  const full = plan.mode === 'full';
  const intermediate = path.join(work, 'intermediate');
  await fs.mkdir(intermediate, { recursive: true });
  const modelFile = path.join(artifacts, 'embedder.bin');
  const {
    embedder: fitted,
    visual,
    fitMs,
  } = full ? await fitBesideVisual(ctx, text, rows, modelFile) : await keepEmbedder(ctx, plan, rows, modelFile);

  const tEmbed = performance.now();
  const fold = await foldNewWords(
    modelFile,
    text.docHashes,
    async (w) => (full ? new Map() : (await servedDocumentFrequencies(plan, w)).df),
    text.vocab.keys(),
  );
  const embedder = { ...fitted, folded_words: fold.total };
  const dim = (await loadEmbedder(modelFile)).params.dim;
  const own = await embedAll(ctx, modelFile, text.docHashes, dim, (n) => bar.update(rows + n));
  bar.stop();
  const embedMs = performance.now() - tEmbed;

  const spaces = await placeVectors(ctx, plan, own, dim, visual, rows);
  await saveVectorSpace(artifacts, 'text', spaces.textSpace);
  await saveVectorSpace(artifacts, 'visual', spaces.visualSpace);
  await writeFileAtomic(path.join(artifacts, 'embedder.json'), JSON.stringify(embedder));

  const tables = await writeComputedTables(ctx, plan, text, visual, intermediate);
  const tWrite = performance.now();
  await writeBuiltSegments(ctx, plan, tables, {
    text: spaces.textVectors,
    textDim: spaces.textSpace.dim,
    visual: spaces.visualVectors,
    visualDim: spaces.visualSpace.dim,
    words: tables.words,
    docIds: text.docIds,
    labelWords: tables.labelWords,
    labelIds: text.labelIds,
  });
  const writeMs = performance.now() - tWrite;
  await failpoint('features.after-segments', ctx.signal);

  const source: ArtifactSource = { asOf: ctx.asOf.toISOString(), rows: plan.rows, ingestVersion: await ingestVersion(ctx) };
  await writeFileAtomic(path.join(intermediate, 'features-source.json'), JSON.stringify(source));
  return {
    mode: plan.mode,
    fullBecause: plan.fullBecause,
    rows: plan.rows,
    liveRows: plan.liveRows,
    computed: rows,
    segments: plan.segments.map((s) => `${s.id}:${s.action}${s.base ? `+${s.base}` : ''}:${s.rows}`).join(' '),
    vocabulary: text.vocab.size,
    embedder: embedder.version,
    foldedWords: fold.added,
    dim,
    textSpace: spaces.textSpace.source,
    textDim: spaces.textSpace.dim,
    planMs: Math.round(planMs),
    textMs: Math.round(text.ms),
    fitMs: Math.round(fitMs),
    embedMs: Math.round(embedMs),
    visualRows: visual.withMedia,
    visualSpace: spaces.visualSpace.source,
    visualFailed: visual.failed,
    visualMs: visual.ms,
    themesMs: Math.round(tables.themesMs),
    segmentWriteMs: Math.round(writeMs),
    withTone: tables.withTone,
  };
}

/**
 * The segment plan, the rows to compute (materialised as the work store's snap) and their text
 * analysed; the progress bar counts each row twice (analysed, embedded).
 */
async function planAndAnalyse(
  ctx: StageContext,
): Promise<{ plan: SegmentPlan; rows: number; planMs: number; bar: Progress; text: AnalysedText }> {
  const db = await ctx.db();
  const tPlan = performance.now();
  const textPool = startTextPool(ctx);
  try {
    // Segments a killed run left unpublished are not reused: the plan starts from the served generation.
    await fs.rm(path.join(ctx.layout.artifacts, SEGMENTS_DIR), { recursive: true, force: true });
    const plan = await planSegments(ctx, { full: Boolean(ctx.full), segmentRows: ctx.config.SEGMENT_ROWS, refitBecause });
    await ctx.outputs.put(SEGMENT_PLAN, plan);
    const rows = await materialiseSnapshotRows(
      db,
      'title, description, tags, language, content_type, media, text_embedding, visual_embedding',
      {
        computeOnly: true,
      },
    );
    const planMs = performance.now() - tPlan;
    const bar = ctx.progress('features', rows * 2);
    const text = await analyseText(ctx, db, rows, bar, textPool);
    return { plan, rows, planMs, bar, text };
  } finally {
    await textPool.close();
  }
}

interface EmbedderAndVisual {
  embedder: EmbedderInfo;
  visual: ComputedVisual;
  fitMs: number;
}

/**
 * A full run's embedder fitted into `modelFile` and the rows' visual features. The fit runs in its
 * own thread while this one drives the visual features' workers: on two cores the two overlap
 * instead of following each other.
 */
async function fitBesideVisual(ctx: StageContext, text: AnalysedText, rows: number, modelFile: string): Promise<EmbedderAndVisual> {
  const t0 = performance.now();
  let fitMs = 0;
  const stopFit = new AbortController();
  const onAbort = () => stopFit.abort();
  ctx.signal.addEventListener('abort', onAbort, { once: true });
  const fit = await fitRows(ctx, text.docHashes);
  const fitting = fitInWorker(fit.docs, embedderParamsFor(fit.docs.length), modelFile, stopFit.signal).then((m) => {
    fitMs = performance.now() - t0;
    return m;
  });
  fitting.catch(() => undefined); // awaited below, after the visual features
  try {
    const visual = await computeVisualRows(ctx, rows);
    const m = await fitting;
    return {
      embedder: { model: EMBEDDER_MODEL, version: m.version, fitted_rows: fit.docs.length, fitted_as_of: fit.asOfIso },
      visual,
      fitMs,
    };
  } catch (err) {
    stopFit.abort();
    throw err;
  } finally {
    ctx.signal.removeEventListener('abort', onAbort);
  }
}

/** An incremental run's embedder: the served generation's, copied to `modelFile`; and the rows' visual features. */
async function keepEmbedder(ctx: StageContext, plan: SegmentPlan, rows: number, modelFile: string): Promise<EmbedderAndVisual> {
  const served = plan.previous!.dir;
  await fs.copyFile(path.join(served, 'embedder.bin'), modelFile);
  const manifest = JSON.parse(await fs.readFile(path.join(served, 'manifest.json'), 'utf8')) as { embedder: EmbedderInfo };
  const visual = await computeVisualRows(ctx, rows);
  return { embedder: manifest.embedder, visual, fitMs: 0 };
}

/**
 * The spaces: decided on a full run (precomputed embeddings adopted when most rows carry one),
 * kept after; and the computed rows' vectors in them.
 */
async function placeVectors(ctx: StageContext, plan: SegmentPlan, own: Float32Array, dim: number, visual: ComputedVisual, rows: number) {
  if (plan.mode === 'full') {
    const t = await adoptPrecomputed(ctx, 'text_embedding', own, dim, rows);
    const v = await adoptPrecomputed(ctx, 'visual_embedding', visual.vectors, VISUAL_DIM, rows);
    return { textSpace: t.space, textVectors: t.vectors, visualSpace: v.space, visualVectors: v.vectors };
  }
  const textSpace = loadVectorSpace(plan.previous!.dir, 'text');
  const visualSpace = loadVectorSpace(plan.previous!.dir, 'visual');
  const textVectors = await placeInSpace(ctx, 'text_embedding', own, dim, rows, textSpace);
  const visualVectors = await placeInSpace(ctx, 'visual_embedding', visual.vectors, VISUAL_DIM, rows, visualSpace);
  return { textSpace, textVectors, visualSpace, visualVectors };
}

/** The computed rows' tables (enrichment, visual elements) in work/intermediate/, and the vocabularies as word lists. */
async function writeComputedTables(ctx: StageContext, plan: SegmentPlan, text: AnalysedText, visual: ComputedVisual, intermediate: string) {
  const tThemes = performance.now();
  const words = new Array<string>(text.vocab.size);
  for (const [w, id] of text.vocab) words[id] = w;
  const labelWords = new Array<string>(text.labelVocab.size);
  for (const [w, id] of text.labelVocab) labelWords[id] = w;
  const idf = themeIdf(text, plan.mode === 'full' ? null : await servedDocumentFrequencies(plan, new Set(words)));
  const enrichment = path.join(intermediate, 'computed-enrichment.parquet');
  const enriched = await writeComputedEnrichment(ctx, { ...text, partial: text.enrichment, styles: visual.styles }, idf, enrichment);
  const themesMs = performance.now() - tThemes;
  const elements = path.join(intermediate, 'computed-visual-elements.parquet');
  await writeRowTable(ctx, 'computed-visual-elements', { ci: 'BIGINT', ...VISUAL_ELEMENT_COLUMNS }, visual.elements, elements);
  return { words, labelWords, enrichment, elements, themesMs, withTone: enriched.withTone };
}

/** Every segment the plan builds: its features' files and its enrichment and visual-elements tables. */
async function writeBuiltSegments(
  ctx: StageContext,
  plan: SegmentPlan,
  tables: { enrichment: string; elements: string },
  computed: ComputedRows,
): Promise<void> {
  for (const seg of plan.segments.filter((s) => s.action === 'build')) {
    ctx.signal.throwIfAborted();
    await writeSegmentFeatures(ctx, plan, seg, computed);
    await writeSegmentTable(ctx, plan, seg, { name: 'enrichment', columns: ENRICHMENT_COLUMNS, computed: tables.enrichment });
    await writeSegmentTable(ctx, plan, seg, { name: 'visual-elements', columns: VISUAL_ELEMENT_COLUMNS, computed: tables.elements });
  }
}

export const featuresStage: Stage<'features', FeaturesSummary> = {
  name: 'features',
  description:
    "plan the time segments; analyse and embed the new posts' text (every post's on a full run) and their media's visual features",
  run: runFeatures,
};
