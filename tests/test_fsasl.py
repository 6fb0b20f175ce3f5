"""FSASL (Du & Shen 2015): the S-step solvers, the local graph, the W-step, the objective,
the authors' iteration rules, planted features and parameter checks. Parity with the
authors' code: ``ufs/parity/cases/fsasl.py`` (run by ``tests/test_parity.py``)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.linalg
from scipy.spatial.distance import pdist
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import Lasso

import ufs.methods._lasso as lasso_mod
import ufs.methods.fsasl as fsasl_mod
import ufs.validation as validation
from tests.conftest import planted_clusters
from ufs.graph import knn_graph, knn_indices
from ufs.methods import FSASL
from ufs.methods.fsasl import (
    exact_lasso,
    lasso_kkt_violation,
    ls21,
    mean_pairwise_distance,
    slep_lasso,
)
from ufs.preprocessing import standardize


def _problem(Z, i):
    """Design (atoms = the other samples), response and SLEP's λ of sample ``i``."""
    n = Z.shape[0]
    keep = np.arange(n) != i
    A = Z[keep].T
    y = Z[i]
    return A, y, keep


def _scalar_slep(A, y, ratio, tol=1e-3, max_iter=10000):
    """One ``LeastR`` call written out plainly (FISTA + Armijo-Goldstein, ``initFactor``
    start, ``|Δf| ≤ tol``): the reference for the batched :func:`slep_lasso`."""
    ATy = A.T @ y
    lam = ratio * np.abs(ATy).max()
    x = ATy.copy()
    Ax = A @ x
    if np.abs(x).sum() >= 1e-6:
        r = (Ax @ y - lam * np.abs(x).sum()) / (Ax @ Ax)
        x, Ax = r * x, r * Ax
    L, xp, Axp, xxp = 1.0, x, Ax, np.zeros_like(x)
    ap, a, fprev = 0.0, 1.0, None
    for _ in range(max_iter):
        beta = (ap - 1) / a
        s = x + beta * xxp
        As = Ax + beta * (Ax - Axp)
        g = A.T @ As - ATy
        xp, Axp = x, Ax
        flag = False
        while True:
            v = s - g / L
            x = np.sign(v) * np.maximum(np.abs(v) - lam / L, 0)
            d = x - s
            Ax = A @ x
            Av = Ax - As
            if d @ d <= 1e-20:
                flag = True
                break
            if Av @ Av <= (d @ d) * L:
                break
            L = max(2 * L, (Av @ Av) / (d @ d))
        ap, a = a, (1 + np.sqrt(4 * a * a + 1)) / 2
        xxp = x - xp
        f = 0.5 * np.sum((Ax - y) ** 2) + lam * np.abs(x).sum()
        if flag or (fprev is not None and abs(f - fprev) <= tol):
            break
        fprev = f
    return x


def _lasso_obj(A, y, x, lam):
    r = A @ x - y
    return 0.5 * r @ r + lam * np.abs(x).sum()


# -- S-step --------------------------------------------------------------------------


@pytest.mark.parametrize("m", [3, 12])
def test_slep_batched_equals_one_call_per_sample(rng, m):
    Z = rng.normal(size=(40, m))
    S, n_iter = slep_lasso(Z, 0.05)
    assert np.all(np.diag(S) == 0)
    assert np.all(n_iter >= 1) and np.all(n_iter <= 10000)
    for i in range(Z.shape[0]):
        A, y, keep = _problem(Z, i)
        ref = _scalar_slep(A, y, 0.05)
        np.testing.assert_allclose(S[keep, i], ref, rtol=0, atol=1e-10)


def test_slep_block_size_does_not_change_the_result(rng, monkeypatch):
    Z = rng.normal(size=(30, 4))
    S1, it1 = slep_lasso(Z, 0.02)
    monkeypatch.setattr(lasso_mod, "_SLEP_BLOCK_FLOATS", 30 * 7)  # blocks of 7 samples
    S2, it2 = slep_lasso(Z, 0.02)
    np.testing.assert_allclose(S1, S2, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(it1, it2)


def test_slep_solves_the_lasso_scaled_as_leastr(rng):
    """A tight tolerance reaches the optimum of ``½||Ax − y||² + ρ λ_max ||x||_1``
    (scikit-learn's ``alpha = λ / m``); the default stop ends above it (inexact)."""
    Z = rng.normal(size=(25, 6))
    ratio = 0.1
    S_tight, _ = slep_lasso(Z, ratio, tol=1e-14, max_iter=200000)
    S_loose, _ = slep_lasso(Z, ratio)
    gaps = []
    for i in range(Z.shape[0]):
        A, y, keep = _problem(Z, i)
        lam = ratio * np.abs(A.T @ y).max()
        ref = Lasso(alpha=lam / A.shape[0], fit_intercept=False, tol=1e-14, max_iter=10**6)
        ref = ref.fit(A, y).coef_
        f_opt = _lasso_obj(A, y, ref, lam)
        # the objective is flat near the optimum (24 atoms in R^6): compare values
        assert _lasso_obj(A, y, S_tight[keep, i], lam) == pytest.approx(f_opt, rel=1e-8)
        gaps.append(_lasso_obj(A, y, S_loose[keep, i], lam) - f_opt)
    assert min(gaps) >= -1e-9
    assert max(gaps) > 1e-6  # the authors' default tolerance stops short


@pytest.mark.parametrize("m,q", [(3, None), (8, None), (8, 3), (40, None)])
def test_exact_lasso_meets_kkt_and_matches_coordinate_descent(rng, m, q):
    Z = rng.normal(size=(60, m))
    S = exact_lasso(Z, 0.05, working_set=q).toarray()
    assert np.all(np.diag(S) == 0)
    if m <= 8:  # the homotopy itself solved every problem (no scikit-learn fallback)
        assert exact_lasso.fallbacks == 0
    for i in range(Z.shape[0]):
        A, y, keep = _problem(Z, i)
        lam = 0.05 * np.abs(A.T @ y).max()
        assert lasso_kkt_violation(A, y, lam, S[keep, i]) <= 1e-8
        assert np.count_nonzero(S[:, i]) <= m  # general position
        if i < 10:
            ref = Lasso(alpha=lam / m, fit_intercept=False, tol=1e-13, max_iter=10**6)
            ref = ref.fit(A, y).coef_
            assert _lasso_obj(A, y, S[keep, i], lam) <= _lasso_obj(A, y, ref, lam) + 1e-10


def test_homotopy_on_many_random_problems(rng):
    """The LARS-lasso homotopy (the fast path of ``exact_lasso``) reaches the optimality
    conditions by itself on general-position problems, including paths with drops."""
    for _ in range(300):
        m = int(rng.integers(1, 7))
        q = int(rng.integers(1, 30))
        A = rng.normal(size=(m, q))
        y = rng.normal(size=m)
        c = A.T @ y
        lam = float(rng.uniform(0.001, 1.2)) * np.abs(c).max()
        x = lasso_mod._homotopy_lasso(A, y, lam, c, max_steps=20 * m + 100)
        assert x is not None
        assert lasso_kkt_violation(A, y, lam, x) <= 1e-9


def test_exact_lasso_working_set_and_warm_support_do_not_change_the_solution(rng):
    Z = rng.normal(size=(80, 5))
    full = exact_lasso(Z, 0.02, working_set=79).toarray()
    small = exact_lasso(Z, 0.02, working_set=2).toarray()  # forces KKT rounds
    warm = exact_lasso(Z, 0.02, working_set=2, support=sp.csc_matrix(full)).toarray()
    np.testing.assert_allclose(small, full, atol=1e-9)
    np.testing.assert_allclose(warm, full, atol=1e-9)


def test_exact_lasso_degenerate_samples(rng):
    """Duplicate samples (non-unique codes) and a sample orthogonal to all others."""
    Z = rng.normal(size=(20, 4))
    Z[5] = Z[3]
    Z = np.vstack([Z, np.zeros((1, 4))])
    S = exact_lasso(Z, 0.05).toarray()
    assert np.all(S[:, -1] == 0) and np.all(S[-1] == 0)
    for i in range(Z.shape[0] - 1):
        A, y, keep = _problem(Z, i)
        lam = 0.05 * np.abs(A.T @ y).max()
        assert lasso_kkt_violation(A, y, lam, S[keep, i]) <= 1e-8
    assert S[5, 3] > 0.5  # sample 3 is coded (mostly) by its duplicate


# -- local graph, W-step ---------------------------------------------------------------


def test_mean_pairwise_distance_brute_force(rng):
    X = rng.normal(size=(37, 5))
    n = X.shape[0]
    assert mean_pairwise_distance(X, chunk_floats=50) == pytest.approx(
        2 * pdist(X).sum() / n**2, rel=1e-12
    )


@pytest.mark.parametrize("n,p", [(40, 6), (8, 30)])
def test_ls21_irls_is_monotone_and_solves_the_normal_equations(rng, n, p):
    X = rng.normal(size=(n, p))
    Y = rng.normal(size=(n, 3))
    r = 0.7
    eps = np.finfo(float).eps
    vals, Ws = [], []

    def cb(t, W):
        Ws.append(W.copy())
        vals.append(np.sum((X @ W - Y) ** 2) + r * np.sum(np.sqrt(np.sum(W**2, axis=1) + eps)))

    W = ls21(X, Y, r, n_iter=15, callback=cb)
    assert np.all(np.diff(vals) <= 1e-10 * np.abs(vals[:-1]))
    # last step: W = (XᵀX + r D)⁻¹ XᵀY with D from the previous W
    d = 0.5 / np.sqrt(np.sum(Ws[-2] ** 2, axis=1) + eps)
    np.testing.assert_allclose(
        W, np.linalg.solve(X.T @ X + r * np.diag(d), X.T @ Y), rtol=1e-8, atol=1e-10
    )


def _brute_simplex(v):
    """Euclidean projection onto the simplex by bisection on the threshold."""
    lo, hi = v.min() - 1, v.max()
    for _ in range(200):
        th = 0.5 * (lo + hi)
        if np.maximum(v - th, 0).sum() > 1:
            lo = th
        else:
            hi = th
    return np.maximum(v - 0.5 * (lo + hi), 0)


def test_fit_steps_constraints_and_objective_every_iteration(rng):
    X = standardize(rng.normal(size=(45, 7))).X
    k, c = 4, 3
    hist = []
    est = FSASL(
        3,
        c,
        n_neighbors=k,
        max_iter=4,
        lambda2=0.5,
        lambda3=0.3,
        callback=lambda t, **kw: hist.append((t, kw)),
    )
    est.fit(X)
    mu = est.local_reg_
    # μ: the authors' estimateReg from the k+1 nearest squared distances of X
    _, dist = knn_indices(X, k + 1)
    d2 = dist**2
    assert mu == pytest.approx(np.mean(0.5 * (k * d2[:, k] - d2[:, :k].sum(1))), rel=1e-12)
    # iteration 1 runs the S-step on X (the authors' rule: max_iter = 4 < 5)
    assert hist[0][1]["S"] is not None
    # iteration 1's graph: Cai's heat kernel with σ = mean of all pairwise distances
    sigma = 2 * pdist(X).sum() / X.shape[0] ** 2
    A1 = knn_graph(X, k, weight="heat", sigma=sigma)
    np.testing.assert_allclose(hist[0][1]["A"].toarray(), A1.toarray(), atol=1e-12)
    W_prev = None
    for _t, kw in hist:
        S, A, W, Y = kw["S"], kw["A"], kw["W"], kw["Y"]
        S = np.asarray(S) if not sp.issparse(S) else S.toarray()
        A = A.toarray()
        assert np.all(np.diag(S) == 0)
        np.testing.assert_allclose(A, A.T, atol=0)
        assert np.all(np.diag(A) == 0) and np.all(A >= 0)
        np.testing.assert_allclose(Y.T @ Y, np.eye(c), atol=1e-10)
        if W_prev is not None:  # adaptive rows from the previous projection
            Z = X @ W_prev
            idx, _ = knn_indices(Z, k)
            P = np.zeros_like(A)
            for i in range(X.shape[0]):
                d = np.sum((Z[idx[i]] - Z[i]) ** 2, axis=1)
                P[i, idx[i]] = _brute_simplex(-d / (2 * mu))
            np.testing.assert_allclose(A, (P + P.T) / 2, atol=1e-9)
        # the recorded objective is the authors' formula
        Z = X @ W
        B = np.eye(X.shape[0]) - S
        L = est.lambda1 * B @ B.T + est.lambda2 * (np.diag(A.sum(0)) - A)
        f = (
            np.trace(Z.T @ L @ Z)
            + est.lambda1 * est.sparsity * np.abs(S).sum()
            + est.lambda2 * mu * np.sum(A * A)
            + est.lambda3 * np.sum(np.linalg.norm(W, axis=1))
        )
        assert kw["objective"] == pytest.approx(f, rel=1e-10)
        # Y: the c smallest eigenvectors of L
        w = np.linalg.eigvalsh(L)
        assert np.trace(Y.T @ L @ Y) == pytest.approx(w[:c].sum(), rel=1e-8, abs=1e-10)
        W_prev = W
    assert est.n_iter_ == 4 and est.objective_.shape == (4,)
    assert est.converged_ is False


@pytest.mark.parametrize(
    "max_iter,first,expect", [(4, None, True), (5, None, False), (5, True, True), (2, False, False)]
)
def test_first_iteration_s_step_rule(rng, max_iter, first, expect):
    X = rng.normal(size=(30, 5))
    seen = {}
    FSASL(
        2,
        2,
        max_iter=max_iter,
        global_first_iter=first,
        callback=lambda t, **kw: seen.setdefault(t, kw["S"] is not None),
    ).fit(X)
    assert seen[1] is expect
    assert all(seen[t] for t in range(2, max_iter + 1))


def test_lars_and_slep_with_tight_tolerance_agree(rng):
    X = standardize(rng.normal(size=(40, 6))).X
    a = FSASL(3, 3, max_iter=3, lasso_solver="lars").fit(X)
    b = FSASL(3, 3, max_iter=3, lasso_tol=1e-13, lasso_max_iter=10**6).fit(X)
    # same problems: iteration 1 (S-step on X) agrees; later ones drift with the codes'
    # flat directions (the tight SLEP codes are optimal in value, not entry by entry)
    assert a.objective_[0] == pytest.approx(b.objective_[0], rel=1e-7)
    np.testing.assert_allclose(a.objective_, b.objective_, rtol=1e-4)
    assert sp.issparse(a.S_) and a.S_.nnz <= 3 * X.shape[0]  # ≤ c codes per column


@pytest.mark.parametrize("solver", ["slep", "lars"])
def test_planted_features(solver):
    hits = []
    for seed in range(3):
        X, _, signal = planted_clusters(n_per=40, n_clusters=4, n_signal=6, n_noise=44, seed=seed)
        X = standardize(X).X
        est = FSASL(6, 4, lambda3=100.0, max_iter=10, lasso_solver=solver).fit(X)
        hits.append(len(set(est.selected_features_) & set(signal)))
    assert min(hits) >= 5, hits  # random selection: 0.7 of 6 expected


def test_only_one_structure(rng):
    X = rng.normal(size=(30, 5))
    local = FSASL(2, 2, lambda1=0.0, max_iter=3).fit(X)
    assert local.S_.nnz == 0
    glob = FSASL(2, 2, lambda2=0.0, max_iter=6).fit(X)  # iteration 1 must run the S-step
    assert glob.A_.nnz == 0 and glob.S_.nnz > 0
    assert np.isfinite(glob.objective_).all()


def test_tol_stops_and_warns(rng):
    X = rng.normal(size=(30, 5))
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        est = FSASL(2, 2, max_iter=3).fit(X)  # tol = 0: the authors' fixed loop, no warning
    assert est.n_iter_ == 3 and not est.converged_
    with pytest.warns(ConvergenceWarning):
        FSASL(2, 2, max_iter=2, tol=1e-300).fit(X)
    est = FSASL(2, 2, max_iter=40, tol=0.5).fit(X)
    assert est.converged_ and est.n_iter_ < 40


@pytest.mark.parametrize(
    "kw",
    [
        {"lasso_solver": "cd"},
        {"lambda3": 0.0},
        {"lambda1": -1.0},
        {"lambda1": 0.0, "lambda2": 0.0},
        {"sparsity": 0.0},
        {"sparsity": 1.5},
        {"local_reg": 0.0},
        {"n_neighbors": 29},
        {"max_iter": 0},
        {"tol": -1.0},
    ],
)
def test_bad_parameters(rng, kw):
    X = rng.normal(size=(30, 5))
    with pytest.raises(ValueError):
        FSASL(2, 2, **kw).fit(X)


def test_bad_n_clusters_and_graph(rng):
    X = rng.normal(size=(30, 5))
    with pytest.raises(ValueError):
        FSASL(2, 30).fit(X)
    with pytest.raises(ValueError):
        FSASL(2, 2).fit(X, graph=knn_graph(X, 5))  # builds its own graphs


def test_slep_refused_above_the_memory_cap(rng, monkeypatch):
    X = rng.normal(size=(30, 5))
    monkeypatch.setattr(validation, "DENSE_MEMORY_CAP", fsasl_mod.DENSE_ARRAYS * 8 * 29 * 29)
    monkeypatch.delenv("UFS_MAX_DENSE_BYTES", raising=False)
    with pytest.raises(MemoryError, match="lasso_solver='lars'"):
        FSASL(2, 2, max_iter=2).fit(X)
    FSASL(2, 2, max_iter=2, lasso_solver="lars").fit(X)  # the sparse path is not capped
    FSASL(2, 2, max_iter=2, lambda1=0.0).fit(X)  # nor is the local structure alone


# -- the batched exact lasso (lasso_solver="lars") -------------------------------------


def _reference_codes(Z, ratio):
    """Every sample's lasso by the plain per-sample loop over all atoms (the former
    ``exact_lasso``): dense ``S`` and the ``λ_i``."""
    n = Z.shape[0]
    S = np.zeros((n, n))
    lams = np.zeros(n)
    for i in range(n):
        A, y, keep = _problem(Z, i)
        lam = ratio * np.abs(A.T @ y).max()
        lams[i] = lam
        if lam > 0:
            atoms, coef, _ = lasso_mod._exact_lasso_one(Z, i, lam, np.zeros(0, np.intp), 5)
            S[atoms, i] = coef
    return S, lams


def _assert_same_codes(S, ref, Z, lams):
    np.testing.assert_array_equal(S != 0, ref != 0)  # the same supports
    np.testing.assert_allclose(S, ref, rtol=0, atol=1e-8)
    for i in range(Z.shape[0]):
        A, y, keep = _problem(Z, i)
        if lams[i] > 0:
            assert lasso_kkt_violation(A, y, lams[i], S[keep, i]) <= 1e-9


def test_homotopy_batch_equals_one_problem_at_a_time(rng):
    """Padded problems of different sizes follow their own paths."""
    for m in (1, 4, 10):
        L, Q = 60, 25
        A = rng.normal(size=(L, Q, m))
        y = rng.normal(size=(L, m))
        sizes = rng.integers(1, Q + 1, size=L)
        for b in range(L):
            A[b, sizes[b] :] = 0.0  # zero atoms pad
        c = np.einsum("bqm,bm->bq", A, y)
        lam = rng.uniform(0.001, 1.2, size=L) * np.abs(c).max(axis=1)
        x, ok = lasso_mod._homotopy_batch(A, y, lam, 20 * m + 100)
        assert ok.all()
        for b in range(L):
            k = sizes[b]
            ref = lasso_mod._homotopy_lasso(A[b, :k].T, y[b], lam[b], c[b, :k], 20 * m + 100)
            np.testing.assert_allclose(x[b, :k], ref, rtol=0, atol=1e-12)
            assert np.all(x[b, k:] == 0)


@pytest.mark.parametrize("n,m,ratio", [(90, 3, 0.05), (150, 10, 0.01), (70, 25, 0.02)])
def test_exact_lasso_equals_the_per_sample_loop_and_sklearn(rng, n, m, ratio):
    Z = rng.normal(size=(n, m)) * rng.uniform(0.3, 2.0, size=(n, 1))
    S = exact_lasso(Z, ratio).toarray()
    ref, lams = _reference_codes(Z, ratio)
    _assert_same_codes(S, ref, Z, lams)
    for i in range(5):  # scikit-learn's coordinate descent, tight tolerance
        A, y, keep = _problem(Z, i)
        cd = Lasso(alpha=lams[i] / m, fit_intercept=False, tol=1e-14, max_iter=10**6)
        np.testing.assert_allclose(S[keep, i], cd.fit(A, y).coef_, rtol=0, atol=1e-6)


def test_exact_lasso_cold_subsample_and_certified_scan(rng, monkeypatch):
    """Without previous codes a subsample is solved against every atom, the others on its
    candidate atoms, then the representation-bounded scan over all atoms; warm starts
    from the previous codes of a nearby ``Z`` (sign guess, candidate atoms) and a small
    ``working_set`` reach the same codes."""
    monkeypatch.setattr(lasso_mod, "_COLD_SUBSAMPLE", 12)
    n, m = 220, 6
    Z = rng.normal(size=(n, m)) * rng.uniform(0.3, 2.0, size=(n, 1))
    ref, lams = _reference_codes(Z, 0.02)
    _assert_same_codes(exact_lasso(Z, 0.02).toarray(), ref, Z, lams)
    _assert_same_codes(exact_lasso(Z, 0.02, working_set=1).toarray(), ref, Z, lams)
    Z0 = Z + 0.05 * rng.normal(size=Z.shape)
    S0 = exact_lasso(Z0, 0.02)
    _assert_same_codes(exact_lasso(Z, 0.02, support=S0).toarray(), ref, Z, lams)
    _assert_same_codes(exact_lasso(Z, 0.02, support=S0, working_set=2).toarray(), ref, Z, lams)
    # a previous code with a self-atom and explicit zeros is cleaned, not trusted
    S0 = S0.tolil()
    S0[3, 3] = 1.0
    S0[4, 3] = 0.0
    _assert_same_codes(exact_lasso(Z, 0.02, support=S0.tocsc()).toarray(), ref, Z, lams)


@pytest.mark.parametrize("tile", [(3, 7), (32, 2048), (256, 2048)])
def test_exact_lasso_scan_tile_does_not_change_the_codes(rng, monkeypatch, tile):
    """The scans' tile shape (rows grouped by scan length, the violators kept per tile)
    changes the order of the KKT rounds, not the codes."""
    monkeypatch.setattr(lasso_mod, "_COLD_SUBSAMPLE", 12)
    monkeypatch.setattr(lasso_mod, "_SCAN_TILE", tile)
    n, m = 180, 5
    Z = rng.normal(size=(n, m)) * rng.uniform(0.3, 2.0, size=(n, 1))
    ref, lams = _reference_codes(Z, 0.02)
    _assert_same_codes(exact_lasso(Z, 0.02, working_set=2).toarray(), ref, Z, lams)
    S0 = exact_lasso(Z + 0.05 * rng.normal(size=Z.shape), 0.02)
    _assert_same_codes(exact_lasso(Z, 0.02, support=S0).toarray(), ref, Z, lams)


def test_scan_order_bounds_and_lambdas(rng):
    """λ from the representation-bounded scan equals the brute-force maximum, whatever
    the representations (here random codes); the bound holds for every skipped atom."""
    n, m = 300, 5
    Z = rng.normal(size=(n, m))
    codes = sp.random(n, n, density=0.02, random_state=1, format="csc")
    codes.setdiag(0.0)
    codes.eliminate_zeros()
    for reps in (lasso_mod._ScanOrder(Z, None), lasso_mod._ScanOrder(Z, codes)):
        G = np.abs(Z @ Z.T)
        np.fill_diagonal(G, 0.0)
        lam = lasso_mod._lasso_lambdas(Z, 0.1, reps)
        np.testing.assert_allclose(lam, 0.1 * G.max(axis=1), rtol=1e-14, atol=0)
    reps = lasso_mod._ScanOrder(Z, codes)
    V = 0.1 * rng.normal(size=(40, m))
    E = np.unique(codes.indices)
    t = np.abs(V @ Z[E].T).max(axis=1)  # every atom of E satisfies |z_lᵀv| ≤ t
    lens = reps.lengths(np.linalg.norm(V, axis=1) / t)
    for k in range(V.shape[0]):
        skipped = reps.order[lens[k] :]
        assert np.all(np.abs(Z[skipped] @ V[k]) <= t[k] * (1 + 1e-12))


@pytest.mark.parametrize("n,expect", [(25, "slep"), (40, "lars")])
def test_auto_solver_threshold(rng, monkeypatch, n, expect):
    monkeypatch.setattr(fsasl_mod, "AUTO_SLEP_MAX_SAMPLES", 30)
    X = standardize(rng.normal(size=(n, 6))).X
    auto = FSASL(3, 3, max_iter=4).fit(X)
    explicit = FSASL(3, 3, max_iter=4, lasso_solver=expect).fit(X)
    assert auto.lasso_solver == "auto" and auto.lasso_solver_ == expect
    assert explicit.lasso_solver_ == expect
    np.testing.assert_array_equal(auto.objective_, explicit.objective_)
    np.testing.assert_array_equal(auto.S_.toarray(), explicit.S_.toarray())
    assert (auto.lasso_n_iter_ is None) is (expect == "lars")


def test_default_is_the_authors_slep_below_the_threshold(rng):
    X = standardize(rng.normal(size=(50, 6))).X
    a = FSASL(3, 3, max_iter=3).fit(X)
    b = FSASL(3, 3, max_iter=3, lasso_solver="slep").fit(X)
    assert a.lasso_solver_ == "slep" and fsasl_mod.AUTO_SLEP_MAX_SAMPLES >= 4000
    np.testing.assert_array_equal(a.objective_, b.objective_)


def test_warm_eigen_step_matches_lanczos(rng, monkeypatch):
    """Above WARM_EIGEN_NODES the eigen-step runs LOBPCG from the previous ``Y``: the same
    invariant subspace as Lanczos."""
    n, c = 1500, 4
    X = rng.normal(size=(n, 3)) + 4.0 * rng.integers(0, c, size=(n, 1))
    A = knn_graph(X, 6)
    A = ((A + A.T) * 0.5).tocsr()
    L = (sp.diags(np.asarray(A.sum(axis=1)).ravel()) - A).tocsr()
    Y = FSASL._smallest(L, c)
    start = np.linalg.qr(Y + 0.05 * rng.normal(size=Y.shape))[0]
    monkeypatch.setattr(fsasl_mod, "WARM_EIGEN_NODES", 1000)

    def no_lanczos(*args, **kwargs):
        raise AssertionError("the warm LOBPCG path was not taken")

    monkeypatch.setattr(scipy.sparse.linalg, "eigsh", no_lanczos)  # every Lanczos call
    Yw = FSASL._smallest(L, c, start=start)
    np.testing.assert_allclose(Yw.T @ Yw, np.eye(c), atol=1e-8)
    s = np.linalg.svd(Y.T @ Yw, compute_uv=False)
    assert s.min() > 1 - 1e-8


def test_mean_pairwise_distance_tiled_above_the_size_switch(rng, monkeypatch):
    X = rng.normal(size=(1300, 7))
    ref = mean_pairwise_distance(X)
    assert ref == pytest.approx(2 * pdist(X).sum() / X.shape[0] ** 2, rel=1e-12)
    monkeypatch.setattr(fsasl_mod, "SYMMETRIC_MEAN_MIN_SAMPLES", 1000)
    assert mean_pairwise_distance(X) == pytest.approx(ref, rel=1e-14)
    assert fsasl_mod._mean_distance_tiled(X, rows=100, cols=300) == pytest.approx(ref, rel=1e-14)
