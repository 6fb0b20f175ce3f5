import itertools
import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import load_breast_cancer, load_digits, load_wine
from sklearn.exceptions import ConvergenceWarning
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import LinearSVC

from tests.conftest import planted_clusters
from ufs import ConstantFeaturesWarning, KMeansUFS
from ufs.methods.kmeans_ufs import kmeans_ufs_factor
from ufs.preprocessing import standardize


def explicit_A(X, k):
    """Eq. (8) formed literally from the SVD of the p × n standardised data."""
    Xp = standardize(X).X.T  # p × n as in the paper
    P, s, _ = np.linalg.svd(Xp, full_matrices=False)
    return P[:, :k] @ np.diag(s[:k] ** 2) @ P[:, :k].T


def neg_trace(A, idx):
    S = np.zeros((A.shape[0], len(idx)))
    S[idx, np.arange(len(idx))] = 1.0
    return -np.trace(S.T @ A @ S)


def test_low_rank_factor_matches_eq8(rng):
    X = rng.normal(size=(40, 12))
    B, _, _ = kmeans_ufs_factor(standardize(X).X, 3)
    np.testing.assert_allclose(B @ B.T, explicit_A(X, 3), atol=1e-9)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("h", [1, 3, 5])
def test_exact_solver_matches_brute_force(seed, h):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(25, 9)) @ rng.normal(size=(9, 9))
    A = explicit_A(X, 3)
    best = min(itertools.combinations(range(9), h), key=lambda c: neg_trace(A, list(c)))
    est = KMeansUFS(h, 3, solver="exact").fit(X)
    assert set(est.selected_features_) == set(best)
    assert est.selection_objective_ == pytest.approx(neg_trace(A, list(best)))


def test_exact_is_also_optimal_for_relaxed_model(rng):
    """Model (11): no orthonormal V with h non-zero rows beats the exact selection."""
    X = rng.normal(size=(30, 8))
    A = explicit_A(X, 2)
    est = KMeansUFS(3, 2, solver="exact").fit(X)
    for _ in range(200):
        rows = rng.choice(8, 3, replace=False)
        Q, _ = np.linalg.qr(rng.normal(size=(3, 3)))
        V = np.zeros((8, 3))
        V[rows] = Q
        assert -np.trace(V.T @ A @ V) >= est.exact_objective_ - 1e-9


def _sklearn_sets():
    out = []
    for name, loader in [("digits", load_digits), ("wine", load_wine), ("bc", load_breast_cancer)]:
        X, y = loader(return_X_y=True)
        for h in (5, 10, 20):
            if h < X.shape[1]:
                out.append(pytest.param(X, len(np.unique(y)), h, id=f"{name}-h{h}"))
    return out


@pytest.mark.parametrize("X, k, h", _sklearn_sets())
def test_admm_converges_and_exact_is_not_worse(X, k, h):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConstantFeaturesWarning)
        admm = KMeansUFS(h, k).fit(X)
        exact = KMeansUFS(h, k, solver="exact").fit(X)
    assert admm.converged_ and admm.n_iter_ < 3000
    assert admm.support_.sum() == h
    assert exact.selection_objective_ <= admm.selection_objective_ + 1e-9
    assert admm.optimality_gap_ >= -1e-12
    assert admm.exact_objective_ == pytest.approx(exact.selection_objective_)
    # objective_ tracks -Tr(SᵀAS) of the held selection; the last one is the output's
    assert admm.objective_[-1] == pytest.approx(admm.selection_objective_)
    assert admm.objective_.shape == (admm.n_iter_,)


def test_admm_constraints_hold_every_iteration(rng):
    X, _, _ = planted_clusters(seed=1)
    h = 7
    seen = []

    def check(t, V, U, W, mu):
        assert np.linalg.norm(V) ** 2 == pytest.approx(h)
        np.testing.assert_allclose(U.T @ U, np.eye(h), atol=1e-10)
        assert np.count_nonzero(np.linalg.norm(W, axis=1)) == h
        seen.append(mu)

    est = KMeansUFS(h, 4, callback=check).fit(X)
    assert len(seen) == est.n_iter_
    assert seen[0] == pytest.approx(0.1 * 1.05)
    assert np.all(np.diff(seen) > 0)


def test_mu_stops_growing_at_mu_max(rng):
    X = rng.normal(size=(30, 10))
    mus = []
    with pytest.warns(ConvergenceWarning):
        KMeansUFS(
            3,
            2,
            mu0=1.0,
            rho=2.0,
            mu_max=10.0,
            max_iter=40,
            patience=1000,
            callback=lambda t, **kw: mus.append(kw["mu"]),
        ).fit(X)
    assert max(mus) == 16.0  # 1→2→4→8→16, then frozen because 16 >= 10


def test_deterministic():
    X, y = load_digits(return_X_y=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConstantFeaturesWarning)
        a = KMeansUFS(20, 10).fit(X)
        b = KMeansUFS(20, 10).fit(X.copy())
    np.testing.assert_array_equal(a.selected_features_, b.selected_features_)
    np.testing.assert_array_equal(a.objective_, b.objective_)


def test_h_beyond_rank_uses_deterministic_orthonormal_completion(rng):
    # n = 6 samples -> standardised rank <= 5; h = 9 needs 4 completion directions
    X = rng.normal(size=(6, 20))
    s, P = np.linalg.svd(standardize(X).X, full_matrices=False)[1:]
    P = P.T
    V0 = KMeansUFS.initial_basis(s, P, 9, n_rows=6)
    np.testing.assert_allclose(V0.T @ V0, np.eye(9), atol=1e-10)
    a = KMeansUFS(9, 2).fit(X)
    b = KMeansUFS(9, 2).fit(X)
    np.testing.assert_array_equal(a.selected_features_, b.selected_features_)
    assert a.support_.sum() == 9


def test_selection_invariant_to_sign_flips_of_init(rng):
    """The iteration is equivariant under V -> VR, so the basis signs do not matter."""
    X = rng.normal(size=(50, 15))
    ref = KMeansUFS(6, 3).fit(X).selected_features_
    flipped = KMeansUFS(6, 3)
    orig = KMeansUFS.initial_basis
    try:
        KMeansUFS.initial_basis = staticmethod(lambda *a, **k: -orig(*a, **k))
        flipped.fit(X)
    finally:
        KMeansUFS.initial_basis = staticmethod(orig)
    np.testing.assert_array_equal(np.sort(ref), np.sort(flipped.selected_features_))


def test_planted_features_are_selected():
    X, _, signal = planted_clusters(n_signal=6, n_noise=60, sep=5.0, seed=3)
    for solver in ("admm", "exact"):
        est = KMeansUFS(6, 4, solver=solver).fit(X)
        assert len(set(est.selected_features_) & set(signal)) >= 5, solver


def test_transform_and_pipeline():
    X, y = load_wine(return_X_y=True)
    sel = KMeansUFS(5, 3).fit(X)
    assert sel.transform(X).shape == (X.shape[0], 5)
    pipe = make_pipeline(StandardScaler(), KMeansUFS(5, 3), LinearSVC()).fit(X, y)
    assert pipe.score(X, y) > 0.8


def test_invalid_solver_parameters(rng):
    X = rng.normal(size=(10, 5))
    for kw, msg in [({"solver": "sgd"}, "solver"), ({"mu0": 0}, "mu0"), ({"rho": 0.5}, "rho")]:
        with pytest.raises(ValueError, match=msg):
            KMeansUFS(2, 2, **kw).fit(X)


# ---------------------------------------------------------------- init=
def _default_v0(X, h, k):
    """The documented default ``init="svd"``: P_h of the standardised data."""
    Z = standardize(X).X
    _, s, P = kmeans_ufs_factor(Z, k, n_vectors=h)  # as fit() computes it
    return KMeansUFS.initial_basis(s, P, h, n_rows=Z.shape[0])


def _digits_informative():
    X = load_digits().data[:500]
    return np.ascontiguousarray(X[:, np.ptp(X, axis=0) > 0])  # as fit() sees it


def test_default_init_equals_explicit_array_and_callable():
    X = _digits_informative()
    ref = KMeansUFS(20, 10).fit(X)
    V0 = _default_v0(X, 20, 10)
    V0_copy = V0.copy()
    arr = KMeansUFS(20, 10, init=V0).fit(X)
    seen = {}

    def init(Z, k, rs):
        seen.update(mean=np.abs(Z.mean(axis=0)).max(), k=k, rs=rs)
        return V0

    call = KMeansUFS(20, 10, init=init).fit(X)
    for est in (arr, call):
        np.testing.assert_array_equal(est.selected_features_, ref.selected_features_)
        np.testing.assert_array_equal(est.objective_, ref.objective_)
        np.testing.assert_array_equal(est.V_, ref.V_)
    assert seen["mean"] < 1e-12 and seen["k"] == 10 and seen["rs"] is None  # standardised Z
    np.testing.assert_array_equal(V0, V0_copy)  # init is not modified
    assert arr.init is V0
    np.testing.assert_array_equal(clone(arr).get_params()["init"], V0)


def test_init_is_v_u_w_of_eq32():
    """With Ω = Γ = 0 and V⁰ = U⁰ = W⁰ = init, Eq. (29) gives V¹ ∝ A V⁰ + 2μ₀V⁰."""
    X = _digits_informative()
    h, k = 12, 10
    B, _, _ = kmeans_ufs_factor(standardize(X).X, k)
    V0 = np.linalg.qr(np.random.default_rng(0).normal(size=(X.shape[1], h)))[0]
    first = []

    def cb(t, V, U, W, mu):
        if t == 1:
            first.append(V.copy())

    with pytest.warns(ConvergenceWarning):
        KMeansUFS(h, k, init=V0, max_iter=3, patience=100, callback=cb).fit(X)
    D = B @ (B.T @ V0) + 2 * 0.1 * V0
    np.testing.assert_allclose(first[0], np.sqrt(h) * D / np.linalg.norm(D), atol=1e-12)


def test_sign_flipped_init_array_gives_same_selection(rng):
    X = rng.normal(size=(50, 15))
    ref = KMeansUFS(6, 3).fit(X).selected_features_
    flipped = KMeansUFS(6, 3, init=-_default_v0(X, 6, 3)).fit(X)
    np.testing.assert_array_equal(np.sort(ref), np.sort(flipped.selected_features_))


def test_invalid_init_raises(rng):
    X = rng.normal(size=(30, 8))
    V0 = _default_v0(X, 3, 2)
    Xc = np.hstack([X, np.ones((30, 1))])  # the constant column is not part of p
    for data, init, msg in [
        (X, V0[:, :2], r"shape \(8, 3\)"),
        (X, V0.T, r"shape \(8, 3\)"),
        (Xc, np.vstack([V0, np.zeros((1, 3))]), r"shape \(8, 3\)"),
        (X, "pca", "one of \\['svd'\\]"),
        (X, np.full((8, 3), np.inf), "NaN or inf"),
        (X, np.zeros((8, 3)), "all zeros"),
    ]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConstantFeaturesWarning)
            with pytest.raises(ValueError, match=msg):
                KMeansUFS(3, 2, init=init).fit(data)
    # the exact solver has no iterate and ignores init
    KMeansUFS(3, 2, solver="exact", init="pca").fit(X)


@pytest.mark.parametrize("loader, k, h", [(load_wine, 3, 4), (load_breast_cancer, 2, 5)])
def test_a_first_selection_never_changed_is_flagged_degenerate(loader, k, h, rng):
    """μ⁰ = 10⁶ pins V to V⁰ (the paper's Fig. 3 grid): the ADMM stops after
    patience + 1 iterations with the h largest rows of V⁰, a rule it never improved on, and
    says so; the default schedule moves the selection and is not flagged."""
    from ufs.base import DegenerateFitWarning
    from ufs.pipeline.status import fit_status

    X, _ = loader(return_X_y=True)
    V0 = np.linalg.qr(rng.standard_normal((X.shape[1], h)))[0]
    with pytest.warns(DegenerateFitWarning, match="first iterate's selection"):
        m = KMeansUFS(h, n_clusters=k, mu0=1e6, init=V0).fit(X)
    assert m.degenerate_ and m.converged_ and m.n_iter_ == m.patience + 1
    top = np.argsort(-np.linalg.norm(V0, axis=1), kind="stable")[:h]
    assert sorted(m.selected_features_) == sorted(top)
    assert fit_status({"converged": True, "degenerate": m.degenerate_}) == "degenerate"
    with warnings.catch_warnings():
        warnings.simplefilter("error", DegenerateFitWarning)
        d = KMeansUFS(h, n_clusters=k).fit(X)
        exact = KMeansUFS(h, n_clusters=k, solver="exact").fit(X)
    assert d.n_iter_ > d.patience + 1 and not d.degenerate_ and not exact.degenerate_
