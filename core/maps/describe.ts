// How a narrative is described beyond its counts, the same for the pipeline's narratives and a
// search answer's emergent ones (definitions: docs/fields.md, "Narratives"): its platform diffusion
// and its extractive summary.
/** Normalised Shannon entropy of the platform split (0: one platform .. 1: even over all of the snapshot's). */
export function platformDiffusion(counts: Map<number, number>, platformsInSnapshot: number): number | null {
  if (platformsInSnapshot < 2) return null;
  let n = 0;
  for (const c of counts.values()) n += c;
  let h = 0;
  for (const c of counts.values()) if (c > 0) h -= (c / n) * Math.log(c / n);
  return h / Math.log(platformsInSnapshot);
}

const SUMMARY_CHARS = 240;

/** Extractive summary: the representative post's own words, cut at a word boundary. */
export function summarise(text: string): string {
  const s = text.replace(/\s+/g, ' ').trim();
  if (s.length <= SUMMARY_CHARS) return s;
  const cut = s.slice(0, SUMMARY_CHARS);
  return `${cut.slice(0, Math.max(cut.lastIndexOf(' '), SUMMARY_CHARS - 40)).trimEnd()}…`;
}
