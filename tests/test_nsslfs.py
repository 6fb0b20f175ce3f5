"""NSSLFS (Zheng, Yan & Yang 2019), reconstructed from the abstract (no paper text, no
author code, no reference output): monotone objective, constraints at every iteration,
the multiplicative NQP step against a brute-force solver, KKT at convergence, the scale
choice (β), planted features and bad parameters."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import minimize
from sklearn.exceptions import ConvergenceWarning

from tests.conftest import planted_clusters
from ufs.methods.nsslfs import NSSLFS, _balance, nqp_multiplicative_update, nsslfs_objective
from ufs.preprocessing import standardize, unit_range
from ufs.registry import get_method, make_estimator


def _planted(n_signal=12, n_noise=38, seed=0):
    X, _, signal = planted_clusters(n_signal=n_signal, n_noise=n_noise, seed=seed)
    return standardize(X).X, signal


def _small(seed=0, shape=(30, 8)):
    return np.random.default_rng(seed).standard_normal(shape)


# -- the multiplicative step (N5) --------------------------------------------------------


def _nqp(rng, m):
    """A random NQP ``½vᵀ(A⁺ − A⁻)v + bᵀv`` with ``A`` positive definite, mixed signs."""
    B = rng.standard_normal((m + 3, m))
    A = B.T @ B + 0.1 * np.eye(m)
    assert (A < 0).any()
    return A, rng.standard_normal(m)


@pytest.mark.parametrize("seed", range(5))
def test_nqp_step_never_increases_and_stays_non_negative(seed):
    rng = np.random.default_rng(seed)
    A, b = _nqp(rng, 6)
    Ap, Am = np.maximum(A, 0), np.maximum(-A, 0)
    f = lambda v: 0.5 * v @ A @ v + b @ v  # noqa: E731
    v = rng.random(6) + 0.1
    for _ in range(200):
        new = nqp_multiplicative_update(v, Ap @ v, Am @ v, b)
        assert (new >= 0).all()
        assert f(new) <= f(v) + 1e-12 * max(1.0, abs(f(v)))
        v = new


@pytest.mark.parametrize("seed", range(5))
def test_nqp_step_converges_to_the_bound_constrained_minimiser(seed):
    """Brute force: L-BFGS-B on the same tiny NQP."""
    rng = np.random.default_rng(seed)
    A, b = _nqp(rng, 5)
    Ap, Am = np.maximum(A, 0), np.maximum(-A, 0)
    v = np.ones(5)
    for _ in range(20000):
        v = nqp_multiplicative_update(v, Ap @ v, Am @ v, b, floor=1e-150)
    ref = minimize(
        lambda u: (0.5 * u @ A @ u + b @ u, A @ u + b),
        np.ones(5),
        jac=True,
        bounds=[(0, None)] * 5,
        method="L-BFGS-B",
        options={"ftol": 1e-15, "gtol": 1e-12},
    ).x
    np.testing.assert_allclose(v, ref, atol=1e-6)


def test_nqp_step_is_lee_seung_when_nothing_is_negative():
    rng = np.random.default_rng(0)
    v, P, b = rng.random(7) + 0.1, rng.random(7) + 0.1, -rng.random(7)
    np.testing.assert_allclose(nqp_multiplicative_update(v, P, np.zeros(7), b), v * -b / P)
    # a positive linear term with N = 0: the minimiser of the auxiliary function is 0
    out = nqp_multiplicative_update(v, P, np.zeros(7), np.abs(b), floor=1e-150)
    np.testing.assert_array_equal(out, 1e-150)


# -- the solver --------------------------------------------------------------------------


@pytest.mark.parametrize("lam", [1e-2, 1.0, 100.0])
@pytest.mark.parametrize("beta", [0.0, 1.0])
@pytest.mark.parametrize("space", ["standardized", "unit_range"])
def test_objective_non_increasing_and_constraints_every_iteration(lam, beta, space):
    X0, _, _ = planted_clusters(n_per=20, n_signal=6, n_noise=14, seed=1)
    X = standardize(X0).X if space == "standardized" else unit_range(X0)
    seen = []

    def cb(t, W, H):
        assert np.isfinite(W).all() and np.isfinite(H).all()
        assert W.min() > 0 and H.min() > 0  # W, H ≥ 0; > 0 because of the floor
        seen.append(t)

    est = NSSLFS(5, 3, lam=lam, beta=beta, random_state=0, max_iter=150, tol=0, callback=cb)
    est.fit(X)
    assert seen == list(range(1, 151))
    obj = est.objective_
    assert obj.shape == (151,)
    assert np.all(np.diff(obj) <= 1e-12 * obj[:-1]), np.diff(obj).max()
    assert obj[-1] < 0.9 * obj[0]


def test_objective_is_the_smoothed_model():
    X = _small()
    est = NSSLFS(3, n_components=2, lam=0.7, beta=2.0, random_state=0, max_iter=20, tol=0)
    est.fit(X)
    W, H, eps = est.W_, est.H_, est.eps
    E = X - X @ W @ H
    by_hand = (
        np.sqrt(E**2 + eps).sum()
        + 0.7 * np.sqrt((W**2).sum(1) + eps).sum()
        + 0.5 * 2.0 * (H**2).sum()
    )
    assert est.objective_[-1] == pytest.approx(by_hand, rel=1e-12)
    assert nsslfs_objective(X, W, H, 0.7, 2.0, eps) == pytest.approx(by_hand, rel=1e-12)
    exact = np.abs(E).sum() + 0.7 * np.linalg.norm(W, axis=1).sum() + (H**2).sum()
    assert exact <= by_hand <= exact + np.sqrt(eps) * (E.size + 0.7 * W.shape[0])
    np.testing.assert_allclose(est.scores_, np.linalg.norm(W, axis=1))
    assert est.n_components_ == 2 and W.shape == (8, 2) and H.shape == (2, 8)


def test_first_w_step_by_hand_on_non_negative_data():
    """On X ≥ 0 the W-step (N6) is the weighted Lee-Seung ratio."""
    X = unit_range(_small(2))
    lam, eps = 0.3, 1e-6
    est = NSSLFS(3, n_components=2, lam=lam, beta=0.0, eps=eps, random_state=4, max_iter=1, tol=0)
    est.fit(X)
    W0, H0 = est.W_init_, est.H_init_
    E = X - X @ W0 @ H0
    G = 0.5 / np.sqrt(E**2 + eps)
    D = 0.5 / np.sqrt((W0**2).sum(1) + eps)
    num = X.T @ (G * X) @ H0.T
    den = X.T @ (G * (X @ W0 @ H0)) @ H0.T + lam * D[:, None] * W0
    np.testing.assert_allclose(est.W_, W0 * num / den, rtol=1e-12)


@pytest.mark.parametrize("eps", [1e-1, 1e-3])
def test_kkt_point_of_the_smoothed_problem(eps):
    """At convergence: W ⊙ ∇_W J_ε = 0, H ⊙ ∇_H J_ε = 0 and no gradient entry markedly
    negative (the floor lets entries that underflowed recover)."""
    X = _small()
    lam, beta = 0.5, 1.0
    est = NSSLFS(3, n_components=2, lam=lam, beta=beta, eps=eps, random_state=0)
    est.set_params(max_iter=20000, tol=0).fit(X)
    W, H = est.W_, est.H_
    E = X - X @ W @ H
    S = E / np.sqrt(E**2 + eps)
    gW = -X.T @ S @ H.T + lam * W / np.sqrt((W**2).sum(1) + eps)[:, None]
    gH = -(X @ W).T @ S + beta * H
    sW, sH = np.abs(X.T @ S @ H.T).max(), np.abs((X @ W).T @ S).max()
    tol = 1e-8 if eps == 1e-1 else 1e-4
    assert np.abs(W * gW).max() <= tol * W.max() * sW
    assert np.abs(H * gH).max() <= tol * H.max() * sH
    assert gW.min() >= -100 * tol * sW and gH.min() >= -100 * tol * sH


def test_scale_balance_at_convergence():
    """Fixed point of the scale step (N8): λ Σ ||w_i||²/√(||w_i||² + ε) = β ||H||_F²."""
    X, _ = _planted()
    for lam, beta in [(1.0, 1.0), (10.0, 0.5)]:
        est = NSSLFS(12, 4, lam=lam, beta=beta, random_state=0, max_iter=300, tol=0).fit(X)
        W, H = est.W_, est.H_
        w2 = (W**2).sum(1)
        left = lam * (w2 / np.sqrt(w2 + est.eps)).sum()
        assert left == pytest.approx(beta * (H**2).sum(), rel=1e-3)


def test_scale_step_minimises_its_majoriser_and_the_penalties():
    """(N8): s_b minimises Σ_b c_b s_b² + e_b/s_b² (zero derivative, minimum), and the
    penalties λΣ√(||w_i||² + ε) + (β/2)||H||² do not increase (XWH is unchanged)."""
    rng = np.random.default_rng(0)
    lam, beta, eps = 0.8, 1.7, 1e-6
    for _ in range(5):
        W, H = rng.random((9, 3)) * rng.random(3) * 5, rng.random((3, 9))
        s = _balance(W, H, lam, beta, eps)
        d = 0.5 / np.sqrt((W**2).sum(1) + eps)
        c = lam * (d[:, None] * W**2).sum(0)
        e = 0.5 * beta * (H**2).sum(1)
        np.testing.assert_allclose(2 * c * s, 2 * e / s**3, rtol=1e-12)  # stationary
        pen = lambda W, H: (  # noqa: E731
            lam * np.sqrt((W**2).sum(1) + eps).sum() + 0.5 * beta * (H**2).sum()
        )
        assert pen(W * s, H / s[:, None]) <= pen(W, H) + 1e-12


def test_only_lam_squared_beta_matters():
    """(λ, β) and (λ/a, a²β) are the same problem up to W → aW, H → H/a (as ε → 0), and
    every step of the algorithm is equivariant under that map. (Compared over two
    iterations: at ε = 1e-14 the IRLS weights of near-zero residuals amplify rounding.)"""
    X, _ = _planted(6, 24)
    rng = np.random.default_rng(3)
    W0, H0 = rng.random((30, 4)), rng.random((4, 30))
    a, eps = 3.0, 1e-14
    kw = dict(random_state=0, max_iter=2, tol=0, eps=eps)
    one = NSSLFS(6, 4, lam=2.0, beta=1.0, init=W0, h_init=H0, **kw).fit(X)
    two = NSSLFS(6, 4, lam=2.0 / a, beta=a * a, init=a * W0, h_init=H0 / a, **kw).fit(X)
    np.testing.assert_array_equal(one.feature_order_, two.feature_order_)
    np.testing.assert_allclose(two.W_, a * one.W_, rtol=1e-9)
    np.testing.assert_allclose(two.H_, one.H_ / a, rtol=1e-9)
    np.testing.assert_allclose(two.objective_, one.objective_, rtol=1e-11)
    W, H = rng.random((30, 4)), rng.random((4, 30))
    assert nsslfs_objective(X, a * W, H / a, 2.0 / a, a * a, eps) == pytest.approx(
        nsslfs_objective(X, W, H, 2.0, 1.0, eps), rel=1e-12
    )


def test_without_beta_the_scale_drifts():
    """β = 0 (the abstract's model as stated) has no minimiser: ||W||_{2,1} keeps falling
    while ||H|| grows; β = 1 keeps the scale bounded."""
    X, _ = _planted()
    norms = {}
    for beta in (0.0, 1.0):
        l21, hn = [], []

        def cb(t, W, H, l21=l21, hn=hn):
            l21.append(np.linalg.norm(W, axis=1).sum())
            hn.append(np.linalg.norm(H))

        NSSLFS(12, 4, lam=100.0, beta=beta, random_state=0, max_iter=1000, tol=0, callback=cb).fit(
            X
        )
        norms[beta] = np.array(l21), np.array(hn)
    l21, hn = norms[0.0]
    assert np.all(np.diff(l21) < 0) and np.mean(np.diff(hn) > 0) > 0.95
    assert hn[-1] > 3 * hn[99]
    l21, hn = norms[1.0]
    assert hn[-1] < 1.1 * hn[99] and l21[-1] > 0.5 * l21[99]


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@pytest.mark.parametrize("seed", range(3))
def test_planted_features(seed):
    """12 signal features among 50 (random choice finds 2.9 of 12 on average)."""
    X, signal = _planted(seed=seed)
    est = NSSLFS(12, 4, random_state=0).fit(X)
    hits = len(set(est.selected_features_) & set(signal))
    assert hits >= 8, hits  # measured 9, 10, 10 for seeds 0, 1, 2


def test_deterministic_and_init_options():
    X = _small(5, (40, 10))
    a = NSSLFS(3, 2, random_state=7, max_iter=50, tol=0).fit(X)
    b = NSSLFS(3, 2, random_state=7, max_iter=50, tol=0).fit(X)
    np.testing.assert_array_equal(a.W_, b.W_)
    c = NSSLFS(3, 2, init=a.W_init_, h_init=a.H_init_, max_iter=50, tol=0).fit(X)
    np.testing.assert_allclose(c.W_, a.W_, rtol=1e-12)
    d = NSSLFS(
        3, 2, init=lambda X, k, rs: np.ones((X.shape[1], k)), max_iter=5, tol=0, random_state=0
    ).fit(X)
    # a random H⁰ next to a given W⁰ carries the whole scale match
    assert np.linalg.norm(X @ d.W_init_ @ d.H_init_) == pytest.approx(np.linalg.norm(X))
    np.testing.assert_array_equal(d.W_init_, 1.0)
    # n_components overrides n_clusters
    assert NSSLFS(3, 2, n_components=5, max_iter=2, tol=0).fit(X).W_.shape == (10, 5)


def test_convergence_flags_and_warning():
    X = _small()
    with pytest.warns(ConvergenceWarning, match="did not converge"):
        est = NSSLFS(3, 2, random_state=0, max_iter=3).fit(X)
    assert not est.converged_ and est.n_iter_ == 3
    est = NSSLFS(3, 2, random_state=0, tol=1e-3).fit(X)
    assert est.converged_ and est.n_iter_ < est.max_iter
    rel = (est.objective_[-2] - est.objective_[-1]) / est.objective_[-2]
    assert rel <= 1e-3


@pytest.mark.parametrize(
    "params, match",
    [
        ({"lam": 0.0}, "lam must be > 0"),
        ({"lam": -1.0}, "lam must be > 0"),
        ({"beta": -0.1}, "beta must be >= 0"),
        ({"eps": 0.0}, "eps must be > 0"),
        ({"tol": -1e-3}, "tol must be >= 0"),
        ({"max_iter": 0}, "max_iter must be an integer >= 1"),
        ({"max_iter": 2.5}, "max_iter must be an integer >= 1"),
        ({"n_components": 0}, r"n_clusters\) must be an integer in \[1, 8\]"),
        # m > p: the shared rule of UFSSelector.min_n_features, checked before _fit
        ({"n_components": 9}, r"needs at least 9 non-constant features; got n_features=8"),
        ({"n_components": True}, "must be an integer in"),
        ({"n_clusters": 9}, r"needs at least 9 non-constant features; got n_features=8"),
        ({"n_clusters": None}, "needs n_components or n_clusters"),
        ({"init": -np.ones((8, 2))}, "init must be non-negative"),
        ({"h_init": np.ones((8, 2))}, r"h_init must have shape \(2, 8\)"),
        ({"init": "nndsvd"}, "init must be one of"),
        ({"input_space": "log"}, "input_space"),
    ],
)
def test_bad_parameters(params, match):
    kw = {"n_clusters": 2, **params}
    with pytest.raises(ValueError, match=match):
        NSSLFS(3, **kw).fit(_small())


def test_registry_entry():
    spec = get_method("nsslfs")
    assert spec.kind == "ranking"
    assert spec.grid == {"lam": [1e-3, 1e-2, 1e-1, 1.0, 1e1, 1e2, 1e3]}
    est = make_estimator("nsslfs", n_features_to_select=3, n_clusters=2, random_state=0)
    assert isinstance(est, NSSLFS) and est.n_clusters == 2 and est.beta == 1.0
