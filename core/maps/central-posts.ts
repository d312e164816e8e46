// What a reader of a cluster (a narrative, a theme) sees of its posts before opening the members
// list (docs/fields.md, "central_content_uuids", "flagged_share"): its central posts, the first
// CENTRAL_POSTS of its members, most central first, that the abuse lexicon does not flag
// (core/text/abuse.ts) and whose text no post before them said (a retweet and its original are
// one); and the share of its members the lexicon flags. One rule for the pipeline's narratives and
// themes (stored in their tables) and the server's emergent narratives.
// The texts are read in rounds, one batch for every cluster (one query in the pipeline), as
// describing a cluster reads them (cluster-describer.ts).
import { flaggedPost } from '../text/abuse.ts';
import { repairText } from '../text/text-repair.ts';

/**
 * Central posts a cluster keeps: the first screen of a narrative on the dashboard, what a reader
 * skims before paging through the members (an alert event carries the first 3).
 */
export const CENTRAL_POSTS = 10;

/** Whether the lexicon flags a row, when that is known without its text (the features stage's stored flag); null: read its text. */
type FlagOf = (row: number) => boolean | null;

const RETWEET_PREFIX = /^(?:\s*RT\s*@[\p{L}\p{N}_.]+\s*:?)+/iu;
const LINK = /\bhttps?:\/\/\S+|\bwww\.\S+/giu;

/**
 * A text as two posts are compared: without a retweet's leading "RT @user:" (a chain of them too)
 * and links (a retweet's link is another short link to the same page), whitespace collapsed, case
 * folded. Empty for a post without words: such posts repeat nothing.
 */
export function sameTextKey(text: string): string {
  return repairText(text).normalize('NFKC').replace(RETWEET_PREFIX, ' ').replace(LINK, ' ').replace(/\s+/gu, ' ').trim().toLowerCase();
}

/** The share of `members` the lexicon flags (0 for none). */
export function flaggedShare(members: ArrayLike<number>, flagged: (row: number) => boolean): number {
  let n = 0;
  for (let i = 0; i < members.length; i++) if (flagged(members[i]!)) n++;
  return members.length === 0 ? 0 : n / members.length;
}

/**
 * The rounds of picking the central posts of a set of clusters: next() names the rows whose texts
 * the next round reads (none: done), give() takes them, result() is each cluster's pick.
 */
class CentralPicker {
  private readonly picked: number[][];
  private readonly said: Array<Set<string>>;
  /** Per cluster: the next member to look at, and the members read in this round. */
  private readonly at: number[];
  private readonly batch: number[][];

  constructor(
    private readonly clusters: ReadonlyArray<{ members: ArrayLike<number> }>,
    private readonly flagged: FlagOf,
    private readonly k: number,
  ) {
    this.picked = clusters.map(() => []);
    this.said = clusters.map(() => new Set());
    this.at = clusters.map(() => 0);
    this.batch = clusters.map(() => []);
  }

  next(): number[] {
    const need = new Set<number>();
    this.clusters.forEach(({ members }, i) => {
      const want = this.k - this.picked[i]!.length;
      const rows: number[] = [];
      // Twice what is missing: a few flagged or repeated posts among them cost no further round.
      while (want > 0 && this.at[i]! < members.length && rows.length < 2 * want) {
        const r = members[this.at[i]!++]!;
        if (this.flagged(r) !== true) rows.push(r);
      }
      this.batch[i] = rows;
      for (const r of rows) need.add(r);
    });
    return [...need];
  }

  give(texts: ReadonlyMap<number, string>): void {
    this.clusters.forEach((_, i) => {
      const picked = this.picked[i]!;
      for (const r of this.batch[i]!) {
        if (picked.length === this.k) break;
        const text = texts.get(r) ?? '';
        if (this.flagged(r) ?? flaggedPost(text)) continue;
        const key = sameTextKey(text);
        if (key && this.said[i]!.has(key)) continue;
        this.said[i]!.add(key);
        picked.push(r);
      }
    });
  }

  result(): number[][] {
    return this.picked;
  }
}

/** Each cluster's central posts (rows, most central first), the members' texts read in batches by `readTexts`. */
export async function centralPostsOf(
  clusters: ReadonlyArray<{ members: ArrayLike<number> }>,
  flagged: FlagOf,
  readTexts: (rows: number[]) => Promise<ReadonlyMap<number, string>>,
  k = CENTRAL_POSTS,
): Promise<number[][]> {
  const p = new CentralPicker(clusters, flagged, k);
  for (let rows = p.next(); rows.length > 0; rows = p.next()) p.give(await readTexts(rows));
  return p.result();
}

/** One cluster's central posts, each member's text at hand (`textOf`). */
export function centralPosts(members: ArrayLike<number>, flagged: FlagOf, textOf: (row: number) => string, k = CENTRAL_POSTS): number[] {
  const p = new CentralPicker([{ members }], flagged, k);
  for (let rows = p.next(); rows.length > 0; rows = p.next()) p.give(new Map(rows.map((r) => [r, textOf(r)])));
  return p.result()[0]!;
}
