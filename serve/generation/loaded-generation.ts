// One generation as the server holds it: the ranking core's index (core/ranking), the content
// columns of docs/api.md "Content item", and the narrative and pattern maps. Immutable once loaded; requests lease
// it from the snapshot store (snapshot-store.ts) so a swap never pulls it from under them. Data only:
// answering from it (on this thread or in search workers) is serve/search/'s search engine (search-engine.ts).
//
// Loaded to be shared with other threads (`share`), the big parts live in SharedArrayBuffers: a
// search worker reads them in place through a GenerationData view of its own (generationView),
// and this thread keeps no graphs. Otherwise this thread holds everything, graphs included.
import fs from 'node:fs/promises';
import path from 'node:path';
import { assert, AssertionFailed, assertInt } from '../../core/infra/assert.ts';
import type { Manifest } from '../../core/snapshots/generations.ts';
import { DAY_MS, WINDOW_DAYS, type WindowKey } from '../../core/snapshots/windows.ts';
import { loadSearchIndex, type SearchIndex, type SharedIndexParts } from '../../core/ranking/search-index.ts';
import { EnrichmentStore, type EnrichmentParts } from '../../core/enrichment/public-enrichment.ts';
import type { MemberColumns } from '../../core/maps/members.ts';
import { readSegmentLabelWords, RowLabelWords, type SegmentLabelWords } from '../../core/maps/row-label-words.ts';
import { withFirstRows } from '../../core/snapshots/segments.ts';
import { contentColumnsFrom, loadContentColumns, shareContentColumns, type ContentColumns, type ContentParts } from './content-columns.ts';
import { loadMaps, type Maps } from './load-maps.ts';
import { primeMemberReads } from './member-reads.ts';

/** A window's length in days (all: from its start to the as-of instant, at least 1): the span of its daily series. */
export function windowDaysOf(gen: Pick<GenerationData, 'index' | 'manifest'>, window: WindowKey): number {
  return window === 'all' ? Math.max(1, (gen.index.asOfMs - Date.parse(gen.manifest.windows.all.start)) / DAY_MS) : WINDOW_DAYS[window];
}

/** The parts of the maps an answer reads (the workers get a copy of these only). */
type AnswerMaps = Pick<Maps, 'narratives' | 'patterns' | 'patternDim'>;

/** What building an answer reads of a generation: the main thread's LoadedGeneration, or an answer worker's view. */
export interface GenerationData {
  id: string;
  dir: string;
  manifest: Manifest;
  index: SearchIndex;
  content: ContentColumns;
  maps: AnswerMaps;
  /** Creator, platform and interactions (likes + comments + shares) per row, for cluster figures. */
  members: MemberColumns;
  /** The rows' label keys as the pipeline stored them (null for a row whose segment has none). */
  labelWords: RowLabelWords;
  /** How many rows from `start` on have a text vector. */
  vectorRowsFrom(start: number): number;
}

export interface LoadedGeneration extends GenerationData {
  maps: Maps;
  /** Posts served: the rows minus the masked ones (deleted posts). */
  posts: number;
  loadedAt: string;
  loadMs: number;
}

export interface LoadOptions {
  /** The generation being served (its index is what is read of it): the segments both hold are taken from it, not read again. */
  previous?: Pick<LoadedGeneration, 'index'> | null;
  /**
   * Hand the big parts to other threads: they are loaded into SharedArrayBuffers, without the
   * graphs (whoever takes the parts loads those), and given to `share` before the generation
   * counts as loaded (its loadMs includes the sharing).
   */
  share?: (parts: GenerationParts) => Promise<void>;
}

/** Everything an answer worker needs to make its own view of a generation (generationView). */
export interface GenerationParts {
  id: string;
  dir: string;
  manifest: Manifest;
  index: SharedIndexParts;
  content: ContentParts;
  enrichment: EnrichmentParts;
  maps: AnswerMaps;
  labelWords: SegmentLabelWords[];
}

/** Members' columns and the vector-row counts, from the index and content columns (each thread computes its own). */
function derived(index: SearchIndex, content: ContentColumns): Pick<GenerationData, 'members' | 'vectorRowsFrom'> {
  const after = new Uint32Array(index.rows + 1);
  // A masked row has no vector (its scale is cleared at load).
  for (let r = index.rows - 1; r >= 0; r--) after[r] = after[r + 1]! + (index.vectors.hasVector(r) ? 1 : 0);
  return {
    vectorRowsFrom: (start) => {
      assertInt(start, 0, index.rows, 'first row');
      return after[start]!;
    },
    members: {
      creator: content.creatorId,
      platform: content.platform,
      interactions: Float64Array.from({ length: index.rows }, (_, r) => index.likes[r]! + index.comments[r]! + index.shares[r]!),
    },
  };
}

/**
 * A view of a generation another thread loaded: every big part read in place; the postings of
 * segments a `held` index of this thread has are its parsed objects (not parsed again).
 */
export async function generationView(p: GenerationParts, held: readonly SearchIndex[] = []): Promise<GenerationData> {
  const index = await loadSearchIndex(p.dir, { graphs: false, enrichment: false, shared: p.index, held });
  index.enrichment = new EnrichmentStore(p.enrichment.rows, p.enrichment);
  const content = contentColumnsFrom(p.content);
  return {
    id: p.id,
    dir: p.dir,
    manifest: p.manifest,
    index,
    content,
    maps: p.maps,
    labelWords: new RowLabelWords(p.labelWords),
    ...derived(index, content),
  };
}

/** What a loader thread sends beside a generation's parts: the whole maps and what the main thread shows of it. */
export interface LoadedElsewhere {
  parts: GenerationParts;
  maps: Maps;
  posts: number;
  loadMs: number;
}

/** The main thread's LoadedGeneration over a generation a loader thread read (loader-worker.ts): views, no reads. */
export async function generationFrom(l: LoadedElsewhere, held: readonly SearchIndex[]): Promise<LoadedGeneration> {
  const view = await generationView(l.parts, held);
  return { ...view, maps: l.maps, posts: l.posts, loadedAt: new Date().toISOString(), loadMs: l.loadMs };
}

/** Load a generation (see LoadOptions for sharing it with other threads and lending from the one served). */
export async function loadGeneration(dir: string, opts: LoadOptions = {}): Promise<LoadedGeneration> {
  const t0 = performance.now();
  const { previous = null, share } = opts;
  const shared = share !== undefined;
  const manifest = JSON.parse(await fs.readFile(path.join(dir, 'manifest.json'), 'utf8')) as Manifest;
  const held = previous ? [previous.index] : [];
  const index = await loadSearchIndex(dir, shared ? { graphs: false, share: true, held } : { held });
  // The content columns before the workers' graphs: reading them through DuckDB leaves a transient
  // of several hundred MB, which on top of the graphs made the server's peak (at 1M posts 3,137
  // against 2,606 MiB this way round, for the same memory once loaded).
  const [content, maps, labelWords] = await Promise.all([
    loadContentColumns(dir, index.rows, shared),
    loadMaps(dir, manifest.generation),
    readSegmentLabelWords(dir, withFirstRows(manifest.segments ?? []), shared),
  ]);
  // Every member list names rows of this generation (a map from another generation would not).
  for (const m of [...maps.narratives, ...maps.patterns]) {
    for (const r of m.members)
      if (!(r >= 0 && r < index.rows)) throw new AssertionFailed(`${dir}: a map member names row ${r} of ${index.rows}`);
  }
  if (share) {
    assert(index.shared, 'an index loaded to be shared shares its parts');
    await share({
      id: manifest.generation,
      dir,
      manifest,
      index: index.shared,
      content: shareContentColumns(content),
      enrichment: index.enrichment.share(),
      maps: { narratives: maps.narratives, patterns: maps.patterns, patternDim: maps.patternDim },
      labelWords,
    });
  }
  const gen: LoadedGeneration = {
    id: manifest.generation,
    dir,
    manifest,
    index,
    posts: index.rows - index.deleted.reduce((a, d) => a + d, 0),
    content,
    maps,
    labelWords: new RowLabelWords(labelWords),
    loadedAt: new Date().toISOString(),
    loadMs: 0,
    ...derived(index, content),
  };
  // Read off every member of each narrative here, where the load is (the loader thread), not on a first read.
  primeMemberReads(gen, maps.narratives);
  gen.loadMs = Math.round(performance.now() - t0);
  return gen;
}
