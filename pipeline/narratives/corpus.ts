// What the narratives stage reads about every row of the planned generation, in row order: the post
// columns (post-columns.ts), and across its segments (planned-rows.ts) the analysed terms, tone,
// moods and abuse flag from enrichment.parquet, and the text vectors.
import { feelingCode, feelingCodeSql } from '../../core/maps/sentiment.ts';
import { columnNames } from '../../core/infra/duckdb.ts';
import { loadVectorSpace } from '../../core/vectors/vector-space.ts';
import type { TermLists } from '../../core/text/term-lists.ts';
import { labelWord } from '../../core/maps/label-words.ts';
import type { RowKeyLists } from '../../core/maps/label-counts.ts';
import { plannedTable, readPlannedDocTerms, readPlannedVectors } from '../segments/planned-rows.ts';
import { loadPostColumns, type PostColumns } from '../maps/post-columns.ts';
import type { SegmentPlan } from '../segments/segment-plan.ts';
import type { StageContext } from '../context/stage-context.ts';

export interface NarrativeCorpus extends PostColumns {
  terms: TermLists;
  /** Each row's feeling code (core/maps/sentiment.ts: its tone and whether its moods are mixed), from enrichment.parquet. */
  feeling: Uint8Array;
  /** Whether the abuse lexicon flags each row (FLAGGED, NOT_FLAGGED), or FLAG_UNKNOWN: its segment was written before the flag existed. */
  flagged: Uint8Array;
  vectors: Float32Array;
  dim: number;
  /** 1 where the row has a text vector (every window's clustering reads it). */
  hasVector: Uint8Array;
  /** Each row's label keys as ids (the narratives' c-TF-IDF labels count them). */
  labelKeys: RowLabelKeys;
}

/**
 * Ids of ordered pairs of term ids: open addressing over typed arrays. A Map keyed by
 * prev * vocabulary + next took most of the keys' cost at a million rows (ten million lookups of
 * keys beyond the small-integer range).
 */
class PairIds {
  private a = new Int32Array(1 << 16);
  private b = new Int32Array(1 << 16);
  private id = new Int32Array(1 << 16).fill(-1);
  private size = 0;

  private slot(x: number, y: number): number {
    const mask = this.id.length - 1;
    let h = (Math.imul(x, 0x9e3779b1) ^ Math.imul(y + 0x7f4a7c15, 0x85ebca6b)) & mask;
    while (this.id[h]! >= 0 && (this.a[h] !== x || this.b[h] !== y)) h = (h + 1) & mask;
    return h;
  }

  /** The pair's id, or -1. */
  get(x: number, y: number): number {
    return this.id[this.slot(x, y)]!;
  }

  set(x: number, y: number, id: number): void {
    if ((this.size + 1) * 2 > this.id.length) this.grow();
    const h = this.slot(x, y);
    if (this.id[h]! < 0) this.size++;
    this.a[h] = x;
    this.b[h] = y;
    this.id[h] = id;
  }

  private grow(): void {
    const { a, b, id } = this;
    this.a = new Int32Array(a.length * 2);
    this.b = new Int32Array(a.length * 2);
    this.id = new Int32Array(a.length * 2).fill(-1);
    for (let h = 0; h < id.length; h++) {
      if (id[h]! < 0) continue;
      const to = this.slot(a[h]!, b[h]!);
      this.a[to] = a[h]!;
      this.b[to] = b[h]!;
      this.id[to] = id[h]!;
    }
  }
}

/**
 * Each row's label keys (labels.ts, labelKeys: its label words (core/maps/label-words.ts) and
 * the bigrams of adjacent ones) as ids, interned once for every window: unigrams are term ids,
 * bigrams follow them. Counting ids instead of building key strings per post and window made the
 * labels of a million posts' narratives several times cheaper; holding them as one pair of typed
 * arrays (RowKeyLists) instead of an array per row spares the collector a million small objects.
 */
export class RowLabelKeys implements RowKeyLists {
  readonly offsets: Int32Array;
  ids: Int32Array;
  private readonly bigramNames: string[] = [];

  /** The keys of every row with `has[row]` (the others have none); without `has`, of every row. */
  constructor(
    private readonly terms: TermLists,
    has?: Uint8Array,
  ) {
    const v = terms.vocab.length;
    const eligible = new Int8Array(v).fill(-1);
    const ok = (t: number) => (eligible[t] === -1 ? (eligible[t] = labelWord(terms.vocab[t]!) ? 1 : 0) : eligible[t]) === 1;
    const bigramIds = new PairIds();
    const rows = terms.offsets.length - 1;
    this.offsets = new Int32Array(rows + 1);
    this.ids = new Int32Array(1024);
    let at = 0;
    const push = (id: number) => {
      if (at === this.ids.length) {
        const grown = new Int32Array(this.ids.length * 2);
        grown.set(this.ids);
        this.ids = grown;
      }
      this.ids[at++] = id;
    };
    const pairs: number[] = [];
    for (let row = 0; row < rows; row++) {
      if (!has || has[row]) {
        // Its eligible terms, then the bigrams of adjacent eligible terms (labelKeys' order and rule).
        pairs.length = 0;
        let prev = -1;
        for (let j = terms.offsets[row]!; j < terms.offsets[row + 1]!; j++) {
          const t = terms.ids[j]!;
          if (!ok(t)) {
            prev = -1;
            continue;
          }
          push(t);
          if (prev >= 0) {
            let id = bigramIds.get(prev, t);
            if (id < 0) {
              id = v + this.bigramNames.length;
              bigramIds.set(prev, t, id);
              this.bigramNames.push(`${terms.vocab[prev]} ${terms.vocab[t]}`);
            }
            pairs.push(id);
          }
          prev = t;
        }
        for (const id of pairs) push(id);
      }
      this.offsets[row + 1] = at;
    }
  }

  /** Ids in all (the counter's dense range). */
  get size(): number {
    return this.terms.vocab.length + this.bigramNames.length;
  }

  name(id: number): string {
    const v = this.terms.vocab.length;
    return id < v ? this.terms.vocab[id]! : this.bigramNames[id - v]!;
  }
}

export async function loadNarrativeCorpus(ctx: StageContext, plan: SegmentPlan): Promise<NarrativeCorpus> {
  const space = loadVectorSpace(ctx.layout.artifacts, 'text');
  // The files are read and the label keys interned while DuckDB answers the queries (its threads,
  // not this one). Keys for every row: a row without a vector is never a member, so its keys are
  // never counted (labels depend on keys' names, weights and counts, not on their ids).
  const terms = readPlannedDocTerms(ctx, plan);
  const [posts, { vectors, hasVector }, labelKeys, { feeling, flagged }] = await Promise.all([
    loadPostColumns(ctx, plan),
    readPlannedVectors(ctx, plan, 'text', space.dim),
    terms.then((t) => new RowLabelKeys(t)),
    readEnrichmentCodes(ctx, plan),
  ]);
  const { rows } = posts;
  // A masked row (a deleted post) is never a member.
  for (let r = 0; r < rows; r++) hasVector[r]! &= posts.live[r]!;
  return {
    ...posts,
    terms: await terms,
    labelKeys,
    feeling,
    flagged,
    vectors,
    dim: space.dim,
    hasVector,
  };
}

export const NOT_FLAGGED = 0;
export const FLAGGED = 1;
export const FLAG_UNKNOWN = 2;

/**
 * Each row's feeling code and abuse flag, one byte each per row read in one query (rows without an
 * enrichment row: no tone, flag unknown).
 */
async function readEnrichmentCodes(ctx: StageContext, plan: SegmentPlan): Promise<{ feeling: Uint8Array; flagged: Uint8Array }> {
  const db = await ctx.db();
  const table = plannedTable(ctx, plan, 'enrichment');
  const flag = (await columnNames(db, table)).has('flagged') ? `coalesce(flagged::UTINYINT, ${FLAG_UNKNOWN})` : String(FLAG_UNKNOWN);
  const c = await db.numbers(
    `SELECT row_id::INTEGER AS row_id, ${feelingCodeSql('tone', 'emotion_mood')}::UTINYINT AS code, ${flag}::UTINYINT AS flagged FROM ${table}`,
  );
  const feeling = new Uint8Array(plan.rows).fill(feelingCode({ tone: null, moods: [] }));
  const flagged = new Uint8Array(plan.rows).fill(FLAG_UNKNOWN);
  const rows = c.row_id!;
  for (let i = 0; i < rows.length; i++) {
    feeling[rows[i]!] = c.code![i]!;
    flagged[rows[i]!] = c.flagged![i]!;
  }
  return { feeling, flagged };
}
