"""Approximate kNN search for large n ("Scale"): the NN-descent path of
``ufs.graph.knn_indices`` — recall, determinism, the ``auto`` switch, the graph
conventions it shares with exact search, and the workflow's graph cache key."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

from ufs import graph
from ufs.graph import knn_graph, knn_indices, resolve_algorithm
from ufs.pipeline import steps
from ufs.registry import params_id

pytest.importorskip("faiss")

ROOT = Path(__file__).resolve().parents[1]


def planted_mixture(n=5000, p=50, n_clusters=10, rank=10, seed=0):
    """Gaussian mixture on a low-rank subspace plus isotropic noise, z-scored."""
    rng = np.random.default_rng(seed)
    centers = rng.normal(scale=3.0, size=(n_clusters, rank))
    z = centers[rng.integers(n_clusters, size=n)] + rng.normal(size=(n, rank))
    X = z @ rng.normal(size=(rank, p)) / np.sqrt(rank) + 0.5 * rng.normal(size=(n, p))
    return (X - X.mean(0)) / X.std(0)


@pytest.fixture(scope="module")
def mixture():
    X = planted_mixture()
    k = 10
    return X, k, knn_indices(X, k, algorithm="exact"), knn_indices(X, k, algorithm="approximate")


def _recall(a, b):
    return np.mean([len(set(r) & set(s)) / len(r) for r, s in zip(a, b, strict=True)])


def test_approximate_recall_on_planted_mixture(mixture):
    X, k, (ie, de), (ia, da) = mixture
    assert _recall(ia, ie) >= 0.95
    assert _recall(ia[:, :5], ie[:, :5]) >= 0.95
    # same conventions as the exact path: no self, float64 distances, nearest first
    assert not (ia == np.arange(len(X))[:, None]).any()
    assert da.dtype == np.float64 and np.all(np.diff(da, axis=1) >= 0)
    np.testing.assert_allclose(da, np.linalg.norm(X[:, None, :] - X[ia], axis=2), rtol=1e-12)
    # where the neighbour sets agree, the distances are the exact ones
    same = np.all(np.sort(ia, axis=1) == np.sort(ie, axis=1), axis=1)
    assert same.mean() > 0.8
    np.testing.assert_allclose(da[same], de[same], rtol=1e-12)


def test_approximate_is_deterministic(mixture):
    X, k, _, (ia, da) = mixture
    ib, db = knn_indices(X, k, algorithm="approximate")
    assert np.array_equal(ia, ib) and np.array_equal(da, db)
    g1 = knn_graph(X[:2000], 5, weight="heat", algorithm="approximate")
    g2 = knn_graph(X[:2000], 5, weight="heat", algorithm="approximate")
    assert (g1 != g2).nnz == 0


@pytest.mark.parametrize("weight", ["binary", "heat", "cosine"])
def test_approximate_graph_follows_the_exact_conventions(weight):
    X = planted_mixture(n=1500, p=20, seed=1)
    Sa = knn_graph(X, 5, weight=weight, algorithm="approximate")
    Se = knn_graph(X, 5, weight=weight, algorithm="exact")
    assert sp.isspmatrix_csr(Sa) and Sa.has_sorted_indices
    assert abs(Sa - Sa.T).max() == 0 and Sa.diagonal().max() == 0
    assert np.all(np.diff(Sa.indptr) >= 5)
    # on a 1 500-point problem NN-descent finds (nearly) every exact edge, and the
    # weights on shared edges are the exact path's
    shared = Sa.multiply(Se > 0)
    assert shared.nnz >= 0.98 * Se.nnz
    np.testing.assert_allclose(shared.data, Se.multiply(Sa > 0).data, rtol=1e-12)


def test_graph_from_given_neighbors_equals_the_searched_graph():
    X = planted_mixture(n=300, p=6, seed=3)
    idx, dist = knn_indices(X, 6)
    for weight in ("binary", "heat", "cosine"):
        given = knn_graph(X, 5, weight=weight, neighbors=(idx[:, :5], dist[:, :5]))
        assert (given != knn_graph(X, 5, weight=weight)).nnz == 0
    with pytest.raises(ValueError, match="300 × 5"):
        knn_graph(X, 5, neighbors=(idx, dist))


def test_approximate_excludes_self_among_duplicates():
    rng = np.random.default_rng(2)
    X = np.repeat(rng.normal(size=(200, 8)), 3, axis=0)  # every point thrice
    idx, dist = knn_indices(X, 4, algorithm="approximate")
    assert not (idx == np.arange(len(X))[:, None]).any()
    assert np.all(dist[:, :2] == 0)  # the two copies come first


def test_auto_is_exact_below_the_threshold_and_approximate_above(monkeypatch):
    X = planted_mixture(n=800, p=15, seed=3)
    assert len(X) <= graph.EXACT_MAX_SAMPLES
    assert resolve_algorithm(len(X)) == "exact"
    assert resolve_algorithm(graph.EXACT_MAX_SAMPLES + 1) == "approximate"
    auto = knn_graph(X, 5, weight="heat")
    assert (auto != knn_graph(X, 5, weight="heat", algorithm="exact")).nnz == 0

    monkeypatch.setattr(graph, "EXACT_MAX_SAMPLES", 500)
    calls = []
    real = graph._approximate_candidates
    monkeypatch.setattr(
        graph, "_approximate_candidates", lambda X, k: calls.append(k) or real(X, k)
    )
    auto = knn_graph(X, 5, weight="heat")
    assert calls == [5]
    assert (auto != knn_graph(X, 5, weight="heat", algorithm="approximate")).nnz == 0
    assert len(calls) == 2
    knn_graph(X, 5, algorithm="exact")  # an explicit "exact" wins over the size rule
    assert len(calls) == 2


def test_small_problems_and_incomplete_rows_are_searched_exactly(monkeypatch):
    X = planted_mixture(n=graph.NND_MIN_SAMPLES, p=6, seed=5)
    exact = knn_indices(X, 5, algorithm="exact")
    small = knn_indices(X, 5, algorithm="approximate")  # too few points for NN-descent
    assert all(np.array_equal(a, b) for a, b in zip(small, exact, strict=True))
    # NN-descent (more than HNSW_MAX_FEATURES features)
    X = planted_mixture(n=400, p=graph.HNSW_MAX_FEATURES + 2, seed=5)
    exact = knn_indices(X, 5, algorithm="exact")
    assert np.array_equal(
        knn_indices(X, X.shape[0] - 2, algorithm="approximate")[0][:, :5], exact[0]
    )

    import faiss

    real = faiss.vector_to_array

    def damaged(v):  # NN-descent leaving holes, repeats and a self-loop in three rows
        out = real(v).copy()
        K = out.size // X.shape[0]
        out[3 * K] = -1
        out[7 * K + 1] = out[7 * K]
        out[11 * K] = 11
        return out

    monkeypatch.setattr(faiss, "vector_to_array", damaged)
    idx, dist = knn_indices(X, 5, algorithm="approximate")
    for r in (3, 7, 11):
        np.testing.assert_array_equal(idx[r], exact[0][r])
        np.testing.assert_allclose(dist[r], exact[1][r], rtol=1e-12)


def test_unknown_algorithm_is_rejected():
    with pytest.raises(ValueError, match="algorithm"):
        knn_indices(np.zeros((5, 2)), 2, algorithm="hnsw")


def test_graph_cache_key_includes_the_algorithm(tmp_path, monkeypatch):
    spec = {"n_neighbors": 5, "weight": "binary", "input_space": "standardized"}
    ids = {params_id({**spec, "algorithm": a}) for a in ("auto", "exact", "approximate")}
    assert len(ids) == 3 and params_id(spec) not in ids
    X = planted_mixture(n=1500, p=20, seed=4)
    monkeypatch.setattr(steps, "load_data", lambda _: {"X": X, "X_raw": X})
    for a in ("exact", "approximate"):
        steps.build_graph("unused", {**spec, "algorithm": a}, tmp_path / f"{a}.npz")
        expected = knn_graph(X, 5, weight="binary", algorithm=a)
        assert (sp.load_npz(tmp_path / f"{a}.npz") != expected).nnz == 0


def test_faiss_is_imported_only_by_the_approximate_path():
    probe = (
        "import sys, numpy as np; from ufs.graph import knn_graph; "
        "X = np.random.default_rng(0).normal(size=(300, 5)); knn_graph(X, 5); "
        "a = 'faiss' in sys.modules; knn_graph(X, 5, algorithm='approximate'); "
        "print(a, 'faiss' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert out.stdout.split() == ["False", "True"]


@pytest.mark.parametrize("p", [2, 5, graph.HNSW_MAX_FEATURES])
def test_low_dimensional_data_is_searched_by_hnsw(p, monkeypatch):
    """At most HNSW_MAX_FEATURES features: an HNSW graph (faster there than NN-descent
    for the same recall, docs/performance.md), with the exact path's conventions."""
    import faiss

    built = []
    real = faiss.IndexHNSWFlat
    monkeypatch.setattr(faiss, "IndexHNSWFlat", lambda d, m: built.append(d) or real(d, m))
    X = planted_mixture(n=3000, p=p, rank=min(p, 10), seed=3)
    ie, de = knn_indices(X, 5, algorithm="exact")
    ia, da = knn_indices(X, 5, algorithm="approximate")
    assert built == [p]
    # recall counted by distance (ties at the k-th distance are not misses)
    assert np.mean(da <= de[:, -1:] * (1 + 1e-12)) >= 0.99
    assert not (ia == np.arange(len(X))[:, None]).any()
    assert np.all(np.diff(da, axis=1) >= 0)
    np.testing.assert_allclose(da, np.linalg.norm(X[:, None, :] - X[ia], axis=2), rtol=1e-12)
    again = knn_indices(X, 5, algorithm="approximate")
    assert np.array_equal(again[0], ia) and np.array_equal(again[1], da)


def test_hnsw_rows_with_holes_are_searched_exactly(monkeypatch):
    import faiss

    X = planted_mixture(n=400, p=4, rank=4, seed=6)
    exact = knn_indices(X, 5, algorithm="exact")

    class Holed(faiss.IndexHNSWFlat):
        def search(self, x, k):  # -1 (too few results) in row 3, a repeat in row 7
            D, I = super().search(x, k)
            I[3, 2] = -1
            I[7, 2] = I[7, 1]
            return D, I

    monkeypatch.setattr(faiss, "IndexHNSWFlat", Holed)
    idx, dist = knn_indices(X, 5, algorithm="approximate")
    for r in (3, 7):
        np.testing.assert_array_equal(idx[r], exact[0][r])
        np.testing.assert_allclose(dist[r], exact[1][r], rtol=1e-12)
