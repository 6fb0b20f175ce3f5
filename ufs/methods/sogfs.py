"""SOGFS: unsupervised feature selection with structured graph optimisation.

Nie, Zhu, Li, "Unsupervised Feature Selection with Structured Graph Optimization",
AAAI 2016. Model (paper notation, data ``X ∈ R^{p×n}``; the API takes ``n × p`` and the
code works with rows ``x_i`` as samples)::

    min_{S,W,F}  Σ_ij (||Wᵀx_i − Wᵀx_j||² s_ij + α s_ij²) + γ ||W||_{2,1} + 2λ Tr(FᵀL_S F)
    s.t.  s_iᵀ1 = 1, 0 ≤ s_ij ≤ 1,  WᵀW = I (W ∈ R^{p×m}),  FᵀF = I (F ∈ R^{n×c}),

with ``L_S = D − (S + Sᵀ)/2``. The rank term ``2λ Tr(FᵀL_S F)`` (Ky Fan) drives
``rank(L_S) = n − c``: the learned graph has exactly ``c`` connected components.
"""

from __future__ import annotations

import warnings

import numpy as np
import scipy.linalg as sla
import scipy.sparse.linalg as spla
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state

from ..base import Selection, UFSSelector
from ..graph import knn_indices
from ..linalg import (
    extreme_eigenvectors,
    l2p_reweight,
    l21_norm,
    row_norms,
    thin_svd,
    top_rows,
)
from ._optimal_graph import (
    adaptive_neighbor_graph,
    graph_objective_terms,
    laplacian_eigenpairs,
    pair_sqdist,
    simplex_rows_on_support,
    sym_laplacian,
)

__all__ = ["SOGFS", "l21_orthogonal_irls"]

#: the W-step forms ``XᵀLX`` (p × p) when ``p ≤ max(n, _W_DENSE_LIMIT)``; above, Woodbury
_W_DENSE_LIMIT = 300
#: ε of the smoothed ℓ2,1 weights ``1 / (2 √(||w_i||² + ε))``
_EPS = 1e-12


def l21_orthogonal_irls(
    XLX,
    gamma: float,
    m: int,
    *,
    W0: np.ndarray | None = None,
    max_iter: int = 10,
    tol: float = 1e-6,
    stop: str = "relative",
    eps: float = _EPS,
) -> tuple[np.ndarray, np.ndarray]:
    """``min_W Tr(Wᵀ XLX W) + γ ||W||_{2,1}`` s.t. ``WᵀW = I`` by re-weighting (SOGFS W-step).

    Each step takes the ``m`` eigenvectors of ``XLX + γ Q`` with the smallest eigenvalues,
    ``Q = diag(1 / (2 √(||w_i||² + ε)))`` from the previous ``W`` (``Q = I`` when no
    ``W0``, as in the authors' code). From a feasible ``W0`` the smoothed objective
    ``Tr(WᵀXLXW) + γ Σ √(||w_i||² + ε)`` never increases (Nie et al. 2010 lemma).
    Returns ``(W, trace)`` with the smoothed objective of every iterate (``trace[0]`` =
    ``W0``'s, if given).

    ``stop``: ``"relative"`` — the smoothed objective changes by ``≤ tol`` relative;
    ``"absolute"`` — the authors' ``InterationW`` rule: the *unsmoothed*
    ``Tr(WᵀXLXW) + γ||W||_{2,1}`` of two consecutive iterates differs by ``< tol``.

    ``XLX`` is a dense ``p × p`` array (dense ``eigh``) or a :class:`_GramOperator`
    (``p`` large: Lanczos on the inverse by Woodbury, :func:`_woodbury_smallest`; no
    ``p × p`` matrix is formed; needs ``γ > 0``).
    """
    if stop not in ("relative", "absolute"):
        raise ValueError(f"stop must be 'relative' or 'absolute'; got {stop!r}")
    dense = isinstance(XLX, np.ndarray)
    p = XLX.shape[0]
    apply = (lambda W: XLX @ W) if dense else XLX.apply

    def objectives(W):
        tr = float(np.einsum("ij,ij->", W, apply(W)))
        sq = row_norms(W, squared=True)
        smooth, plain = float(np.sum(np.sqrt(sq + eps))), float(np.sum(np.sqrt(sq)))
        return tr + gamma * smooth, tr + gamma * plain

    if W0 is None:
        q = np.ones(p)
        trace, plain = [], []
        W = None
    else:
        W = W0
        q = l2p_reweight(W, 1.0, eps=eps)
        sm, pl = objectives(W)
        trace, plain = [sm], [pl]
    for _ in range(int(max_iter)):
        if dense:
            _, W = extreme_eigenvectors(XLX + np.diag(gamma * q), m, which="smallest")
        else:
            W = _woodbury_smallest(XLX, np.maximum(gamma * q, eps), m)
        q = l2p_reweight(W, 1.0, eps=eps)
        sm, pl = objectives(W)
        trace.append(sm)
        plain.append(pl)
        if len(trace) > 1:
            if stop == "absolute":
                if abs(plain[-2] - plain[-1]) < tol:
                    break
            elif abs(trace[-2] - trace[-1]) <= tol * max(abs(trace[-1]), 1e-300):
                break
    return W, np.asarray(trace)


class _GramOperator:
    """``XᵀLX`` (p × p) held as ``X`` (n × p) and sparse ``L``; ``O(np)`` per column."""

    def __init__(self, X: np.ndarray, L):
        self.X, self.L = X, L
        self.shape = (X.shape[1], X.shape[1])

    def apply(self, W: np.ndarray) -> np.ndarray:
        return self.X.T @ (self.L @ (self.X @ W))


def _woodbury_smallest(G: _GramOperator, shift: np.ndarray, m: int) -> np.ndarray:
    """``m`` smallest eigenvectors of ``M = XᵀLX + diag(shift)`` (``shift > 0``), large ``p``.

    Lanczos on ``M^{-1}`` (largest eigenvalues ``1/μ``), applied by Woodbury:
    ``M^{-1} = D^{-1} − D^{-1}Xᵀ (I + L X D^{-1} Xᵀ)^{-1} L X D^{-1}`` with ``D = diag(shift)``.
    Forms one dense ``n × n`` matrix (smaller than ``p × p`` since ``n < p`` here) and
    never a ``p × p`` one; ``O(np)`` per Lanczos step.
    """
    X, L = G.X, G.L
    n, p = X.shape
    dinv = 1.0 / shift
    C = np.eye(n) + L @ ((X * dinv) @ X.T)
    lu = sla.lu_factor(C, check_finite=False)

    def matmat(V):
        V = V.reshape(p, -1)
        DV = dinv[:, None] * V
        return DV - dinv[:, None] * (X.T @ sla.lu_solve(lu, L @ (X @ DV), check_finite=False))

    op = spla.LinearOperator(
        (p, p), matvec=lambda v: matmat(v).ravel(), matmat=matmat, dtype=np.float64
    )
    _, V = extreme_eigenvectors(op, m, which="largest", dense_limit=0)
    return V


class SOGFS(UFSSelector):
    """Structured optimal graph feature selection (ranking by ``||w_i||``).

    Parameters
    ----------
    n_features_to_select : int
        ``h`` (SOGFS ranks all features; ``h`` is only the prefix reported as selected).
    n_clusters : int
        ``c``, the number of connected components the learned graph must have.
    gamma : float
        ``γ``, weight of ``||W||_{2,1}``. Scaling as in the authors' code: the objective
        is half the paper's, ``½ Σ_ij (d^W_ij + λ d^F_ij) s_ij + ½ α ||S||² + γ ||W||_{2,1}``,
        so this ``γ`` is half the paper's (the W-step is ``min Tr(WᵀXᵀL_S XW) + γ||W||_{2,1}``
        exactly as in the code). The authors' code has no default (a required argument;
        the Auto-UFSTool copy uses 100 when omitted). From ``γ ≈ 1`` on, ``W`` is ``m``
        coordinate axes (see "Large γ" below).
    n_components : int or None
        ``m``, the projection dimension (columns of ``W``); ``None`` → ``c``.
    n_neighbors : int
        ``k`` of the adaptive-neighbours rule: each row of ``S`` is supported on ``k``
        candidates and ``α`` is set from the ``k+1`` nearest distances.
    max_iter : int
        Outer iterations (authors' code: 50).
    max_iter_w : int
        Eigen-steps per W-step (authors' ``InterationW``: 100). The earlier default
        was 10 (with ``w_step="warm"``).
    w_step : {"restart", "warm"}
        How each W-step starts and stops (see step 2 below).

        * ``"restart"`` (default, the authors' ``InterationW``): every W-step starts
          again from ``Q = I`` (its first eigen-step is :meth:`_initial_projection`) and
          stops when the *unsmoothed* ``Tr(WᵀXᵀL_S XW) + γ||W||_{2,1}`` of two
          consecutive steps differs by ``< 1e-6`` (absolute); ``ε`` = machine epsilon in
          the weights ``1 / (2√(||w_i||² + ε))``.
        * ``"warm"`` (the earlier behaviour, with ``max_iter_w=10``): starts from
          the previous outer iteration's ``W`` and stops when the ``ε``-smoothed
          objective changes by ``≤ 1e-6`` relative, ``ε = 1e-12``. Each W-step is then
          monotone and needs fewer eigen-solves (about 10× faster for ``p > n``), but
          the path differs from the authors' (digits parity: overlap@10/20/50 9/16/49 at
          γ = 1 and 9/20/47 at γ = 100 instead of 10/20/50; final λ 2× and 4× smaller).
    candidate_refresh : int
        After this many outer iterations the candidates of each row are the ``k``
        nearest neighbours in the projected space ``XW`` (authors' code: 5; before
        that, the ``k`` nearest in the input space).
    random_state : int, RandomState or None
        Only used when ``rank(X) < p`` (e.g. ``p ≥ n``): picks the basis of the null
        space in the first eigen-step of a W-step from ``Q = I`` (every W-step with
        ``"restart"``, the first one with ``"warm"``), which the model leaves
        undetermined (see below).

    Algorithm (step by step, following the paper's optimisation section and the authors'
    code; no copy of the paper is in ``shared/papers``, so steps are named, not numbered)
    -------------------------------------------------------------------------------------
    Input normalisation (authors' code): every feature is centred and scaled to unit
    ℓ2 norm (= z-score / √n; idempotent up to that factor on standardised input).

    Initialise ``S`` by the adaptive-neighbours closed form on the ``k+1`` nearest
    squared distances, ``α = mean_i ½ (k d_i,k+1 − Σ_{j≤k} d_ij)`` (fixed from then on),
    ``λ = α``; ``F`` = the ``c`` smallest eigenvectors of ``L_S``; ``W`` by the W-step
    started from :meth:`_initial_projection`.
    Then repeat:

    1. S-step: for each row ``i`` on its candidate set,
       ``s_i = Proj_Δ(−(d^W_i + λ d^F_i) / (2α))`` with ``d^W_ij = ||Wᵀx_i − Wᵀx_j||²``,
       ``d^F_ij = ||f_i − f_j||²`` (:func:`ufs.linalg.project_rows_simplex`). The
       candidates never include ``i`` itself. The authors take positions 2..k+1 of a
       sorted distance row, which keeps ``i`` and drops another sample when that sample
       coincides with ``i`` and sorts first (a tie decided by rounding; not emulated,
       see ``ufs/parity/cases/sogfs.py``).
    2. W-step: :func:`l21_orthogonal_irls` on ``XᵀL_S X``: re-weighted eigen-steps
       ``W`` = the ``m`` smallest eigenvectors of ``XᵀL_S X + γQ``,
       ``Q = diag(1 / (2||w_i||))``, from ``Q = I`` every time (``w_step="restart"``, as
       the authors) or from the previous ``W`` (``"warm"``).
    3. F-step: ``F`` = the ``c`` smallest eigenvectors of ``L_S``.
    4. λ adaptation (authors' code): with ``σ_1 ≤ σ_2 ≤ …`` the eigenvalues of ``L_S``,
       if ``Σ_{i≤c} σ_i > 1e-9`` (fewer than ``c`` components) ``λ ← 2λ``; elif
       ``Σ_{i≤c+1} σ_i < 1e-11`` (more than ``c``) ``λ ← λ/2`` and ``F`` is restored;
       otherwise (exactly ``c`` components) stop (not before the second iteration).

    Features are ranked by ``||w_i||`` (ties to the lower index).

    Dense matrices. ``S`` is sparse with at most ``k`` entries per row; distances are
    evaluated only on candidate pairs, and candidate sets come from a kNN search, so no
    ``n × n`` distance matrix is formed (the authors' code forms several). The eigen
    problem of ``L_S`` is solved by dense ``eigh`` when ``n ≤ 1000`` (an ``n × n``
    dense copy of ``L_S``) and by shift-invert Lanczos above. The W-step forms the dense
    ``p × p`` matrix ``XᵀL_S X`` when ``p ≤ max(n, 300)`` (or ``γ = 0``); otherwise
    (``p > n``) it runs Lanczos on ``(XᵀL_S X + γQ)^{-1}`` applied by Woodbury (one dense
    ``n × n`` matrix per step, smaller than ``p × p``; :func:`_woodbury_smallest`), so
    high-dimensional data (``p`` ~ 10⁴) never need a ``p × p`` array.

    ``p ≥ n`` (initial W). ``XᵀL_S X`` then has a null space of dimension ``≥ p − n``;
    the authors' first W-step (``Q = I``) is minimised by *any* orthonormal basis of
    it, and which one an eigen-solver returns depends on the LAPACK build and even on
    the BLAS thread count. :meth:`_initial_projection` draws that basis from
    ``random_state`` instead (identical to the authors' step when ``rank(X) = p``), and
    the re-weighting continues from it. For ``p > n`` the selection therefore
    depends on ``random_state`` — a property of the model (``XW = 0`` is feasible and
    the re-weighting has many local minima), not of the solver. A start inside the row
    space of ``X`` (the other canonical choice) ends at markedly higher objective values.

    Monotonicity. The objective is not monotone overall: ``λ`` changes by factors of 2
    and the candidate sets change after ``candidate_refresh`` iterations. With ``λ`` and
    the candidates fixed each step is an exact (S, F) block update; the W-step is
    monotone from its own start, which for ``"restart"`` is ``Q = I``, not the previous
    ``W`` (so a W-step may end above the previous ``W``'s objective).

    Large ``γ``. ``||W||_{2,1} ≥ m`` for orthonormal ``W`` (row norms ≤ 1, squares
    summing to ``m``), with equality iff ``W`` consists of ``m`` coordinate axes. Since
    features are scaled to unit norm, ``Tr(WᵀXᵀL_S XW) ≤ λ_max(L_S) m``, and from
    ``γ ≈ 1`` on ``W`` converges to ``m`` axes: exactly ``m`` features get weight 1 and
    the order of the rest is rounding noise (squared norms ~1e-15). With the default
    ``m = c`` SOGFS then selects ``c`` features; to rank more, use a small ``γ``
    (planted-feature numbers in ``docs/methods.md``).

    Attributes
    ----------
    W_ : ndarray (p × m)
    S_ : scipy.sparse.csr_matrix (n × n, ``≤ k`` entries per row), the learned graph
    alpha_, lambda_ : float
        ``α`` and the final ``λ``.
    n_components_found_ : int
        Connected components of the final graph (number of zero eigenvalues, ``≤ c+1``).
    n_graph_components_ : int
        Connected components of the final graph, counted exactly (its Laplacian's
        eigen-step is solved per component, :func:`~ufs.methods._optimal_graph.laplacian_eigenpairs`).
    objective_ : ndarray
        The (code-scaled) objective after every outer iteration at that iteration's λ.
    n_iter_, converged_ : int, bool
        ``converged_`` means exactly ``c`` components were reached.
    """

    kind = "ranking"
    score_power = 1  # ranks by ||w_i||: resolved_rank_ recorded

    def min_n_features(self, n_clusters):  # m = n_components (default c) <= p
        return n_clusters if self.n_components is None else self.n_components

    def __init__(
        self,
        n_features_to_select: int = 10,
        n_clusters: int | None = None,
        *,
        gamma: float = 1.0,
        n_components: int | None = None,
        n_neighbors: int = 5,
        max_iter: int = 50,
        max_iter_w: int = 100,
        w_step: str = "restart",
        candidate_refresh: int = 5,
        random_state=None,
    ):
        self.n_features_to_select = n_features_to_select
        self.n_clusters = n_clusters
        self.gamma = gamma
        self.n_components = n_components
        self.n_neighbors = n_neighbors
        self.max_iter = max_iter
        self.max_iter_w = max_iter_w
        self.w_step = w_step
        self.candidate_refresh = candidate_refresh
        self.random_state = random_state

    def _check_params(self, n: int, p: int) -> tuple[int, int]:
        if not self.gamma >= 0:
            raise ValueError(f"gamma must be >= 0; got {self.gamma}")
        k = int(self.n_neighbors)
        if not 1 <= k <= n - 2:
            raise ValueError(f"n_neighbors must be in [1, n_samples-2]; got {k}")
        m = self._k if self.n_components is None else int(self.n_components)
        if not 1 <= m <= p:
            raise ValueError(f"n_components must be in [1, n_features={p}]; got {m}")
        if self._k + 1 > n:
            raise ValueError("n_clusters must be < n_samples")
        if int(self.max_iter) < 1 or int(self.max_iter_w) < 1:
            raise ValueError("max_iter and max_iter_w must be >= 1")
        if self.w_step not in ("restart", "warm"):
            raise ValueError(f"w_step must be 'restart' or 'warm'; got {self.w_step!r}")
        return k, m

    @staticmethod
    def _initial_projection(Xc: np.ndarray, L, m: int, rng, *, svd=None) -> np.ndarray:
        """A minimiser of the authors' first W-step (``Q = I``: the ``m`` smallest
        eigenvectors of ``XᵀLX + γI``), chosen reproducibly.

        With the thin SVD ``X = UΣVᵀ`` (rank ``r``), ``XᵀLX + γI`` has eigenvalue ``γ`` on
        the null space ``range(V)^⊥`` (dimension ``p − r``; ``X`` is centred, so ``LXv = 0``
        forces ``Xv = 0`` generically) and larger ones on ``range(V)`` (the eigenvalues
        of ``Σ UᵀLU Σ`` plus ``γ``). The minimiser is unique when ``p − r = 0``; otherwise
        any orthonormal basis of ``min(m, p − r)`` null directions completes it, and an
        eigen-solver would return an arbitrary one (differing between LAPACK builds and
        BLAS thread counts). We draw it from ``random_state``: Gaussian columns projected
        onto the null space and orthonormalised. The remaining ``m − (p − r)`` columns
        (if any) are the smallest eigenvectors in ``range(V)``.
        """
        p = Xc.shape[1]
        U, s, Vt = thin_svd(Xc) if svd is None else svd
        r = int(np.sum(s > s[0] * max(Xc.shape) * np.finfo(float).eps)) if s.size else 0
        V = Vt[:r].T
        n_null = min(m, p - r)
        parts = []
        if n_null > 0:
            G = rng.standard_normal((p, n_null))
            for _ in range(2):  # project out range(V), twice for stability
                G -= V @ (V.T @ G)
            parts.append(np.linalg.qr(G)[0])
        if m > n_null:
            B = (U[:, :r] * s[:r]).T @ (L @ (U[:, :r] * s[:r]))
            _, E = extreme_eigenvectors((B + B.T) / 2.0, m - n_null, which="smallest")
            parts.append(V @ E)
        return np.hstack(parts)

    def _gram(self, Xc: np.ndarray, L):
        """``XᵀL_S X``: dense when ``p ≤ max(n, 300)`` (or ``γ = 0``), else an operator
        (Woodbury through the smaller ``n × n`` side)."""
        n, p = Xc.shape
        if p <= max(n, _W_DENSE_LIMIT) or not self.gamma > 0:
            return Xc.T @ (L @ Xc)
        return _GramOperator(Xc, L)

    def _w_step(self, Xc: np.ndarray, L, m: int, W_prev: np.ndarray | None, svd, rng) -> np.ndarray:
        """One W-step on ``XᵀL_S X`` (step 2): ``"restart"`` from ``Q = I`` (its first
        eigen-step is :meth:`_initial_projection`), ``"warm"`` from ``W_prev`` (from
        ``Q = I`` too when there is none yet)."""
        G, gamma = self._gram(Xc, L), float(self.gamma)
        if self.w_step == "warm":
            W0 = W_prev if W_prev is not None else self._initial_projection(Xc, L, m, rng, svd=svd)
            return l21_orthogonal_irls(G, gamma, m, W0=W0, max_iter=self.max_iter_w)[0]
        # authors' InterationW: W0 is its first eigen-step, then at most max_iter_w − 1 more
        W0 = self._initial_projection(Xc, L, m, rng, svd=svd)
        W, _ = l21_orthogonal_irls(
            G,
            gamma,
            m,
            W0=W0,
            max_iter=int(self.max_iter_w) - 1,
            tol=1e-6,
            stop="absolute",
            eps=np.finfo(float).eps,
        )
        return W

    def _fit(self, X: np.ndarray) -> Selection:
        n, p = X.shape
        k, m = self._check_params(n, p)
        c = self._k
        gamma = float(self.gamma)
        Xc = X - X.mean(axis=0)
        Xc = Xc / np.sqrt(np.einsum("ij,ij->j", Xc, Xc) + np.finfo(float).eps)
        svd = thin_svd(Xc)
        rng = check_random_state(self.random_state)

        idx0, dist0 = knn_indices(Xc, k + 1)
        S, alpha = adaptive_neighbor_graph(idx0, dist0**2)
        lam = alpha
        L = sym_laplacian(S)
        res = laplacian_eigenpairs(L, c)
        F, self.n_graph_components_ = res.vectors, res.n_components
        V_prev = F
        W = self._w_step(Xc, L, m, None, svd, rng)

        rows = np.repeat(np.arange(n), k)
        cand = idx0[:, :k]
        objective = []
        converged = False
        ev = np.zeros(c + 1)
        for it in range(1, int(self.max_iter) + 1):
            Z = Xc @ W
            if it > int(self.candidate_refresh):
                cand, _ = knn_indices(Z, k)
            cols = cand.ravel()
            # S-step: row-wise simplex projection on the candidate support
            v = -(pair_sqdist(Z, rows, cols) + lam * pair_sqdist(F, rows, cols)) / (2.0 * alpha)
            S = simplex_rows_on_support(rows, cols, v, n)
            L = sym_laplacian(S)
            W = self._w_step(Xc, L, m, W, svd, rng)
            # F-step: c + 1 eigenpairs to count components
            F_old = F
            # warm start from the previous eigenvectors (used by LOBPCG at large n only)
            res = laplacian_eigenpairs(L, c + 1, start=V_prev)
            ev, V, self.n_graph_components_ = res.values, res.vectors, res.n_components
            V_prev, F = V, V[:, :c]
            objective.append(
                0.5 * graph_objective_terms(S, Xc @ W)
                + 0.5 * alpha * float(S.multiply(S).sum())
                + gamma * l21_norm(W)
                + lam * float(ev[:c].sum())
            )
            fn1, fn2 = float(ev[:c].sum()), float(ev[: c + 1].sum())
            if fn1 > 1e-9:
                lam *= 2.0
            elif fn2 < 1e-11:
                lam /= 2.0
                F = F_old
            elif it > 1:
                converged = True
                break

        self.W_ = W
        self.S_ = S
        self.alpha_ = alpha
        self.lambda_ = lam
        self.n_components_found_ = int(np.sum(ev < 1e-10))
        self.objective_ = np.asarray(objective)
        self.n_iter_ = it
        self.converged_ = converged
        if not converged:
            warnings.warn(
                f"SOGFS did not reach exactly {c} connected components in {self.max_iter} "
                "iterations",
                ConvergenceWarning,
                stacklevel=3,
            )
        scores = row_norms(W)
        return Selection(order=top_rows(scores, p), scores=scores)
