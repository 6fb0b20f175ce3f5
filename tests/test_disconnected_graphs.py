"""Graph methods on a disconnected kNN graph: the iterative eigen path gives what
the dense path gives, and the component count is in the fitted facts.

Before issue 25, MCFS above 200 samples used plain Lanczos, which returned some of the
repeated unit eigenvalues of a disconnected graph and then smaller ones instead of the
rest: its selection differed from the dense path's. Every graph method's eigen-step now
goes through :mod:`ufs.eigen` (per component, trivial pairs in closed form, certified
Lanczos), so both paths agree.
"""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

import ufs.methods._optimal_graph as og
import ufs.methods.fsasl as fsasl_mod
import ufs.methods.mcfs as mcfs_mod
import ufs.methods.ndfs as ndfs_mod
import ufs.methods.sf2sog as sf2sog_mod
from ufs.eigen import graph_components
from ufs.graph import knn_graph, laplacian
from ufs.methods import FSASL, MCFS, NDFS, SF2SOG, SOGFS

N_PARTS = 5


def _blobs(n_per: int = 50, p: int = 10, seed: int = 0) -> np.ndarray:
    """``N_PARTS`` far-apart blobs (a 5-NN graph with one component per blob); two
    informative features carry the blob structure, the rest is noise."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(scale=30.0, size=(N_PARTS, 2))
    X = rng.normal(size=(N_PARTS * n_per, p))
    X[:, :2] += np.repeat(centres, n_per, axis=0)
    return X[rng.permutation(X.shape[0])]


@pytest.fixture(scope="module")
def X() -> np.ndarray:
    X = _blobs()
    assert graph_components(knn_graph(X, 5, weight="heat"))[0] == N_PARTS
    return X


def _force(monkeypatch, module, name: str, value) -> None:
    monkeypatch.setattr(module, name, value)


def test_mcfs_sparse_path_equals_dense_path(X, monkeypatch):
    h, c = 4, N_PARTS + 2  # c + 1 > components: the whole unit block is in the embedding
    assert X.shape[0] > mcfs_mod.DENSE_LIMIT  # the default is the iterative path
    sparse = MCFS(h, n_clusters=c).fit(X)
    lam, _ = mcfs_mod.spectral_embedding(knn_graph(X, 5, weight="heat"), c)
    assert np.sum(lam < 1e-10) == N_PARTS - 1  # every non-trivial unit eigenvalue, exactly
    _force(monkeypatch, mcfs_mod, "DENSE_LIMIT", 10**9)
    dense = MCFS(h, n_clusters=c).fit(X)
    np.testing.assert_array_equal(sparse.selected_features_, dense.selected_features_)
    np.testing.assert_allclose(sparse.scores_, dense.scores_, rtol=0, atol=1e-8)
    assert sparse.n_graph_components_ == N_PARTS


def test_ndfs_spectral_init_sparse_equals_dense(X, monkeypatch):
    L = laplacian(knn_graph(X, 5, weight="binary"), normalized=True)
    _force(monkeypatch, ndfs_mod, "DENSE_LIMIT", 0)
    F_sparse = ndfs_mod.spectral_indicator(L, N_PARTS, 0)
    _force(monkeypatch, ndfs_mod, "DENSE_LIMIT", 10**9)
    F_dense = ndfs_mod.spectral_indicator(L, N_PARTS, 0)
    np.testing.assert_allclose(F_sparse, F_dense, rtol=0, atol=1e-12)
    # one eigenvalue 1 per component: the init separates the components exactly
    labels = graph_components(L)[1]
    assert (
        len({(lab, int(np.argmax(row))) for lab, row in zip(labels, F_dense, strict=True)})
        == N_PARTS
    )
    est = NDFS(4, n_clusters=N_PARTS, max_iter=5, random_state=0).fit(X)
    assert est.n_graph_components_ == N_PARTS


def test_sogfs_iterative_eigen_step_equals_dense(X, monkeypatch):
    kw = dict(n_clusters=N_PARTS, max_iter=8, random_state=0)
    dense = SOGFS(4, **kw).fit(X)
    _force(monkeypatch, og, "DENSE_NODES", 5)  # per-component LU shift-invert Lanczos
    sparse = SOGFS(4, **kw).fit(X)
    # W's rows collapse to norms 1 and 0 here: the order inside a tie is round-off, so the
    # row norms are compared, not the ranking
    np.testing.assert_allclose(
        np.linalg.norm(sparse.W_, axis=1), np.linalg.norm(dense.W_, axis=1), atol=1e-8
    )
    np.testing.assert_allclose(sparse.objective_, dense.objective_, rtol=1e-8)
    assert sparse.n_graph_components_ == dense.n_graph_components_ >= N_PARTS


def test_fsasl_iterative_eigen_step_equals_dense(X, monkeypatch):
    kw = dict(n_clusters=N_PARTS, max_iter=4, lasso_solver="lars")
    dense = FSASL(4, **kw).fit(X)
    _force(monkeypatch, fsasl_mod, "DENSE_EIGEN_NODES", 5)  # certified Lanczos per component
    sparse = FSASL(4, **kw).fit(X)
    np.testing.assert_array_equal(sparse.feature_order_, dense.feature_order_)
    np.testing.assert_allclose(sparse.objective_, dense.objective_, rtol=1e-8)
    assert sparse.n_graph_components_ == dense.n_graph_components_ >= 1


def test_sf2sog_iterative_eigen_steps_equal_dense(X, monkeypatch):
    kw = dict(n_clusters=N_PARTS, max_iter=5, random_state=0)
    with pytest.warns(ConvergenceWarning):
        dense = SF2SOG(4, **kw).fit(X)
    real = sf2sog_mod.extreme_eigenvectors

    def lanczos(A, m, **k):
        k["dense_limit"] = 0
        return real(A, m, **k)

    _force(monkeypatch, sf2sog_mod, "extreme_eigenvectors", lanczos)
    with pytest.warns(ConvergenceWarning):
        sparse = SF2SOG(4, **kw).fit(X)
    # the selected rows tie at norm 1: the set and the objective are compared
    assert set(sparse.selected_features_) == set(dense.selected_features_)
    np.testing.assert_allclose(sparse.objective_, dense.objective_, rtol=1e-8)
    assert dense.n_graph_components_ == N_PARTS
