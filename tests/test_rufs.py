import numpy as np
import pytest
import scipy.optimize as so
from sklearn.exceptions import ConvergenceWarning

from tests.test_ndfs import golfs_permuted
from ufs.graph import knn_graph, laplacian
from ufs.methods._nonneg_spectral import kmeans_indicator
from ufs.methods.rufs import RUFS, _Blocks, _lbfgs_block

# -- default solver: the paper's model (C ≥ 0), the authors' block projected L-BFGS -----


@pytest.mark.parametrize("params", [{}, {"nu": 1e2, "beta": 1e2}, {"alpha": 1e-2}])
def test_lbfgs_constraints_objective_and_stopping_rule(params):
    X, _ = golfs_permuted()
    seen = []
    est = RUFS(
        10, 5, random_state=0, callback=lambda t, Y, C, W: seen.append((Y.min(), C.min())), **params
    )
    est.fit(X)
    assert len(seen) == est.n_iter_ and min(min(s) for s in seen) >= 0  # Y ≥ 0 and C ≥ 0
    o = est.objective_
    # every accepted block step passes an Armijo test (not a proof: frozen C-weights)
    assert np.all(np.diff(o) <= 1e-12 * np.abs(o[:-1])) and o[-1] < o[0]
    L = laplacian(knn_graph(X, 5), normalized=True)
    assert est.objective(L, X, est.Y_, est.C_, est.W_) == pytest.approx(o[-1], rel=1e-12)
    # the authors' test: stop at the first round whose projected-gradient norm is small
    assert est.converged_ and est.grad_norm_[-1] <= est.grad_tol_
    assert np.all(est.grad_norm_[:-1] > est.grad_tol_)
    assert est.inner_steps_.shape == (est.n_iter_, 3) and est.inner_capped_ == 0


def test_lbfgs_max_iter_warns():
    X, _ = golfs_permuted()
    with pytest.warns(ConvergenceWarning, match="did not converge in 1 rounds"):
        est = RUFS(10, 5, random_state=0, tol=1e-9, max_iter=1).fit(X)
    assert est.n_iter_ == 1 and not est.converged_


def test_block_gradients_match_finite_differences(rng):
    X = rng.normal(size=(30, 6))
    Y = rng.uniform(0.1, 1, size=(30, 3))
    C = rng.uniform(0.1, 1, size=(6, 3))
    W = rng.normal(size=(6, 3))
    L = laplacian(knn_graph(X, 5), normalized=True)
    blocks = _Blocks(X, 0.7 * L, 1.3, 0.4, 0.1, 1e-2, 5.0, 0.0, frozen_weights=False)
    for (fun, grad), x in ((blocks.w(Y), W), (blocks.y(C, W), Y), (blocks.c(Y, C), C)):
        fd = so.approx_fprime(x.ravel(), lambda v, f=fun, s=x.shape: f(v.reshape(s)), 1e-7)
        np.testing.assert_allclose(grad(x).ravel(), fd, rtol=1e-4, atol=1e-5)
    # the authors' frozen weights: exact at the block's start, a majoriser gradient after
    frozen = _Blocks(X, 0.7 * L, 1.3, 0.4, 0.1, 1e-2, 5.0, 0.0, frozen_weights=True)
    np.testing.assert_allclose(frozen.c(Y, C)[1](C), blocks.c(Y, C)[1](C), rtol=1e-14)
    C2 = 2.0 * C
    assert not np.allclose(frozen.c(Y, C)[1](C2), blocks.c(Y, C)[1](C2))


def test_projected_lbfgs_solves_nonnegative_and_plain_least_squares(rng):
    A = rng.normal(size=(40, 8))
    b = rng.normal(size=40)
    fun = lambda x: 0.5 * float(np.sum((A @ x - b) ** 2))  # noqa: E731
    grad = lambda x: A.T @ (A @ x - b)  # noqa: E731
    kw = dict(gtol=1e-10, ftol=1e-30, memory=10, max_steps=500)
    x, pg, steps, capped = _lbfgs_block(np.ones(8), fun, grad, nonneg=True, **kw)
    ref = so.nnls(A, b)[0]
    assert not capped and (ref == 0).any() and x.min() >= 0
    np.testing.assert_allclose(x, ref, atol=1e-8)
    assert np.linalg.norm(pg) <= 1e-6  # f stalls in rounding (|Δf| = 0) near 1e-7
    x, g, _, capped = _lbfgs_block(np.zeros(8), fun, grad, nonneg=False, **kw)
    np.testing.assert_allclose(x, np.linalg.lstsq(A, b, rcond=None)[0], atol=1e-8)


def test_init_default_is_seeded_one_hot_kmeans_and_arrays_are_validated():
    X, _ = golfs_permuted()
    a = RUFS(10, 5, random_state=3).fit(X)
    G0 = kmeans_indicator(X, 5, 3, offset=0.0)
    assert set(np.unique(G0)) == {0.0, 1.0} and np.all(G0.sum(axis=1) == 1)
    b = RUFS(10, 5, init=G0).fit(X)
    c = RUFS(10, 5, init=lambda X, k, rs: kmeans_indicator(X, k, rs, offset=0.0), random_state=3)
    c.fit(X)
    np.testing.assert_array_equal(a.W_, b.W_)
    np.testing.assert_array_equal(a.W_, c.W_)
    with pytest.raises(ValueError, match="non-negative"):
        RUFS(10, 5, init=-G0).fit(X)
    with pytest.raises(ValueError, match="shape"):
        RUFS(10, 5, init=G0[:, :4]).fit(X)
    with pytest.raises(ValueError, match="solver"):
        RUFS(10, 5, solver="nmf").fit(X)


def test_determinism_and_precomputed_graph():
    X, _ = golfs_permuted()
    a = RUFS(10, 5, random_state=3).fit(X)
    b = RUFS(10, 5, random_state=3).fit(X)
    g = RUFS(10, 5, random_state=3)
    c = g.fit(X, graph=knn_graph(X, **g.graph_spec()))
    np.testing.assert_array_equal(a.feature_order_, b.feature_order_)
    np.testing.assert_array_equal(a.feature_order_, c.feature_order_)


@pytest.mark.parametrize("solver, min_hits", [("lbfgs", 5), ("semi_nmf", 8)])
def test_planted_features_beat_random(solver, min_hits):
    X, true = golfs_permuted()
    est = RUFS(10, 5, beta=1e2, solver=solver, random_state=0).fit(X)
    # random selection: 0.5 expected hits in the top 10. The authors' algorithm stops
    # after 2 rounds (loose gradient threshold), so it finds fewer than semi-NMF.
    assert np.isin(est.feature_order_[:10], true).sum() >= min_hits


# -- solver="semi_nmf": the earlier variant (C free, IRLS + multiplicative Y) -----------


@pytest.mark.parametrize("params", [{}, {"nu": 1e2, "beta": 1e2}, {"alpha": 1e-2}])
def test_semi_nmf_nonnegative_monotone_orthogonal(params):
    X, _ = golfs_permuted()
    seen = []
    est = RUFS(
        10,
        5,
        solver="semi_nmf",
        random_state=0,
        callback=lambda t, Y, C, W: seen.append(Y.min()),
        **params,
    )
    est.fit(X)
    assert len(seen) == est.n_iter_ and min(seen) >= 0
    o = est.objective_
    # majorise-minimise: non-increasing up to the IRLS ε and rounding (relative 1e-9)
    assert np.all(np.diff(o) <= 1e-9 * np.abs(o[:-1]))
    assert np.linalg.norm(est.Y_.T @ est.Y_ - np.eye(5)) < 1e-2
    L = laplacian(knn_graph(X, 5), normalized=True)
    assert est.objective(L, X, est.Y_, est.C_, est.W_) == pytest.approx(o[-1], rel=1e-9)


def test_centres_are_weighted_least_squares(rng):
    X = rng.normal(size=(30, 6))
    Y = np.abs(rng.normal(size=(30, 3)))
    u = rng.uniform(0.1, 1, size=30)
    C = RUFS._centres(X, Y, u)
    grad = ((Y @ C.T - X) * u[:, None]).T @ Y  # gradient of Σ u_i ||x_i − C y_i||² / 2
    np.testing.assert_allclose(grad, 0, atol=1e-9)


def test_zero_residual_rows_take_the_zero_subgradient():
    # an all-zero sample with y_i = 0 has a zero residual row: its ℓ2,1 gradient term is the
    # subgradient 0, not 0/0 = NaN (sklearn's check_estimators_dtypes: integer data)
    X = np.array([[0, 0, 0], [1, 2, 0], [2, 1, 1], [0, 2, 2], [1, 0, 2], [2, 2, 1]], float)
    Y = np.array([[0.0, 0.0], [1, 0], [0, 1], [1, 0], [0, 1], [1, 1]])
    C = np.abs(np.arange(6.0).reshape(3, 2)) + 1
    W = np.zeros((3, 2))
    L = laplacian(knn_graph(X, 2), normalized=True)
    blocks = _Blocks(X, L, 1.0, 1.0, 0.1, 1e-4, 1e7, 1e-16)
    for g in (blocks.w(Y)[1](W), blocks.y(C, W)[1](Y), blocks.c(Y, C)[1](C)):
        assert np.isfinite(g).all()
    # rows with a positive norm: unchanged (M / ||m_i||)
    R = Y @ C.T - X
    r = np.linalg.norm(R, axis=1)
    expected = (
        (R[1:] / r[1:, None]) @ C
        + 0.1
        + 2.0 * (L @ Y)[1:]
        + Y[1:] / np.linalg.norm(Y[1:], axis=1)[:, None]
        + 1e7 * Y[1:] @ (Y.T @ Y - np.eye(2))
    )
    np.testing.assert_allclose(blocks.y(C, W)[1](Y)[1:], expected, rtol=1e-12)
    rng = np.random.default_rng(0)
    Xi = (3 * rng.uniform(size=(20, 5))).astype(np.int64)
    Xi[0] = 0
    est = RUFS(1, 2, random_state=1).fit(Xi)
    assert np.isfinite(est.scores_).all()
