// The text part of the features stage for the rows this run computes: each row's text (title,
// description, tags) through the shared analyzer once, in worker threads (text-worker.ts): its
// terms (as ids into one vocabulary), their hashes (what the embedder reads) and the text
// enrichment but themes. Replies are merged in chunk order, so the vocabulary's ids do not depend on
// which worker was faster.
import { loadBrandDictionary } from '../../core/enrichment/enrich-text.ts';
import { TaskPool } from '../../core/infra/workers/task-pool.ts';
import type { DuckDB } from '../../core/infra/duckdb.ts';
import { RUN_BREAK } from '../../core/maps/labels.ts';
import { BREAK_ID, labelText } from '../../core/maps/row-label-words.ts';
import type { Progress } from '../context/progress.ts';
import type { StageContext } from '../context/stage-context.ts';
import { StageAborted } from '../context/stage-context.ts';
import { DOC_SEP, TERM_SEP, type TextEnrichmentRow, type TextResult, type TextTask, type TextWorkerData } from './text-task.ts';

/** Rows a worker analyses per task: large enough to amortise messaging, small enough to balance. */
const CHUNK_ROWS = 2_000;
const READ_ROWS = 50_000;

interface TextRow {
  i: number;
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

/** Per computed row, by its place i in compute_rows. */
export interface AnalysedText {
  vocab: Map<string, number>;
  docIds: Uint32Array[];
  docHashes: Uint32Array[];
  enrichment: TextEnrichmentRow[];
  /** Each row's label words (labelWordRuns) as ids into labelVocab, BREAK_ID for a break. */
  labelVocab: Map<string, number>;
  labelIds: Uint32Array[];
  ms: number;
}

type TextPool = TaskPool<TextTask, TextResult>;

/**
 * The text workers. The features stage starts them before it plans the run, so that their start (a
 * few hundred ms of module loading each) overlaps the plan instead of following it.
 */
export function startTextPool(ctx: StageContext): TextPool {
  const brandsFile = ctx.config.BRANDS_FILE ?? null;
  loadBrandDictionary(brandsFile); // a bad dictionary fails here, with its own message
  return new TaskPool<TextTask, TextResult>(new URL('./text-worker.ts', import.meta.url), {
    workerData: { brandsFile } satisfies TextWorkerData,
  });
}

/** Analyse the `count` computed rows of `snap` in order of ci (snapshot-rows.ts) on `pool` (closed by its owner). */
export async function analyseText(ctx: StageContext, db: DuckDB, count: number, bar: Progress, pool: TextPool): Promise<AnalysedText> {
  const t0 = performance.now();
  const out: AnalysedText = {
    vocab: new Map(),
    docIds: new Array(count),
    docHashes: new Array(count),
    enrichment: new Array(count),
    labelVocab: new Map(),
    labelIds: new Array(count),
    ms: 0,
  };
  const labelWordId = (w: string) => {
    let id = out.labelVocab.get(w);
    if (id === undefined) out.labelVocab.set(w, (id = out.labelVocab.size));
    return id;
  };
  let done = 0;
  {
    let merged: Promise<void> = Promise.resolve();
    const merge = (r: TextResult) => {
      const docs = r.terms.split(DOC_SEP);
      const labelDocs = r.labelWords.split(DOC_SEP);
      r.rows.forEach((c, i) => {
        const runs = labelDocs[i] ? labelDocs[i]!.split(TERM_SEP) : [];
        out.labelIds[c] = Uint32Array.from(runs, (w) => (w === RUN_BREAK ? BREAK_ID : labelWordId(w)));
        const terms = docs[i] ? docs[i]!.split(TERM_SEP) : [];
        const ids = new Uint32Array(terms.length);
        for (let j = 0; j < terms.length; j++) {
          let id = out.vocab.get(terms[j]!);
          if (id === undefined) out.vocab.set(terms[j]!, (id = out.vocab.size));
          ids[j] = id;
        }
        out.docIds[c] = ids;
        out.docHashes[c] = r.hashes.subarray(r.offsets[i]!, r.offsets[i + 1]!);
        out.enrichment[c] = r.enrichment[i]!;
      });
      bar.update((done += r.rows.length));
    };
    for (let at = 0; at < count; at += READ_ROWS) {
      const block = await db.all<TextRow>(
        `SELECT ci AS i, title, description, tags, language FROM snap WHERE ci >= ${at} AND ci < ${at + READ_ROWS} ORDER BY ci`,
      );
      for (let k = 0; k < block.length; k += CHUNK_ROWS) {
        if (ctx.signal.aborted) throw new StageAborted('features');
        const chunk = block.slice(k, k + CHUNK_ROWS);
        const task: TextTask = {
          rows: chunk.map((r) => Number(r.i)),
          texts: chunk.map(postText),
          languages: chunk.map((r) => r.language),
          labelTexts: chunk.map((r) => labelText(r.title, r.description)),
        };
        const reply = pool.run(task);
        reply.catch(() => undefined); // observed through `merged`
        merged = merged.then(() => reply).then(merge);
        // Bound memory: at most a few chunks waiting per worker.
        while (pool.inFlight > pool.size * 3) await Promise.race([reply, merged]);
      }
    }
    await merged;
  }
  out.ms = performance.now() - t0;
  return out;
}
