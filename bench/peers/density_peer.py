# The density peer of the real-data bench (`npm run bench -- quality --part real`): HDBSCAN* on the
# post vectors our pipeline embedded (unit length; Euclidean distance, a monotone function of the
# cosine), leaving posts of no dense region as noise.
# scikit-learn has HDBSCAN from 1.3 on; Debian 12 ships 1.2.1, so this is HDBSCAN* written out on
# numpy (Campello, Moulavi, Sander 2013; the excess-of-mass selection of McInnes's hdbscan and
# scikit-learn): core distance = distance to the min_samples-th nearest point (the point itself
# counted, as they count it); mutual reachability max(core a, core b, d(a, b)); its exact minimum
# spanning tree (Prim, O(n^2) time, O(n) memory); the single-linkage tree condensed at
# min_cluster_size; clusters chosen by excess of mass (stability), the root never chosen.
# Reads {"vectors": path of rows x dim float32, "dim": int, "min_samples": int, "min_cluster_sizes": [int]}
# on stdin; writes {"version": numpy's, "ms_tree": ms, "results": [{"min_cluster_size", "labels": [int
# per row, -1 noise], "ms"}]}. `--check` runs the self-check (against scipy's single linkage) instead.
import json
import sys
import time

import numpy as np


LAMBDA_CAP = 1e12


def core_distances2(x, k, block=512):
    """Squared distance of each row to its k-th nearest row (itself the first)."""
    n = x.shape[0]
    out = np.empty(n, dtype=np.float64)
    for i in range(0, n, block):
        d2 = np.maximum(2.0 - 2.0 * (x[i : i + block] @ x.T), 0.0)
        out[i : i + block] = np.partition(d2, k - 1, axis=1)[:, k - 1]
    return out


def mst_mutual_reachability(x, core2):
    """Prim's exact MST of the mutual reachability graph: (a, b, squared weight) per edge."""
    n = x.shape[0]
    remaining = np.arange(1, n)
    xs = x[remaining]
    cs = core2[remaining]
    best = np.full(n - 1, np.inf)
    parent = np.zeros(n - 1, dtype=np.int64)
    edges = np.empty((n - 1, 3))
    v = 0
    for e in range(n - 1):
        d2 = np.maximum(2.0 - 2.0 * (xs @ x[v]), 0.0)
        mr = np.maximum(np.maximum(d2, cs), core2[v])
        better = mr < best
        best[better] = mr[better]
        parent[better] = v
        j = int(np.argmin(best))
        v = int(remaining[j])
        edges[e] = (parent[j], v, best[j])
        # In the tree: an infinite core keeps its reachability infinite, never chosen or updated again.
        best[j] = cs[j] = np.inf
        # Rows left behind cost a product each step: compact once half of them are in the tree.
        if e + 1 < n - 1 and np.isinf(cs).sum() * 2 >= len(cs):
            keep = ~np.isinf(cs)
            remaining, best, parent, cs = remaining[keep], best[keep], parent[keep], cs[keep]
            xs = x[remaining]
    return edges


def single_linkage(edges, n):
    """Merges in increasing weight as scipy's linkage rows: (left, right, weight, size)."""
    order = np.argsort(edges[:, 2], kind="stable")
    parent = np.arange(2 * n - 1)
    size = np.ones(2 * n - 1, dtype=np.int64)

    def find(a):
        root = a
        while parent[root] != root:
            root = parent[root]
        while parent[a] != root:
            parent[a], a = root, parent[a]
        return root

    out = np.empty((n - 1, 4))
    for i, e in enumerate(order):
        a, b = find(int(edges[e, 0])), find(int(edges[e, 1]))
        new = n + i
        parent[a] = parent[b] = new
        size[new] = size[a] + size[b]
        out[i] = (a, b, edges[e, 2], size[new])
    return out


def condense(linkage, n, min_cluster_size):
    """The condensed tree as (parent, child, lambda, child size) rows; clusters numbered from n, root n."""
    rows = []
    root = 2 * n - 2
    label_of = {root: n}
    next_label = n + 1

    def leaves(node):
        stack, out = [node], []
        while stack:
            a = stack.pop()
            if a < n:
                out.append(a)
            else:
                left, right = int(linkage[a - n, 0]), int(linkage[a - n, 1])
                stack.extend((left, right))
        return out

    stack = [root]
    while stack:
        node = stack.pop()
        if node < n:
            continue
        label = label_of[node]
        left, right, dist, _ = linkage[node - n]
        left, right = int(left), int(right)
        # Duplicate posts sit at distance 0: a finite cap keeps stabilities finite.
        lam = min(1.0 / np.sqrt(dist), LAMBDA_CAP) if dist > 0 else LAMBDA_CAP
        size_l = 1 if left < n else int(linkage[left - n, 3])
        size_r = 1 if right < n else int(linkage[right - n, 3])
        if size_l >= min_cluster_size and size_r >= min_cluster_size:
            for child, size in ((left, size_l), (right, size_r)):
                label_of[child] = next_label
                rows.append((label, next_label, lam, size))
                next_label += 1
                stack.append(child)
        else:
            for child, size in ((left, size_l), (right, size_r)):
                if size >= min_cluster_size:
                    label_of[child] = label  # the cluster goes on, smaller
                    stack.append(child)
                else:
                    for p in leaves(child):
                        rows.append((label, p, lam, 1))
    return rows


def eom_labels(rows, n):
    """Excess-of-mass selection over the condensed tree; a label per point (-1 noise)."""
    births = {n: 0.0}
    for parent, child, lam, size in rows:
        if child >= n:
            births[child] = lam
    stability = {c: 0.0 for c in births}
    children = {c: [] for c in births}
    point_cluster = np.full(n, -1, dtype=np.int64)
    for parent, child, lam, size in rows:
        stability[parent] += (lam - births[parent]) * size
        if child >= n:
            children[parent].append(child)
        else:
            point_cluster[child] = parent
    selected = {}
    # Children have larger numbers than their parents: deepest first.
    for c in sorted(births, reverse=True):
        if c == n:
            continue
        below = sum(stability[k] for k in children[c])
        if not children[c] or stability[c] >= below:
            selected[c] = True
            stack = list(children[c])
            while stack:
                k = stack.pop()
                selected[k] = False
                stack.extend(children[k])
        else:
            selected[c] = False
            stability[c] = below
    chosen = sorted(c for c, s in selected.items() if s)
    label_of = {c: i for i, c in enumerate(chosen)}
    # A cluster's label: its own when chosen, else its parent's (chosen clusters never nest).
    parent_of = {child: parent for parent, child, _, _ in rows if child >= n}
    resolved = {n: -1}
    for c in sorted(births):
        if c != n:
            resolved[c] = label_of.get(c, resolved[parent_of[c]])
    return np.array([resolved[c] if c >= 0 else -1 for c in point_cluster], dtype=np.int64)


def hdbscan(x, min_samples, min_cluster_sizes):
    t0 = time.perf_counter()
    core2 = core_distances2(x, min_samples)
    linkage = single_linkage(mst_mutual_reachability(x, core2), x.shape[0])
    ms_tree = (time.perf_counter() - t0) * 1000
    results = []
    for mcs in min_cluster_sizes:
        t1 = time.perf_counter()
        labels = eom_labels(condense(linkage, x.shape[0], mcs), x.shape[0])
        results.append({"min_cluster_size": mcs, "labels": labels.tolist(), "ms": (time.perf_counter() - t1) * 1000})
    return linkage, ms_tree, results


def check():
    """The tree against scipy's single linkage of the full mutual-reachability matrix, and blobs found."""
    from scipy.cluster.hierarchy import linkage as scipy_linkage
    from scipy.spatial.distance import squareform

    rng = np.random.default_rng(0)
    # Three tight blobs about 0.28 apart on the sphere, 20 points scattered over it (about 1.4 from all).
    e = np.eye(16)
    centres = [e[0] + 0.2 * e[i] for i in (1, 2, 3)]
    x = np.vstack([c + 0.01 * rng.normal(size=(60, 16)) for c in centres] + [rng.normal(size=(20, 16))])
    x = (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float32)
    n = x.shape[0]
    d2 = np.maximum(2.0 - 2.0 * (x.astype(np.float64) @ x.T.astype(np.float64)), 0.0)
    np.fill_diagonal(d2, 0.0)
    core2 = np.sort(d2, axis=1)[:, 4]
    mr = np.sqrt(np.maximum(np.maximum(d2, core2[:, None]), core2[None, :]))
    np.fill_diagonal(mr, 0.0)
    ours, _, results = hdbscan(x, 5, [10])
    theirs = scipy_linkage(squareform(mr, checks=False), method="single")
    assert np.allclose(np.sqrt(ours[:, 2]), theirs[:, 2], atol=1e-4), "merge heights differ from scipy's single linkage"
    labels = np.array(results[0]["labels"])
    for b in range(3):
        found = labels[b * 60 : (b + 1) * 60]
        assert len(set(found.tolist())) == 1 and found[0] >= 0, f"blob {b} not one cluster: {found}"
    assert len(set(labels[:180].tolist())) == 3, "blobs merged"
    assert (labels[180:] == -1).mean() >= 0.8, f"scattered points not noise: {labels[180:]}"
    print("density_peer self-check passed")


def main():
    if "--check" in sys.argv:
        check()
        return
    job = json.load(sys.stdin)
    x = np.fromfile(job["vectors"], dtype=np.float32).reshape(-1, job["dim"])
    _, ms_tree, results = hdbscan(x, job["min_samples"], job["min_cluster_sizes"])
    json.dump({"version": np.__version__, "ms_tree": ms_tree, "results": results}, sys.stdout)


if __name__ == "__main__":
    main()
