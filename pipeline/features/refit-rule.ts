// When an incremental run must refit the embedder instead of keeping it (docs/operations.md,
// "Incremental runs"). The text embedder is fitted on the corpus; new posts are embedded with the
// fitted model, whose vocabulary (hashed n-grams) and directions were learnt before they arrived. A
// refit changes every vector, so it is a full run. Refit when:
//   - the corpus has grown by REFIT_GROWTH (a quarter) or more since the fit: the fit describes
//     less than four fifths of the posts;
//   - the fit is REFIT_DAYS (7) days older than the as-of: a week of new stories;
//   - the generation says nothing about its fit (an older layout), or was fitted by another model.
// The daily full run of the default schedule refits anyway; these bound what an incremental-only
// schedule can drift to.
//
// What a fit reads: the posts published before the as-of's UTC day (fitCutoff), so every run of
// one day, incremental or full, embeds with the same model, and a full rebuild ranks as the
// incremental runs before it did. Refitting on the posts of the last hour as well changed the
// exact top-200 vector neighbours of a query by about a fifth at 1M posts (dense stories: many
// near-equal similarities reorder under a slightly rotated space), for nothing a reader would
// notice. The fit moves forward a day at a time (the daily full run); a young corpus with too few
// posts before today (under FIT_MIN_SHARE of them) is fitted on all of its posts.
import { EMBEDDER_MODEL } from '../../core/vectors/embedder.ts';
import type { Manifest } from '../../core/snapshots/generations.ts';
import { DAY_MS } from '../../core/snapshots/windows.ts';

const FIT_MIN_SHARE = 0.5;

/** The instant a fit at `asOf` reads posts before: the start of the as-of's UTC day. */
export function fitCutoff(asOf: Date): Date {
  return new Date(Math.floor(asOf.getTime() / DAY_MS) * DAY_MS);
}

/** Whether the fit reads only the posts before the cut-off: when they are at least FIT_MIN_SHARE of all. */
export function fitsBeforeCutoff(before: number, all: number): boolean {
  return before > 0 && before >= FIT_MIN_SHARE * all;
}

const REFIT_GROWTH = 0.25;
const REFIT_DAYS = 7;

export function refitBecause(previous: Manifest, rows: number, asOf: Date): string | null {
  const fit = previous.embedder;
  if (!fit) return `generation ${previous.generation} does not say what its embedder was fitted on`;
  if (fit.model !== EMBEDDER_MODEL)
    return `generation ${previous.generation}'s embedder is ${fit.model}, this build's is ${EMBEDDER_MODEL}`;
  if (rows >= fit.fitted_rows * (1 + REFIT_GROWTH)) {
    return `the corpus grew from ${fit.fitted_rows} to ${rows} posts since the embedder was fitted (refit at ${REFIT_GROWTH * 100}%)`;
  }
  const age = (asOf.getTime() - Date.parse(fit.fitted_as_of)) / DAY_MS;
  if (age >= REFIT_DAYS) return `the embedder was fitted ${age.toFixed(1)} days before this as-of (refit after ${REFIT_DAYS})`;
  return null;
}
