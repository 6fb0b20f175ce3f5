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
``"approximate"`` is an HNSW index (faiss ``IndexHNSWFlat``, float32 search, the returned
neighbours' distances recomputed in float64 and re-sorted, so weights follow the exact
path's conventions); ``"auto"`` (default) is exact for ``n ≤ EXACT_MAX_SAMPLES`` and
approximate above — brute force costs O(n²p): at n = 70 000, p = 784 about 140 CPU s on
one core against about 20 s for HNSW, recall@10 0.97 (``benchmarks/knn_scale.py``,
``docs/benchmarks.md``). The approximate path is deterministic: faiss draws HNSW levels
from a fixed internal seed and the index is built on one thread (a multi-threaded build
inserts in a racy order); the search itself may use threads. faiss is imported only when
the approximate path runs.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from sklearn.neighbors import NearestNeighbors

__all__ = ["knn_indices", "knn_graph", "laplacian", "degree", "EXACT_MAX_SAMPLES"]

#: ``algorithm="auto"`` searches exactly up to this many samples, approximately above.
#: Every scikit-feature benchmark dataset lies below it, so their graphs are unchanged.
EXACT_MAX_SAMPLES = 20_000
#: HNSW parameters of the approximate path (graph degree, build and search beam widths).
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


def _search_hnsw(X: np.ndarray, k: int) -> np.ndarray:
    import faiss  # lazy: only large problems pay for it

    Xf = np.ascontiguousarray(X, dtype=np.float32)
    index = faiss.IndexHNSWFlat(Xf.shape[1], HNSW_M)
    index.hnsw.efConstruction = HNSW_EF_CONSTRUCTION
    index.hnsw.efSearch = max(HNSW_EF_SEARCH, k)
    threads = faiss.omp_get_max_threads()
    faiss.omp_set_num_threads(1)  # a single-threaded build is deterministic
    try:
        index.add(Xf)
    finally:
        faiss.omp_set_num_threads(threads)
    idx = index.search(Xf, k)[1]
    bad = (idx < 0).any(axis=1)  # too few neighbours reached: search those rows exactly
    if bad.any():
        idx[bad] = NearestNeighbors(n_neighbors=k).fit(X).kneighbors(X[bad], return_distance=False)
    return idx.astype(np.intp)


def _row_distances(X: np.ndarray, idx: np.ndarray, block: int = 1024) -> np.ndarray:
    """``dist[i, j] = ||x_i − x_idx[i, j]||`` in float64, from differences (no cancellation)."""
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
    if resolve_algorithm(n, algorithm) == "exact":
        nn = NearestNeighbors(n_neighbors=k + 1).fit(X)
        dist, idx = nn.kneighbors(X)
    else:
        idx = _search_hnsw(X, k + 1)
        dist = _row_distances(X, idx)
        order = np.lexsort((idx, dist), axis=1)
        idx = np.take_along_axis(idx, order, axis=1)
        dist = np.take_along_axis(dist, order, axis=1)
    own = idx == np.arange(n)[:, None]
    # drop the sample itself if found, otherwise the farthest returned neighbour
    drop = np.where(own.any(axis=1), own.argmax(axis=1), k)
    keep = np.ones_like(own)
    keep[np.arange(n), drop] = False
    return idx[keep].reshape(n, k), dist[keep].reshape(n, k)


def knn_graph(
    X: np.ndarray,
    n_neighbors: int = 5,
    *,
    weight: str = "binary",
    sigma: float | None = None,
    algorithm: str = "auto",
) -> sp.csr_matrix:
    """Symmetric kNN affinity matrix ``S`` (CSR, no self-loops); see module docstring.

    ``algorithm`` is the neighbour search (:func:`knn_indices`); a graph spec that sets it
    keys the workflow's graph cache by it (``ufs.registry.params_id`` of the spec)."""
    idx, dist = knn_indices(X, n_neighbors, algorithm=algorithm)
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
