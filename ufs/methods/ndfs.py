"""NDFS: Nonnegative Discriminative Feature Selection (Li, Yang, Liu, Zhou, Lu; AAAI 2012).

Model (K-means UFS paper ``kmeans_ufs.md`` Eq. 33, relaxed as in Li et al.)::

    min_{F ≥ 0, W}  Tr(Fᵀ L̂ F) + α(||XW − F||_F² + β||W||_{2,1}) + (γ/2)||FᵀF − I||_F²

with ``X`` the ``n × p`` data (our orientation; the paper's ``X`` is ``p × n`` and its
``W`` is the same ``p × c`` matrix), ``F`` the ``n × c`` non-negative scaled cluster
indicator and ``L̂ = D^{-1/2}(D − S)D^{-1/2}`` the normalised Laplacian of the kNN graph.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable

import numpy as np
import scipy.sparse as sp
from sklearn.cluster import KMeans
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state

from ..base import Selection, UFSSelector
from ..eigen import component_eigenpairs
from ..linalg import MATLAB_EPS, l2p_reweight, l21_norm, row_norms
from ..validation import resolve_init
from ._nonneg_spectral import (
    check_positive,
    kmeans_indicator,
    normalized_laplacian_split,
    orth_residual,
    ridge_solve,
)

__all__ = ["NDFS", "spectral_indicator", "INITS", "UPDATES", "W_INITS"]

#: named values of ``init`` (F⁰)
INITS = ("spectral", "kmeans")
#: values of ``update`` (the F-step)
UPDATES = ("ratio", "sqrt")
#: :func:`spectral_indicator`'s dense ``eigh`` up to this many nodes per graph component
DENSE_LIMIT = 1000
#: named values of ``w_init`` (W⁰)
W_INITS = ("ones",)


def spectral_indicator(
    L: sp.spmatrix, c: int, random_state=None, *, offset: float = 0.2, n_init: int = 10
) -> np.ndarray:
    """The authors' ``F⁰`` (``NDFS_init`` of Li's code as shipped with FSASL).

    ``U`` = the ``c`` eigenvectors of ``L̂`` with the smallest eigenvalues (computed as the
    largest of ``I − L̂``, per connected component of the graph
    (:func:`ufs.eigen.component_eigenpairs`: dense ``eigh`` up to 1000 samples, certified
    Lanczos on the sparse block above, so a repeated eigenvalue 1 is found in full), rows
    scaled to unit norm (``u_i / sqrt(||u_i||² + eps)``); labels =
    k-means on the rows of ``U`` (``n_init`` replicates from random samples as centres,
    as ``litekmeans``; invariant to the basis chosen inside a repeated eigenvalue); then
    ``F⁰`` = uniform ``[0, 1)`` fill with ``F⁰[i, label_i] = 1``, plus ``offset``. The
    k-means seed and the fill come from one numpy stream seeded by ``random_state`` (the
    authors' Octave/MATLAB stream cannot be reproduced; pass their array as ``init``).
    """
    n = L.shape[0]
    U = component_eigenpairs(
        (sp.identity(n) - L).tocsr(), c, which="largest", dense_limit=DENSE_LIMIT
    ).vectors
    U = U / np.sqrt(np.sum(U * U, axis=1) + MATLAB_EPS)[:, None]
    rs = check_random_state(random_state)
    seed = int(rs.randint(np.iinfo(np.int32).max))
    labels = KMeans(n_clusters=c, n_init=n_init, init="random", random_state=seed).fit_predict(U)
    F = rs.random_sample((n, c))
    F[np.arange(n), labels] = 1.0
    return F + float(offset)


class NDFS(UFSSelector):
    """NDFS (Li et al., AAAI 2012); ranks features by ``||w_i||`` (descending).

    Defaults follow the authors' code (Li's ``AAAI2012.m``, initialised as FSASL's
    ``fs_unsup_ndfs.m``) where the paper is silent; ``tests/test_parity.py`` (case
    ``ndfs``) checks them against that code's output.

    Parameters
    ----------
    n_features_to_select, n_clusters : int
        ``h`` and ``c`` (``F`` has ``c`` columns).
    alpha, beta : float
        Weights of the regression term and of ``||W||_{2,1}`` (Eq. 33). Li et al. tune
        both over ``{10^-6, 10^-4, ..., 10^6}``.
    gamma : float
        Orthogonality penalty; fixed to ``10^8`` "to guarantee the orthogonality"
        (DGUFS paper, settings of the NDFS baseline; also Li et al.'s code default).
    n_neighbors, weight, sigma : kNN graph (``ufs.graph.knn_graph``), ``k = 5``.
    init : {"spectral", "kmeans"}, callable or array ``n × c``, default "spectral"
        ``F⁰`` (non-negative, no all-zero column: a multiplicative update keeps a zero
        entry at zero). ``"spectral"``: the authors' recipe, :func:`spectral_indicator`
        (k-means on the row-normalised ``c`` smallest eigenvectors of ``L̂``, random
        fill, ``+0.2``). ``"kmeans"``: the previous default, k-means on ``X``
        (``n_init = 10``) indicator ``+ 0.2``, columns scaled to unit norm. A callable
        is called as ``init(X, n_clusters, random_state)``
        (:func:`ufs.validation.resolve_init`).
    w_init : {"ones"}, callable or array ``p × c``, default "ones"
        ``W⁰``; only its row norms matter, through the first re-weighting
        ``D⁰_ii = 1/(2 sqrt(||w⁰_i||² + ε))``. ``"ones"``: the authors' ``ones(d, c)``,
        i.e. ``D⁰ = I/(2 sqrt(c + ε))``. Li et al.'s Algorithm 1 and our previous
        default start from ``D⁰ = I``: rows of norm ½, e.g.
        ``w_init=lambda X, c, rs: np.full((X.shape[1], c), 0.5 / np.sqrt(c))``. ``p``
        counts the non-constant features (the matrix the method sees).
    update : {"ratio", "sqrt"}, default "ratio"
        The F-step (below). ``"ratio"``: the authors' plain ratio followed by column
        normalisation. ``"sqrt"``: the previous default, the square root of the ratio
        without rescaling (Ding et al.'s orthogonal-NMF form; same fixed points).
    max_iter : int, default 100
        Iteration budget; the authors run exactly 100 (their convergence test is
        commented out).
    tol : float, default 0
        ``0``: run exactly ``max_iter`` iterations (the authors' rule; no warning,
        ``converged_ = False``). ``> 0``: also stop when the relative decrease of
        ``objective_`` is ``≤ tol``; a ``ConvergenceWarning`` if ``max_iter`` is reached
        first.
    eps : float, default MATLAB ``eps`` (2.2e-16)
        The authors' ``eps``: IRLS smoothing (:func:`ufs.linalg.l2p_reweight`) and the
        ``+ε`` guards of the ``"ratio"`` step and of the column normalisation (the
        previous default was ``1e-8``).
    random_state : seeds the named initialisations (k-means and the random fill).
    callback : optional ``callback(t, F=F, W=W)`` after every iteration (tests/monitoring).

    Algorithm (Li et al., Algorithm 1, in the loop order of the authors' code; X as n × p)
    ----------------------------------------------------------------------------------
    ``D ← D⁰`` (from ``W⁰``), ``F ← F⁰``. Repeat ``t = 1, 2, …``:

    1. ``W = (XᵀX + βD)^{-1} XᵀF`` (W-step for the current ``F``, D of the previous
       step); then ``D_ii = 1/(2 sqrt(||w_i||² + ε))`` (ℓ2,1 IRLS) for the next step.
    2. ``M F = L̂F + α(F − XW)`` with the ``W`` of step 1, i.e.
       ``M = L̂ + α(I − X(XᵀX + βD_old)^{-1}Xᵀ)`` (n × n), never formed: one ``p × p``
       Cholesky solve (Woodbury when ``p > n``) and a sparse product.
    3. F-step, ``"ratio"``: ``F ← F ⊙ (γF + ε) / (MF + γFFᵀF + ε)``, then
       ``F ← F diag(1/sqrt(diag(FᵀF) + ε))``. ``"sqrt"``:
       ``F ← F ⊙ sqrt(γF / (MF + γFFᵀF))``.

    ``W_``, ``F_`` are the pair of the last iteration (so, as in the authors' code, ``W_``
    is the regression of the ``F`` before the last F-step; Algorithm 1 writes the W-step
    after the F-step, see below). ``reweight_`` is the ``D`` inside the last ``M`` (the
    authors' recorded objective, ``tr(FᵀMF) + γ/4||FᵀF − I||²``, uses it); ``F_init_``
    is ``F⁰``.

    Choices and measured behaviour. The plain ratio alone 2-cycles in scale when ``γ``
    dominates (it maps ``F = sQ``, ``QᵀQ = I``, to ``Q/s``); the authors' column
    normalisation removes the cycle. ``objective_`` is Eq. 33 (γ/2 and the exact
    ``||W||_{2,1}``; the code's own record uses γ/4) at ``(F⁰, first W)`` and then at
    ``(F_t, W_t)`` after every F-step. No proof covers the rescaled step; measured: it
    was non-increasing at every iteration of every run with ``γ ≥ 10^4`` (both updates;
    digits parity input for 2000 iterations; GOLFS example 1 and planted clusters over
    ``α, β ∈ {10^-2, 1, 10^2}``), so the earlier note that the rescaling breaks the
    decrease did not reproduce there. Every increase we saw came from runs where the
    sign-split guard fired (below): ``γ = 10^2, α = 10^2`` (``"ratio"``: 4 of 18 runs;
    ``"sqrt"``: none) and ``γ = 1`` (most runs, both updates). Convergence is slow: at
    ``γ = 10^8`` the objective still falls ~2 % per iteration at iteration 100 and
    > 1e-4 per iteration after 2000 (digits), so a ``tol = 1e-6`` stop is not reached in
    practice; the authors' fixed budget is the default. The run also depends strongly on
    ``F⁰``: on digits, changing only the random fill (same k-means labels) leaves 3-7 of
    the top 10 features in common, at 100 and at 3000 iterations alike (different local
    optima), so parity needs the authors' ``F⁰``, not their recipe. The F-step is
    undefined where a denominator entry is ``≤ 0`` (possible where ``γFFᵀF`` is tiny,
    e.g. small ``γ`` or large ``α``); there only, the sign-split form (``[MF]⁻`` added to
    the numerator, ``[MF]⁺`` kept in the denominator; same fixed points) is used so ``F``
    stays non-negative; ``n_guarded_`` counts such entries. Before the parity work the
    re-weighting ``D`` was computed from the ``W`` of the new ``F`` (Algorithm 1's
    order); the code's order used now changes the digits Eq. 33 value after 100
    iterations by 5e-11 relative. Ranking by the ``W`` of the final ``F`` (either order)
    instead of the code's ``W`` swaps ranking positions 33 and 34 only.

    The graph uses binary weights by default (``S_ij = 1`` on the union kNN graph, as the
    authors' experiments); ``weight="heat"`` gives the heat kernel of ``kmeans_ufs.md``
    footnote 1.
    """

    kind = "ranking"
    score_power = 1  # ranks by ||w_i||: resolved_rank_ recorded

    def __init__(
        self,
        n_features_to_select: int = 10,
        n_clusters: int | None = None,
        *,
        alpha: float = 1.0,
        beta: float = 1.0,
        gamma: float = 1e8,
        n_neighbors: int = 5,
        weight: str = "binary",
        sigma: float | None = None,
        init: str | Callable | np.ndarray = "spectral",
        w_init: str | Callable | np.ndarray = "ones",
        update: str = "ratio",
        max_iter: int = 100,
        tol: float = 0.0,
        eps: float = MATLAB_EPS,
        random_state=None,
        callback=None,
    ):
        self.n_features_to_select = n_features_to_select
        self.n_clusters = n_clusters
        self.alpha = alpha
        self.beta = beta
        self.gamma = gamma
        self.n_neighbors = n_neighbors
        self.weight = weight
        self.sigma = sigma
        self.init = init
        self.w_init = w_init
        self.update = update
        self.max_iter = max_iter
        self.tol = tol
        self.eps = eps
        self.random_state = random_state
        self.callback = callback

    def graph_spec(self) -> dict:
        return {"n_neighbors": self.n_neighbors, "weight": self.weight, "sigma": self.sigma}

    def objective(self, L, X: np.ndarray, F: np.ndarray, W: np.ndarray) -> float:
        """Eq. (33) in Li et al.'s penalised form (see class docstring)."""
        R = X @ W - F
        return float(
            np.sum(F * (L @ F))
            + self.alpha * (np.sum(R * R) + self.beta * l21_norm(W))
            + 0.5 * self.gamma * orth_residual(F)
        )

    def _initial(self, X: np.ndarray, L) -> tuple[np.ndarray, np.ndarray]:
        n, p = X.shape
        c = int(self._k)

        def kmeans_x() -> np.ndarray:
            F = kmeans_indicator(X, c, self.random_state)
            return F / np.linalg.norm(F, axis=0)

        F0 = resolve_init(
            self.init,
            {"spectral": lambda: spectral_indicator(L, c, self.random_state), "kmeans": kmeans_x},
            (n, c),
            X=X,
            n_clusters=c,
            random_state=self.random_state,
            nonnegative=True,
        )
        if not (F0 > 0).any(axis=0).all():
            raise ValueError("init has an all-zero column; a multiplicative update keeps it zero")
        W0 = resolve_init(
            self.w_init,
            {"ones": lambda: np.ones((p, c))},
            (p, c),
            X=X,
            n_clusters=c,
            random_state=self.random_state,
            name="w_init",
        )
        return F0, W0

    def _fit(self, X: np.ndarray) -> Selection:
        check_positive(alpha=self.alpha, beta=self.beta, gamma=self.gamma, eps=self.eps)
        if int(self.max_iter) < 1:
            raise ValueError("max_iter must be >= 1")
        if not float(self.tol) >= 0:
            raise ValueError(f"tol must be >= 0; got {self.tol}")
        if self.update not in UPDATES:
            raise ValueError(f"update must be one of {UPDATES}; got {self.update!r}")
        alpha, beta, gamma, eps = map(float, (self.alpha, self.beta, self.gamma, self.eps))
        tol = float(self.tol)
        L, _, _ = normalized_laplacian_split(self._graph(X))
        F, W0 = self._initial(X, L)
        self.F_init_ = F.copy()
        d = l2p_reweight(W0, 1.0, eps)  # D⁰
        gram = X.T @ X if X.shape[1] <= X.shape[0] else None
        W = ridge_solve(X, beta * d, F, gram=gram)  # first W-step
        objective = [self.objective(L, X, F, W)]
        guarded = 0
        converged = False
        it = 0
        for it in range(1, int(self.max_iter) + 1):
            if it > 1:
                W = ridge_solve(X, beta * d, F, gram=gram)  # step 1: W for the current F and D
            d_m = d  # the D inside this iteration's M
            d = l2p_reweight(W, 1.0, eps)
            MF = L @ F + alpha * (F - X @ W)  # step 2
            FFtF = F @ (F.T @ F)
            g = eps if self.update == "ratio" else 0.0
            num = gamma * F + g
            den = MF + gamma * FFtF + g
            bad = den <= 0
            if bad.any():
                guarded += int(bad.sum())
                num = np.where(bad, num + np.maximum(-MF, 0), num)
                den = np.where(bad, np.maximum(MF, 0) + gamma * FFtF + g, den)
            if self.update == "ratio":  # step 3
                F = F * num / np.maximum(den, 1e-300)
                F = F / np.sqrt(np.sum(F * F, axis=0) + eps)
            else:
                F = F * np.sqrt(num / np.maximum(den, 1e-300))
            objective.append(self.objective(L, X, F, W))
            if self.callback is not None:
                self.callback(it, F=F, W=W)
            prev, cur = objective[-2], objective[-1]
            if tol > 0 and abs(prev - cur) <= tol * max(abs(prev), 1e-300):
                converged = True
                break
        self.objective_ = np.asarray(objective)
        self.n_iter_ = it
        self.converged_ = converged
        self.n_guarded_ = guarded
        self.F_ = F
        self.W_ = W
        self.reweight_ = d_m
        if tol > 0 and not converged:
            warnings.warn(
                f"NDFS did not converge in {self.max_iter} iterations (tol={tol:g})",
                ConvergenceWarning,
                stacklevel=3,
            )
        scores = row_norms(W)
        return Selection(order=np.argsort(-scores, kind="stable"), scores=scores)
