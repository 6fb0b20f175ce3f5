"""SF2SOG (K-means UFS paper Eq. 36) and its ℓ2,0-constrained W-solver."""

import functools
import itertools
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.exceptions import ConvergenceWarning
from threadpoolctl import threadpool_limits

from tests.conftest import planted_clusters
from ufs import standardize
from ufs.datasets import golfs_example
from ufs.graph import knn_graph
from ufs.methods import sf2sog as sf2sog_module
from ufs.methods.sf2sog import SF2SOG, sparse_pca_ipu


@pytest.fixture(autouse=True, scope="module")
def _single_thread_blas():
    """Small matrices: threaded BLAS only adds overhead on a shared 2-core machine."""
    with threadpool_limits(1):
        yield


def _ipu(A, m, h, W0, **kw):
    return sparse_pca_ipu(lambda W: A @ W, lambda J: A[np.ix_(J, J)], A.shape[0], m, h, W0, **kw)


def _best_support_value(A, m, h):
    best = -np.inf
    for J in itertools.combinations(range(A.shape[0]), h):
        J = list(J)
        best = max(best, np.linalg.eigvalsh(A[np.ix_(J, J)])[-m:].sum())
    return best


def _feasible(p, m, J, rng):
    W = np.zeros((p, m))
    W[J] = np.linalg.qr(rng.normal(size=(len(J), m)))[0]
    return W


@pytest.mark.parametrize("seed", range(5))
def test_ipu_monotone_feasible_and_fixed_at_optimum(seed):
    rng = np.random.default_rng(seed)
    p, m, h = 8, 2, 4
    B = rng.normal(size=(p, 3))
    A = B @ B.T + 0.1 * np.diag(rng.uniform(size=p))
    W0 = _feasible(p, m, rng.choice(p, h, replace=False), rng)
    W, J, trace = _ipu(A, m, h, W0)
    np.testing.assert_allclose(W.T @ W, np.eye(m), atol=1e-10)
    assert J.size == h
    assert np.all(W[np.setdiff1d(np.arange(p), J)] == 0)
    assert np.all(np.diff(trace) >= -1e-10)
    best = _best_support_value(A, m, h)
    assert trace[-1] <= best + 1e-9
    # the brute-force optimal support is a fixed point of the support update
    Jb = min(
        itertools.combinations(range(p), h),
        key=lambda J: -np.linalg.eigvalsh(A[np.ix_(list(J), list(J))])[-m:].sum(),
    )
    Wb = np.zeros((p, m))
    Wb[list(Jb)] = np.linalg.eigh(A[np.ix_(list(Jb), list(Jb))])[1][:, -m:]
    _, Jout, tr = _ipu(A, m, h, Wb)
    assert set(Jout) == set(Jb) and tr[-1] == pytest.approx(best)


@pytest.fixture(scope="module")
def golfs200():
    d = golfs_example(1, n_features=200)
    return standardize(d.X).X, d.true_features


@pytest.fixture(scope="module")
def fitted(golfs200):
    X, _ = golfs200
    return SF2SOG(10, 5).fit(X)


def test_exactly_h_features_and_constraints(fitted, golfs200):
    X, _ = golfs200
    est = fitted
    assert est.selected_features_.size == 10 and np.unique(est.selected_features_).size == 10
    assert est.support_.sum() == 10
    W = est.W_
    np.testing.assert_allclose(W.T @ W, np.eye(5), atol=1e-10)
    nz = np.flatnonzero(np.linalg.norm(W, axis=1) > 0)
    assert nz.size <= 10 and set(nz) <= set(est.selected_features_)
    G = est.G_
    np.testing.assert_allclose(np.asarray(G.sum(axis=1)).ravel(), 1.0)
    assert G.data.min() >= 0 and G.data.max() <= 1
    S = knn_graph(X, **est.graph_spec())
    assert np.all(S.toarray()[G.toarray() > 0] > 0)  # G lives on the kNN support


def test_objective_non_increasing(golfs200):
    X, _ = golfs200
    for lam, gamma in [(1.0, 1.0), (1.0, 1e-4), (1e2, 1e-2)]:
        est = SF2SOG(10, 5, lam=lam, gamma=gamma, tol=0, max_iter=15)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)  # tol=0: may run all 15
            est.fit(X)
        obj = est.objective_
        assert obj.size >= 2
        assert np.all(np.diff(obj) <= 1e-9 * abs(obj[0])), (lam, gamma)


def test_planted_features_beat_random(fitted, golfs200):
    _, true = golfs200
    hits = np.isin(fitted.selected_features_, true).sum()
    assert hits >= 7  # random: 0.5 expected


def test_planted_clusters_small():
    X, _, signal = planted_clusters(n_per=30, n_clusters=3, n_signal=5, n_noise=35, seed=1)
    est = SF2SOG(5, 3).fit(standardize(X).X)
    assert np.isin(est.selected_features_, signal).sum() >= 4


def test_deterministic_and_precomputed_graph(fitted, golfs200):
    X, _ = golfs200
    again = SF2SOG(10, 5).fit(X)
    np.testing.assert_array_equal(again.selected_features_, fitted.selected_features_)
    g = knn_graph(X, **fitted.graph_spec())
    via_graph = SF2SOG(10, 5).fit(X, graph=g)
    np.testing.assert_array_equal(via_graph.selected_features_, fitted.selected_features_)
    # a different graph changes the model input (the graph is really used)
    other = SF2SOG(10, 5, gamma=1e4).fit(X, graph=sp.csr_matrix(knn_graph(X, 40)))
    assert other.G_.getnnz() > fitted.G_.getnnz()


def test_operator_path_matches_dense(monkeypatch):
    X, _, _ = planted_clusters(n_per=20, n_clusters=3, n_signal=4, n_noise=20, seed=2)
    X = standardize(X).X
    dense = SF2SOG(6, 3).fit(X)
    monkeypatch.setattr(sf2sog_module, "_DENSE_P_LIMIT", 0)
    op = SF2SOG(6, 3).fit(X)
    np.testing.assert_array_equal(op.selected_features_, dense.selected_features_)
    np.testing.assert_allclose(op.objective_, dense.objective_, rtol=1e-6)


def test_h_smaller_than_clusters_and_warning(golfs200):
    X, _ = golfs200
    est = SF2SOG(3, 5, max_iter=30).fit(X)
    assert est.W_.shape[1] == 3 and est.selected_features_.size == 3
    with pytest.warns(ConvergenceWarning):
        SF2SOG(10, 5, max_iter=1).fit(X)
    with pytest.raises(ValueError):
        SF2SOG(10, 5, lam=0).fit(X)


# -- audit: each block step against a generic solver, constraints per iteration --


def _tiny(seed=3):
    rng = np.random.default_rng(seed)
    n, p = 14, 7
    shift = np.repeat([[0.0], [2.0]], n // 2, axis=0) * (np.arange(p) < 2)
    return standardize(rng.normal(size=(n, p)) + shift).X


def _row_stochastic_knn(X, k):
    S = knn_graph(X, k, weight="heat").toarray()
    return S / S.sum(axis=1, keepdims=True)


def _dense_laplacian(G):
    A = (G + G.T) / 2.0
    return np.diag(A.sum(axis=1)) - A


def _row_cost(g, d, s, gamma):
    """One row of the G-problem: ``½ Σ_j g_j d_j + γ Σ_j (g_j − s_j)²``."""
    return 0.5 * g @ d + gamma * np.sum((g - s) ** 2)


def _slsqp_simplex(f, x0):
    from scipy.optimize import minimize

    cons = [{"type": "eq", "fun": lambda v: v.sum() - 1.0}]
    r = minimize(
        f,
        x0,
        method="SLSQP",
        bounds=[(0, 1)] * x0.size,
        constraints=cons,
        options={"ftol": 1e-15, "maxiter": 500},
    )
    return r.fun


@pytest.mark.parametrize("lam,gamma", [(1.0, 1.0), (0.1, 0.01), (10.0, 100.0)])
def test_block_steps_match_generic_solvers(lam, gamma):
    """Objective formula, Y-step (BFGS), W-step identity and G-step (SLSQP per row)."""
    from scipy.optimize import minimize

    X = _tiny()
    n, p = X.shape
    h, c, k, T = 3, 2, 3, 5
    kw = dict(lam=lam, gamma=gamma, n_neighbors=k, tol=0, max_iter=T)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        prev = SF2SOG(h, c, **{**kw, "max_iter": T - 1}).fit(X)
        for support in ("knn", "full"):
            est = SF2SOG(h, c, **kw, graph_support=support).fit(X)
            if support == "knn":
                knn_est = est
    S = _row_stochastic_knn(X, k)
    W, Y, G = knn_est.W_, knn_est.Y_, knn_est.G_.toarray()
    # objective: Tr(YᵀL_GY) + λ||XW − Y||² + γ||G − S||² with the dense Laplacian
    f36 = np.trace(Y.T @ _dense_laplacian(G) @ Y) + lam * np.sum((X @ W - Y) ** 2)
    f36 += gamma * np.sum((G - S) ** 2)
    assert knn_est.objective_[-1] == pytest.approx(f36, rel=1e-12)
    # Y-step of iteration T used the graph of iteration T−1: Y is its exact minimiser
    Lp = _dense_laplacian(prev.G_.toarray())

    def fy(y):
        Yy = y.reshape(n, -1)
        return np.trace(Yy.T @ Lp @ Yy) + lam * np.sum((X @ W - Yy) ** 2)

    r = minimize(fy, np.zeros(Y.size), method="BFGS", options={"gtol": 1e-10})
    assert fy(Y.ravel()) <= r.fun + 1e-10
    np.testing.assert_allclose(Lp @ Y + lam * (Y - X @ W), 0, atol=1e-10)  # stationarity
    # W-step: with Y eliminated the (W, Y) part is Tr(WᵀMW), M = λXᵀL(L + λI)⁻¹X
    M = lam * X.T @ Lp @ np.linalg.solve(Lp + lam * np.eye(n), X)
    M = (M + M.T) / 2.0
    value = np.trace(W.T @ M @ W)
    assert value == pytest.approx(fy(Y.ravel()), rel=1e-10)
    J = knn_est.support_J_
    assert value == pytest.approx(np.linalg.eigvalsh(M[np.ix_(J, J)])[:c].sum(), rel=1e-10)
    assert value >= -_best_support_value(-M, c, h) - 1e-10  # brute force: global minimum
    # G-step: each row minimises ½Σ g_ij d_ij + γΣ (g_ij − s_ij)² on the simplex over the
    # kNN support; over all j ≠ i (Eq. 36 as written) "full" does, "knn" is beaten
    D2 = np.sum((Y[:, None] - Y[None]) ** 2, axis=-1)
    Gf, Yf = est.G_.toarray(), est.Y_
    D2f = np.sum((Yf[:, None] - Yf[None]) ** 2, axis=-1)
    gap_knn_full = 0.0
    for i in range(n):
        sup = np.flatnonzero(S[i] > 0)
        others = np.setdiff1d(np.arange(n), [i])
        f_sup = functools.partial(_row_cost, d=D2[i, sup], s=S[i, sup], gamma=gamma)
        f_all = functools.partial(_row_cost, d=D2[i, others], s=S[i, others], gamma=gamma)
        assert f_sup(G[i, sup]) <= _slsqp_simplex(f_sup, S[i, sup]) + 1e-10
        gap_knn_full = max(gap_knn_full, f_all(G[i, others]) - _slsqp_simplex(f_all, S[i, others]))
        f_full = functools.partial(_row_cost, d=D2f[i, others], s=S[i, others], gamma=gamma)
        assert f_full(Gf[i, others]) <= _slsqp_simplex(f_full, S[i, others]) + 1e-10
        assert Gf[i, i] == 0
    assert gap_knn_full > 1e-5  # the kNN restriction is a real deviation from Eq. 36


@pytest.mark.parametrize("support", ["knn", "full"])
def test_every_block_step_decreases_and_constraints_every_iteration(support):
    X = _tiny(5)
    h, c, k = 3, 2, 3
    S = _row_stochastic_knn(X, k)
    for lam, gamma in [(1.0, 1.0), (1e-3, 1e-3), (1e3, 1e2)]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            full = SF2SOG(
                h, c, lam=lam, gamma=gamma, n_neighbors=k, tol=0, max_iter=6, graph_support=support
            ).fit(X)
            steps = full.objective_steps_
            assert steps.size == 2 * full.n_iter_ + 1
            assert np.all(np.diff(steps) <= 1e-12 * abs(steps[0])), (lam, gamma, steps)
            for t in range(1, 5):  # the fit stopped after t iterations = iterate t
                est = SF2SOG(
                    h,
                    c,
                    lam=lam,
                    gamma=gamma,
                    n_neighbors=k,
                    tol=0,
                    max_iter=t,
                    graph_support=support,
                ).fit(X)
                np.testing.assert_allclose(est.objective_, full.objective_[:t], rtol=1e-12)
                W, G = est.W_, est.G_.toarray()
                np.testing.assert_allclose(W.T @ W, np.eye(c), atol=1e-12)
                assert np.count_nonzero(np.linalg.norm(W, axis=1)) == h
                np.testing.assert_allclose(G.sum(axis=1), 1.0, atol=1e-12)
                assert G.min() >= 0 and G.max() <= 1 and np.all(np.diag(G) == 0)
                if support == "knn":
                    assert np.all(S[G > 0] > 0)


def test_init_options():
    X = _tiny()
    p = X.shape[1]
    W0 = np.zeros((p, 2))
    W0[[1, 4, 6]] = [[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]  # only the support is used
    est = SF2SOG(3, 2, n_neighbors=3, init=W0).fit(X)
    np.testing.assert_array_equal(est.init_support_, [1, 4, 6])
    called = SF2SOG(3, 2, n_neighbors=3, init=lambda X, c, rs: W0).fit(X)
    np.testing.assert_array_equal(called.selected_features_, est.selected_features_)
    dense = SF2SOG(3, 2, n_neighbors=3, init=np.linalg.qr(np.ones((p, 2)) + np.eye(p, 2))[0]).fit(X)
    assert dense.init_support_.size == 3  # a dense W0 gets one support step
    a = SF2SOG(3, 2, n_neighbors=3, init="random", random_state=4).fit(X)
    b = SF2SOG(3, 2, n_neighbors=3, init="random", random_state=4).fit(X)
    np.testing.assert_array_equal(a.init_support_, b.init_support_)
    with pytest.raises(ValueError):
        SF2SOG(3, 2, n_neighbors=3, init=np.zeros((p, 3))).fit(X)
    with pytest.raises(ValueError):
        SF2SOG(3, 2, n_neighbors=3, init="spectral").fit(X)
    with pytest.raises(ValueError):
        SF2SOG(3, 2, graph_support="dense").fit(X)


# -- finding on its planted data (n = 300, 12 informative of 150) -------------


@pytest.fixture(scope="module")
def issue11():
    X, y, signal = planted_clusters(
        n_per=75, n_clusters=4, n_signal=12, n_noise=138, sep=2.5, seed=0
    )
    return standardize(X).X, y, signal


@pytest.fixture(scope="module")
def issue11_default(issue11):
    X, _, _ = issue11
    return SF2SOG(20, 4).fit(X)


def test_issue11_planted_found_at_default_and_grid_corners(issue11, issue11_default):
    """The issue's failure (≤ 2 of 12 at every grid point) does not reproduce."""
    from ufs.methods import LaplacianScore

    X, _, signal = issue11
    assert np.isin(issue11_default.selected_features_, signal).sum() >= 10
    for lam, gamma in itertools.product([1e-6, 1e6], [1e-6, 1e6]):
        est = SF2SOG(20, 4, lam=lam, gamma=gamma).fit(X)
        assert np.isin(est.selected_features_, signal).sum() >= 10, (lam, gamma)
    assert np.isin(LaplacianScore(20).fit(X).selected_features_, signal).sum() >= 10


def test_issue11_recovery_is_owed_to_the_initial_support(issue11, issue11_default):
    """The W-step is local: random starts stay near random, at a far worse objective."""
    X, _, signal = issue11
    ref = SF2SOG(20, 4, lam=1e-6).fit(X)
    assert np.isin(ref.init_support_, signal).sum() >= 10
    for rs in range(3):
        est = SF2SOG(20, 4, lam=1e-6, init="random", random_state=rs).fit(X)
        np.testing.assert_array_equal(est.support_J_, est.init_support_)  # never moved
        assert np.isin(est.selected_features_, signal).sum() <= 4  # random: 1.6
        assert est.objective_[-1] > 3.0 * ref.objective_[-1]  # the model prefers ref's


def test_issue11_projection_is_within_cluster_noise(issue11, issue11_default):
    """XW has no cluster signal and low variance: the model rewards collinearity."""
    X, y, signal = issue11

    def r2(z):
        mu = np.array([z[y == k].mean() for k in range(4)])
        return 1.0 - np.sum((z - mu[y]) ** 2) / np.sum((z - z.mean()) ** 2)

    Z = X @ issue11_default.W_
    assert max(r2(z) for z in Z.T) < 0.05
    assert np.all(Z.var(axis=0) < 0.3)  # a standardised feature: 1
    assert np.median([r2(X[:, j]) for j in signal]) > 0.5


def test_issue11_collinear_noise_beats_planted_features_in_the_objective(issue11):
    """With 4 near-duplicate noise pairs the model's better solution has no planted feature."""
    from ufs.methods import LaplacianScore

    X, _, signal = issue11
    rng = np.random.default_rng(0)
    noise = np.setdiff1d(np.arange(X.shape[1]), signal)
    pairs = rng.choice(noise, (4, 2), replace=False)
    Xd = X.copy()
    for a, b in pairs:
        Xd[:, b] = Xd[:, a] + 0.1 * rng.normal(size=X.shape[0])
    Xd = standardize(Xd).X
    graph = knn_graph(X, 5, weight="heat")  # the clean data's graph, for both methods
    W0 = np.zeros((X.shape[1], 4))
    W0[np.r_[pairs.ravel(), np.setdiff1d(noise, pairs)[:12]]] = 1.0
    for lam in (1e-6, 1.0):
        default = SF2SOG(20, 4, lam=lam).fit(Xd, graph=graph)
        assert np.isin(default.selected_features_, signal).sum() >= 10
        other = SF2SOG(20, 4, lam=lam, init=W0).fit(Xd, graph=graph)
        assert np.isin(other.selected_features_, signal).sum() == 0
        assert other.objective_[-1] < 0.1 * default.objective_[-1]
    lap = LaplacianScore(20).fit(Xd, graph=graph).selected_features_
    assert np.isin(lap, pairs).sum() == 0 and np.isin(lap, signal).sum() >= 10
