import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

import ufs.methods.rne as rne_mod
from tests.conftest import planted_clusters
from ufs import standardize
from ufs.graph import knn_indices
from ufs.methods import RNE
from ufs.methods.rne import lle_weights
from ufs.registry import get_method, make_estimator

EPS = float(np.finfo(float).eps)


@pytest.fixture(scope="module")
def small():
    X, y, signal = planted_clusters(n_per=15, n_clusters=3, n_signal=4, n_noise=16, seed=2)
    return standardize(X).X


def literal_rne(
    X, H, *, k=5, alpha=1e3, outer=50, inner=30, gamma=10.0, rows=False, normalize=True
):
    """The algorithm written out densely, one sample at a time (independent of rne.py)."""
    n, p = X.shape
    idx, _ = knn_indices(X, k)
    W = np.zeros((n, n))
    for i in range(n):
        Z = X[idx[i]] - X[i]
        C = Z @ Z.T
        if k > p:
            C = C + 1e-3 * np.trace(C) * np.eye(k)
        w = np.linalg.solve(C, np.ones(k))
        W[i, idx[i]] = w / w.sum()
    A = (np.eye(n) - (W if rows else W.T)) @ X
    G = A.T @ A
    Gp, Gm = 0.5 * (np.abs(G) + G), 0.5 * (np.abs(G) - G)
    m = H.shape[1]
    M, Y = A @ H, np.zeros((n, m))
    obj = []
    for _ in range(outer):
        AM, AY = A.T @ M, A.T @ Y
        AMp, AMm = 0.5 * (np.abs(AM) + AM), 0.5 * (np.abs(AM) - AM)
        AYp, AYm = 0.5 * (np.abs(AY) + AY), 0.5 * (np.abs(AY) - AY)
        for _ in range(inner):
            if normalize:
                H = H @ np.diag(1 / np.sqrt(np.diag(H.T @ H) + EPS))
            H = H * np.sqrt(
                (alpha * H + gamma * AMp + gamma * Gm @ H + AYp)
                / (alpha * H @ (H.T @ H) + gamma * AMm + gamma * Gp @ H + AYm + EPS)
            )
        T = A @ H - Y / gamma
        M = np.sign(T) * np.maximum(np.abs(T) - 1 / gamma, 0)
        Y = Y + gamma * (M - A @ H)
        gamma = min(1.1 * gamma, 1e10)
        obj.append(np.abs(A @ H).sum() + alpha / 4 * np.linalg.norm(H.T @ H - np.eye(m)) ** 2)
    return H, np.array(obj), W


# -- LLE weights ---------------------------------------------------------------------


def test_lle_weights_are_constrained_least_squares():
    """Each row minimises ||x_i − Σ w_j x_j||² under Σw = 1 (eliminated: w_k = 1 − Σ_{j<k})."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 8))
    k = 4
    W, n_fb = lle_weights(X, k)
    idx, _ = knn_indices(X, k)
    assert n_fb == 0 and W.nnz == 30 * k
    np.testing.assert_allclose(np.asarray(W.sum(axis=1)).ravel(), 1.0, rtol=0, atol=1e-12)
    for i in range(30):
        N = X[idx[i]]
        B = (N[:-1] - N[-1]).T  # x_i − x_{j_k} ≈ Σ_{j<k} w_j (x_j − x_{j_k})
        v, *_ = np.linalg.lstsq(B, X[i] - N[-1], rcond=None)
        w = np.append(v, 1 - v.sum())
        np.testing.assert_allclose(W[i, idx[i]].toarray().ravel(), w, rtol=1e-9, atol=1e-10)
        assert set(W[i].indices) == set(idx[i]) and i not in W[i].indices


def test_lle_weights_regularised_match_sklearn_barycenter():
    lle = pytest.importorskip("sklearn.manifold._locally_linear")
    rng = np.random.default_rng(1)
    X = rng.normal(size=(40, 3))
    k = 6  # k > p: the authors' rule regularises with 1e-3·tr(C), as sklearn's reg=1e-3
    W, _ = lle_weights(X, k)
    ref = lle.barycenter_kneighbors_graph(X, k, reg=1e-3)
    np.testing.assert_allclose(W.toarray(), ref.toarray(), rtol=1e-9, atol=1e-12)
    W0, _ = lle_weights(X, 3)  # k ≤ p: no regulariser (differs from reg=1e-3)
    W1, _ = lle_weights(X, 3, reg=1e-3)
    assert np.abs((W0 - W1).toarray()).max() > 1e-6


def test_lle_singular_local_gram_falls_back():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(20, 6))
    X[5] = X[4]  # a duplicate: its local Gram matrix has a zero row
    X[7:10] = X[6]  # a point whose neighbours include two exact copies
    W, n_fb = lle_weights(X, 3)
    assert n_fb >= 3
    assert np.isfinite(W.data).all()
    np.testing.assert_allclose(np.asarray(W.sum(axis=1)).ravel(), 1.0, atol=1e-12)


# -- the solver ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "shape, rows, normalize, m, cap",
    [
        ((40, 12), False, True, 4, None),  # p ≤ n: G⁺, G⁻ stored
        ((40, 12), True, False, 4, None),
        ((15, 30), False, True, 4, None),  # n < p ≤ 2n: G⁺, G⁻ stored
        ((15, 30), False, True, 5, 8 * 30 * 30),  # … unless both exceed the cap: |AᵀA|
        ((10, 40), False, True, 4, None),  # p > 2n: |AᵀA| and the factor A
        ((10, 40), True, False, 6, None),
        ((12, 30), False, True, 1, None),  # one column
    ],
)
def test_matches_literal_transcription(monkeypatch, shape, rows, normalize, m, cap):
    """Every way G^±H is formed; the init array is not modified."""
    if cap is not None:
        monkeypatch.setattr(rne_mod, "GRAM_MEMORY_CAP", cap)
    rng = np.random.default_rng(3)
    X = standardize(rng.normal(size=shape) + rng.normal(size=(shape[0], 1))).X
    H0 = rng.random((shape[1], m))
    H0_copy = H0.copy()
    H, obj, W = literal_rne(X, H0, outer=8, inner=5, rows=rows, normalize=normalize)
    est = RNE(
        min(m, 4),
        n_components=m,
        init=H0,
        max_iter=8,
        inner_iter=5,
        reconstruction="rows" if rows else "transposed",
        normalize_columns=normalize,
    ).fit(X)
    np.testing.assert_array_equal(H0, H0_copy)
    np.testing.assert_allclose(est.lle_weights_.toarray(), W, atol=1e-12)
    np.testing.assert_allclose(est.H_, H, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(est.objective_, obj, rtol=1e-10)
    assert est.n_iter_ == 8 and not est.converged_
    order = np.argsort(-np.sum(H * H, axis=1), kind="stable")
    np.testing.assert_array_equal(est.selected_features_, order[: min(m, 4)])


@pytest.mark.parametrize(
    "n, p, cap, via_abs",
    [(30, 12, None, False), (10, 18, None, False), (8, 30, None, True), (10, 18, 3000, True)],
)
def test_gram_split_is_the_sign_split_product(monkeypatch, n, p, cap, via_abs):
    """γ(G⁻H)ᵀ and γ(G⁺H)ᵀ, G^± = [AᵀA]^±, whichever of the two forms is used."""
    if cap is not None:
        monkeypatch.setattr(rne_mod, "GRAM_MEMORY_CAP", cap)
    rng = np.random.default_rng(5)
    A = rng.normal(size=(n, p))
    K = rng.random((3, p))
    G = A.T @ A
    num, den, work = np.empty_like(K), np.empty_like(K), np.empty_like(K)
    split = rne_mod._gram_split(A, n, p)
    assert ("Gabs" in split.__code__.co_freevars) == via_abs  # |AᵀA| stored, not G^±
    split(K, 2.5, num, den, work)
    np.testing.assert_allclose(num, 2.5 * (np.maximum(-G, 0) @ K.T).T, rtol=1e-12)
    np.testing.assert_allclose(den, 2.5 * (np.maximum(G, 0) @ K.T).T, rtol=1e-12)


def test_callback_arrays_are_not_overwritten(small):
    """The iteration reuses its buffers; what a callback keeps stays as it was given."""
    kept = []
    est = RNE(4, random_state=0, max_iter=3, callback=lambda t, **kw: kept.append(kw)).fit(small)
    H3 = kept[2]["H"]
    assert H3.shape == (small.shape[1], 4)
    np.testing.assert_array_equal(H3, est.H_)
    assert not np.array_equal(kept[0]["H"], H3)
    A = small - est.lle_weights_.T @ small
    assert est.objective(A, kept[0]["H"]) == pytest.approx(est.objective_[0], rel=1e-12)


def test_objective_nonnegative_iterates_and_residual(small):
    X = small
    Hs = []
    est = RNE(5, random_state=0, callback=lambda t, H, M, Y, gamma: Hs.append(H.copy())).fit(X)
    assert len(Hs) == est.n_iter_ == 50
    assert all((H >= 0).all() for H in Hs)
    A = X - est.lle_weights_.T @ X
    for t in (0, 10, 49):
        assert est.objective(A, Hs[t]) == pytest.approx(est.objective_[t], rel=1e-12)
    # ADMM with a growing penalty: the split M = AH closes
    assert est.primal_residual_[-1] < 1e-2 * est.primal_residual_[0]


def test_feature_permutation_equivariance(small):
    X = small
    rng = np.random.default_rng(4)
    perm = rng.permutation(X.shape[1])
    H0 = rng.random((X.shape[1], 5))
    a = RNE(5, init=H0).fit(X)
    b = RNE(5, init=H0[perm]).fit(X[:, perm])
    np.testing.assert_allclose(b.scores_, a.scores_[perm], rtol=1e-8, atol=1e-12)
    np.testing.assert_allclose(b.objective_, a.objective_, rtol=1e-10)


def test_subset_selection_scores_and_n_components(small):
    X = small
    est = RNE(6, random_state=1).fit(X)
    assert est.H_.shape == (X.shape[1], 6)  # m = h, as RNE_obj(X, m, k)
    np.testing.assert_allclose(est.scores_, np.sum(est.H_**2, axis=1))
    order = np.argsort(-est.scores_, kind="stable")
    np.testing.assert_array_equal(est.selected_features_, order[:6])
    assert est.support_.sum() == 6
    est = RNE(3, n_components=7, random_state=1).fit(X)
    assert est.H_.shape == (X.shape[1], 7) and est.selected_features_.size == 3


def test_constant_feature_never_selected(small):
    X = np.hstack([small, np.full((small.shape[0], 1), 2.0)])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = RNE(4, random_state=0).fit(X)
    assert est.H_.shape[0] == small.shape[1]
    assert X.shape[1] - 1 not in est.selected_features_


def test_planted_features():
    """10 of 50 features carry the clusters; random picks 2 of the top 10 on average."""
    found, found2 = [], []
    for seed in range(6):
        X, _, signal = planted_clusters(n_per=50, n_signal=10, n_noise=40, sep=3.0, seed=seed)
        est = RNE(10, random_state=seed).fit(standardize(X).X)
        found.append(np.isin(est.selected_features_, signal).sum())
        found2.append(np.isin(np.argsort(-est.scores_, kind="stable")[:20], signal).sum())
    assert np.mean(found) >= 4.5 and min(found) >= 3  # measured: 7 6 5 4 4 6
    assert np.mean(found2) >= 6.5  # measured: 8 9 8 6 10 8


# -- init, stopping, validation ----------------------------------------------------------


def test_init_options(small):
    X = small
    p = X.shape[1]
    a = RNE(4, random_state=3).fit(X)
    b = RNE(4, random_state=3).fit(X)
    c = RNE(4, random_state=4).fit(X)
    np.testing.assert_array_equal(a.H_init_, b.H_init_)
    np.testing.assert_array_equal(a.scores_, b.scores_)
    assert not np.allclose(a.H_init_, c.H_init_)
    assert ((a.H_init_ >= 0) & (a.H_init_ < 1)).all()
    d = RNE(4, init=lambda X, m, rs: np.full((X.shape[1], m), 0.5)).fit(X)
    np.testing.assert_array_equal(d.H_init_, 0.5)
    with pytest.raises(ValueError, match="shape"):
        RNE(4, init=np.ones((p, 3))).fit(X)
    with pytest.raises(ValueError, match="non-negative"):
        RNE(4, init=-np.ones((p, 4))).fit(X)
    H0 = np.ones((p, 4))
    H0[:, 2] = 0
    with pytest.raises(ValueError, match="all-zero column"):
        RNE(4, init=H0).fit(X)
    with pytest.raises(ValueError, match="init must be one of"):
        RNE(4, init="kmeans").fit(X)


def test_tolerance_and_warning(small):
    X = small
    with pytest.warns(ConvergenceWarning):
        est = RNE(4, random_state=0, max_iter=3, tol=1e-12).fit(X)
    assert est.n_iter_ == 3 and not est.converged_
    est = RNE(4, random_state=0, max_iter=500, tol=1e-3).fit(X)
    assert est.converged_ and est.n_iter_ < 500
    rel = abs(est.objective_[-2] - est.objective_[-1]) / abs(est.objective_[-2])
    assert rel <= 1e-3
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        RNE(4, random_state=0, max_iter=3).fit(X)  # tol = 0: the authors' fixed budget


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"alpha": 0}, "alpha"),
        ({"gamma": -1}, "gamma"),
        ({"eps": 0}, "eps"),
        ({"rho": 0.5}, "rho"),
        ({"gamma_max": 1.0}, "gamma_max"),
        ({"max_iter": 0}, "max_iter"),
        ({"inner_iter": 0}, "inner_iter"),
        ({"tol": -1}, "tol"),
        ({"reconstruction": "lle"}, "reconstruction"),
        ({"n_components": 100}, "n_components"),
        ({"reg": -1.0}, "reg"),
        ({"n_neighbors": 500}, "n_neighbors"),
    ],
)
def test_bad_parameters(small, kwargs, match):
    with pytest.raises(ValueError, match=match):
        RNE(4, **kwargs).fit(small)


def test_gram_memory_cap(small, monkeypatch):
    monkeypatch.setattr(rne_mod, "GRAM_MEMORY_CAP", 1000)
    with pytest.raises(ValueError, match="GiB"):
        RNE(4).fit(small)


def test_registered():
    spec = get_method("rne")
    assert spec.kind == "subset"
    est = make_estimator("rne", spec.defaults, n_features_to_select=3, n_clusters=2, random_state=0)
    assert isinstance(est, RNE) and est.alpha == 1e3 and est.n_neighbors == 5
    assert set(spec.grid) == {"alpha"}
