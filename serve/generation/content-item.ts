// A ranked row as the content item of docs/api.md "Content item": the ranking core's scores, the row's stored
// fields, its PublicEnrichment (2.3), and the narratives and patterns it belongs to.
import type { RankedRow } from '../../core/ranking/search.ts';
import type { PublicEnrichment } from '../../core/enrichment/public-enrichment.ts';
import type { GenerationData } from './loaded-generation.ts';

export interface ContentItem {
  uuid: string;
  authorReach: number;
  commentCount: number;
  engagementDepth: number;
  engagementScore: number;
  exampleRankingScore: number;
  likeCount: number;
  shareCount: number;
  viewCount: number;
  rawSimilarity: number;
  similarity: number;
  recencyScore: number;
  rrfScore: number;
  narrativeIds: string[];
  patternKeys: string[];
  tags: string[];
  contentType: string | null;
  creatorId: number | null;
  description: string | null;
  title: string | null;
  platform: string | null;
  publishedAt: string | null;
  followerCount: number | null;
  enrichment: PublicEnrichment;
  intentEvidenceSource: string;
  intentSimilarity: number | null;
  relevance: number;
}

/** A row's stored fields (a content item without the scores) as one fresh object. */
function rowFields(gen: GenerationData, row: number) {
  const { index, content: c } = gen;
  const creator = c.creatorId[row]!;
  const followers = index.followers[row]!;
  return {
    uuid: index.uuid.get(row)!,
    commentCount: index.comments[row]!,
    likeCount: index.likes[row]!,
    shareCount: index.shares[row]!,
    viewCount: index.views[row]!,
    narrativeIds: c.narrativeIds.get(row),
    patternKeys: c.patternKeys.get(row),
    tags: c.tags.get(row),
    contentType: c.contentTypes[c.contentType[row]!] ?? null,
    creatorId: Number.isNaN(creator) ? null : creator,
    description: c.description.get(row),
    title: c.title.get(row),
    platform: c.platforms[c.platform[row]!] ?? null,
    publishedAt: new Date(index.publishedAt[row]!).toISOString(),
    followerCount: Number.isNaN(followers) ? null : followers,
    enrichment: index.enrichment.get(row),
  };
}

/** The stored fields of a row (no scores), its URL and its creator's handle: what the free lists of content show. */
export function storedFields(gen: GenerationData, row: number) {
  return Object.assign(rowFields(gen, row), {
    contentUrl: gen.content.contentUrl.get(row),
    creatorHandle: gen.content.creatorHandle.get(row),
  });
}

/**
 * The stored fields with the ranking core's scores, assigned onto the fresh object: copying the
 * stored fields out with rest/spread syntax cost more than the rest of the item together.
 */
export function contentItem(gen: GenerationData, r: RankedRow): ContentItem {
  return Object.assign(rowFields(gen, r.row), scoresOf(r));
}

/** A content item's scores, in the order they follow the stored fields. */
function scoresOf(r: RankedRow) {
  return {
    authorReach: r.authorReach,
    engagementDepth: r.engagementDepth,
    engagementScore: r.engagementScore,
    exampleRankingScore: r.exampleRankingScore,
    rawSimilarity: r.rawSimilarity,
    similarity: r.similarity,
    recencyScore: r.recencyScore,
    rrfScore: r.rrfScore,
    intentEvidenceSource: r.intentEvidenceSource,
    intentSimilarity: r.intentSimilarity,
    relevance: r.relevance,
  };
}

/** A number as JSON.stringify writes it: its shortest round-trip text, null when not finite. */
const num = (x: number | null) => (x !== null && Number.isFinite(x) ? String(x) : 'null');

/**
 * `,${JSON.stringify(scoresOf(r)).slice(1)}` written directly (the members in scoresOf's order; the
 * evidence source an ASCII enum): 100 rows' scores in 0.19 ms instead of 0.45 with the object and
 * JSON.stringify. serve.test.ts holds the items byte for byte to JSON.stringify of contentItem.
 */
function scoresJson(r: RankedRow): string {
  return (
    `,"authorReach":${num(r.authorReach)},"engagementDepth":${num(r.engagementDepth)},"engagementScore":${num(r.engagementScore)}` +
    `,"exampleRankingScore":${num(r.exampleRankingScore)},"rawSimilarity":${num(r.rawSimilarity)},"similarity":${num(r.similarity)}` +
    `,"recencyScore":${num(r.recencyScore)},"rrfScore":${num(r.rrfScore)},"intentEvidenceSource":"${r.intentEvidenceSource}"` +
    `,"intentSimilarity":${num(r.intentSimilarity)},"relevance":${num(r.relevance)}}`
  );
}

/** Rows whose stored fields' JSON an answer thread keeps per generation (~1.3 kB each: about 65 MB at most). */
const ROW_JSON_CACHE_ROWS = 50_000;
const rowJsonCaches = new WeakMap<GenerationData, Map<number, Uint8Array>>();

/**
 * A row's stored fields as UTF-8 JSON members (no braces), kept for the generation's life: a row's
 * fields never change within a generation, popular rows come back answer after answer, and
 * building the row's object, serialising and encoding it was a fifth of an answer's time. As
 * UTF-8, not a string: half the memory of a string holding any character outside Latin-1 (emoji),
 * and the answer's bytes are copied, not encoded again. Bounded: the oldest rows go first.
 */
function rowFieldsJson(gen: GenerationData, row: number): Uint8Array {
  let cache = rowJsonCaches.get(gen);
  if (!cache) rowJsonCaches.set(gen, (cache = new Map()));
  let json = cache.get(row);
  if (json === undefined) {
    const text = JSON.stringify(rowFields(gen, row));
    json = Buffer.from(text.slice(1, -1));
    if (cache.size >= ROW_JSON_CACHE_ROWS) cache.delete(cache.keys().next().value!);
    cache.set(row, json);
  }
  return json;
}

/**
 * The content items of ranked rows as a JSON array in UTF-8 chunks (ASCII strings and byte runs;
 * concatenated, byte for byte the UTF-8 of JSON.stringify of their contentItem objects: the stored
 * fields first, then the scores, in contentItem's order), from the rows' cached JSON and only the
 * scores serialised per answer (numbers, null and an ASCII enum: ASCII).
 */
export function contentItemsJson(gen: GenerationData, ranked: readonly RankedRow[]): Array<string | Uint8Array> {
  const out: Array<string | Uint8Array> = [];
  for (let i = 0; i < ranked.length; i++) {
    const r = ranked[i]!;
    out.push(i ? ',{' : '[{', rowFieldsJson(gen, r.row), scoresJson(r));
  }
  out.push(ranked.length ? ']' : '[]');
  return out;
}

export interface Creator {
  creatorId: number;
  /** An extra field beyond the spec's Creator (docs/api.md): the handle its posts carried, null when none did. */
  creatorHandle: string | null;
  followerCount: number | null;
  hits: number;
  platform: string;
}

/** Creators of the returned rows (docs/api.md, "Creator"), most hits first, then by id and platform. */
export function creatorsOf(gen: GenerationData, rows: readonly number[]): Creator[] {
  const { index, content: c } = gen;
  const by = new Map<string, Creator>();
  for (const row of rows) {
    const creatorId = c.creatorId[row]!;
    if (Number.isNaN(creatorId)) continue;
    const platform = c.platforms[c.platform[row]!] ?? null;
    const k = `${creatorId}\u0000${platform}`;
    const seen = by.get(k);
    if (seen) {
      seen.hits++;
      seen.creatorHandle ??= c.creatorHandle.get(row);
    } else {
      const followers = index.followers[row]!;
      const creatorHandle = c.creatorHandle.get(row);
      by.set(k, {
        creatorId,
        creatorHandle,
        followerCount: Number.isNaN(followers) ? null : followers,
        hits: 1,
        platform: platform ?? 'unknown',
      });
    }
  }
  return [...by.values()].sort((a, b) => b.hits - a.hits || a.creatorId - b.creatorId || (a.platform < b.platform ? -1 : 1));
}
