"""Unsupervised feature selection for balanced clustering (Zhou et al. 2020; ``fsbc.md``).

Model (paper notation, data ``X ∈ R^{d×n}``, ``k`` selected features, ``c`` clusters)::

    min  ||W diag(v) X − G Fᵀ||_F² + λ Σ_m p_m log p_m + τ ||W||_F²                (Eq. 5)
    s.t. F ∈ {0,1}^{n×c} one-hot rows,  p_m = Σ_i F_im / n,  v ∈ {0,1}^d,  1ᵀv = k

with ``W ∈ R^{c×d}``, ``G ∈ R^{c×c}``. The API takes ``X`` as ``n × d`` (scikit-learn);
the paper's ``X`` is our ``X.T`` and its ``k`` is our ``h`` (``n_features_to_select``).

Size (~700 lines): the paper's Algorithm 1 step by step (F, W, G, v updates) plus its
wide-data factor path and the round-off-tie flag; one estimator, kept whole so that the
code reads in the paper's order.
"""

from __future__ import annotations

import warnings

import numpy as np
import scipy.linalg as sla
from scipy.optimize import brentq
from sklearn.cluster import KMeans
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state

from ..base import ROUNDOFF_RTOL, DegenerateFitWarning, Selection, UFSSelector
from ..linalg import leading_right_singular_vectors, row_norms, thin_svd, top_rows
from ..validation import resolve_init

__all__ = [
    "FSBC",
    "fsbc_objective",
    "ridge_w",
    "l2box_admm",
    "update_centroids",
    "update_assignments",
    "assignment_lagrangian",
    "solve_p",
    "resolved_selection",
]


# ----------------------------------------------------------------------------------------
# Sub-problem solvers (module level so that tests can check each against brute force)
# ----------------------------------------------------------------------------------------
def ridge_w(X: np.ndarray, S: np.ndarray, G: np.ndarray, labels: np.ndarray, tau: float):
    """W-step, Eq. (8) with the k × k block trick of Eqs. (9)-(11).

    ``W = G Fᵀ Xᵀ diag(v) (diag(v) X Xᵀ diag(v) + τ I)⁻¹`` (paper notation). With ``S``
    the support of ``v``, the inverse is block diagonal (Eq. 10), so ``W[:, S] =
    G (Fᵀ X_S) (X_Sᵀ X_S + τ I)⁻¹`` and ``W[:, j] = 0`` for ``j ∉ S`` (``diag(v)`` zeroes
    those columns of ``G Fᵀ Xᵀ diag(v)``). Cost ``O(n|S|² + |S|³)``; when ``|S| > n``
    (only in iteration 1, ``v = 1``, if ``d > n``) the equal push-through form
    ``X_Sᵀ (X_S X_Sᵀ + τI)⁻¹ F Gᵀ`` (an ``n × n`` solve, cheaper than ``d × d``) is used.
    Returns the c × d ``W``.
    """
    n, d = X.shape
    c = G.shape[1]
    XS = X[:, S]
    W = np.zeros((G.shape[0], d))
    if S.shape[0] <= n:
        M = _cluster_sums(XS, labels, c)  # Fᵀ X_S, c × |S|
        B = XS.T @ XS
        B[np.diag_indices_from(B)] += tau
        W[:, S] = sla.solve(B, (G @ M).T, assume_a="pos", check_finite=False).T
    else:  # push-through identity (|S| > n, i.e. v = 1 in iteration 1 when d > n)
        K = XS @ XS.T
        K[np.diag_indices_from(K)] += tau
        FGt = G.T[labels]  # F Gᵀ, n × c
        W[:, S] = (XS.T @ sla.solve(K, FGt, assume_a="pos", check_finite=False)).T
    return W


def _cluster_sums(X: np.ndarray, labels: np.ndarray, c: int) -> np.ndarray:
    """``Fᵀ X`` (c × columns) for the one-hot ``F`` of ``labels``."""
    F = np.zeros((X.shape[0], c))
    F[np.arange(X.shape[0]), labels] = 1.0
    return F.T @ X


def l2box_admm(
    Q: np.ndarray,
    T: np.ndarray,
    b: np.ndarray,
    h: int,
    *,
    mu: float = 1.0,
    alpha: float = 1.1,
    mu_max: float = 1e10,
    max_iter: int = 1000,
    tol: float = 1e-4,
    curvature: float | None = 100.0,
    factor: np.ndarray | None = None,
) -> tuple[np.ndarray, int, bool]:
    """Algorithm 1: ℓ2-box ADMM (Eqs. 13-19, 23) for ``min_v ½vᵀQ̃v − b̃ᵀv`` over
    ``v ∈ {0,1}^d, 1ᵀv = h`` (Eq. 12 up to a constant), where the full ``d × d``
    ``Q̃ = 2 (WᵀW) ⊙ (X Xᵀ)`` vanishes outside the ``T × T`` block (``T`` = the non-zero
    columns of ``W``) and ``Q = Q̃[T, T]``; ``b = 2 diag(X F Gᵀ W)`` (length d).

    Steps per iteration (``μ`` is the paper's ``μ₂``, written ``ρ`` in Eqs. 15-19):

    * v-update, the minimiser of Eq. (14): ``(Q̃ + 2μI + μ11ᵀ) v = b − y₁ − y₂ +
      μ(v₁ + v₂) + (μh − y₃)1``. This is Eq. (15) with two typos corrected (derived from
      Eq. 14): the last term is ``(μh − y₃)1`` (paper: ``(y₃ − ρk)1``), and in Eq. (21)
      ``(Q̃ + 2μI)⁻¹ = U(Λ + 2μI)⁻¹Uᵀ`` (paper: ``(S + I/(2μ₂))⁻¹``). The inverse is
      applied through one eigendecomposition ``Q = UΛUᵀ`` (Eq. 20; symmetric PSD, so
      it is the SVD) computed once per call — on the ``|T| × |T|`` block only; outside
      ``T`` the matrix is ``2μI`` — and the Sherman–Morrison formula (Eqs. 22-23).
    * ``v₁ = P_box(v + y₁/μ)`` (Eq. 17), ``v₂ = P_sphere(v + y₂/μ)`` (Eq. 18).
    * ``y₁ += μ(v − v₁)``, ``y₂ += μ(v − v₂)``, ``y₃ += μ(1ᵀv − h)``, ``μ ← min(αμ,
      μ_max)`` (Eq. 19).

    Initialisation (Algorithm 1 line 1): ``μ = 1``, ``α = 1.1``, ``v₁ = v₂ = 0``; the
    multipliers start at 0 (not stated). Stopping rule (not stated; the rule of the
    ℓp-box ADMM code of Wu & Ghanem [46]): ``max(||v − v₁||, ||v − v₂||) ≤ tol·||v||``
    and ``|1ᵀv − h| ≤ tol·h``, or ``max_iter`` iterations.

    Scaling (not in the paper): unless ``curvature`` is ``None``, ``Q`` and ``b`` are
    multiplied by ``curvature / λ_max(Q)``. This multiplies Eq. (12) by a positive
    constant, so the minimiser is unchanged, but it makes the fixed schedule
    ``μ = 1, α = 1.1`` relative to the curvature of the problem (running on the raw
    scale is the same as starting at ``μ = λ_max(Q) / curvature``). Without it the ADMM
    is not scale invariant: Eq. (5) is homogeneous of degree 2 in ``(W, G)`` and the
    W/G updates shrink both geometrically (see :class:`FSBC`), so after some
    iterations ``Q`` and ``b`` are negligible next to ``μ`` and the rounded ``v`` is
    arbitrary. ``curvature = 100`` (i.e. ``μ`` starts at 1 % of ``λ_max``) was chosen
    on 40 random instances (d = 8, h = 3) against brute force: the rounded ADMM
    solution was optimal in 33/40 (26/40 with curvature 1; 17–32/40 on the raw scale,
    depending on the scale of ``W``).

    ``factor`` (then ``Q = None``): ``Z`` with ``Q = ZᵀZ`` (``r × |T|``). When ``r < |T|``
    the eigenpairs come from the thin SVD ``Z = PΣVᵀ`` (``Q = VΣ²Vᵀ``: ``O(|T|r²)``
    instead of ``O(|T|³)``) and the shifted inverse is applied as ``x/(2μ) −
    V diag(λ/((λ + 2μ)2μ)) Vᵀx`` (the complement of ``V`` has eigenvalue 0): ``O(|T|r)``
    per iteration instead of ``O(|T|²)``. The same iterates up to round-off
    (``tests/test_fsbc.py``).

    Returns ``(v, n_iter, converged)`` with the continuous final ``v`` (the caller rounds).
    """
    d = b.shape[0]
    lam, U = _psd_eigenpairs(Q, factor)
    thin = lam.size < len(T)  # U spans part of T: the rest has eigenvalue 0
    if curvature is not None:
        top = lam[-1] if lam.size and lam[-1] > 0 else np.abs(b).max()
        if top > 0:
            lam = lam * (curvature / top)
            b = b * (curvature / top)
    ones = np.ones(d)

    def solve_shifted(x: np.ndarray, m: float) -> np.ndarray:  # (Q̃ + 2mI)⁻¹ x, Eq. (21)
        out = x / (2.0 * m)  # x may be d × 2 (u and 1 solved together)
        if thin:
            out[T] -= U @ ((U.T @ x[T]) * (lam / ((lam + 2.0 * m) * (2.0 * m)))[:, None])
        else:
            out[T] = U @ ((U.T @ x[T]) / (lam + 2.0 * m)[:, None])
        return out

    v1 = np.zeros(d)
    v2 = np.zeros(d)
    y1 = np.zeros(d)
    y2 = np.zeros(d)
    y3 = 0.0
    half_sqrt_d = 0.5 * np.sqrt(d)
    converged = False
    v = v1
    it = 0
    for _ in range(int(max_iter)):
        it += 1
        u = b - y1 - y2 + mu * (v1 + v2) + (mu * h - y3)
        z, w = solve_shifted(np.column_stack([u, ones]), mu).T
        v = z - (mu * z.sum() / (1.0 + mu * w.sum())) * w  # Sherman–Morrison, Eq. (23)
        v1 = np.clip(v + y1 / mu, 0.0, 1.0)  # Eq. (17)
        x = v + y2 / mu - 0.5
        nx = np.linalg.norm(x)
        v2 = 0.5 + (half_sqrt_d / nx) * x if nx > 0 else ones.copy()  # Eq. (18)
        r1, r2, r3 = v - v1, v - v2, v.sum() - h
        y1 += mu * r1
        y2 += mu * r2
        y3 += mu * r3
        mu = min(alpha * mu, mu_max)
        nv = max(np.linalg.norm(v), np.finfo(float).tiny)
        if max(np.linalg.norm(r1), np.linalg.norm(r2)) <= tol * nv and abs(r3) <= tol * h:
            converged = True
            break
    return v, it, converged


def _psd_eigenpairs(Q: np.ndarray | None, Z: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """Eigenvalues (ascending, clipped at 0: PSD up to round-off) and eigenvectors of
    ``Q``, or of ``ZᵀZ`` from the thin SVD of ``Z`` when it has fewer rows than columns
    (only the ``r = rows`` pairs that can be non-zero)."""
    if (Q is None) == (Z is None):
        raise ValueError("give exactly one of Q and factor")
    if Z is not None and Z.shape[0] < Z.shape[1]:
        _, s, Vt = thin_svd(Z)
        return (s * s)[::-1], np.ascontiguousarray(Vt[::-1].T)  # contiguous: no copy per use
    if Z is not None:
        Q = Z.T @ Z
    lam, U = sla.eigh(Q, check_finite=False, driver="evd")
    return np.maximum(lam, 0.0), U


def resolved_selection(v: np.ndarray, h: int, rtol: float = ROUNDOFF_RTOL) -> tuple[int, int]:
    """``(r, m)``: of the ``h`` largest entries of the v-step's continuous ``v`` (the
    selection), ``r`` are above the ``(h+1)``-th by more than ``rtol`` times the largest
    ``|v|``; the other ``h − r`` are picked by round-off from ``m`` entries tied with the
    ``h``-th at that level (an ADMM that stopped short of a binary ``v``). ``r = h`` and
    ``m = 0`` when the boundary is clear (always when ``h`` is every feature)."""
    v = np.asarray(v, dtype=np.float64)
    if h >= v.shape[0]:
        return int(h), 0
    s = -np.partition(-v, (h - 1, h))[: h + 1]  # the h-th and (h+1)-th largest at h-1, h
    tol = rtol * max(float(np.abs(v).max()), np.finfo(float).tiny)
    if s[h - 1] - s[h] > tol:
        return int(h), 0
    r = int(np.sum(v > s[h] + tol))
    return r, int(np.sum(np.abs(v - s[h]) <= tol))


def update_centroids(Y: np.ndarray, labels: np.ndarray, G_old: np.ndarray) -> np.ndarray:
    """G-step, Eq. (25): ``G = W diag(v) X F (FᵀF)⁻¹``, i.e. column ``m`` is the mean of
    the projected samples ``Y = (W diag(v) X)ᵀ`` (n × c) in cluster ``m``. An empty
    cluster (``FᵀF`` singular; not covered by the paper) keeps its previous centroid."""
    c = G_old.shape[1]
    counts = np.bincount(labels, minlength=c)
    sums = _cluster_sums(Y, labels, c)
    G = G_old.copy()
    nz = counts > 0
    G[:, nz] = (sums[nz] / counts[nz, None]).T
    return G


def assignment_lagrangian(D, labels, gamma, p, mu1) -> float:
    """The F-part of the augmented Lagrangian, Eq. (26), for fixed ``G, W, v, p, γ``.

    ``D[i, m] = ||d_i − g_m||²`` is the squared distance of projected sample ``i`` to
    centroid ``m``."""
    n, c = D.shape
    a = np.bincount(labels, minlength=c) / n
    r = p - a
    return float(D[np.arange(n), labels].sum() + gamma @ r + 0.5 * mu1 * (r @ r))


def update_assignments(
    D: np.ndarray,
    labels: np.ndarray,
    gamma: np.ndarray,
    p: np.ndarray,
    mu1: float,
    max_sweeps: int = 100,
) -> tuple[np.ndarray, int]:
    """F-step, Eqs. (26)-(27): exact minimisation over one row of ``F`` at a time,
    repeated until no row changes (or ``max_sweeps`` passes).

    For row ``i`` with ``s_m = Σ_{j≠i} F_jm``, putting sample ``i`` in cluster ``m``
    costs (up to terms independent of ``m``)::

        ||d_i − g_m||² − (γ_m + μ₁ p_m)/n + μ₁ (1 + 2 s_m) / (2n²).

    This is Eq. (27) re-derived from Eq. (26): the paper prints ``μ₁ F_im s_m/(2n²)``
    for the cross term, but ``(F_im + s_m)²`` contributes ``2 F_im s_m``. Every move
    strictly lowers Eq. (26) (block-coordinate descent), so the loop terminates.

    Row order (the paper leaves it open): each pass finds, vectorised, the rows that
    would move under the current cluster sizes and then revisits exactly those rows in
    index order, re-evaluating each with the sizes updated by the earlier moves. A row
    moves only on a strict decrease (ties keep the current cluster; among several best
    clusters the lowest index wins). Returns ``(labels, n_moves)``.
    """
    n, c = D.shape
    labels = labels.copy()
    counts = np.bincount(labels, minlength=c).astype(np.float64)
    n2 = float(n) * n
    base = D - (gamma + mu1 * p)[None, :] / n + mu1 / (2.0 * n2)
    slope = mu1 / n2  # cost of cluster m grows by slope · s_m
    rows = np.arange(n)
    scale = np.abs(base).max() + 1.0
    eps = 1e-12 * scale
    n_moves = 0
    for _ in range(int(max_sweeps)):
        s = counts[None, :] - (labels[:, None] == np.arange(c)[None, :])
        cost = base + slope * s
        best = np.argmin(cost, axis=1)
        want = np.flatnonzero(cost[rows, best] < cost[rows, labels] - eps)
        if want.size == 0:
            break
        for i in want:
            cur = labels[i]
            s_i = counts.copy()
            s_i[cur] -= 1.0
            ci = base[i] + slope * s_i
            m = int(np.argmin(ci))
            if m != cur and ci[m] < ci[cur] - eps:
                labels[i] = m
                counts[cur] -= 1.0
                counts[m] += 1.0
                n_moves += 1
    return labels, n_moves


def solve_p(a: np.ndarray, gamma: np.ndarray, mu1: float, lam: float) -> np.ndarray:
    """p-step, Eqs. (28)-(29): ``p_m = argmin λ p log p + γ_m p + (μ₁/2) p² − μ₁ a_m p``.

    ``λ > 0``: the unique root of ``f(p) = λ log p + μ₁ p + γ_m + λ − μ₁ a_m`` on
    ``(0, ∞)`` (``f`` is strictly increasing). The paper's bracket ``(0, 1]`` relies on
    ``f(1) > 0``, which fails when ``γ_m < −λ − μ₁(1 − a_m)``; we solve for
    ``t = log p`` with :func:`scipy.optimize.brentq` on a bracket that is valid for
    every ``γ``: with ``C = γ_m + λ − μ₁ a_m``, ``t_lo = min(0, −(μ₁ + C)/λ) − 1`` gives
    ``f < 0`` and ``t_hi = 1 + max(0, min(−C/λ, log max(−C/μ₁, 1)))`` gives ``f > 0``.

    ``λ = 0`` (FSBC_nobal): Eq. (29) is linear, ``p = a − γ/μ₁``.
    """
    a = np.asarray(a, dtype=np.float64)
    gamma = np.asarray(gamma, dtype=np.float64)
    if lam == 0:
        return a - gamma / mu1
    p = np.empty_like(a)
    for m in range(a.shape[0]):
        C = gamma[m] + lam - mu1 * a[m]

        def g(t, C=C):
            return lam * t + mu1 * np.exp(t) + C

        t_lo = min(0.0, -(mu1 + C) / lam) - 1.0
        t_hi = 1.0 + max(0.0, min(-C / lam, np.log(max(-C / mu1, 1.0))))
        p[m] = np.exp(brentq(g, t_lo, t_hi, xtol=1e-14, rtol=4 * np.finfo(float).eps))
    return p


def fsbc_objective(X, W, S, G, labels, lam: float, tau: float) -> float:
    """Eq. (5) with ``p = a`` (the constraint ``p_m = Σ_i F_im / n`` imposed):
    ``||W diag(v) X − G Fᵀ||² + λ Σ a_m log a_m + τ ||W||²`` (``0 log 0 = 0``)."""
    n = X.shape[0]
    c = G.shape[1]
    Y = X[:, S] @ W[:, S].T
    fit = float(((Y - G.T[labels]) ** 2).sum())
    a = np.bincount(labels, minlength=c) / n
    a = a[a > 0]
    return fit + lam * float((a * np.log(a)).sum()) + tau * float((W * W).sum())


# ----------------------------------------------------------------------------------------
class FSBC(UFSSelector):
    """FSBC: select exactly ``h`` features for balanced k-means (Algorithm 2).

    Parameters
    ----------
    n_features_to_select : int
        ``h`` (the paper's ``k``): number of ones in ``v``.
    n_clusters : int
        ``c``, the number of clusters (rows of ``W``; columns of ``F`` and ``G``).
    lambda_scale : float
        Balance weight as the *unscaled* factor: ``λ = lambda_scale · n²``. §4.3 tunes
        ``λ ∈ n² · [1e-3, 1e3]`` because ``Σ p log p`` is tiny next to the fit term; a
        grid of absolute λ values cannot express an ``n``-dependent range, so the
        constructor takes the factor (the registry grid is ``{1e-3, …, 1e3}``, i.e.
        exactly §4.3). ``0`` gives FSBC_nobal (§4.2, "set λ = 0").
    tau : float
        ``τ``, the ridge weight on ``||W||_F²`` (§4.3: ``[1e-3, 1e3]``).
    max_iter : int
        Cap on the outer iterations of Algorithm 2.
    tol : float
        Outer tolerance on the balance constraint residual ``max_m |p_m − a_m|``.
    patience : int
        Outer stopping: the selection ``v`` and the clusters ``F`` are unchanged for
        ``patience`` consecutive iterations and ``max|p − a| ≤ tol``.
    mu1, beta : float
        ``μ₁`` start and growth ``μ₁ ← β μ₁`` (Algorithm 2 line 1: 1 and 1.1).
    mu2, alpha : float
        ``μ₂`` start and growth in Algorithm 1 (line 1: 1 and 1.1).
    mu_max : float
        Cap on ``μ₁`` and ``μ₂`` (not in the paper; the usual ADMM safeguard against
        overflow, as in the ℓp-box code).
    admm_max_iter, admm_tol, admm_curvature : int, float, float or None
        Cap, tolerance and problem scaling of Algorithm 1 (see :func:`l2box_admm`).
    literal_v_step : bool
        Run Algorithm 1 in every outer iteration (see Remarks); default ``False``.
    n_init : int
        k-means restarts of the initialisation (sklearn ``KMeans``).
    init : {"kmeans"}, callable or array of shape (n_samples, n_clusters)
        The initial partition ``F⁰`` (``n × c``, the paper's one-hot ``F``: row ``i`` has
        a single 1 in the column of sample ``i``'s cluster). ``"kmeans"`` (default):
        k-means on the PCA projection, Algorithm 2 line 1 (see below). A callable is
        called as ``init(X, n_clusters, random_state)`` with the (constant-free) ``X``
        and a ``RandomState`` (from labels ``y``: pass ``np.eye(c)[y]``). Rows that are
        not one-hot raise ``ValueError``. ``G⁰`` is always computed from ``F⁰``
        (cluster means of the PCA projection), so ``np.eye(c)[est.labels_]`` of a
        previous fit warm-starts the partition.
    random_state : int, RandomState or None
        Seeds the k-means initialisation (the only random step).
    callback : callable, optional
        ``callback(t, W=W, support=S, G=G, labels=labels, p=p, gamma=gamma, mu1=mu1)``
        after every outer iteration (monitoring/tests; do not modify the arrays).

    Algorithm (Algorithm 2, step by step)
    -------------------------------------
    Initialisation (line 1): ``W`` = the leading ``c`` principal directions of ``X``
    (rows; centred PCA, sign-fixed; zero rows if the rank is below ``c``); ``v = 1``;
    ``F, G`` = k-means (``n_init`` restarts, seeded) on the projected data ``X Wᵀ``
    (``init="kmeans"``; any other ``init`` replaces ``F`` only), ``G`` the centroids
    (the cluster means of ``X Wᵀ`` under ``F``); ``p = a`` with ``a_m = n_m / n``;
    ``γ = 0`` (not stated), ``μ₁ = 1``.
    Then repeat:

    1. ``W`` by Eq. (8) with the block trick (:func:`ridge_w`).
    2. ``v`` by Algorithm 1 (:func:`l2box_admm`), then rounded to exactly ``h`` ones:
       the ``h`` largest entries of the ADMM's ``v`` (ties to the lower index). This is
       the Euclidean projection onto ``{v ∈ {0,1}^d : 1ᵀv = h}``; at ADMM convergence
       ``v`` is already binary to within ``admm_tol`` and the rounding changes nothing.
    3. ``G`` by Eq. (25) (:func:`update_centroids`).
    4. ``F`` by row-wise exact minimisation of Eq. (26) (:func:`update_assignments`).
    5. ``p`` by Eq. (29) (:func:`solve_p`).
    6. ``γ_m += μ₁ (p_m − a_m)``, ``μ₁ ← β μ₁`` (Eq. 30).

    Stopping rule (not stated in the paper): the support of ``v`` and the partition
    ``F`` are unchanged for ``patience`` consecutive iterations and the balance
    constraint residual ``max_m |p_m − a_m| ≤ tol`` (with ``λ = 0``, ``γ`` stays 0 and
    ``p`` equals the previous ``a``); else ``max_iter`` iterations and a
    ``ConvergenceWarning``.

    Selection rule: the selected features are the support of the final ``v`` (exactly
    ``h``), ordered by the column norms of the last ``W`` (largest first, ties to the
    lower index). No per-feature scores are returned (the method is a subset method).

    Remarks
    -------
    * Feature selection happens in the first iteration. From iteration 2 on, ``W``
      from Eq. (8) is zero outside the current support ``S`` (Eq. 10), so the v-problem
      (Eq. 12) no longer depends on ``v_j`` for ``j ∉ S``; and because ``W[:, S]`` is the
      ridge minimiser, zeroing any of its columns strictly increases the fit (the fit
      along ``t ↦ W[:, T]·t`` is convex with negative slope ``−2τ||W_T||²`` at ``t = 1``).
      So the exact optimum of Eq. (12) is the current ``v`` and the support can only
      change if the ADMM heuristic misses it. By default (``literal_v_step=False``)
      Algorithm 1 therefore runs only in iteration 1 (``v = 1``, the one real choice)
      and later v-steps return that exact optimum; ``literal_v_step=True`` runs it
      every iteration and accepts its rounded output, as printed in Algorithm 2 (on
      digits it then proposed a different, always worse, support in some iterations).
      The balance term hence changes the clusters ``F`` (``labels_``) but not the
      selected features; ``support_history_`` records the support per iteration.
    * With ``λ = 0`` the objective of Eq. (5) is non-increasing from the end of
      iteration 1 on whenever step 2 keeps the support (W, G exact minimisers; the F
      step lowers the fit because ``γ = 0`` and ``p`` = previous ``a``). With ``λ > 0``
      the multiplier updates make it non-monotone; the paper claims no monotonicity.
    * The model has the trivial infimum ``W = 0, G = 0``; the W/G alternation shrinks
      their scale every iteration (by the canonical correlations between the cluster
      indicators and the selected features). The selection and the partition are
      scale-free, so this affects only the recorded objective values.
    * Dense work: one eigendecomposition of ``Q̃ = 2 (WᵀW) ⊙ (XᵀX)`` (``d × d``) in the
      first iteration (``v = 1``), then only ``h × h`` blocks; no ``n × n`` matrix. Its
      rank is at most ``cn``: when ``cn ≤ d/2`` (the wide data sets) ``Q̃`` is never
      formed, its eigenpairs come from the thin SVD of the ``cn × d`` factor
      (``O(d(cn)²)`` instead of ``O(d³)``; :func:`l2box_admm`, ``factor``).

    Attributes
    ----------
    objective_ : ndarray
        Eq. (5) (with ``p = a``) after every outer iteration.
    residual_ : ndarray
        ``max_m |p_m − a_m|`` after every outer iteration.
    v_ : ndarray
        Final binary indicator (length = informative features), exactly ``h`` ones.
    labels_ : ndarray
        Final clusters (argmax of the one-hot rows of ``F``).
    W_, G_, p_, gamma_ : ndarray
        Final ``W`` (c × d), ``G`` (c × c), ``p`` and ``γ``.
    lambda_ : float
        ``λ = lambda_scale · n²`` actually used.
    support_history_ : list of ndarray
        Sorted support of ``v`` after each iteration.
    admm_n_iter_ : ndarray
        Iterations of Algorithm 1 per outer iteration; ``admm_converged_`` likewise.
    n_iter_, converged_ : int, bool
    resolved_rank_, n_tied_ : int
        Of the ``h`` features the v-step's rounding selected, how many stand above
        round-off in its continuous ``v`` (:func:`resolved_selection`), and how many
        features tie with the ``h``-th. ``resolved_rank_ < h`` (Algorithm 1 stopped short
        of a binary ``v`` and the last picks are round-off: seen on pixraw10p at
        ``h = 100``, 99 clear and 1 of ~9 900 tied to 1e-9) warns
        :class:`~ufs.base.DegenerateFitWarning`; the workflow marks the fit degenerate (◊).
    """

    kind = "subset"

    def __init__(
        self,
        n_features_to_select: int = 10,
        n_clusters: int | None = None,
        *,
        lambda_scale: float = 1.0,
        tau: float = 1.0,
        max_iter: int = 500,
        tol: float = 1e-4,
        patience: int = 3,
        mu1: float = 1.0,
        beta: float = 1.1,
        mu2: float = 1.0,
        alpha: float = 1.1,
        mu_max: float = 1e20,
        admm_max_iter: int = 1000,
        admm_tol: float = 1e-4,
        admm_curvature: float | None = 100.0,
        literal_v_step: bool = False,
        n_init: int = 10,
        init="kmeans",
        random_state=None,
        callback=None,
    ):
        self.n_features_to_select = n_features_to_select
        self.n_clusters = n_clusters
        self.lambda_scale = lambda_scale
        self.tau = tau
        self.max_iter = max_iter
        self.tol = tol
        self.patience = patience
        self.mu1 = mu1
        self.beta = beta
        self.mu2 = mu2
        self.alpha = alpha
        self.mu_max = mu_max
        self.admm_max_iter = admm_max_iter
        self.admm_tol = admm_tol
        self.admm_curvature = admm_curvature
        self.literal_v_step = literal_v_step
        self.n_init = n_init
        self.init = init
        self.random_state = random_state
        self.callback = callback

    def _check_params(self) -> None:
        if not self.lambda_scale >= 0:
            raise ValueError(f"lambda_scale must be >= 0; got {self.lambda_scale}")
        if not self.tau > 0:
            raise ValueError(f"tau must be > 0; got {self.tau}")
        for name in ("mu1", "mu2"):
            if not getattr(self, name) > 0:
                raise ValueError(f"{name} must be > 0")
        for name in ("beta", "alpha"):
            if not getattr(self, name) >= 1:
                raise ValueError(f"{name} must be >= 1")
        if int(self.max_iter) < 1 or int(self.admm_max_iter) < 1 or int(self.patience) < 1:
            raise ValueError("max_iter, admm_max_iter and patience must be >= 1")

    def _initialise(self, X: np.ndarray, c: int, rs):
        """Algorithm 2 line 1: PCA ``W``, ``v = 1``, ``F`` from ``init`` (k-means on
        ``X Wᵀ`` by default), ``G`` the cluster means of ``X Wᵀ``."""
        n, d = X.shape
        s, P = leading_right_singular_vectors(X - X.mean(axis=0))
        r = int(np.sum(s > s[0] * max(n, d) * np.finfo(float).eps)) if s.size else 0
        W0 = np.zeros((c, d))
        W0[: min(c, r)] = P[:, : min(c, r)].T
        Y = X @ W0.T

        def kmeans() -> np.ndarray:
            km = KMeans(n_clusters=c, n_init=int(self.n_init), random_state=rs).fit(Y)
            return np.eye(c)[km.labels_]

        F = resolve_init(self.init, {"kmeans": kmeans}, (n, c), X=X, n_clusters=c, random_state=rs)
        one_hot = np.isin(F, (0.0, 1.0)).all(axis=1) & (F.sum(axis=1) == 1.0)
        if not one_hot.all():
            bad = int(np.flatnonzero(~one_hot)[0])
            raise ValueError(
                f"init must be a one-hot cluster indicator (each row a single 1, zeros "
                f"elsewhere); row {bad} is {F[bad].tolist()}"
            )
        labels = F.argmax(axis=1).astype(np.int64)
        G = update_centroids(Y, labels, np.zeros((c, c)))
        return labels, G

    def _v_step(self, X, W, S, G, labels, h, c):
        """Algorithm 1 on Eq. (12) and the rounding to exactly ``h`` ones."""
        XS = X[:, S]
        WS = W[:, S]
        n = X.shape[0]
        Q = Z = None
        if c * n <= S.shape[0] // 2:
            # Q̃ = 2 (WᵀW) ⊙ (XᵀX) = ZᵀZ with the cn × |S| rows Z[(k, i)] = √2 W_k ⊙ x_i:
            # its thin SVD, never the |S| × |S| matrix (l2box_admm, ``factor``)
            Z = (np.sqrt(2.0) * (WS[:, None, :] * XS[None, :, :])).reshape(c * n, -1)
        else:
            Q = 2.0 * (WS.T @ WS) * (XS.T @ XS)
        b = np.zeros(X.shape[1])
        b[S] = 2.0 * ((G.T @ WS) * _cluster_sums(XS, labels, c)).sum(axis=0)
        v, k_it, k_conv = l2box_admm(
            Q,
            S,
            b,
            h,
            mu=float(self.mu2),
            alpha=float(self.alpha),
            mu_max=float(self.mu_max),
            max_iter=int(self.admm_max_iter),
            tol=float(self.admm_tol),
            curvature=self.admm_curvature,
            factor=Z,
        )
        self.resolved_rank_, self.n_tied_ = resolved_selection(v, h)
        return np.sort(top_rows(v, h)), k_it, k_conv

    def _fit(self, X: np.ndarray) -> Selection:
        self._check_params()
        n, d = X.shape
        h, c = self._h, self._k
        lam = float(self.lambda_scale) * n * n
        tau = float(self.tau)
        rs = check_random_state(self.random_state)
        labels, G = self._initialise(X, c, rs)
        a = np.bincount(labels, minlength=c) / n
        p = a.copy()
        gamma = np.zeros(c)
        mu1 = float(self.mu1)
        S = np.arange(d)  # v = 1
        self.resolved_rank_, self.n_tied_ = h, 0  # no v-step (h = d): nothing rounded
        W = np.zeros((c, d))
        objective, residual, history, admm_iters, admm_conv = [], [], [], [], []
        stable, converged, it = 0, False, 0
        for it in range(1, int(self.max_iter) + 1):
            # 1. W-step, Eq. (8)-(11): non-zero columns only on S
            W = ridge_w(X, S, G, labels, tau)
            # 2. v-step, Algorithm 1 (Q̃ and b are zero outside S)
            if S.shape[0] == h and not self.literal_v_step:
                S_new = S  # the exact minimiser of Eq. (12) here (class docstring)
                admm_iters.append(0)
                admm_conv.append(True)
            else:
                S_new, k_it, k_conv = self._v_step(X, W, S, G, labels, h, c)
                admm_iters.append(k_it)
                admm_conv.append(k_conv)
            # 3. G-step, Eq. (25)
            Y = X[:, S_new] @ W[:, S_new].T
            G = update_centroids(Y, labels, G)
            # 4. F-step, Eqs. (26)-(27)
            D = (
                row_norms(Y, squared=True)[:, None]
                - 2.0 * (Y @ G)
                + row_norms(G.T, squared=True)[None, :]
            )
            np.maximum(D, 0.0, out=D)
            labels_new, _ = update_assignments(D, labels, gamma, p, mu1)
            # 5. p-step, Eq. (29); 6. multipliers, Eq. (30)
            a = np.bincount(labels_new, minlength=c) / n
            p = solve_p(a, gamma, mu1, lam)
            gamma = gamma + mu1 * (p - a)
            mu1 = min(float(self.beta) * mu1, float(self.mu_max))

            same = np.array_equal(S_new, S) and np.array_equal(labels_new, labels)
            S, labels = S_new, labels_new
            objective.append(fsbc_objective(X, W, S, G, labels, lam, tau))
            residual.append(float(np.abs(p - a).max()))
            history.append(S.copy())
            if self.callback is not None:
                self.callback(it, W=W, support=S, G=G, labels=labels, p=p, gamma=gamma, mu1=mu1)
            stable = stable + 1 if same else 0
            if stable >= int(self.patience) and residual[-1] <= self.tol:
                converged = True
                break

        self.objective_ = np.asarray(objective)
        self.residual_ = np.asarray(residual)
        self.support_history_ = history
        self.admm_n_iter_ = np.asarray(admm_iters)
        self.admm_converged_ = np.asarray(admm_conv)
        self.n_iter_ = it
        self.converged_ = converged
        self.lambda_ = lam
        self.W_, self.G_, self.p_, self.gamma_ = W, G, p, gamma
        self.labels_ = labels
        v_bin = np.zeros(d)
        v_bin[S] = 1.0
        self.v_ = v_bin
        if self.resolved_rank_ < h:
            warnings.warn(
                f"FSBC: only {self.resolved_rank_} of the {h} selected features stand above "
                f"round-off in the v-step's continuous v (Algorithm 1 stopped short of a "
                f"binary v); the other {h - self.resolved_rank_} were picked by round-off "
                f"among {self.n_tied_} tied features (h > {self.resolved_rank_} is marked "
                "degenerate)",
                DegenerateFitWarning,
                stacklevel=3,
            )
        if not converged:
            warnings.warn(
                f"FSBC did not converge in {self.max_iter} iterations "
                f"(last max|p − a| = {residual[-1]:.2e}, tol = {self.tol})",
                ConvergenceWarning,
                stacklevel=3,
            )
        norms = row_norms(W[:, S].T)
        order = S[np.argsort(-norms, kind="stable")]
        return Selection(order=order)
