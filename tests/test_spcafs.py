import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

from tests.conftest import planted_clusters
from ufs import standardize
from ufs.datasets.simulations import golfs_example
from ufs.linalg import row_norms
from ufs.methods._reweighted_eigen import LowRankSym, _smallest
from ufs.methods.spcafs import SPCAFS


def total_scatter(X):
    """S_t = Xᵀ H X with the centring matrix H formed literally (Eq. 18)."""
    n = X.shape[0]
    H = np.eye(n) - np.ones((n, n)) / n
    return X.T @ H @ X


def eq23(St, W, gamma, p, eps):
    return -np.trace(W.T @ St @ W) + gamma * np.sum((np.sum(W**2, axis=1) + eps) ** (p / 2))


def record(est, X):
    Ws = []
    est.set_params(callback=lambda t, W, g, objective: Ws.append(W.copy()))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        est.fit(X)
    return Ws


@pytest.fixture(scope="module")
def small():
    X, y, signal = planted_clusters(n_per=20, n_clusters=3, n_signal=5, n_noise=25, seed=1)
    return standardize(X).X, y, signal


@pytest.mark.parametrize("p", [1.0, 0.5])
@pytest.mark.parametrize("gamma", [1e-2, 1.0, 1e2, 1e4])
def test_objective_non_increasing_theorem2(small, p, gamma):
    X, _, _ = small
    est = SPCAFS(5, 3, gamma=gamma, p=p, max_iter=40, solver="dense")
    Ws = record(est, X)
    St = total_scatter(X)
    f = np.array([eq23(St, W, gamma, p, est.eps) for W in Ws])
    np.testing.assert_allclose(est.objective_, f, rtol=1e-9, atol=1e-9)
    assert f.size >= 2
    assert np.all(np.diff(f) <= 1e-9 * np.abs(f[1:]) + 1e-12)


@pytest.mark.parametrize("p", [1.0, 0.5])
def test_orthonormal_every_iteration_and_m_default(small, p):
    X, _, _ = small
    est = SPCAFS(5, 3, gamma=10.0, p=p, max_iter=20)
    Ws = record(est, X)
    assert len(Ws) == est.n_iter_
    for W in Ws:
        assert W.shape == (X.shape[1], 2)  # m = c - 1 (§6.1.2)
        np.testing.assert_allclose(W.T @ W, np.eye(2), atol=1e-10)


def test_first_iterate_is_pca(small):
    """With G = I (Algorithm 1 line 1) the first W spans the top-m principal axes."""
    X, _, _ = small
    Ws = record(SPCAFS(5, 4, gamma=3.0, max_iter=1), X)
    _, _, Vt = np.linalg.svd(X - X.mean(0), full_matrices=False)
    P = Vt[:3].T
    np.testing.assert_allclose(Ws[0] @ Ws[0].T, P @ P.T, atol=1e-8)


@pytest.mark.parametrize("p", [1.0, 0.5])
def test_converged_solution_is_fixed_point(small, p):
    """At convergence W holds the m smallest eigenvectors of −S_t + γG(W) (Eq. 25)."""
    X, _, _ = small
    gamma = 5.0
    est = SPCAFS(5, 3, gamma=gamma, p=p, tol=1e-12, max_iter=500)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        est.fit(X)
    W = est.W_
    g = (p / 2) * (row_norms(W, squared=True) + est.eps) ** ((p - 2) / 2)
    A = -total_scatter(X) + gamma * np.diag(g)
    lam = np.linalg.eigvalsh(A)
    R = W.T @ A @ W
    np.testing.assert_allclose(np.sort(np.linalg.eigvalsh(R)), lam[:2], rtol=1e-5, atol=1e-5)


def test_scores_are_row_norms_and_ranking(small):
    X, _, _ = small
    est = SPCAFS(5, 3, gamma=1.0).fit(X)
    np.testing.assert_allclose(est.scores_, row_norms(est.W_))
    assert np.all(np.diff(est.scores_[est.feature_order_]) <= 0)
    assert est.support_.sum() == 5


def test_deterministic(small):
    X, _, _ = small
    a = SPCAFS(5, 3, gamma=1e2, p=0.5).fit(X)
    b = SPCAFS(5, 3, gamma=1e2, p=0.5).fit(X)
    np.testing.assert_array_equal(a.feature_order_, b.feature_order_)
    np.testing.assert_array_equal(a.scores_, b.scores_)


@pytest.mark.parametrize("gamma", [1e-2, 1e2, 1e4])
def test_lowrank_eigensolver_matches_dense(gamma):
    rng = np.random.default_rng(3)
    n, d, m = 12, 200, 4
    Xc = rng.normal(size=(n, d))
    Xc -= Xc.mean(0)
    M = LowRankSym.from_factor(Xc.T, -np.eye(n))
    np.testing.assert_allclose(M.toarray(), -Xc.T @ Xc, atol=1e-9)
    diag = gamma * np.exp(2 * rng.normal(size=d))
    l1, V1 = _smallest(M, diag, m, seed=0)
    l2, V2 = _smallest(M.toarray(), diag, m, seed=0)
    np.testing.assert_allclose(l1, l2, rtol=1e-9, atol=1e-9 * np.abs(l2).max())
    np.testing.assert_allclose(V1 @ V1.T, V2 @ V2.T, atol=1e-8)


@pytest.mark.parametrize("p", [1.0, 0.5])
def test_lowrank_path_matches_dense_path_when_d_much_larger_than_n(p):
    data = golfs_example(1, n_per_cluster=6, n_clusters=4, n_features=200, random_state=2)
    X = standardize(data.X).X  # 24 × 200
    dense = SPCAFS(10, 4, gamma=1.0, p=p, solver="dense", tol=1e-10).fit(X)
    low = SPCAFS(10, 4, gamma=1.0, p=p, solver="lowrank", tol=1e-10).fit(X)
    assert dense.n_iter_ == low.n_iter_
    np.testing.assert_allclose(low.objective_, dense.objective_, rtol=1e-8)
    np.testing.assert_allclose(low.scores_, dense.scores_, rtol=1e-6, atol=1e-9)
    np.testing.assert_array_equal(low.feature_order_[:50], dense.feature_order_[:50])


@pytest.mark.parametrize("p", [1.0, 0.5])
def test_planted_features_golfs_example1(p):
    """golfs_example(1): 10 planted of 1000 features; random gets 0.1 / 0.3 in top 10 / 30."""
    data = golfs_example(1)
    X = standardize(data.X).X
    est = SPCAFS(10, 5, gamma=1.0, p=p).fit(X)
    assert est.solver_ == "lowrank"
    top10 = np.isin(est.feature_order_[:10], data.true_features).sum()
    top30 = np.isin(est.feature_order_[:30], data.true_features).sum()
    assert top10 >= 9 and top30 == 10


def test_convergence_warning_and_validation(small):
    X, _, _ = small
    with pytest.warns(ConvergenceWarning):
        est = SPCAFS(5, 3, gamma=1e2, max_iter=2, tol=0).fit(X)
    assert not est.converged_ and est.n_iter_ == 2
    with pytest.raises(ValueError, match="p must be"):
        SPCAFS(5, 3, p=1.5).fit(X)
    with pytest.raises(ValueError, match="gamma"):
        SPCAFS(5, 3, gamma=0).fit(X)
    with pytest.raises(ValueError, match="solver"):
        SPCAFS(5, 3, solver="qr").fit(X)


def test_raw_variant_fits_the_data_as_given_through_the_workflow_step():
    """``spcafs_raw`` (fixed ``input_space="raw"``): the fit step hands it the raw matrix
    (centred inside, Eq. 18), so its ranking is SPCAFS's on the raw data, not on z-scores;
    with features of very different variances the two readings rank differently."""
    from ufs.pipeline.steps import _fit_task
    from ufs.preprocessing import standardize
    from ufs.registry import get_method

    rng = np.random.default_rng(3)
    y = np.repeat(np.arange(3), 30)
    X = rng.normal(size=(90, 12)) * np.geomspace(0.1, 10, 12)
    X[:, 1] += 2.0 * y  # a small-variance informative feature
    d = {"X": standardize(X).X, "X_raw": X, "y": y}
    params = get_method("spcafs_raw").defaults
    arrays, _ = _fit_task(d, None, "spcafs_raw", params, [None], 0)
    raw = SPCAFS(n_features_to_select=1, n_clusters=3, **params).fit(X)
    std = SPCAFS(n_features_to_select=1, n_clusters=3, **params).fit(d["X"])
    np.testing.assert_array_equal(arrays["rank|feature_order"], raw.feature_order_)
    assert not np.array_equal(raw.feature_order_, std.feature_order_)
    with pytest.raises(ValueError, match="input_space"):
        SPCAFS(n_clusters=3, input_space="whitened").fit(X)
