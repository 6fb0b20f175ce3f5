"""RUFS: Robust Unsupervised Feature Selection (Qian & Zhai, IJCAI 2013).

Model (K-means UFS paper ``kmeans_ufs.md`` Eq. 34, and the header of the authors'
``fs_unsup_rufs.m``; paper ``X`` is ``p × n``)::

    min  ||X − C Yᵀ||_{2,1} + ν Tr(Yᵀ L̂ Y) + α||WᵀX − Yᵀ||_{2,1} + β||Wᵀ||_{2,1}
    s.t. YᵀY = I, Y ≥ 0, C ≥ 0

In our ``n × p`` orientation (``X ← Xᵀ``), with every ℓ2,1 norm a sum of row norms::

    min  Σ_i ||x_i − C y_i|| + ν Tr(Yᵀ L̂ Y) + α Σ_i ||(XW − Y)_i|| + β Σ_j ||w_j||

``Y`` (``n × c``) is the relaxed cluster indicator, ``C`` (``p × c``) the cluster centres
and ``W`` (``p × c``) the robust regression of ``Y`` on the data. The authors' code names
them ``G = Y``, ``F = Cᵀ`` (``c × p``) and ``W``.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import scipy.linalg as sla
from sklearn.exceptions import ConvergenceWarning

from ..base import Selection, UFSSelector
from ..linalg import MATLAB_EPS as _MATLAB_EPS
from ..linalg import l2p_reweight, l21_norm, row_norms
from ..validation import resolve_init
from ._nonneg_spectral import (
    check_positive,
    kmeans_indicator,
    multiplicative_step,
    normalized_laplacian_split,
    orth_residual,
    ridge_solve,
)

__all__ = ["RUFS"]

SOLVERS = ("lbfgs", "semi_nmf")

#: the authors' inner constants: Armijo fraction, backtracking factor
_ARMIJO, _SHRINK = 0.2, 0.5
_MAX_HALVINGS = 200  # t = 0.5^200 ≈ 6e-61: the step is numerically zero


def _pos(M: np.ndarray) -> np.ndarray:
    return np.maximum(M, 0.0)


def _neg(M: np.ndarray) -> np.ndarray:
    return np.maximum(-M, 0.0)


def _vdot(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.vdot(a, b))


def _unit_rows(M: np.ndarray, norms: np.ndarray) -> np.ndarray:
    """``M_i / norms_i`` row by row, ``0`` where ``norms_i = 0``: the gradient of
    ``Σ_i ||m_i||``, with the subgradient ``0`` at a zero row (e.g. a residual row of an
    all-zero sample with ``y_i = 0``) instead of ``0/0 = NaN``. Identical to ``M / norms``
    wherever the norm is positive."""
    return np.divide(M, norms[:, None], out=np.zeros_like(M), where=norms[:, None] > 0)


def _two_loop(g: np.ndarray, pairs: list[tuple[np.ndarray, np.ndarray, float]]) -> np.ndarray:
    """``H g`` by the L-BFGS two-loop recursion (Nocedal & Wright, Alg. 7.4) over the
    stored ``(s, y, 1/yᵀs)`` pairs, oldest first; ``H₀ = sᵀy / yᵀy`` of the newest pair
    (``1`` when there is none)."""
    if not pairs:
        return g.copy()
    q = g.copy()
    a = []
    for s, y, rho in reversed(pairs):
        ai = rho * _vdot(s, q)
        q -= ai * y
        a.append(ai)
    s, y, _ = pairs[-1]
    r = (_vdot(s, y) / _vdot(y, y)) * q
    for (s, y, rho), ai in zip(pairs, reversed(a), strict=True):
        r += (ai - rho * _vdot(y, r)) * s
    return r


def _lbfgs_block(
    x: np.ndarray,
    fun: Callable[[np.ndarray], float],
    grad: Callable[[np.ndarray], np.ndarray],
    *,
    nonneg: bool,
    gtol: float | None,
    ftol: float,
    memory: int,
    max_steps: int,
) -> tuple[np.ndarray, np.ndarray, int, bool]:
    """Minimise one block by (projected) L-BFGS with Armijo backtracking, as the
    authors' ``UpdateW`` / ``UpdateG`` / ``UpdateF``.

    Per step: stop if the (projected) gradient norm ``≤ gtol``; direction ``−H g`` (two-loop
    recursion on the full gradient); with ``nonneg`` the free set is ``g < 0 or x > 0``
    for the gradient and ``Hg < 0 or x > 0`` for ``Hg``, falling back to the projected
    gradient when the projected ``Hg`` is not a descent direction; backtracking ``t ← t/2`` from ``t = 1`` until
    ``f(x_t) ≤ f(x) + 0.2 gᵀ(x_t − x)`` with ``x_t = max(x + t p, 0)``. A step with
    ``|f(x_t) − f(x)| < ftol`` ends the block *without* being taken.

    Returns ``(x, g, steps, capped)``: the (projected) gradient at the returned ``x``, the
    number of accepted steps and whether ``max_steps`` (our guard; the authors loop
    without a cap) ended the block.
    """
    f = fun(x)
    g = grad(x)
    pairs: list[tuple[np.ndarray, np.ndarray, float]] = []
    steps = 0
    while True:
        pg = np.where((g < 0) | (x > 0), g, 0.0) if nonneg else g
        if gtol is not None and np.linalg.norm(pg) <= gtol:
            return x, pg, steps, False
        if steps >= max_steps:
            return x, pg, steps, True
        hg = _two_loop(g, pairs)
        if nonneg:
            phg = np.where((hg < 0) | (x > 0), hg, 0.0)
            p = -pg if _vdot(phg, g) <= 0 else -phg
        else:
            p = -hg
            slope = _vdot(g, p)
        t = 1.0
        for _ in range(_MAX_HALVINGS):
            xt = np.maximum(x + t * p, 0.0) if nonneg else x + t * p
            ft = fun(xt)
            model = _vdot(g, xt - x) if nonneg else t * slope
            if ft <= f + _ARMIJO * model:
                break
            t *= _SHRINK
        if abs(ft - f) < ftol:
            return x, pg, steps, False
        gt = grad(xt)
        s, y = xt - x, gt - g
        ys = _vdot(y, s)
        if ys != 0.0:  # the authors store every pair; yᵀs = 0 would divide by zero
            pairs.append((s, y, 1.0 / ys))
            if len(pairs) > memory:
                pairs.pop(0)
        x, f, g = xt, ft, gt
        steps += 1


_Block = tuple[Callable[[np.ndarray], float], Callable[[np.ndarray], np.ndarray]]


@dataclass(frozen=True)
class _Blocks:
    """The three block objectives of the ``lbfgs`` solver and their gradients (the
    authors' ``UpdateW`` / ``UpdateG`` / ``UpdateF``); ``nuL`` is ``ν L̂``."""

    X: np.ndarray
    nuL: object
    alpha: float
    beta: float
    mu: float
    delta: float
    zeta: float
    eps: float
    frozen_weights: bool = True

    def _resid(self, Y: np.ndarray, C: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        R = Y @ C.T - self.X
        return R, row_norms(R)

    def w(self, Y: np.ndarray) -> _Block:
        """``α Σ_i ||(XW − Y)_i|| + β Σ_j ||w_j||`` (gradient guard ``||w_j|| + eps``)."""
        X, a, b, eps = self.X, self.alpha, self.beta, self.eps

        def fun(W):
            return a * row_norms(X @ W - Y).sum() + b * row_norms(W).sum()

        def grad(W):
            H = X @ W - Y
            return a * X.T @ _unit_rows(H, row_norms(H)) + b * W / (row_norms(W) + eps)[:, None]

        return fun, grad

    def y(self, C: np.ndarray, W: np.ndarray) -> _Block:
        """``Σ_i r_i + μ ΣY + ν Tr(YᵀL̂Y) + α Σ_i ||(Y − XW)_i|| + (ζ/4)||YᵀY − I||_F²``."""
        XW = self.X @ W
        I_c = np.eye(C.shape[1])

        def fun(Y):
            O = Y.T @ Y - I_c
            return (
                self._resid(Y, C)[1].sum()
                + self.mu * Y.sum()
                + np.sum(Y * (self.nuL @ Y))
                + self.alpha * row_norms(Y - XW).sum()
                + 0.25 * self.zeta * np.sum(O * O)
            )

        def grad(Y):
            R, r = self._resid(Y, C)
            H = Y - XW
            return (
                _unit_rows(R, r) @ C
                + self.mu
                + 2.0 * (self.nuL @ Y)
                + self.alpha * _unit_rows(H, row_norms(H))
                + self.zeta * Y @ (Y.T @ Y - I_c)
            )

        return fun, grad

    def c(self, Y: np.ndarray, C0: np.ndarray) -> _Block:
        """``Σ_i r_i + δ Σ_j ||c_j||``. With ``frozen_weights`` the gradient divides the
        residuals by their norms ``r⁰`` at ``C0`` (the authors' ``UpdateF``)."""
        r0 = self._resid(Y, C0)[1]

        def fun(C):
            return self._resid(Y, C)[1].sum() + self.delta * row_norms(C).sum()

        def grad(C):
            R, r = self._resid(Y, C)
            w = r0 if self.frozen_weights else r
            return _unit_rows(R, w).T @ Y + self.delta * C / (row_norms(C) + self.eps)[:, None]

        return fun, grad


class RUFS(UFSSelector):
    """RUFS (Qian & Zhai, IJCAI 2013); ranks features by ``||w_j||`` (descending).

    Parameters
    ----------
    n_features_to_select, n_clusters : int
        ``h`` and ``c`` (``Y`` is ``n × c``, ``C`` and ``W`` are ``p × c``).
    nu, alpha, beta : float
        Weights of the graph term, the robust regression and ``||W||_{2,1}`` (Eq. 34);
        tuned over ``{10^-6, 10^-4, ..., 10^6}`` in the K-means UFS paper (§V-B).
    solver : {"lbfgs", "semi_nmf"}
        ``"lbfgs"`` (default): the paper's model with ``C ≥ 0``, solved as the authors'
        code does (block projected L-BFGS, below). ``"semi_nmf"``: the earlier variant of
        this package: ``C`` free (semi-NMF), IRLS with multiplicative ``Y`` updates.
    gamma : float or None
        Weight of the orthogonality penalty that replaces ``YᵀY = I``. ``None``: the
        solver's own, ``ζ = 10^7`` in ``(ζ/4)||YᵀY − I||_F²`` (``lbfgs``, the authors'
        ``zeta``) or ``10^8`` in ``(γ/2)||YᵀY − I||_F²`` (``semi_nmf``, as NDFS).
    mu, delta : float
        ``lbfgs`` only: the authors' two extra terms ``μ Σ_ik Y_ik`` (``μ = 0.1``; an ℓ1
        term on ``Y ≥ 0``) and ``δ ||C||_{2,1}`` (``δ = 10^-4``; their ``gamma`` on the
        columns of ``F = Cᵀ``). Not in Eq. 34; set ``0`` to drop them.
    init : {"kmeans"}, callable or array of shape (n, c)
        ``Y⁰`` (:func:`ufs.validation.resolve_init`). ``"kmeans"``: the one-hot indicator
        of k-means on ``X`` (``n_init = 10``, seeded by ``random_state``), as the authors'
        ``litekmeans(X, c, 'Replicates', 10)``. Must be ≥ 0; a callable gets
        ``(X, n_clusters, random_state)``.
    max_iter : int or None
        Outer rounds. ``None``: 21 (``lbfgs``; the authors' ``MaxIter = 20`` lets 21
        rounds run) or 300 (``semi_nmf``).
    tol : float or None
        ``lbfgs``: stop when the spectral norm of the stacked projected gradients
        ``[∇_C; ∇_Y; ∇_W]`` is ``≤ tol ×`` the Frobenius norm of the initial gradient
        (the authors' ``epsilon``; ``None``: ``10^-2``). ``semi_nmf``: relative objective
        decrease (``None``: ``10^-6``).
    inner_tol : float
        ``lbfgs``: the authors' inner ``epsilon = 0.1``: a block stops when a line-search
        step changes its objective by less than ``inner_tol`` (absolute; the step is not
        taken), when ``||∇_W||_F ≤ inner_tol`` (absolute) or when the projected
        ``||∇_Y||_F ≤ inner_tol × ||∇_Y⁰||_2`` (spectral norm at the block's start).
    memory : int
        ``lbfgs``: number of stored L-BFGS pairs (the authors' ``m = 10``).
    max_inner : int
        ``lbfgs``: cap on the accepted steps of one block (ours; the authors' loops have
        none). A round that hits it is counted in ``inner_capped_``.
    frozen_weights : bool
        ``lbfgs``: ``True`` (the authors' ``UpdateF``): the gradient in ``C`` divides the
        residuals by their norms at the start of the ``C``-block, i.e. it is the gradient of
        the IRLS majoriser ``Σ_i ||x_i − C y_i||² / (2 r_i⁰)``, while the line search tests
        the true objective. ``False``: the exact gradient at every step.
    n_neighbors, weight, sigma : kNN graph (``k = 5``, binary weights by default);
        ``L̂ = I − D^{-1/2} S D^{-1/2}`` as the authors' experiments.
    eps : float or None
        ``lbfgs``: guard in ``w_j / (||w_j|| + eps)`` and ``c_j / (||c_j|| + eps)``
        (``None``: MATLAB's ``eps``). ``semi_nmf``: IRLS smoothing of every ℓ2,1 norm
        (:func:`ufs.linalg.l2p_reweight`; ``None``: ``10^-8``).
    random_state : seeds the k-means initialisation.
    callback : optional ``callback(t, Y=Y, C=C, W=W)`` after every round.

    Attributes
    ----------
    Y_, C_, W_ : the final iterates; ``objective_``: :meth:`objective` at the start and
    after every round; ``n_iter_``: rounds; ``inner_steps_`` (``lbfgs``): accepted steps
    per round of the ``W``, ``Y``, ``C`` blocks; ``grad_norm_`` (``lbfgs``): the stopping
    quantity after every round, ``grad_tol_`` its threshold.

    Algorithm ``"lbfgs"`` (the authors' ``fs_unsup_rufs``; the paper text was not
    available to us, so every detail below follows the code)
    ---------------------------------------------------------------------------------
    The objective actually minimised is Eq. 34 with the orthogonality constraint as a
    penalty and the authors' two small extra terms (``r_i = ||x_i − C y_i||``)::

        Σ_i r_i + δ||C||_{2,1} + μ Σ Y + ν Tr(YᵀL̂Y) + α Σ_i ||(XW − Y)_i|| + β||W||_{2,1}
        + (ζ/4)||YᵀY − I||_F²,      Y ≥ 0, C ≥ 0.

    Start: ``Y⁰`` from ``init``; ``Cᵀ = (Y⁰ᵀY⁰)^{-1}Y⁰ᵀX`` (cluster means), negative
    entries set to 0 and the mean of the positive entries × 0.2 added to every entry
    (so ``C > 0``); ``W = (XᵀX + (β/α) I)^{-1} XᵀY⁰`` (ridge). Each round updates
    ``W`` (L-BFGS), then ``Y`` (projected L-BFGS, ``Y ≥ 0``), then ``C`` (projected
    L-BFGS, ``C ≥ 0``), each block by :func:`_lbfgs_block` with the others fixed, and
    stops on ``tol`` (above). With a one-hot ``Y⁰`` the ζ-term dominates the initial
    gradient, so the threshold is loose and the run stops after one or two rounds.

    Every accepted step passes an Armijo test on the block's objective, so the
    objective is non-increasing in practice; the frozen-weight ``C`` gradient and the
    non-smooth ℓ2,1 terms mean this is not a proven guarantee.

    Deviations from the authors' code: the stopping test's initial ``∇_W`` is the true
    gradient (the code flips the sign of its loss part, which changes the norm by a
    negligible amount); ``objective_`` records the Frobenius penalty the blocks minimise
    (the code's verbose ``ofv`` uses the spectral norm ``||YᵀY − I||_2²``); pairs with
    ``yᵀs = 0`` are not stored (the code would divide by zero); ``max_inner``.

    Algorithm ``"semi_nmf"`` (alternating IRLS + multiplicative updates)
    -------------------------------------------------------------------
    Each ℓ2,1 term is majorised at the current point by its re-weighted quadratic:
    ``u_i = 1/(2||x_i − C y_i||)``, ``v_i = 1/(2||(XW − Y)_i||)``,
    ``d_j = 1/(2||w_j||)`` (``ufs.linalg.l2p_reweight`` with ``ε``). ``Y⁰`` is the
    ``init`` indicator + 0.2 (zero entries could not move under multiplicative
    updates), columns scaled to unit norm. Per iteration:

    1. ``Cᵀ = (Yᵀ U Y)^{-1} Yᵀ U X`` (weighted least squares for the centres);
    2. ``W = (Xᵀ V X + (β/α) D)^{-1} Xᵀ V Y`` (``p × p`` Cholesky, Woodbury if ``p > n``);
    3. ``Y ← Y ⊙ sqrt(∇⁻ / ∇⁺)`` where ``∇ = ∇⁺ − ∇⁻`` is half the gradient of the
       majoriser in ``Y``, ``U(Y CᵀC − XC) + ν L̂Y + αV(Y − XW) + γ(YYᵀY − Y)``, split into
       non-negative parts.

    Every step decreases the majoriser, so the objective (Eq. 34 plus
    ``(γ/2)||YᵀY − I||²``) is non-increasing up to the ``ε`` smoothing. ``C ≥ 0`` is
    dropped: on standardised data ``Y ≥ 0, C ≥ 0`` force ``YCᵀ ≥ 0`` while half of
    ``X``'s entries are negative; with ``C`` free step 1 is the exact weighted
    least-squares minimiser (semi-NMF, Ding, Li & Jordan 2010).
    """

    kind = "ranking"
    score_power = 1  # ranks by ||w_i||: resolved_rank_ recorded

    def __init__(
        self,
        n_features_to_select: int = 10,
        n_clusters: int | None = None,
        *,
        nu: float = 1.0,
        alpha: float = 1.0,
        beta: float = 1.0,
        solver: str = "lbfgs",
        gamma: float | None = None,
        mu: float = 0.1,
        delta: float = 1e-4,
        init="kmeans",
        n_neighbors: int = 5,
        weight: str = "binary",
        sigma: float | None = None,
        max_iter: int | None = None,
        tol: float | None = None,
        inner_tol: float = 0.1,
        memory: int = 10,
        max_inner: int = 1000,
        frozen_weights: bool = True,
        eps: float | None = None,
        random_state=None,
        callback=None,
    ):
        self.n_features_to_select = n_features_to_select
        self.n_clusters = n_clusters
        self.nu = nu
        self.alpha = alpha
        self.beta = beta
        self.solver = solver
        self.gamma = gamma
        self.mu = mu
        self.delta = delta
        self.init = init
        self.n_neighbors = n_neighbors
        self.weight = weight
        self.sigma = sigma
        self.max_iter = max_iter
        self.tol = tol
        self.inner_tol = inner_tol
        self.memory = memory
        self.max_inner = max_inner
        self.frozen_weights = frozen_weights
        self.eps = eps
        self.random_state = random_state
        self.callback = callback

    def graph_spec(self) -> dict:
        return {"n_neighbors": self.n_neighbors, "weight": self.weight, "sigma": self.sigma}

    # -- solver-dependent defaults ----------------------------------------------------
    def _setting(self, name: str) -> float:
        value = getattr(self, name)
        if value is not None:
            return value
        lbfgs = self.solver == "lbfgs"
        return {
            "gamma": 1e7 if lbfgs else 1e8,
            "max_iter": 21 if lbfgs else 300,
            "tol": 1e-2 if lbfgs else 1e-6,
            "eps": _MATLAB_EPS if lbfgs else 1e-8,
        }[name]

    def objective(self, L, X, Y, C, W) -> float:
        """The objective the solver minimises (``L`` = ``L̂``, without ``ν``).

        ``lbfgs``: Eq. (34) + ``δ||C||_{2,1} + μ ΣY + (ζ/4)||YᵀY − I||_F²``;
        ``semi_nmf``: Eq. (34) + ``(γ/2)||YᵀY − I||_F²``."""
        gamma = float(self._setting("gamma"))
        base = (
            row_norms(X - Y @ C.T).sum()
            + self.nu * np.sum(Y * (L @ Y))
            + self.alpha * row_norms(X @ W - Y).sum()
            + self.beta * l21_norm(W)
        )
        if self.solver == "semi_nmf":
            return float(base + 0.5 * gamma * orth_residual(Y))
        return float(
            base + self.delta * l21_norm(C) + self.mu * Y.sum() + 0.25 * gamma * orth_residual(Y)
        )

    def _initial_Y(self, X: np.ndarray) -> np.ndarray:
        n, c = X.shape[0], self._k
        named = {"kmeans": lambda: kmeans_indicator(X, c, self.random_state, offset=0.0)}
        return resolve_init(
            self.init,
            named,
            (n, c),
            X=X,
            n_clusters=c,
            random_state=self.random_state,
            nonnegative=True,
        )

    def _fit(self, X: np.ndarray) -> Selection:
        if self.solver not in SOLVERS:
            raise ValueError(f"solver must be one of {SOLVERS}; got {self.solver!r}")
        check_positive(
            nu=self.nu,
            alpha=self.alpha,
            beta=self.beta,
            gamma=self._setting("gamma"),
            eps=self._setting("eps"),
            tol=self._setting("tol"),
        )
        if int(self._setting("max_iter")) < 1:
            raise ValueError("max_iter must be >= 1")
        L = normalized_laplacian_split(self._graph(X))
        Y0 = self._initial_Y(X)
        if self.solver == "semi_nmf":
            scores = self._fit_semi_nmf(X, L, Y0)
        else:
            scores = self._fit_lbfgs(X, L[0], Y0)
        return Selection(order=np.argsort(-scores, kind="stable"), scores=scores)

    # -- "lbfgs": the paper's model, the authors' algorithm ------------------------------
    def _fit_lbfgs(self, X: np.ndarray, L, Y: np.ndarray) -> np.ndarray:
        if not (float(self.mu) >= 0 and float(self.delta) >= 0):
            raise ValueError("mu and delta must be >= 0")
        check_positive(inner_tol=self.inner_tol)
        if int(self.memory) < 1 or int(self.max_inner) < 1:
            raise ValueError("memory and max_inner must be >= 1")
        nu, alpha, beta, mu, delta = map(
            float, (self.nu, self.alpha, self.beta, self.mu, self.delta)
        )
        zeta, eps = float(self._setting("gamma")), float(self._setting("eps"))
        max_iter, tol = int(self._setting("max_iter")), float(self._setting("tol"))
        p = X.shape[1]
        blocks = _Blocks(
            X, (nu * L).tocsr(), alpha, beta, mu, delta, zeta, eps, bool(self.frozen_weights)
        )
        inner = dict(
            ftol=float(self.inner_tol), memory=int(self.memory), max_steps=int(self.max_inner)
        )

        # start (authors): centres of Y⁰ made positive, ridge W
        try:
            C = sla.solve(Y.T @ Y, Y.T @ X, assume_a="sym").T
        except np.linalg.LinAlgError:  # an empty cluster in Y⁰
            C = np.linalg.lstsq(Y, X, rcond=None)[0].T
        C = _pos(C)
        C = C + 0.2 * C.sum() / max(np.count_nonzero(C), 1)
        W = ridge_solve(X, np.full(p, beta / alpha), Y)

        g0 = np.vstack([blocks.c(Y, C)[1](C), blocks.y(C, W)[1](Y), blocks.w(Y)[1](W)])
        threshold = tol * float(np.linalg.norm(g0))
        objective = [self.objective(L, X, Y, C, W)]
        steps, grad_norm, capped = [], [], 0
        converged = False
        it = 0
        for it in range(1, max_iter + 1):
            fun, grad = blocks.w(Y)
            W, gW, kW, cW = _lbfgs_block(
                W, fun, grad, nonneg=False, gtol=float(self.inner_tol), **inner
            )
            fun, grad = blocks.y(C, W)
            gtol_y = float(self.inner_tol) * float(np.linalg.norm(grad(Y), 2))
            Y, gY, kY, cY = _lbfgs_block(Y, fun, grad, nonneg=True, gtol=gtol_y, **inner)
            fun, grad = blocks.c(Y, C)
            C, gC, kC, cC = _lbfgs_block(C, fun, grad, nonneg=True, gtol=None, **inner)
            steps.append((kW, kY, kC))
            capped += int(cW) + int(cY) + int(cC)
            objective.append(self.objective(L, X, Y, C, W))
            if self.callback is not None:
                self.callback(it, Y=Y, C=C, W=W)
            grad_norm.append(float(np.linalg.norm(np.vstack([gC, gY, gW]), 2)))
            if grad_norm[-1] <= threshold:
                converged = True
                break
        self.objective_ = np.asarray(objective)
        self.n_iter_ = it
        self.converged_ = converged
        self.inner_steps_ = np.asarray(steps, dtype=np.int64).reshape(-1, 3)
        self.inner_capped_ = capped
        self.grad_norm_ = np.asarray(grad_norm)
        self.grad_tol_ = threshold
        self.Y_, self.C_, self.W_ = Y, C, W
        if not converged:
            warnings.warn(
                f"RUFS did not converge in {max_iter} rounds (projected-gradient norm "
                f"{grad_norm[-1]:.3g} > {threshold:.3g})",
                ConvergenceWarning,
                stacklevel=4,
            )
        return row_norms(W)

    # -- "semi_nmf": C free, IRLS + multiplicative Y ------------------------------------
    @staticmethod
    def _centres(X, Y, u) -> np.ndarray:
        """``C`` (p × c) minimising ``Σ u_i ||x_i − C y_i||²``."""
        Yu = Y * u[:, None]
        G = Y.T @ Yu
        G[np.diag_indices_from(G)] += 1e-12 * max(np.trace(G), 1e-300)
        return sla.solve(G, Yu.T @ X, assume_a="pos", check_finite=False).T

    def _fit_semi_nmf(self, X: np.ndarray, Ls, Y: np.ndarray) -> np.ndarray:
        nu, alpha, beta = map(float, (self.nu, self.alpha, self.beta))
        gamma, eps = float(self._setting("gamma")), float(self._setting("eps"))
        max_iter, tol = int(self._setting("max_iter")), float(self._setting("tol"))
        n, p = X.shape
        L, A, m = Ls
        Y = Y + 0.2
        Y /= np.linalg.norm(Y, axis=0)
        C = self._centres(X, Y, np.ones(n))
        W = ridge_solve(X, np.full(p, beta / alpha), Y)
        objective = [self.objective(L, X, Y, C, W)]
        converged = False
        it = 0
        for it in range(1, max_iter + 1):
            # IRLS weights at the current point (majoriser of every ℓ2,1 term)
            u = l2p_reweight(X - Y @ C.T, 1.0, eps)
            v = l2p_reweight(X @ W - Y, 1.0, eps)
            d = l2p_reweight(W, 1.0, eps)
            # 1. centres; 2. robust sparse regression
            C = self._centres(X, Y, u)
            W = ridge_solve(X, (beta / alpha) * d, Y, r=v)
            # 3. Y: square-root multiplicative rule on the split gradient
            CtC = C.T @ C
            XC = X @ C
            XW = X @ W
            uu, vv = u[:, None], alpha * v[:, None]
            grad_pos = (
                uu * (Y @ _pos(CtC) + _neg(XC))
                + nu * (m[:, None] * Y)
                + vv * (Y + _neg(XW))
                + gamma * (Y @ (Y.T @ Y))
            )
            grad_neg = uu * (Y @ _neg(CtC) + _pos(XC)) + nu * (A @ Y) + vv * _pos(XW) + gamma * Y
            Y = multiplicative_step(Y, grad_neg, grad_pos, power=0.5)
            objective.append(self.objective(L, X, Y, C, W))
            if self.callback is not None:
                self.callback(it, Y=Y, C=C, W=W)
            prev, cur = objective[-2], objective[-1]
            if abs(prev - cur) <= tol * max(abs(prev), 1e-300):
                converged = True
                break
        self.objective_ = np.asarray(objective)
        self.n_iter_ = it
        self.converged_ = converged
        self.Y_, self.C_, self.W_ = Y, C, W
        if not converged:
            warnings.warn(
                f"RUFS did not converge in {max_iter} iterations",
                ConvergenceWarning,
                stacklevel=4,
            )
        return row_norms(W)
