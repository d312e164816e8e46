# Topic-model peers of the narratives on real text (`npm run bench -- quality --part stance`):
# scikit-learn's TF-IDF + k-means, NMF and LDA, run on the same texts our pipeline clusters, and a
# word-space reference: PPMI of words co-occurring in a post, its top 100 singular vectors scaled by
# sqrt(sigma), a post the idf-weighted sum of its words' vectors, k-means (the textbook form of
# what core/vectors/word-space.ts does); "ppmi_bg" fits the word space on a background corpus of real
# tweets beside the texts (more co-occurrence than a few thousand tweets give: pre-training, as far
# as it goes without a downloaded model).
# Two supervised references bound what the tweets' words can tell apart at all: a linear classifier
# trained on the true labels ("labels", given only for these runs) and scored out of fold (10-fold
# cross-validation): "supervised_words" on TF-IDF of word uni- and bigrams, "supervised_chars" with
# character 2-5-grams beside them (hashtags such as #prolife or #HillaryForPrison share pieces).
# An unsupervised clustering of the same words is not expected to beat them.
# Reads {"texts": [...], "background": [...] (optional), "labels": [...] (optional), "runs": [{"method":
# "kmeans"|"nmf"|"lda"|"ppmi"|"ppmi_bg"|"supervised_words"|"supervised_chars", "k": int, "seed": int}, ...]} as JSON on stdin; writes {"version": scikit-learn's, "results": [{"method", "k", "seed", "assignment": [int per text], "ms"}]}.
# Each text gets the cluster (k-means) or its dominant topic (NMF, LDA): the peers leave no noise.
import json
import sys
import time

import numpy as np
import sklearn

from scipy.sparse import coo_matrix, hstack
from scipy.sparse.linalg import svds
from sklearn.cluster import KMeans
from sklearn.decomposition import NMF, LatentDirichletAllocation
from sklearn.feature_extraction.text import CountVectorizer, TfidfVectorizer
from sklearn.model_selection import StratifiedKFold, cross_val_predict
from sklearn.preprocessing import normalize
from sklearn.svm import LinearSVC


def word_space(texts, fit_texts, dim=100, alpha=0.75):
    """Posts as idf-weighted sums of PPMI-SVD word vectors fitted on fit_texts (which hold texts)."""
    vec = CountVectorizer(stop_words="english", min_df=2, max_df=0.5, binary=True)
    fit = vec.fit_transform(fit_texts).astype(float)
    co = (fit.T @ fit).tocsr()
    co.setdiag(0)
    co.eliminate_zeros()
    co = co.tocoo()
    total = co.sum()
    pw = np.asarray(co.sum(1)).ravel() / total
    pc = np.asarray(co.sum(0)).ravel() ** alpha
    pc = pc / pc.sum()
    pmi = np.maximum(np.log(co.data / total / (pw[co.row] * pc[co.col])), 0)
    u, sigma, _ = svds(coo_matrix((pmi, (co.row, co.col)), shape=co.shape).tocsr(), k=dim, random_state=0)
    vectors = u * np.sqrt(sigma)
    idf = np.log(fit.shape[0] / (1 + np.asarray(fit.sum(0)).ravel()))
    return normalize(vec.transform(texts).astype(float).multiply(idf).tocsr() @ vectors)


def main() -> None:
    job = json.load(sys.stdin)
    texts = job["texts"]
    # The usual settings of a topic model on short posts: English stop words, terms in at least
    # two posts and at most half of them; sublinear tf for TF-IDF, raw counts for LDA.
    tfidf = TfidfVectorizer(stop_words="english", min_df=2, max_df=0.5, sublinear_tf=True).fit_transform(texts)
    counts = CountVectorizer(stop_words="english", min_df=2, max_df=0.5).fit_transform(texts)
    spaces = {}
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
        elif method in ("ppmi", "ppmi_bg"):
            if method not in spaces:
                spaces[method] = word_space(texts, texts + (job.get("background", []) if method == "ppmi_bg" else []))
            assignment = KMeans(n_clusters=k, n_init=10, random_state=seed).fit_predict(spaces[method])
        elif method in ("supervised_words", "supervised_chars"):
            labels = job["labels"]
            words = TfidfVectorizer(sublinear_tf=True, ngram_range=(1, 2)).fit_transform(texts)
            if method == "supervised_chars":
                chars = TfidfVectorizer(sublinear_tf=True, analyzer="char_wb", ngram_range=(2, 5), min_df=2).fit_transform(texts)
                words = hstack([words, chars]).tocsr()
            folds = StratifiedKFold(10, shuffle=True, random_state=seed)
            predicted = cross_val_predict(LinearSVC(C=0.5), words, labels, cv=folds)
            names = sorted(set(labels))
            assignment = [names.index(p) for p in predicted]
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
