"""Sparse k-nearest-neighbour graphs and their Laplacians (written once, used by every
graph-based method).

Conventions (the ones the papers share, and scikit-feature gets wrong by adding
self-loops): the graph has no self-loops; it is symmetrised by union —
``S_ij > 0`` iff ``x_i ∈ N_k(x_j)`` or ``x_j ∈ N_k(x_i)`` — and stored as a
``scipy.sparse.csr_matrix``; nothing ``n × n`` is ever dense.

Weights:

* ``"binary"``: ``S_ij = 1`` (DGUFS Eq. 3, NDFS, RUFS, EUFS).
* ``"heat"``: ``S_ij = exp(−||x_i − x_j||² / (2σ²))`` (He et al.'s heat kernel in Cai's
  parametrisation). Bandwidth rule when ``sigma`` is not given: σ is the mean Euclidean
  distance from each point to its ``k`` neighbours — a local, O(nk) scale that adapts
  to the data without any dense distance matrix.
* ``"cosine"``: ``S_ij = max(cos(x_i, x_j), 0)``.

Neighbour search (``algorithm``): ``"exact"`` is brute force (scikit-learn, float64);
``"approximate"`` is NN-descent (Dong, Moses & Li, WWW 2011; faiss ``IndexNNDescentFlat``;
for at most ``HNSW_MAX_FEATURES`` features a faiss HNSW graph searched by every point,
faster there for the same recall;
float32 distances while the graph is refined, then every candidate's distance recomputed in
float64 and the candidates re-sorted, so weights follow the exact path's conventions);
``"auto"`` (default) is exact for ``n ≤ EXACT_MAX_SAMPLES`` and approximate above. Brute
force costs O(n²p): at n = 70 000, p = 784 about 120-135 CPU s on one core against
11-18 s for NN-descent (by machine type), recall@10 0.99 (``benchmarks/knn_scale.py``,
``docs/performance.md``).
That recall is for data with low intrinsic dimension, like images (PIE, Isolet, USPS:
0.996-1.000); on full-rank isotropic Gaussian noise it falls (recall@10 0.45 at d = 100,
n = 70 000), where a kNN graph carries little structure anyway.
NN-descent builds the kNN graph of the data set itself — every point's neighbour list is
refined by its neighbours' lists — which is exactly the query this module needs, so no
search index is built and queried (at p = 784 an HNSW index cost more for lower recall; in
at most 10 dimensions it is the faster of the two).
It keeps ``K = max(k + 2, NND_MIN_DEGREE)`` candidates per point for ``NND_ITERATIONS``
rounds. The approximate path is deterministic: faiss seeds NN-descent's random start with a
fixed seed and the graph is refined on one thread (the threaded refinement updates the
lists in a racy order). Rows the refinement leaves incomplete, and problems of at most
``NND_MIN_SAMPLES`` points (faiss's lower limit), are searched exactly. faiss is imported
only when the approximate path runs.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from sklearn.neighbors import NearestNeighbors

__all__ = ["knn_indices", "knn_graph", "laplacian", "degree", "EXACT_MAX_SAMPLES"]

#: ``algorithm="auto"`` searches exactly up to this many samples, approximately above.
#: Every scikit-feature benchmark dataset lies below it, so their graphs are unchanged.
EXACT_MAX_SAMPLES = 20_000
#: NN-descent parameters of the approximate path: the candidate list per point is
#: ``max(k + 2, NND_MIN_DEGREE)`` long (short lists converge poorly), refined for
#: ``NND_ITERATIONS`` rounds with a pool of ``K + NND_POOL_EXTRA`` candidates
NND_MIN_DEGREE = 10
NND_ITERATIONS = 6
NND_POOL_EXTRA = 8
#: faiss's NN-descent needs more points than this; smaller problems are searched exactly
NND_MIN_SAMPLES = 100
#: at most this many features the approximate path searches a faiss HNSW graph instead
#: (``M = HNSW_M``, efConstruction / efSearch below): at n = 70 000 in 10 dimensions it
#: took 2.5 CPU-s against NN-descent's 5.2 for the same recall@5 (0.9987); at 5, 1.9 s
#: against 4.2 (1.000 / 0.9998); from 20 dimensions on its recall falls behind (0.983 / 0.990)
HNSW_MAX_FEATURES = 10
HNSW_M = 16
HNSW_EF_CONSTRUCTION = 40
HNSW_EF_SEARCH = 32
_ALGORITHMS = ("auto", "exact", "approximate")


def resolve_algorithm(n_samples: int, algorithm: str = "auto") -> str:
    """``"exact"`` or ``"approximate"``: what ``algorithm`` means for ``n_samples``."""
    if algorithm not in _ALGORITHMS:
        raise ValueError(f"algorithm must be one of {_ALGORITHMS}; got {algorithm!r}")
    if algorithm == "auto":
        return "exact" if n_samples <= EXACT_MAX_SAMPLES else "approximate"
    return algorithm


def _approximate_candidates(X: np.ndarray, k: int) -> np.ndarray:
    """``n × K`` approximate neighbour candidates (``K = max(k + 2, NND_MIN_DEGREE)``, the
    sample itself not among them, unordered): an HNSW search for at most
    ``HNSW_MAX_FEATURES`` features, NN-descent above. Rows with a missing or repeated entry
    are searched exactly."""
    import faiss  # lazy: only large problems pay for it

    n, p = X.shape
    K = min(max(k + 2, NND_MIN_DEGREE), n - 1)  # ≥ k + 2: the caller checked k + 2 < n
    Xf = np.ascontiguousarray(X, dtype=np.float32)
    threads = faiss.omp_get_max_threads()
    faiss.omp_set_num_threads(1)  # a single-threaded build is deterministic
    try:
        if p <= HNSW_MAX_FEATURES:
            index = faiss.IndexHNSWFlat(p, HNSW_M)
            index.hnsw.efConstruction = HNSW_EF_CONSTRUCTION
            index.add(Xf)
            index.hnsw.efSearch = max(HNSW_EF_SEARCH, K + 1)
            _, found = index.search(Xf, K + 1)
            idx = found[_not_self(found)].reshape(n, K).astype(np.intp)
        else:
            index = faiss.IndexNNDescentFlat(p, K)
            index.nndescent.iter = NND_ITERATIONS
            index.nndescent.L = K + NND_POOL_EXTRA
            index.add(Xf)
            idx = faiss.vector_to_array(index.nndescent.final_graph).reshape(n, K)
            idx = idx.astype(np.intp)
    finally:
        faiss.omp_set_num_threads(threads)
    srt = np.sort(idx, axis=1)
    bad = (idx < 0).any(axis=1) | (srt[:, 1:] == srt[:, :-1]).any(axis=1)
    bad |= (idx == np.arange(n)[:, None]).any(axis=1)
    if bad.any():
        nn = NearestNeighbors(n_neighbors=K + 1).fit(X)
        found = nn.kneighbors(X[bad], return_distance=False)
        rows = np.flatnonzero(bad)
        for r, cand in zip(rows, found, strict=True):
            idx[r] = cand[cand != r][:K]
    return idx


def _not_self(found: np.ndarray) -> np.ndarray:
    """Mask keeping all but one entry of each row of ``found`` (n × (K + 1), a search of the
    data set itself, nearest first): the row's own sample if found, otherwise the last."""
    n, m = found.shape
    own = found == np.arange(n)[:, None]
    drop = np.where(own.any(axis=1), own.argmax(axis=1), m - 1)
    keep = np.ones_like(own)
    keep[np.arange(n), drop] = False
    return keep


def _row_distances(X: np.ndarray, idx: np.ndarray, block: int = 64) -> np.ndarray:
    """``dist[i, j] = ||x_i − x_idx[i, j]||`` in float64, from differences (no cancellation);
    small row blocks keep the ``block × K × p`` differences in cache (3× faster at
    ``p = 784`` than blocks of 1 024 rows)."""
    dist = np.empty(idx.shape)
    for a in range(0, X.shape[0], block):
        diff = X[a : a + block, None, :] - X[idx[a : a + block]]
        dist[a : a + block] = np.sqrt(np.einsum("ijk,ijk->ij", diff, diff))
    return dist


def knn_indices(
    X: np.ndarray, n_neighbors: int = 5, *, algorithm: str = "auto"
) -> tuple[np.ndarray, np.ndarray]:
    """Indices and Euclidean distances of each sample's ``n_neighbors`` nearest others.

    The sample itself is excluded even when duplicates exist. Returns ``(idx, dist)`` of
    shape ``n × k``, nearest first (float64 distances). ``algorithm``: ``"exact"``,
    ``"approximate"`` or ``"auto"`` (see the module docstring).
    """
    X = np.asarray(X, dtype=np.float64)
    n = X.shape[0]
    k = int(n_neighbors)
    if not 1 <= k <= n - 1:
        raise ValueError(f"n_neighbors must be in [1, n_samples-1] = [1, {n - 1}]; got {k}")
    exact = resolve_algorithm(n, algorithm) == "exact"
    if exact or n <= NND_MIN_SAMPLES or k + 2 > n - 1:
        nn = NearestNeighbors(n_neighbors=k + 1).fit(X)
        dist, idx = nn.kneighbors(X)
    else:
        idx = _approximate_candidates(X, k)
        dist = _row_distances(X, idx)
        order = np.lexsort((idx, dist), axis=1)[:, : k + 1]
        idx = np.take_along_axis(idx, order, axis=1)
        dist = np.take_along_axis(dist, order, axis=1)
    # drop the sample itself if found, otherwise the farthest returned neighbour
    keep = _not_self(idx)
    return idx[keep].reshape(n, k), dist[keep].reshape(n, k)


def knn_graph(
    X: np.ndarray,
    n_neighbors: int = 5,
    *,
    weight: str = "binary",
    sigma: float | None = None,
    algorithm: str = "auto",
    neighbors: tuple[np.ndarray, np.ndarray] | None = None,
) -> sp.csr_matrix:
    """Symmetric kNN affinity matrix ``S`` (CSR, no self-loops); see module docstring.

    ``algorithm`` is the neighbour search (:func:`knn_indices`); a graph spec that sets it
    keys the workflow's graph cache by it (``ufs.registry.params_id`` of the spec).
    ``neighbors``: ``(idx, dist)`` from a :func:`knn_indices` search the caller already ran
    (``n × n_neighbors``, nearest first), used instead of searching again."""
    if neighbors is None:
        idx, dist = knn_indices(X, n_neighbors, algorithm=algorithm)
    else:
        idx, dist = (np.asarray(a) for a in neighbors)
        if idx.shape != (X.shape[0], n_neighbors) or dist.shape != idx.shape:
            raise ValueError(
                f"neighbors must be two {X.shape[0]} × {n_neighbors} arrays (idx, dist); "
                f"got {idx.shape} and {dist.shape}"
            )
    n, k = idx.shape
    rows = np.repeat(np.arange(n), k)
    cols = idx.ravel()
    if weight == "binary":
        vals = np.ones(rows.size)
    elif weight == "heat":
        s = float(np.mean(dist)) if sigma is None else float(sigma)
        if not s > 0:
            s = 1.0  # every neighbour coincides with its point: all weights are 1
        vals = np.exp(-(dist.ravel() ** 2) / (2.0 * s * s))
    elif weight == "cosine":
        Xn = np.asarray(X, dtype=np.float64)
        norms = np.linalg.norm(Xn, axis=1)
        norms[norms == 0] = 1.0
        vals = np.maximum(
            np.einsum("ij,ij->i", Xn[rows], Xn[cols]) / (norms[rows] * norms[cols]), 0
        )
    else:
        raise ValueError(f"weight must be 'binary', 'heat' or 'cosine'; got {weight!r}")
    S = sp.csr_matrix((vals, (rows, cols)), shape=(n, n))
    S = S.maximum(S.T).tocsr()  # union symmetrisation
    S.setdiag(0)
    S.eliminate_zeros()
    S.sort_indices()
    return S


def degree(S) -> np.ndarray:
    """Degree vector ``d = S 1``."""
    return np.asarray(S.sum(axis=1)).ravel()


def laplacian(S, *, normalized: bool = False):
    """``L = D − S`` or the normalised ``I − D^{-1/2} S D^{-1/2}`` (isolated nodes: 0 row).

    Sparse in, sparse out; dense in, dense out.
    """
    d = degree(S) if sp.issparse(S) else np.asarray(S).sum(axis=1)
    if not normalized:
        if sp.issparse(S):
            return (sp.diags(d) - S).tocsr()
        return np.diag(d) - S
    with np.errstate(divide="ignore"):
        dinv = np.where(d > 0, 1.0 / np.sqrt(d), 0.0)
    if sp.issparse(S):
        Dm = sp.diags(dinv)
        return (sp.diags((d > 0).astype(float)) - Dm @ S @ Dm).tocsr()
    return np.diag((d > 0).astype(float)) - dinv[:, None] * S * dinv[None, :]
