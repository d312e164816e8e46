// A post's keywords, its most distinctive terms by tf x idf: published as its `themes` (the spec's
// field name; the themes that group narratives are core/clustering/themes.ts).
//   score(t) = tf(t) * idf(t)   tf = occurrences of t among the post's analyzer terms
// Terms without a letter (numbers, emoji, "2024") and terms of one character are skipped; ties
// keep the order of first occurrence. `idf` comes from the corpus (e.g. idfFromDocumentFrequency
// over the snapshot's document frequencies); with a constant idf the keywords are the most
// frequent terms.

/** Smoothed inverse document frequency: ln(1 + (N - df + 0.5) / (df + 0.5)), as BM25 uses (> 0). */
export function idfFromDocumentFrequency(df: (term: string) => number, documents: number): (term: string) => number {
  return (t) => {
    const n = Math.max(0, Math.min(documents, df(t)));
    return Math.log(1 + (documents - n + 0.5) / (n + 0.5));
  };
}

function eligible(t: string): boolean {
  return [...t].length > 1 && /\p{L}/u.test(t);
}

/** The k terms of `terms` with the highest tf x idf (see the header). */
export function postKeywords(terms: string[], idf: (term: string) => number, k = 3): string[] {
  const tf = new Map<string, { n: number; first: number }>();
  terms.forEach((t, i) => {
    if (!eligible(t)) return;
    const e = tf.get(t);
    if (e) e.n++;
    else tf.set(t, { n: 1, first: i });
  });
  return [...tf]
    .map(([t, { n, first }]) => ({ t, s: n * idf(t), first }))
    .filter((x) => Number.isFinite(x.s) && x.s > 0)
    .sort((a, b) => b.s - a.s || a.first - b.first)
    .slice(0, Math.max(0, k))
    .map((x) => x.t);
}
