// Worker thread of the features stage's text part: for a chunk of rows, the analyzer's terms (and
// their hashes, which the embedder reads), the label words of the row's title and description
// (labelWordRuns: what a search answer labels its narratives from), the text enrichment except themes, which need the
// corpus's document frequencies and are added once every chunk is back (enrichment-stage.ts), and whether the abuse
// lexicon flags the post.
import { analyze, terms as textTerms } from '../../core/text/analyzer.ts';
import { labelWordRuns } from '../../core/maps/labels.ts';
import { termHashes } from '../../core/vectors/embedder.ts';
import { enrichText, loadBrandDictionary } from '../../core/enrichment/enrich-text.ts';
import { flaggedPost } from '../../core/text/abuse.ts';
import { workerData } from 'node:worker_threads';
import { answerTasks } from '../../core/infra/workers/task-worker.ts';
import { DOC_SEP, TERM_SEP, type TextEnrichmentRow, type TextResult, type TextTask, type TextWorkerData } from './text-task.ts';

const brands = loadBrandDictionary((workerData as TextWorkerData | undefined)?.brandsFile ?? null);

answerTasks<TextTask, TextResult>((task) => {
  const docs: string[] = [];
  const all: Uint32Array[] = [];
  const offsets = new Uint32Array(task.rows.length + 1);
  const enrichment: TextEnrichmentRow[] = [];
  const labelWords: string[] = [];
  task.rows.forEach((_, i) => {
    labelWords.push(labelWordRuns(textTerms(task.labelTexts[i]!)).join(TERM_SEP));
    const text = task.texts[i]!;
    const language = task.languages[i] ?? null;
    const terms = analyze(text, language).terms;
    docs.push(terms.join(TERM_SEP));
    const h = termHashes(terms);
    all.push(h);
    offsets[i + 1] = offsets[i]! + h.length;
    const e = enrichText(text, language, { brands, terms, themeCount: 0 });
    enrichment.push({
      tone: e.tone,
      tone_confidence: e.toneConfidence,
      emotion_mood: e.emotionMood,
      brand_products: e.brandProducts,
      emotion_confidence: e.attributeParts.emotion,
      brand_confidence: e.attributeParts.brands,
      coverage_sentiment: e.coverage.sentiment,
      coverage_attributes: e.coverage.attributes,
      // Flagged here, once per post as it arrives (about 80 µs a post): flagged_share counts every member of every
      // cluster, which read from the texts at each run would cost over a minute at 1M posts.
      flagged: flaggedPost(task.labelTexts[i]!),
    });
  });
  const hashes = new Uint32Array(offsets[task.rows.length]!);
  all.forEach((h, i) => hashes.set(h, offsets[i]!));
  return {
    result: { rows: task.rows, terms: docs.join(DOC_SEP), hashes, offsets, enrichment, labelWords: labelWords.join(DOC_SEP) },
    transfer: [hashes.buffer, offsets.buffer],
  };
});
