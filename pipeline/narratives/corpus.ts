// What the narratives stage reads about every row of the planned generation, in row order: the post
// columns (post-columns.ts), and across its segments (planned-rows.ts) the analysed terms, tone and
// moods from enrichment.parquet, and the text vectors.
import { EnrichmentStore, loadEnrichmentStore } from '../../core/enrichment/public-enrichment.ts';
import { loadVectorSpace, nonZeroMask } from '../../core/vector-space.ts';
import type { DocTerms } from '../doc-terms.ts';
import { labelWord } from '../../core/maps/label-words.ts';
import { plannedTable, readPlannedDocTerms, readPlannedVectors } from '../planned-rows.ts';
import { loadPostColumns, type PostColumns } from '../post-columns.ts';
import type { SegmentPlan } from '../segment-plan.ts';
import type { StageContext } from '../stage-context.ts';

export interface NarrativeCorpus extends PostColumns {
  terms: DocTerms;
  enrichment: EnrichmentStore;
  vectors: Float32Array;
  dim: number;
  /** 1 where the row has a text vector (every window's clustering reads it). */
  hasVector: Uint8Array;
  /** Each row's label keys as ids (the narratives' c-TF-IDF labels count them). */
  labelKeys: RowLabelKeys;
}

/**
 * Each row's label keys (labels.ts, labelKeys: its label words (core/maps/label-words.ts) and
 * the bigrams of adjacent ones) as ids, interned once for every window: unigrams are term ids,
 * bigrams follow them. Counting ids instead of building key strings per post and window made the
 * labels of a million posts' narratives several times cheaper.
 */
export class RowLabelKeys {
  private readonly eligible: Int8Array;
  private readonly bigramIds = new Map<number, number>();
  private readonly bigramNames: string[] = [];
  private readonly cache = new Map<number, Int32Array>();
  constructor(private readonly terms: DocTerms) {
    this.eligible = new Int8Array(terms.vocab.length).fill(-1);
  }

  private ok(t: number): boolean {
    if (this.eligible[t] === -1) {
      this.eligible[t] = labelWord(this.terms.vocab[t]!) ? 1 : 0;
    }
    return this.eligible[t] === 1;
  }

  /** The row's keys: its eligible terms, then the bigrams of adjacent eligible terms (labelKeys' order and rule). */
  of(row: number): Int32Array {
    let out = this.cache.get(row);
    if (out) return out;
    const { offsets, ids } = this.terms;
    const words: number[] = [];
    const pairs: number[] = [];
    const v = this.terms.vocab.length;
    let prev = -1;
    for (let j = offsets[row]!; j < offsets[row + 1]!; j++) {
      const t = ids[j]!;
      if (!this.ok(t)) {
        prev = -1;
        continue;
      }
      words.push(t);
      if (prev >= 0) {
        const code = prev * v + t;
        let id = this.bigramIds.get(code);
        if (id === undefined) {
          id = v + this.bigramNames.length;
          this.bigramIds.set(code, id);
          this.bigramNames.push(`${this.terms.vocab[prev]} ${this.terms.vocab[t]}`);
        }
        pairs.push(id);
      }
      prev = t;
    }
    out = Int32Array.from([...words, ...pairs]);
    this.cache.set(row, out);
    return out;
  }

  /** Ids so far (the counter's dense range). */
  get size(): number {
    return this.terms.vocab.length + this.bigramNames.length;
  }

  name(id: number): string {
    const v = this.terms.vocab.length;
    return id < v ? this.terms.vocab[id]! : this.bigramNames[id - v]!;
  }
}

export async function loadNarrativeCorpus(ctx: StageContext, plan: SegmentPlan): Promise<NarrativeCorpus> {
  const posts = await loadPostColumns(ctx, plan);
  const { rows } = posts;
  const space = loadVectorSpace(ctx.layout.artifacts, 'text');
  const vectors = await readPlannedVectors(ctx, plan, 'text-vectors.f32', space.dim);
  const hasVector = nonZeroMask(vectors, space.dim, rows);
  // A masked row (a deleted post) is never a member.
  for (let r = 0; r < rows; r++) hasVector[r]! &= posts.live[r]!;
  const terms = await readPlannedDocTerms(ctx, plan);
  return {
    ...posts,
    terms,
    labelKeys: new RowLabelKeys(terms),
    enrichment: await loadEnrichmentStore(
      { enrichment: plannedTable(ctx, plan, 'enrichment'), neighbours: plannedTable(ctx, plan, 'neighbour-scores') },
      rows,
      { sentimentOnly: true },
    ),
    vectors,
    dim: space.dim,
    hasVector,
  };
}
