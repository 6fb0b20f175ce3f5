"""URAFS: generalized uncorrelated regression with adaptive graph for UFS.

Li, Zhang, Zhang, Liu, Nie, "Generalized Uncorrelated Regression with Adaptive Graph for
Unsupervised Feature Selection", IEEE TNNLS 30(5):1587-1595, 2019 (online 2018,
doi:10.1109/TNNLS.2018.2868847). FSBC's ref. [32] and one of its Tables 2-4 baselines.

Model (our ``X`` is ``n × p``, rows are samples; ``H = I − 11ᵀ/n``, ``X_c = HX``,
``S_t = X_cᵀX_c`` the total scatter)::

    min_{W,F,S}  ||X_c W − HF||_F² + λ ||W||_{2,1} + α (Tr(FᵀL_S F) + β Σ_ij s_ij ln s_ij)
    s.t.  Wᵀ(S_t + λD)W = I,   FᵀF = I,   s_iᵀ1 = 1, s_ij ≥ 0,

with ``W ∈ R^{p×c}``, pseudo-labels ``F ∈ R^{n×c}``, ``D = diag(1/(2||w_i||))`` the
ℓ2,1 re-weighting matrix and ``L_S = D_S − (S + Sᵀ)/2`` (so
``Tr(FᵀL_SF) = ½ Σ_ij s_ij ||f_i − f_j||²``). The intercept ``b`` of ``XᵀW + 1bᵀ − F``
is eliminated (``b`` optimal ⇔ both sides centred, hence ``X_c`` and ``HF``).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable

import numpy as np
import scipy.sparse as sp
from scipy.special import xlogy
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state

from ..base import Selection, UFSSelector
from ..linalg import extreme_eigenvectors, l2p_reweight, l21_norm, procrustes, row_norms, top_rows
from ..validation import resolve_init
from ._nonneg_spectral import kmeans_indicator, ridge_solve
from ._optimal_graph import pair_sqdist, sym_laplacian

__all__ = [
    "URAFS",
    "entropy_graph_rows",
    "gpi_stiefel",
    "uncorrelated_regression",
    "GRAPH_SUPPORTS",
    "W_STARTS",
]

#: values of ``graph_support``
GRAPH_SUPPORTS = ("knn", "full")
#: values of ``w_start``
W_STARTS = ("restart", "warm")
#: ``graph_support="full"`` refuses when its dense ``n × n`` arrays would exceed this
FULL_GRAPH_MAX_BYTES = 2**30
#: dense ``n × n`` float64 arrays ``graph_support="full"`` holds at once (distances,
#: ``S``, ``L_S``)
_FULL_ARRAYS = 3
#: eigenvalues of ``GᵀM⁻¹G`` below this fraction of the largest count as 0 (see
#: :func:`uncorrelated_regression`)
_RANK_RTOL = 1e-10


def entropy_graph_rows(indptr: np.ndarray, d: np.ndarray, beta: float) -> np.ndarray:
    """Row-wise maximum-entropy graph on a CSR support (S-step).

    For each row ``i`` with candidate set ``N_i`` (``indptr`` delimits it in ``d``)::

        s_i = argmin_{s ∈ Δ(N_i)}  ½ Σ_j s_j d_ij + β Σ_j s_j ln s_j
            = softmax(−d_i / (2β)),

    the closed form of the entropy-regularised row problem (Lagrangian stationarity
    ``½ d_ij + β (ln s_ij + 1) + η_i = 0``). Every row must be non-empty. Computed
    with the row maximum subtracted, so no overflow for small ``β``.
    """
    indptr = np.asarray(indptr)
    counts = np.diff(indptr)
    if np.any(counts == 0):
        raise ValueError("every row needs a non-empty candidate support")
    v = -np.asarray(d, dtype=np.float64) / (2.0 * beta)
    starts = indptr[:-1]
    vmax = np.maximum.reduceat(v, starts)
    e = np.exp(v - np.repeat(vmax, counts))
    return e / np.repeat(np.add.reduceat(e, starts), counts)


def gpi_stiefel(
    apply_A: Callable[[np.ndarray], np.ndarray],
    sigma: float,
    B: np.ndarray,
    F0: np.ndarray,
    *,
    max_iter: int = 100,
    tol: float = 1e-8,
) -> tuple[np.ndarray, np.ndarray]:
    """``min_F Tr(FᵀAF) − 2 Tr(FᵀB)`` s.t. ``FᵀF = I`` by the generalized power iteration.

    GPI (Nie, Zhang, Li, "A generalized power iteration method for solving quadratic
    problem on the Stiefel manifold", Sci. China Inf. Sci. 2017): with ``σ ≥ λ_max(A)``
    the problem is ``max Tr(Fᵀ(σI − A)F) + 2Tr(FᵀB)`` with ``σI − A ⪰ 0``, and each step
    ``F ← polar((σI − A)F + B)`` (:func:`ufs.linalg.procrustes`) does not increase the
    objective. Starts from ``F0`` (orthonormal); stops when the objective changes by
    ``≤ tol`` relative to its magnitude, or after ``max_iter`` steps. Returns ``(F, trace)``
    with the objective of ``F0`` and of every step.
    """

    def value(F, AF):
        return float(np.einsum("ij,ij->", F, AF) - 2.0 * np.einsum("ij,ij->", F, B))

    F = F0
    AF = apply_A(F)
    trace = [value(F, AF)]
    for _ in range(int(max_iter)):
        F = procrustes(sigma * F - AF + B)
        AF = apply_A(F)
        trace.append(value(F, AF))
        scale = max(abs(trace[-1]), abs(trace[-2]), 1e-300)
        if abs(trace[-2] - trace[-1]) <= tol * scale:
            break
    return F, np.asarray(trace)


def _m_solver(Xc: np.ndarray, gram: np.ndarray | None):
    """``b ↦ (S_t + diag(b))^{-1} X_cᵀF``: Cholesky of the ``p × p`` matrix from the cached
    ``gram = S_t`` when ``p ≤ n``; Woodbury (an ``n × n`` system,
    :func:`ufs.methods._nonneg_spectral.ridge_solve`) when ``p > n``."""

    def solve(b: np.ndarray, F: np.ndarray) -> np.ndarray:
        return ridge_solve(Xc, b, F, gram=gram)

    return solve


def uncorrelated_regression(
    Xc: np.ndarray,
    F: np.ndarray,
    lam: float,
    *,
    d0: np.ndarray | None = None,
    gram: np.ndarray | None = None,
    max_iter: int = 20,
    tol: float = 1e-6,
    eps: float = np.finfo(float).eps,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """The GURM W-step (URAFS Algorithm 1): ``W`` for fixed pseudo-labels ``F``.

    For a fixed ``D`` the problem
    ``min ||X_cW − HF||² + λ Tr(WᵀDW)`` s.t. ``Wᵀ M W = I``, ``M = S_t + λD``, has
    ``Tr(WᵀMW) = c`` constant on the feasible set, so it is
    ``max Tr(WᵀG)`` s.t. ``WᵀMW = I`` with ``G = X_cᵀF``, solved in closed form: with
    ``W = M^{-1/2}Q``, ``Q = polar(M^{-1/2}G)`` (Procrustes), i.e.::

        W = M^{-1}G (GᵀM^{-1}G)^{-1/2},

    computed from the ``p × c`` solve ``M^{-1}G`` (no ``M^{-1/2}``, no ``p × p`` matrix when
    ``p > n``: Woodbury). Then ``D = diag(1/(2√(||w_i||² + ε)))``
    (:func:`ufs.linalg.l2p_reweight`) and repeat, from ``D = diag(d0)`` (``I`` if
    ``None``), until ``W`` changes by ``≤ tol`` (relative, Frobenius) or ``max_iter``
    steps.

    Rank-deficient targets. When ``HF`` has rank ``r < c`` (always at a cluster-indicator
    start, whose span contains ``1``, which the intercept absorbs) ``GᵀM^{-1}G`` is
    singular and any ``M``-orthonormal completion of the ``r`` determined columns is a
    maximiser; an eigen-solver would return an arbitrary one, and its rows would enter
    the ranking. We use the pseudo-inverse root instead (eigenvalues ``≤ 1e-10 ×`` the
    largest count as 0): the ``c − r`` undetermined directions are ``0`` and
    ``WᵀMW`` is the projector onto the other ``r``. It is the maximiser of smallest
    ``M``-norm, and the unique one of the relaxed ``WᵀMW ⪯ I``.

    Returns ``(W, d_used, d_next, n_steps)``: ``d_used`` is the ``D`` of ``W``'s own
    constraint ``Wᵀ(S_t + λ diag(d_used))W = I``, ``d_next`` the re-weighting from ``W``.
    """
    n, p = Xc.shape
    solve = _m_solver(Xc, gram)
    G = Xc.T @ F
    d = np.ones(p) if d0 is None else np.asarray(d0, dtype=np.float64)
    W = None
    steps = 0
    while steps < int(max_iter):
        steps += 1
        Z = solve(lam * d, F)  # M^{-1} G
        K = G.T @ Z
        e, V = np.linalg.eigh((K + K.T) / 2.0)
        keep = e > _RANK_RTOL * max(float(e.max()), 0.0)
        if not keep.any():
            raise ValueError("X_cᵀF = 0: the pseudo-labels carry nothing the data can regress")
        Vk = V[:, keep]
        W_new = Z @ ((Vk / np.sqrt(e[keep])) @ Vk.T)
        d_used = d
        d = l2p_reweight(W_new, 1.0, eps=eps)
        done = W is not None and np.linalg.norm(W_new - W) <= tol * np.linalg.norm(W_new)
        W = W_new
        if done:
            break
    return W, d_used, d, steps


class URAFS(UFSSelector):
    """URAFS (Li et al., TNNLS 2019); ranks features by ``||w_i||`` (descending).

    Parameters
    ----------
    n_features_to_select : int
        ``h`` (URAFS ranks all features; ``h`` is the prefix reported as selected).
    n_clusters : int
        ``c``: columns of ``W`` and of the pseudo-labels ``F``.
    lam : float
        ``λ`` (> 0), weight of ``||W||_{2,1}``; it also enters the generalized uncorrelated
        constraint ``Wᵀ(S_t + λD)W = I``.
    alpha : float
        ``α`` (≥ 0), weight of the adaptive-graph term; ``α = 0`` is GURM (no graph).
    beta : float
        ``β`` (> 0), weight of the negative entropy of ``S`` inside the graph term; rows of
        ``S`` are ``softmax(−||f_i − f_j||² / (2β))`` over the support. ``F`` has
        orthonormal columns, so ``||f_i − f_j||²`` is of order ``c/n``: from ``β ≫ c/n``
        on, each row is uniform over its support.
    n_neighbors : int
        ``k`` of the kNN support (``graph_support="knn"``).
    graph_support : {"knn", "full"}, default "knn"
        Candidate entries of ``S``. ``"knn"``: the union-symmetrised kNN graph of ``X``
        (:meth:`graph_spec`; only its pattern is used), ``O(nk)`` memory. ``"full"``:
        every pair ``i ≠ j`` (the model as written); dense ``n × n`` arrays, refused up
        front with a ``ValueError`` giving the memory needed when that exceeds
        ``FULL_GRAPH_MAX_BYTES`` (1 GiB: three ``n × n`` arrays, ``n ≥ 6689``).
    init : {"kmeans", "random"}, callable or array ``n × c``, default "kmeans"
        ``F⁰`` (orthonormal columns required). ``"kmeans"``: k-means on ``X``
        (``n_init = 10``, seeded by ``random_state``), ``F⁰ = Y(YᵀY)^{-1/2}`` (the scaled
        indicator). ``"random"``: orthonormalised Gaussian. A callable is called as
        ``init(X, n_clusters, random_state)`` (:func:`ufs.validation.resolve_init`).
    w_start : {"restart", "warm"}, default "restart"
        Where each W-step (Algorithm 1) starts: ``D = I`` every time (``"restart"``) or the
        re-weighting of the previous outer iteration's ``W`` (``"warm"``).
    max_iter : int, default 100
        Outer iterations (S, W, F).
    tol, tol_scores : float, default 1e-6, 1e-4
        Stop when, between two outer iterations, the objective changes by ``≤ tol``
        relative **and** the scores ``||w_i||`` by ``≤ tol_scores`` (relative, Euclidean).
        The objective alone is not enough: ``αβ Σ s ln s`` is large and nearly constant
        (about ``−αβ n ln k``), so from ``β ≈ 1`` on a relative test on the objective
        stopped after 2 iterations while the scores still moved by 10-50 %.
    max_iter_w, max_iter_f : int, default 20, 30
        Steps of Algorithm 1 (W) and of GPI (F) per outer iteration; each also stops when
        its own change is ``≤ 1e-6`` (W, relative Frobenius) / ``≤ 1e-9`` (F
        sub-objective, relative). Neither needs to converge inside one outer iteration (the
        re-implementation runs 10 of each); ``n_iter_w_`` records the W-steps taken.
    eps : float, default machine epsilon
        Smoothing of the ℓ2,1 weights ``1/(2√(||w_i||² + ε))``.
    random_state : int, RandomState or None
        Seeds ``init`` (k-means, random).
    callback : callable or None
        ``callback(t, W=W, F=F, S=S, d=d)`` after every outer iteration (``d``: the ``D`` of
        ``W``'s constraint); for tests and monitoring.

    Source of the model
    -------------------
    The paper's text is not in ``shared/papers`` and could not be retrieved; the model
    above is reconstructed from its abstract (a generalized uncorrelated constraint on a
    sparse regression, GURM, that gives a closed-form W; a maximum-entropy adaptive graph;
    GPI for the optimisation), from the abstract of the same group's ridge predecessor
    (Zhang, Zhang, Nie, Li, 2018 conference paper: an uncorrelated constraint with a
    "generalized scatter matrix" that makes a ridge regression closed-form — presumably
    ``Wᵀ(S_t + λI)W = I``, of which ``S_t + λD`` is the ℓ2,1 analogue) and from the
    loop structure of a third-party MATLAB re-implementation (GitHub
    ``zzf495/Reimplementation-of-Attractive-Feature-Selection-and-Clustering-Methods``,
    ``URAFS.m``; no code taken). No authors' code exists, so there is no parity case. The equation numbers below are those that
    re-implementation cites for the paper and could not be checked against the text.

    Algorithm (one outer iteration; ``F⁰`` from ``init``)
    -----------------------------------------------------
    1. S-step, "Eq. (31)": each row ``s_i = softmax(−||f_i − f_j||²/(2β))`` over its
       support (:func:`entropy_graph_rows`) — the exact minimiser of the graph term for
       fixed ``F``.
    2. W-step, "Algorithm 1" for "problem (14)" with the closed form "Eq. (20)":
       :func:`uncorrelated_regression` (``W = M^{-1}G(GᵀM^{-1}G)^{-1/2}``, ``M = S_t + λD``,
       ``G = X_cᵀF``, then re-weight ``D``; repeat).
    3. F-step, "Algorithm 2" (GPI) with ``L_S`` of "Eq. (7)": for fixed ``W``, ``S`` the
       problem is ``min Tr(Fᵀ(H + αL_S)F) − 2Tr(FᵀX_cW)`` s.t. ``FᵀF = I``;
       :func:`gpi_stiefel` with ``σ = 1 + α λ_max(L_S)`` (≥ ``λ_max(H + αL_S)``), warm
       started from the current ``F``. ``H + αL_S`` is applied, never formed.

    Choices the text available to us leaves open (each documented)
    ---------------------------------------------------------------
    * Scaling of the graph term: ``α(Tr(FᵀL_SF) + β Σ s ln s)``, under which the S-step
      is ``softmax(−d/(2β))`` — the rule the re-implementation uses. Its F-step uses
      ``H + 2αL_S`` instead of ``H + αL_S``; that is the same model with ``α`` doubled.
    * ``S`` has no self-loops (``j ≠ i``), as in the adaptive-neighbour literature; rows of
      ``S`` sum to 1 and are not symmetrised (``L_S`` uses ``(S + Sᵀ)/2``).
    * Support (``graph_support="knn"``, default): the maximum-entropy solution is dense
      (every ``s_ij > 0``), so restricting it to the kNN pattern of ``X`` is a deviation
      from the model, kept as the default for its ``O(nk)`` cost. Large ``β`` then gives
      the row-normalised kNN graph instead of the uniform complete graph (for which
      ``L_S ∝ H`` carries no structure).
    * Rank-deficient ``HF`` (every iteration from the k-means start): the undetermined
      column of ``W`` is 0 (:func:`uncorrelated_regression`). With the completion an
      eigen-solver returns instead, ``test_planted_features`` finds 15 instead of 22 of 25.
    * ``F⁰``: the scaled k-means indicator, as the re-implementation; GPI warm-started
      from the current ``F`` (the re-implementation restarts it from eigenvectors of
      ``A``; the warm start is what makes the F-step monotone).
    * Order S, W, F per iteration and ``D = I`` at the start of every W-step
      (``w_start="restart"``), as the re-implementation's loop.
    * Stopping: relative changes of the objective (``tol``) and of the scores
      (``tol_scores``); the re-implementation runs a fixed 10 iterations.

    Monotonicity. The S-step is an exact block minimisation and GPI never increases its
    sub-objective, so ``objective_steps_`` does not increase across S- and F-steps
    (tested). The W-step is not a descent step of the objective: the feasible set
    ``Wᵀ(S_t + λD)W = I`` moves with ``D``, and no decrease is proven (measured in
    ``tests/test_urafs.py`` and ``docs/methods.md``: on planted data over
    ``λ, α, β ∈ {1e-3, 1, 1e3}``, 11 of 27 runs had a W-step increase above 1e-9 of
    ``|objective|``, the largest 8e-5, none at ``λ = 1e-3``).

    Convergence. For ``α = 0`` and ``λ → 0`` every ``F`` whose centred part is ``X_cW``,
    with ``Wᵀ S_t W = I``, is a fixed point of the W- and F-steps (the regression
    reproduces its own target), so for small ``α`` (and on structureless data) ``F``
    keeps drifting slowly: planted clusters at the defaults still change the scores by
    2e-3 per iteration at iteration 200 (top 10 stable in 9 of 10 places), and random
    data do not meet the stopping rule in 100 iterations (``ConvergenceWarning``).

    Dense matrices (``"knn"``): none ``n × n``. ``S`` and ``L_S`` are sparse; the W-step
    uses the ``p × p`` scatter when ``p ≤ n`` and an ``n × n`` Woodbury system when
    ``p > n``; ``λ_max(L_S)`` by Lanczos.

    Attributes
    ----------
    W_ : ndarray (p × c)
    F_ : ndarray (n × c), the pseudo-labels; ``F_init_`` is ``F⁰``
    S_ : scipy.sparse.csr_matrix (``"knn"``) or ndarray (``"full"``), rows on the simplex
    reweight_ : ndarray (p,), the diagonal of ``D`` in ``W_``'s constraint
    objective_ : ndarray, the objective after every outer iteration
    objective_steps_ : ndarray, the objective after every block step
        (``[W₁, F₁, S₂, W₂, F₂, …]``; the first value needs ``W₁``)
    n_iter_, converged_ : int, bool
    n_iter_w_ : ndarray of int, Algorithm-1 steps taken in each outer iteration
    """

    kind = "ranking"
    score_power = 1  # ranks by ||w_i||: resolved_rank_ recorded

    def __init__(
        self,
        n_features_to_select: int = 10,
        n_clusters: int | None = None,
        *,
        lam: float = 1.0,
        alpha: float = 1.0,
        beta: float = 1.0,
        n_neighbors: int = 5,
        graph_support: str = "knn",
        init: str | Callable | np.ndarray = "kmeans",
        w_start: str = "restart",
        max_iter: int = 100,
        tol: float = 1e-6,
        tol_scores: float = 1e-4,
        max_iter_w: int = 20,
        max_iter_f: int = 30,
        eps: float = float(np.finfo(float).eps),
        random_state=None,
        callback=None,
    ):
        self.n_features_to_select = n_features_to_select
        self.n_clusters = n_clusters
        self.lam = lam
        self.alpha = alpha
        self.beta = beta
        self.n_neighbors = n_neighbors
        self.graph_support = graph_support
        self.init = init
        self.w_start = w_start
        self.max_iter = max_iter
        self.tol = tol
        self.tol_scores = tol_scores
        self.max_iter_w = max_iter_w
        self.max_iter_f = max_iter_f
        self.eps = eps
        self.random_state = random_state
        self.callback = callback

    def graph_spec(self) -> dict | None:
        if self.graph_support == "full":
            return None
        return {"n_neighbors": int(self.n_neighbors), "weight": "binary"}

    def _check_params(self, n: int) -> None:
        if not float(self.lam) > 0:
            raise ValueError(f"lam must be > 0; got {self.lam}")
        if not float(self.alpha) >= 0:
            raise ValueError(f"alpha must be >= 0; got {self.alpha}")
        if not float(self.beta) > 0:
            raise ValueError(f"beta must be > 0; got {self.beta}")
        if not float(self.eps) > 0:
            raise ValueError(f"eps must be > 0; got {self.eps}")
        if not float(self.tol) >= 0:
            raise ValueError(f"tol must be >= 0; got {self.tol}")
        if not float(self.tol_scores) >= 0:
            raise ValueError(f"tol_scores must be >= 0; got {self.tol_scores}")
        for name in ("max_iter", "max_iter_w", "max_iter_f"):
            if int(getattr(self, name)) < 1:
                raise ValueError(f"{name} must be >= 1; got {getattr(self, name)}")
        if self.graph_support not in GRAPH_SUPPORTS:
            raise ValueError(
                f"graph_support must be one of {GRAPH_SUPPORTS}; got {self.graph_support!r}"
            )
        if self.w_start not in W_STARTS:
            raise ValueError(f"w_start must be one of {W_STARTS}; got {self.w_start!r}")
        if self.graph_support == "full":
            need = _FULL_ARRAYS * 8 * n * n
            if need > FULL_GRAPH_MAX_BYTES:
                raise ValueError(
                    f"graph_support='full' needs about {need / 2**30:.1f} GiB of dense n×n "
                    f"arrays for n={n} (cap {FULL_GRAPH_MAX_BYTES / 2**30:.0f} GiB); "
                    "use graph_support='knn'"
                )
        else:
            k = int(self.n_neighbors)
            if not 1 <= k <= n - 1:
                raise ValueError(f"n_neighbors must be in [1, n_samples-1]; got {k}")

    def _initial_F(self, X: np.ndarray, c: int) -> np.ndarray:
        n = X.shape[0]

        def kmeans() -> np.ndarray:
            Y = kmeans_indicator(X, c, self.random_state, offset=0.0)
            return Y / np.sqrt(Y.sum(axis=0))

        def random() -> np.ndarray:
            G = check_random_state(self.random_state).standard_normal((n, c))
            return np.linalg.qr(G)[0]

        F0 = resolve_init(
            self.init,
            {"kmeans": kmeans, "random": random},
            (n, c),
            X=X,
            n_clusters=c,
            random_state=self.random_state,
        )
        dev = float(np.linalg.norm(F0.T @ F0 - np.eye(c)))
        if dev > 1e-6:
            raise ValueError(
                f"init must have orthonormal columns (FᵀF = I); ||FᵀF − I|| = {dev:.3g}"
            )
        return F0

    # -- the graph -----------------------------------------------------------------
    def _support(self, X: np.ndarray):
        """CSR pattern of the candidate entries (``"knn"``), or None (``"full"``)."""
        if self.graph_support == "full":
            return None
        P = sp.csr_matrix(self._graph(X), dtype=np.float64, copy=True)
        P.setdiag(0)
        P.eliminate_zeros()
        P.sort_indices()
        if np.any(np.diff(P.indptr) == 0):
            raise ValueError("the sample graph has a row without neighbours")
        return P

    def _s_step(self, F: np.ndarray, support, beta: float):
        """Step 1 (Eq. 31): ``S`` for fixed ``F``, its Laplacian and ``Σ s ln s``."""
        n = F.shape[0]
        if support is None:  # dense, in place: at most three n × n arrays at once
            sq = row_norms(F, squared=True)
            S = F @ F.T
            S *= -2.0
            S += sq[:, None]
            S += sq[None, :]
            np.maximum(S, 0.0, out=S)
            S *= -1.0 / (2.0 * beta)
            np.fill_diagonal(S, -np.inf)  # no self-loops
            S -= S.max(axis=1, keepdims=True)
            np.exp(S, out=S)
            S /= S.sum(axis=1, keepdims=True)
            negent = sum(float(xlogy(B, B).sum()) for B in np.array_split(S, -(-n // 512)))
            L = S + S.T
            L *= -0.5
            L[np.diag_indices(n)] = -L.sum(axis=1)  # the diagonal of S is 0
            return S, L, negent
        rows = np.repeat(np.arange(n), np.diff(support.indptr))
        d = pair_sqdist(F, rows, support.indices)
        vals = entropy_graph_rows(support.indptr, d, beta)
        S = sp.csr_matrix((vals, support.indices.copy(), support.indptr.copy()), shape=(n, n))
        return S, sym_laplacian(S), float(xlogy(vals, vals).sum())

    @staticmethod
    def _lmax(L) -> float:
        """``λ_max(L_S)`` (seeded Lanczos; dense ``eigh`` up to 50 nodes)."""
        w, _ = extreme_eigenvectors(L, 1, which="largest", dense_limit=50)
        return max(float(w[0]), 0.0)

    def objective(self, Xc, W, F, L, neg_entropy: float) -> float:
        """``||X_cW − HF||² + λ||W||_{2,1} + α(Tr(FᵀL_SF) + β Σ s ln s)``."""
        R = Xc @ W - (F - F.mean(axis=0))
        val = float(np.sum(R * R)) + float(self.lam) * l21_norm(W)
        if float(self.alpha) > 0:
            val += float(self.alpha) * (
                float(np.einsum("ij,ij->", F, L @ F)) + float(self.beta) * neg_entropy
            )
        return val

    def _fit(self, X: np.ndarray) -> Selection:
        n, p = X.shape
        self._check_params(n)
        c = int(self._k)
        lam, alpha, beta = float(self.lam), float(self.alpha), float(self.beta)
        tol, eps = float(self.tol), float(self.eps)
        Xc = X - X.mean(axis=0)
        gram = Xc.T @ Xc if p <= n else None
        support = self._support(X)
        F = self._initial_F(X, c)
        self.F_init_ = F.copy()

        W = d_next = None
        scores = np.zeros(p)
        n_iter_w: list[int] = []
        objective: list[float] = []
        steps: list[float] = []
        converged = False
        it = 0
        for it in range(1, int(self.max_iter) + 1):
            # 1. S-step (Eq. 31); drop the old graph first ("full": n × n arrays)
            S = L = None
            S, L, negent = self._s_step(F, support, beta)
            if it > 1:
                steps.append(self.objective(Xc, W, F, L, negent))
            # 2. W-step (Algorithm 1, Eq. 20)
            d0 = d_next if self.w_start == "warm" else None
            W, d_used, d_next, n_w = uncorrelated_regression(
                Xc, F, lam, d0=d0, gram=gram, max_iter=self.max_iter_w, eps=eps
            )
            n_iter_w.append(n_w)
            steps.append(self.objective(Xc, W, F, L, negent))
            # 3. F-step (GPI on H + αL_S)
            if alpha > 0:
                sigma = 1.0 + alpha * self._lmax(L) * (1.0 + 1e-10)
            else:
                sigma = 1.0

            def apply_A(V, L=L):
                out = V - V.mean(axis=0)
                return out + alpha * (L @ V) if alpha > 0 else out

            F, _ = gpi_stiefel(apply_A, sigma, Xc @ W, F, max_iter=self.max_iter_f, tol=1e-9)
            steps.append(self.objective(Xc, W, F, L, negent))
            objective.append(steps[-1])
            if self.callback is not None:
                self.callback(it, W=W, F=F, S=S, d=d_used)
            prev_scores, scores = scores, row_norms(W)
            if it > 1:
                dj = abs(objective[-2] - objective[-1])
                ds = float(np.linalg.norm(scores - prev_scores))
                if dj <= tol * max(abs(objective[-2]), 1e-300) and ds <= float(
                    self.tol_scores
                ) * float(np.linalg.norm(scores)):
                    converged = True
                    break

        self.W_ = W
        self.F_ = F
        self.S_ = S
        self.reweight_ = d_used
        self.objective_ = np.asarray(objective)
        self.objective_steps_ = np.asarray(steps)
        self.n_iter_ = it
        self.n_iter_w_ = np.asarray(n_iter_w)
        self.converged_ = converged
        if not converged:
            warnings.warn(
                f"URAFS did not converge in {self.max_iter} iterations "
                f"(tol={tol:g}, tol_scores={float(self.tol_scores):g})",
                ConvergenceWarning,
                stacklevel=3,
            )
        return Selection(order=top_rows(scores, p), scores=scores)
