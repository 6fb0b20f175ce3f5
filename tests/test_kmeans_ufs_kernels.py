"""The fast K-means UFS kernels (Gram-based Procrustes, Gram-based leading
singular vectors, the in-place ADMM loop) against the SVD-based originals.

The reference implementation below is a verbatim copy of the ADMM and its kernels as
they were before the change (commit 2b6e85f); it exists only here, to pin the iterates.
"""

import warnings

import numpy as np
import pytest
import scipy.linalg as sla
from sklearn.datasets import load_digits

from tests.conftest import planted_clusters
from ufs import KMeansUFS
from ufs.linalg import (
    _polar_gram,
    _polar_gram_correction,
    _polar_svd,
    leading_right_singular_vectors,
    procrustes,
    project_rows_l20,
)
from ufs.methods.kmeans_ufs import kmeans_ufs_factor
from ufs.preprocessing import standardize


# ------------------------------------------------------------------ reference (old)
def _old_procrustes(H):
    P, _, Qt = sla.svd(H, full_matrices=False, lapack_driver="gesdd", check_finite=False)
    return P @ Qt


def _old_leading_right_singular_vectors(Z):
    _, s, Vt = sla.svd(Z, full_matrices=False, lapack_driver="gesdd", check_finite=False)
    V = Vt.T
    idx = np.argmax(np.abs(V), axis=0)
    signs = np.sign(V[idx, np.arange(V.shape[1])])
    signs[signs == 0] = 1.0
    return s, V * signs


def _old_admm(B, V, diag_a, h, mu0=0.1, rho=1.05, mu_max=1e7, max_iter=3000, patience=30):
    def apply_a(M):
        return B @ (B.T @ M)

    U, W = V.copy(), V.copy()
    Omega = np.zeros_like(V)
    Gamma = np.zeros_like(V)
    mu = float(mu0)
    sqrt_h = np.sqrt(h)
    prev = None
    stable = 0
    objective, Vs, sels = [], [], []
    idx = None
    for _ in range(1, int(max_iter) + 1):
        D = apply_a(U) + mu * U - Omega + mu * W - Gamma
        V = (sqrt_h / np.linalg.norm(D)) * D
        U = _old_procrustes(apply_a(V) + mu * V + Omega)
        W, idx = project_rows_l20(V + Gamma / mu, h)
        Omega += mu * (V - U)
        Gamma += mu * (V - W)
        if mu < mu_max:
            mu *= rho
        objective.append(-float(diag_a[idx].sum()))
        Vs.append(V)
        current = np.sort(idx)
        sels.append(current)
        stable = stable + 1 if prev is not None and np.array_equal(current, prev) else 0
        prev = current
        if stable >= patience:
            break
    return np.asarray(objective), Vs, sels


def _old_fit(X, h, k, V0=None):
    Z = standardize(X).X
    s, P = _old_leading_right_singular_vectors(Z)
    kk = min(k, s.shape[0])
    B = P[:, :kk] * s[:kk]
    diag_a = np.einsum("ij,ij->i", B, B)
    if V0 is None:
        V0 = KMeansUFS.initial_basis(s, P, h, n_rows=Z.shape[0])
    return _old_admm(B, V0, diag_a, h)


def _new_fit(X, h, k, init="svd"):
    Vs, sels = [], []

    def cb(t, V, U, W, mu):
        Vs.append(V.copy())
        sels.append(np.flatnonzero(np.abs(W).sum(axis=1)))

    est = KMeansUFS(h, k, init=init, callback=cb)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(X)
    return est, Vs, sels


def _gaussian_clusters(n, p, k, seed):
    rng = np.random.default_rng(seed)
    y = rng.integers(k, size=n)
    X = rng.normal(size=(n, p))
    inf = rng.choice(p, max(1, p // 10), replace=False)
    X[:, inf] += rng.normal(scale=2.0, size=(k, inf.size))[y]
    return X


def _cases():
    # tolerance on V: 1e-8, except gauss2, where the reference itself moves by 1.6e-7
    # when gesdd is replaced by gesvd (the ADMM amplifies O(1e-12) differences in U by
    # ~1e5 over 200 iterations; the Gram route is closer to the exact polar factor than
    # either SVD, see docs/performance.md)
    out = []
    shapes = [(300, 120, 4, 20), (400, 80, 6, 12), (200, 60, 3, 30), (250, 100, 5, 15)]
    for seed, (n, p, k, h) in enumerate(shapes):
        tol = 1e-6 if seed == 2 else 1e-8
        X = _gaussian_clusters(n, p, k, seed)
        out.append(pytest.param(X, k, h, tol, id=f"gauss{seed}"))
    X, _, _ = planted_clusters(seed=1)
    out.append(pytest.param(X, 4, 7, 1e-8, id="planted"))
    D = load_digits().data[:600]
    out.append(pytest.param(D[:, np.ptp(D, axis=0) > 0], 10, 20, 1e-8, id="digits"))
    X = np.random.default_rng(5).normal(size=(6, 20))
    out.append(pytest.param(X, 2, 9, 1e-8, id="h>rank"))
    return out


def _assert_same_iterates(est, V_new, sel_new, obj_old, V_old, sel_old, tol=1e-8):
    assert est.n_iter_ == len(V_old)
    for a, b in zip(sel_new, sel_old, strict=True):  # the selection of every iteration
        np.testing.assert_array_equal(a, b)
    # diag(A) comes from the Gram route now: equal to rounding
    np.testing.assert_allclose(est.objective_, obj_old, rtol=1e-12)
    diff = max(np.abs(a - b).max() for a, b in zip(V_new, V_old, strict=True))
    assert diff <= tol, diff
    np.testing.assert_allclose(est.V_, V_old[-1], atol=tol)


# ------------------------------------------------------------------ ADMM iterates
@pytest.mark.parametrize("X, k, h, tol", _cases())
def test_admm_iterates_equal_the_svd_based_original(X, k, h, tol):
    old = _old_fit(X, h, k)
    est, V_new, sel_new = _new_fit(X, h, k)
    _assert_same_iterates(est, V_new, sel_new, *old, tol=tol)
    np.testing.assert_array_equal(np.sort(est.selected_features_), old[2][-1])


def test_admm_iterates_with_array_init():
    """init given: V⁰ is not from the factor, B still is."""
    X = _gaussian_clusters(300, 90, 5, 8)
    V0 = np.linalg.qr(np.random.default_rng(1).normal(size=(90, 15)))[0]
    old = _old_fit(X, 15, 5, V0=V0)
    est, V_new, sel_new = _new_fit(X, 15, 5, init=V0)
    _assert_same_iterates(est, V_new, sel_new, *old)


# ------------------------------------------------------------------ procrustes
@pytest.mark.parametrize("shape", [(12, 4), (50, 50), (200, 30), (561, 50), (30, 80), (7, 1)])
def test_procrustes_matches_svd_on_well_conditioned_matrices(shape):
    rng = np.random.default_rng(sum(shape))
    H = rng.normal(size=shape)
    U = procrustes(H)
    np.testing.assert_allclose(U, _polar_svd(H), atol=1e-10, rtol=0)
    np.testing.assert_array_equal(procrustes(H, method="svd"), _polar_svd(H))
    small = min(shape)
    G = U.T @ U if shape[0] >= shape[1] else U @ U.T
    np.testing.assert_allclose(G, np.eye(small), atol=1e-13)
    if shape[0] >= shape[1]:
        assert _polar_gram(H) is not None  # the Gram route was taken


def _with_spectrum(rng, p, sv):
    U = np.linalg.qr(rng.normal(size=(p, sv.size)))[0]
    V = np.linalg.qr(rng.normal(size=(sv.size, sv.size)))[0]
    return (U * sv) @ V.T


@pytest.mark.parametrize(
    "kind, scale",
    [("admm", 1e2), ("admm", 1e4), ("admm", 1e6), ("admm", 1e9), ("graded", 1e3), ("graded", 1e4)],
)
def test_procrustes_two_pass_on_ill_conditioned_matrices(kind, scale):
    """cond(HᵀH) ≫ 1/eps, so the one-pass Gram formula is useless; the two-pass route must
    agree with the SVD to ~eps·cond(H) and be orthonormal to rounding.

    "admm": the spectrum of the ADMM's H (k huge singular values from A V, the other
    h − k equal to ~1e-7, from μE); "graded": singular values spread over [1, scale].
    """
    rng = np.random.default_rng(int(np.log10(scale)))
    p, h, k = 400, 40, 4
    if kind == "admm":
        sv = np.r_[scale * (1 + rng.random(k)), 1 + 1e-7 * rng.random(h - k)]
    else:
        sv = np.logspace(0, np.log10(scale), h)
    H = _with_spectrum(rng, p, sv)
    cond = sv.max() / sv.min()
    U = _polar_gram(H)
    assert U is not None  # the Gram route was taken ...
    lam = np.linalg.eigvalsh(H.T @ H)
    assert lam[0] < 1e-2 * lam[-1]  # ... with its second pass
    np.testing.assert_allclose(U.T @ U, np.eye(h), atol=1e-13)
    np.testing.assert_allclose(U, _polar_svd(H), atol=max(1e-12, 50 * np.finfo(float).eps * cond))
    M = U.T @ H  # polar factor: UᵀH symmetric positive semi-definite
    np.testing.assert_allclose(M, M.T, atol=1e-14 * sv.max())
    assert np.linalg.eigvalsh((M + M.T) / 2).min() > -1e-14 * sv.max()


@pytest.mark.parametrize("f", [1e-4, 1e-6, 1e-9])
def test_polar_gram_correction_is_the_polar_factor_of_y_d(f):
    """Ŷ with ŶᵀŶ = I + F (||F||_F = f) and a graded D: Ŷ · correction = polar(Ŷ D)."""
    rng = np.random.default_rng(3)
    p, h = 300, 30
    S = rng.normal(size=(h, h))
    F = (S + S.T) * (f / np.linalg.norm(S + S.T))
    w, R = np.linalg.eigh(np.eye(h) + F)
    Y = np.linalg.qr(rng.normal(size=(p, h)))[0] @ (R * np.sqrt(w)) @ R.T  # ŶᵀŶ = I + F
    d = np.logspace(0, 3, h)[rng.permutation(h)]
    dfrac = d[:, None] / (d[:, None] + d)
    M = _polar_gram_correction(Y.T @ Y - np.eye(h), f, d, dfrac)
    np.testing.assert_allclose(Y @ M, _polar_svd(Y * d), atol=1e-12)


def test_procrustes_falls_back_to_svd_when_rank_deficient(rng):
    M = rng.normal(size=(100, 5)) @ rng.normal(size=(5, 20))  # rank 5 < 20
    assert _polar_gram(M) is None
    np.testing.assert_array_equal(procrustes(M), _polar_svd(M))
    Z = np.zeros((10, 3))
    assert _polar_gram(Z) is None
    np.testing.assert_array_equal(procrustes(Z), _polar_svd(Z))
    with pytest.raises(ValueError, match="method"):
        procrustes(M, method="qr")


# ------------------------------------------------------------------ leading vectors
@pytest.mark.parametrize("n, p, m", [(3000, 561, 50), (400, 120, 20), (300, 90, 5)])
def test_leading_vectors_from_the_gram_match_the_svd(n, p, m):
    Z = standardize(_gaussian_clusters(n, p, 5, n)).X
    s_ref, P_ref = _old_leading_right_singular_vectors(Z)
    s, P = leading_right_singular_vectors(Z, m)
    assert s.shape == (m,) and P.shape == (p, m)  # the Gram route was taken
    np.testing.assert_allclose(s, s_ref[:m], rtol=1e-12)
    # compare subspaces / products, not vectors
    np.testing.assert_allclose(P @ P.T, P_ref[:, :m] @ P_ref[:, :m].T, atol=1e-10)
    np.testing.assert_allclose(P.T @ P, np.eye(m), atol=1e-12)
    B, B_ref = P[:, :5] * s[:5], P_ref[:, :5] * s_ref[:5]
    np.testing.assert_allclose(B @ B.T, B_ref @ B_ref.T, atol=1e-10 * s_ref[0] ** 2)
    np.testing.assert_allclose(B, B_ref, atol=1e-10 * s_ref[0])  # same sign convention
    s2, P2 = leading_right_singular_vectors(Z, m)
    np.testing.assert_array_equal(P, P2)  # deterministic


def test_leading_vectors_fall_back_to_the_svd(rng):
    # p > n: the Gram would be the larger one
    Z = rng.normal(size=(30, 80))
    s, P = leading_right_singular_vectors(Z, 5)
    assert s.shape == (30,)
    # σ_m² < 1e-4 σ_1²: squaring the condition number would cost too much accuracy
    Z = rng.normal(size=(200, 40)) * np.logspace(0, -4, 40)
    s, P = leading_right_singular_vectors(Z, 30)
    assert s.shape == (40,)
    s_ref, P_ref = _old_leading_right_singular_vectors(Z)
    np.testing.assert_array_equal(P, P_ref)


def test_factor_n_vectors(rng):
    Z = standardize(rng.normal(size=(200, 50))).X
    B, s, P = kmeans_ufs_factor(Z, 3)
    assert s.shape == (50,)
    B2, s2, P2 = kmeans_ufs_factor(Z, 3, n_vectors=10)
    assert s2.shape == (10,) and P2.shape == (50, 10) and B2.shape == (50, 3)
    np.testing.assert_allclose(B2 @ B2.T, B @ B.T, atol=1e-10 * s[0] ** 2)
