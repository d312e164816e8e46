# Topic-model peers of the narratives on real text (`npm run bench -- quality --part stance`):
# scikit-learn's TF-IDF + k-means, NMF and LDA, run on the same texts our pipeline clusters.
# Reads {"texts": [...], "runs": [{"method": "kmeans"|"nmf"|"lda", "k": int, "seed": int}, ...]}
# as JSON on stdin; writes {"version": scikit-learn's, "results": [{"method", "k", "seed", "assignment": [int per text], "ms"}]}.
# Each text gets the cluster (k-means) or its dominant topic (NMF, LDA): the peers leave no noise.
import json
import sys
import time

import sklearn

from sklearn.cluster import KMeans
from sklearn.decomposition import NMF, LatentDirichletAllocation
from sklearn.feature_extraction.text import CountVectorizer, TfidfVectorizer


def main() -> None:
    job = json.load(sys.stdin)
    texts = job["texts"]
    # The usual settings of a topic model on short posts: English stop words, terms in at least
    # two posts and at most half of them; sublinear tf for TF-IDF, raw counts for LDA.
    tfidf = TfidfVectorizer(stop_words="english", min_df=2, max_df=0.5, sublinear_tf=True).fit_transform(texts)
    counts = CountVectorizer(stop_words="english", min_df=2, max_df=0.5).fit_transform(texts)
    out = []
    for run in job["runs"]:
        t0 = time.perf_counter()
        k, seed, method = run["k"], run["seed"], run["method"]
        if method == "kmeans":
            assignment = KMeans(n_clusters=k, n_init=10, random_state=seed).fit_predict(tfidf)
        elif method == "nmf":
            assignment = NMF(n_components=k, init="nndsvda", max_iter=500, random_state=seed).fit_transform(tfidf).argmax(1)
        elif method == "lda":
            assignment = (
                LatentDirichletAllocation(n_components=k, learning_method="batch", max_iter=50, random_state=seed)
                .fit_transform(counts)
                .argmax(1)
            )
        else:
            raise SystemExit(f"unknown method {method}")
        out.append(
            {
                "method": method,
                "k": k,
                "seed": seed,
                "assignment": [int(a) for a in assignment],
                "ms": (time.perf_counter() - t0) * 1000,
            }
        )
    json.dump({"version": sklearn.__version__, "results": out}, sys.stdout)


if __name__ == "__main__":
    main()
