import itertools
import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.cluster import KMeans
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state
from threadpoolctl import threadpool_limits

from tests.conftest import planted_clusters
from ufs.datasets import golfs_example
from ufs.linalg import leading_right_singular_vectors
from ufs.methods.fsbc import (
    FSBC,
    assignment_lagrangian,
    l2box_admm,
    resolved_selection,
    ridge_w,
    solve_p,
    update_assignments,
    update_centroids,
)
from ufs.metrics import normalized_entropy
from ufs.preprocessing import standardize


@pytest.fixture(autouse=True, scope="module")
def _one_thread():
    # the shared 2-core machine is oversubscribed; BLAS threads make small problems slower
    with threadpool_limits(1):
        yield


def _problem(seed, n=30, d=8, c=3):
    r = np.random.default_rng(seed)
    X = r.normal(size=(n, d))
    labels = np.repeat(np.arange(c), n // c)[:n]
    G = r.normal(size=(c, c))
    return X, labels, G


def _fit_term(X, W, S, G, labels):
    S = np.asarray(S)
    return float(((X[:, S] @ W[:, S].T - G.T[labels]) ** 2).sum())


# ---------------------------------------------------------------- sub-problems
@pytest.mark.parametrize("d", [6, 40])  # |S| <= n (block trick) and |S| > n (push-through)
def test_ridge_w_matches_eq8(d):
    X, labels, G = _problem(0, n=30, d=d)
    c, tau = 3, 0.7
    rng = np.random.default_rng(1)
    for S in (np.arange(d), np.sort(rng.choice(d, 4, replace=False))):
        v = np.zeros(d)
        v[S] = 1.0
        F = np.eye(c)[labels]
        Xp, V = X.T, np.diag(v)  # paper's d × n data
        W_ref = G @ F.T @ Xp.T @ V @ np.linalg.inv(V @ Xp @ Xp.T @ V + tau * np.eye(d))
        W = ridge_w(X, S, G, labels, tau)
        np.testing.assert_allclose(W, W_ref, atol=1e-9)
        assert np.all(W[:, np.setdiff1d(np.arange(d), S)] == 0)  # Eq. (10)


def test_l2box_admm_against_brute_force():
    """Algorithm 1 + rounding finds the exact 0-1 optimum of Eq. (12) on most instances."""
    hits, n_inst, h, d = 0, 20, 3, 8
    for seed in range(n_inst):
        X, labels, G = _problem(seed, d=d)
        W = np.random.default_rng(100 + seed).normal(size=(3, d))
        S = np.arange(d)
        Q = 2.0 * (W.T @ W) * (X.T @ X)
        b = 2.0 * ((G.T @ W) * (np.eye(3)[labels].T @ X)).sum(axis=0)
        v, _, conv = l2box_admm(Q, S, b, h)
        assert conv
        # converged ADMM iterate is binary with h ones up to the tolerance
        assert np.abs(v - np.round(v)).max() < 1e-2 and abs(v.sum() - h) < 1e-2
        sel = np.sort(np.argsort(-v, kind="stable")[:h])
        best = min(itertools.combinations(range(d), h), key=lambda T: _fit_term(X, W, T, G, labels))
        hits += tuple(sel) == best
    assert hits >= 13, hits  # measured 15/20 (heuristic for an NP-hard problem)


@pytest.mark.parametrize("rank_deficient", [False, True])
def test_l2box_admm_factor_form_equals_the_dense_form(rank_deficient):
    """``factor=Z`` (``Q = ZᵀZ`` with fewer rows than columns: thin SVD, the complement at
    eigenvalue 0) runs the iterates of the dense ``Q`` up to round-off: same iteration
    count, ``v`` to 1e-9; with ``Z`` repeating rows (rank below its row count) too."""
    rng = np.random.default_rng(7)
    d, r, h = 60, 12, 5
    Z = rng.normal(size=(r, d)) * rng.uniform(0.1, 3.0, size=d)
    if rank_deficient:
        Z[6:] = Z[:6]
    b = rng.normal(size=d) + 2.0
    T = np.arange(d)
    v_dense, it_dense, conv_dense = l2box_admm(Z.T @ Z, T, b, h)
    v_fac, it_fac, conv_fac = l2box_admm(None, T, b, h, factor=Z)
    assert (it_fac, conv_fac) == (it_dense, conv_dense)
    np.testing.assert_allclose(v_fac, v_dense, atol=1e-9)
    # a support T inside a longer v (later iterations' shape): outside T the matrix is 2μI
    T = np.sort(rng.choice(d + 20, d, replace=False))
    bb = np.zeros(d + 20)
    bb[T] = b
    v1, it1, _ = l2box_admm(Z.T @ Z, T, bb, h)
    v2, it2, _ = l2box_admm(None, T, bb, h, factor=Z)
    assert it1 == it2
    np.testing.assert_allclose(v2, v1, atol=1e-9)
    # a factor with as many rows as columns takes the dense path, bit for bit
    Zs = rng.normal(size=(d, d))
    a = l2box_admm(Zs.T @ Zs, np.arange(d), b, h)[0]
    assert np.array_equal(l2box_admm(None, np.arange(d), b, h, factor=Zs)[0], a)
    with pytest.raises(ValueError, match="exactly one"):
        l2box_admm(Z.T @ Z, np.arange(d), b, h, factor=Z)


def _wide_inputs():
    """Data sets with c·n ≤ d/2 (the factor path): noise, planted clusters, pairs of
    strongly correlated columns. (Exactly duplicated columns tie in Eq. 12: there the
    ADMM's answer is decided by round-off on either path.)"""
    rng = np.random.default_rng(3)
    yield "noise", rng.normal(size=(24, 400)), 4
    X, _, _ = planted_clusters(n_per=8, n_clusters=3, n_signal=8, n_noise=300, seed=2)
    yield "planted", X, 3
    X = rng.normal(size=(20, 150))
    yield "correlated columns", np.hstack([X, X[:, :100] + 0.1 * rng.normal(size=(20, 100))]), 2


def _dense_eigenpairs(fast):
    """``_psd_eigenpairs`` forced onto the dense ``eigh`` of ``ZᵀZ`` (the reference)."""
    return lambda Q, Z: fast(Z.T @ Z if Z is not None else Q, None)


def test_fsbc_factor_is_a_factor_of_q(monkeypatch):
    """The first v-step's ``Z`` satisfies ``ZᵀZ = 2 (WᵀW) ⊙ (XᵀX)`` (Eq. 12's Q̃) for the W
    of that iteration, so the dense reference of the tests below is the matrix of the paper."""
    import ufs.methods.fsbc as fsbc_module

    _, X, c = next(_wide_inputs())
    seen = {}
    ridge, fast = fsbc_module.ridge_w, fsbc_module._psd_eigenpairs

    def first_w(*args, **kw):
        W = ridge(*args, **kw)
        seen.setdefault("W", W)
        return W

    def keep_z(Q, Z):
        seen.setdefault("Z", Z)
        return fast(Q, Z)

    monkeypatch.setattr(fsbc_module, "ridge_w", first_w)
    monkeypatch.setattr(fsbc_module, "_psd_eigenpairs", keep_z)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        FSBC(10, c, random_state=0).fit(X)
    W, Z = seen["W"], seen["Z"]
    np.testing.assert_allclose(Z.T @ Z, 2.0 * (W.T @ W) * (X.T @ X), rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("case", list(range(3)))
def test_fsbc_factor_path_equals_the_dense_path(case, monkeypatch):
    """On wide data the first v-step decomposes the c·n × d factor instead of the d × d
    ``Q̃``: the fit is the one of the dense eigendecomposition (same support, order,
    clusters, ADMM iterations; objective to 1e-9), on noise, planted clusters and
    correlated features."""
    import ufs.methods.fsbc as fsbc_module

    name, X, c = list(_wide_inputs())[case]
    assert c * X.shape[0] <= X.shape[1] // 2, name  # the factor path is taken
    used = []
    fast = fsbc_module._psd_eigenpairs

    def spy(Q, Z):
        used.append(Q is None)
        return fast(Q, Z)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        monkeypatch.setattr(fsbc_module, "_psd_eigenpairs", spy)
        a = FSBC(10, c, random_state=0).fit(X)
        monkeypatch.setattr(fsbc_module, "_psd_eigenpairs", _dense_eigenpairs(fast))
        b = FSBC(10, c, random_state=0).fit(X)
    assert used == [True]  # one v-step (iteration 1), by the factor
    assert np.array_equal(a.selected_features_, b.selected_features_), name
    assert np.array_equal(a.labels_, b.labels_)
    assert np.array_equal(a.admm_n_iter_, b.admm_n_iter_)
    np.testing.assert_allclose(a.objective_, b.objective_, rtol=1e-9)


def test_fsbc_factor_path_on_a_real_wide_set(shared_datasets, monkeypatch):
    """allaml (72 × 7129, 2 classes; c·n = 144): the factor path's fit equals the dense
    eigendecomposition's on the first 1 500 standardized genes (the full set costs the
    dense path ~150 s)."""
    import ufs.methods.fsbc as fsbc_module
    from ufs.datasets import load_dataset

    X = standardize(load_dataset("allaml", mirror=shared_datasets).X).X[:, :1500]
    fast = fsbc_module._psd_eigenpairs
    fits = []
    for eig in (fast, _dense_eigenpairs(fast)):
        monkeypatch.setattr(fsbc_module, "_psd_eigenpairs", eig)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            fits.append(FSBC(50, 2, random_state=0).fit(X))
    a, b = fits
    assert np.array_equal(a.selected_features_, b.selected_features_)
    assert np.array_equal(a.labels_, b.labels_)


def test_resolved_selection_counts_the_picks_above_round_off():
    v = np.array([1.0, 0.9, 0.3, 0.3 + 1e-12, 0.3, 0.0])
    assert resolved_selection(v, 2) == (2, 0)  # 0.9 vs 0.3: a clear boundary
    assert resolved_selection(v, 3) == (2, 3)  # the 3rd pick is one of three tied 0.3s
    assert resolved_selection(v, 4) == (2, 3)
    assert resolved_selection(v, 5) == (5, 0)  # 0.3 vs 0.0
    assert resolved_selection(v, 6) == (6, 0)  # every feature: nothing rounded
    binary = np.array([1.0, 1e-5, 1.0, -2e-5, 1.0])  # a converged ADMM: binary to tol
    assert resolved_selection(binary, 3) == (3, 0)


def test_fsbc_marks_a_selection_rounded_from_a_tie_degenerate(monkeypatch):
    """When Algorithm 1 returns a v whose h-th entry ties with the next (round-off), the
    fit records how many picks are resolved, warns, and the workflow's status is ◊."""
    import ufs.methods.fsbc as fsbc_module
    from ufs.base import DegenerateFitWarning
    from ufs.pipeline.status import fit_status
    from ufs.pipeline.steps import _scalar_attributes

    X, _, _ = planted_clusters(n_per=10, n_clusters=3, n_signal=4, n_noise=16, seed=1)
    d, h = X.shape[1], 5

    def tied(Q, T, b, h_, **kw):
        v = np.full(b.shape[0], 1e-4)
        v[:3] = 1.0
        v[3:] += 1e-13 * np.arange(d - 3)  # 17 features equal to round-off
        return v, 1000, False

    monkeypatch.setattr(fsbc_module, "l2box_admm", tied)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est = FSBC(h, 3, random_state=0).fit(X)
    assert (est.resolved_rank_, est.n_tied_) == (3, d - 3)
    assert any(issubclass(w.category, DegenerateFitWarning) for w in caught)
    assert fit_status(_scalar_attributes(est), h=h) == "degenerate"
    assert fit_status(_scalar_attributes(est), h=3) != "degenerate"


@pytest.mark.parametrize("case", list(range(3)))
def test_fsbc_real_selections_are_resolved(case):
    """On ordinary inputs Algorithm 1's rounding is clear: every pick above round-off."""
    _, X, c = list(_wide_inputs())[case]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        est = FSBC(10, c, random_state=0).fit(X)
    assert (est.resolved_rank_, est.n_tied_) == (10, 0)


@pytest.mark.slow
def test_fsbc_pixraw10p_h100_is_flagged(shared_datasets):
    """The case that showed it (benchmark, pixraw10p, λ = n², h = 100): Algorithm 1 stops
    at 1 000 iterations with 99 entries of v near 1 and the rest equal to ~1e-9 relative,
    so the 100th pick is round-off."""
    from ufs.base import DegenerateFitWarning
    from ufs.datasets import load_dataset

    X = standardize(load_dataset("pixraw10p", mirror=shared_datasets).X).X
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est = FSBC(100, 10, lambda_scale=1.0, random_state=0).fit(X)
    assert est.resolved_rank_ == 99 and est.n_tied_ > 9000
    assert any(issubclass(w.category, DegenerateFitWarning) for w in caught)


def test_v_step_optimum_is_current_support():
    """From iteration 2 on the exact v-step keeps the support (class docstring remark)."""
    X, labels, G = _problem(3, n=39, d=10)
    S = np.array([1, 4, 5, 8])
    W = ridge_w(X, S, G, labels, tau=0.5)
    f0 = _fit_term(X, W, S, G, labels)
    for T in itertools.combinations(range(10), 4):
        if T != tuple(S):
            assert _fit_term(X, W, T, G, labels) > f0


def test_update_centroids_eq25_and_empty_cluster():
    rng = np.random.default_rng(0)
    Y = rng.normal(size=(12, 3))
    labels = np.array([0, 1] * 6)
    G_old = rng.normal(size=(3, 3))
    G = update_centroids(Y, labels, G_old)
    F = np.eye(3)[labels][:, :2]
    np.testing.assert_allclose(G[:, :2], Y.T @ F @ np.linalg.inv(F.T @ F))
    np.testing.assert_array_equal(G[:, 2], G_old[:, 2])  # empty cluster keeps its centroid


@pytest.mark.parametrize("mu1", [1.0, 50.0, 1e4])
def test_update_assignments_is_coordinatewise_optimal(mu1):
    rng = np.random.default_rng(int(mu1))
    n, c = 30, 4
    D = rng.uniform(0, 1, size=(n, c))
    labels = rng.integers(0, c, n)
    gamma = rng.normal(scale=5, size=c)
    p = rng.dirichlet(np.ones(c))
    before = assignment_lagrangian(D, labels, gamma, p, mu1)
    new, _ = update_assignments(D, labels, gamma, p, mu1)
    after = assignment_lagrangian(D, new, gamma, p, mu1)
    assert after <= before + 1e-12
    for i in range(n):  # no single-row change lowers Eq. (26)
        for m in range(c):
            trial = new.copy()
            trial[i] = m
            assert assignment_lagrangian(D, trial, gamma, p, mu1) >= after - 1e-9


@pytest.mark.parametrize("lam", [1e-6, 1.0, 4e4, 1e10])
def test_solve_p_root_and_minimiser(lam):
    a = np.array([0.0, 0.1, 0.3, 0.6])
    gamma = np.array([0.0, -3.0 * lam - 10, 2.0, -0.5])  # γ_2 violates the paper's f(1) > 0
    mu1 = 7.0
    p = solve_p(a, gamma, mu1, lam)
    assert np.all(p > 0)
    f = lam * np.log(p) + mu1 * p + gamma + lam - mu1 * a  # Eq. (29)
    assert np.all(np.abs(f) <= 1e-8 * (lam + mu1 + np.abs(gamma)))

    def J(q, m):  # Eq. (28)
        return lam * q * np.log(q) + gamma[m] * q + 0.5 * mu1 * q * q - mu1 * q * a[m]

    for m in range(4):
        for q in p[m] * np.array([0.5, 0.9, 0.999, 1.001, 1.1, 2.0]):
            assert J(q, m) >= J(p[m], m) - 1e-9 * (1 + abs(J(p[m], m)))


def test_solve_p_lambda_zero_is_linear():
    a = np.array([0.2, 0.8])
    gamma = np.array([1.0, -2.0])
    np.testing.assert_allclose(solve_p(a, gamma, 4.0, 0.0), a - gamma / 4.0)


# ---------------------------------------------------------------- the estimator
@pytest.fixture(scope="module")
def planted():
    return planted_clusters(n_per=30, n_clusters=3, n_signal=5, n_noise=35, seed=1)


@pytest.mark.parametrize("lambda_scale", [0.0, 1e-2])
def test_constraints_hold(planted, lambda_scale):
    X, _, _ = planted
    h, c = 7, 3
    est = FSBC(h, c, lambda_scale=lambda_scale, random_state=0).fit(X)
    assert set(np.unique(est.v_)) == {0.0, 1.0} and est.v_.sum() == h
    np.testing.assert_array_equal(np.flatnonzero(est.v_), np.sort(est.selected_features_))
    assert est.support_.sum() == h and np.unique(est.selected_features_).size == h
    F = np.eye(c)[est.labels_]  # F: one 1 per row
    assert F.shape == (X.shape[0], c) and np.all(F.sum(axis=1) == 1)
    assert est.labels_.min() >= 0 and est.labels_.max() < c
    assert np.all(est.W_[:, est.v_ == 0] == 0)  # ||W||_{2,0} = h
    assert est.converged_ and est.residual_[-1] <= est.tol
    assert est.lambda_ == pytest.approx(lambda_scale * X.shape[0] ** 2)


def test_lambda_zero_objective_non_increasing(planted):
    """λ = 0: W, G exact and the F step lowers the fit (γ ≡ 0), so Eq. (5) cannot rise
    after iteration 1 (derived in the class docstring; the paper proves nothing)."""
    X, _, _ = planted
    est = FSBC(7, 3, lambda_scale=0.0, random_state=0).fit(X)
    obj = est.objective_
    assert obj.size >= 3
    assert np.all(np.diff(obj) <= 1e-10 * np.abs(obj[:-1]))
    np.testing.assert_array_equal(est.gamma_, 0.0)
    np.testing.assert_array_equal(est.residual_, 0.0)


def test_literal_v_step_matches_default(planted):
    """Running Algorithm 1 every iteration (the paper's loop) keeps the same support."""
    X, _, _ = planted
    a = FSBC(7, 3, lambda_scale=1e-2, random_state=0).fit(X)
    b = FSBC(7, 3, lambda_scale=1e-2, random_state=0, literal_v_step=True).fit(X)
    assert set(a.selected_features_) == set(b.selected_features_)
    assert np.all(b.admm_n_iter_ > 0) and np.all(a.admm_n_iter_[1:] == 0)


def test_deterministic(planted):
    X, _, _ = planted
    a = FSBC(7, 3, random_state=3).fit(X)
    b = FSBC(7, 3, random_state=3).fit(X)
    np.testing.assert_array_equal(a.selected_features_, b.selected_features_)
    np.testing.assert_array_equal(a.labels_, b.labels_)
    np.testing.assert_array_equal(a.objective_, b.objective_)


def test_planted_features_golfs():
    """GOLFS Example 1 with 300 features (d > n = 200): 9/10 true features in the
    h = 10 selection for both λ (random selection: 0.33 expected)."""
    data = golfs_example(1, n_features=300, random_state=0)
    X = standardize(data.X).X
    hits = []
    for ls in (0.0, 1e-3):
        est = FSBC(10, 5, lambda_scale=ls, random_state=0).fit(X)
        hits.append(np.isin(est.selected_features_, data.true_features).sum())
    assert min(hits) >= 8, hits


def test_balance_term_balances_clusters():
    """Planted clusters of sizes 60/15/15 on 2 of 4 features: λ = 0 keeps the
    imbalanced k-means partition (NE 0.79), λ > 0 drives the internal clusters F to
    equal sizes (NE 1.0, Eq. 31); the selection (the 2 signal features) is the same."""
    rng = np.random.default_rng(0)
    sizes = [60, 15, 15]
    y = np.repeat(np.arange(3), sizes)
    centers = np.array([[0.0, 0.0], [8.0, 0.0], [0.0, 8.0]])
    X = np.hstack([centers[y] + rng.normal(size=(90, 2)), rng.normal(size=(90, 2))])
    X = standardize(X).X
    ne, sel = {}, {}
    for ls in (0.0, 1e-2):
        est = FSBC(2, 3, lambda_scale=ls, random_state=0).fit(X)
        ne[ls] = normalized_entropy(est.labels_, 3)
        sel[ls] = set(est.selected_features_)
    assert ne[0.0] < 0.9 and ne[1e-2] > 0.95, ne
    assert sel[0.0] == sel[1e-2] == {0, 1}


def test_max_iter_warns(planted):
    X, _, _ = planted
    with pytest.warns(ConvergenceWarning):
        est = FSBC(7, 3, lambda_scale=1.0, max_iter=2, random_state=0).fit(X)
    assert est.n_iter_ == 2 and not est.converged_ and est.v_.sum() == 7


def test_invalid_params(planted):
    X, _, _ = planted
    with pytest.raises(ValueError):
        FSBC(5, 3, lambda_scale=-1.0).fit(X)
    with pytest.raises(ValueError):
        FSBC(5, 3, tau=0.0).fit(X)


def test_h_equals_d_and_no_graph(planted):
    X, _, _ = planted
    X = X[:, :6]
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        est = FSBC(6, 3, random_state=0).fit(X)
    assert est.support_.all()
    with pytest.raises(ValueError):
        FSBC(3, 3).fit(X, graph=np.eye(X.shape[0]))


# ---------------------------------------------------------------- init=
def _pca_projection(X, c):
    """``X W₀ᵀ`` of Algorithm 2 line 1 (leading c principal directions)."""
    _, P = leading_right_singular_vectors(X - X.mean(axis=0))
    return X @ P[:, :c]


def _default_f0(X, c, seed):
    """The documented default ``init="kmeans"``: k-means on the PCA projection."""
    km = KMeans(n_clusters=c, n_init=10, random_state=check_random_state(seed))
    return np.eye(c)[km.fit(_pca_projection(X, c)).labels_]


def test_default_init_equals_explicit_array_and_callable(planted):
    X, _, _ = planted
    ref = FSBC(7, 3, lambda_scale=1e-2, random_state=3).fit(X)
    F0 = _default_f0(X, 3, 3)
    F0_copy = F0.copy()
    arr = FSBC(7, 3, lambda_scale=1e-2, init=F0, random_state=99).fit(X)
    seen = {}

    def init(Xs, k, rs):
        seen.update(shape=Xs.shape, k=k, rs=type(rs).__name__)
        return F0

    call = FSBC(7, 3, lambda_scale=1e-2, init=init, random_state=99).fit(X)
    for est in (arr, call):
        np.testing.assert_array_equal(est.selected_features_, ref.selected_features_)
        np.testing.assert_array_equal(est.labels_, ref.labels_)
        np.testing.assert_array_equal(est.objective_, ref.objective_)
    assert seen == {"shape": X.shape, "k": 3, "rs": "RandomState"}
    np.testing.assert_array_equal(F0, F0_copy)  # init is not modified
    assert arr.init is F0
    np.testing.assert_array_equal(clone(arr).get_params()["init"], F0)


def test_init_is_the_first_partition(planted):
    """Iteration 1's W is Eq. (8) at v = 1 with F⁰ = init and G⁰ its cluster means of X W₀ᵀ."""
    X, y, _ = planted
    c, tau = 3, 0.5
    labels0 = np.random.default_rng(0).permutation(y)  # a poor partition, far from k-means
    W1 = []

    def cb(t, W, **kw):
        if t == 1:
            W1.append(W.copy())

    with pytest.warns(ConvergenceWarning):
        FSBC(7, c, tau=tau, init=np.eye(c)[labels0], max_iter=1, callback=cb).fit(X)
    Y, S = _pca_projection(X, c), np.arange(X.shape[1])
    G0 = update_centroids(Y, labels0, np.zeros((c, c)))
    np.testing.assert_allclose(W1[0], ridge_w(X, S, G0, labels0, tau), atol=1e-10)
    Gy = update_centroids(Y, y, np.zeros((c, c)))  # another partition gives another W
    assert not np.allclose(W1[0], ridge_w(X, S, Gy, y, tau), atol=1e-3)


def test_invalid_init_raises(planted):
    X, _, _ = planted
    n, c = X.shape[0], 3
    F0 = _default_f0(X, c, 0)
    soft = F0.copy()
    soft[4] = [0.5, 0.5, 0.0]
    neg = F0.copy()
    neg[2] = [2.0, -1.0, 0.0]
    for init, msg in [
        (F0[:, :2], rf"shape \({n}, 3\)"),
        (F0.argmax(axis=1), rf"shape \({n}, 3\)"),  # labels, not the one-hot F
        (soft, r"one-hot.*row 4"),
        (neg, r"one-hot.*row 2"),
        ("random", r"one of \['kmeans'\]"),
    ]:
        with pytest.raises(ValueError, match=msg):
            FSBC(5, c, init=init).fit(X)
