"""GOLFS: GlObal and Local information combined Feature Selection (Xing, Wan, Wen & Zhong,
``golfs.md``; Computational Statistics 2023).

Model (the paper writes ``X ∈ R^{n×d}``, samples as rows, in §2, but Algorithm 1 takes
``X ∈ R^{d×n}``; we use ``n × d`` throughout, so Algorithm 1's ``X Xᵀ`` is our ``XᵀX``)::

    Stage 1   min_P ||Xᵀ − XᵀP||_{2,1} + κ ||P||_{2,1},   P ∈ R^{n×n}             (Eq. 3)
              S1 = (|P| + |P|ᵀ)/2,  L1 = D1 − S1                                    (Eq. 4)
    Stage 2   min_{F ≥ 0, W} L(F, W) = Tr[Fᵀ(L1 + λL0)F]
                  + α(||XW − F||_F² + β||W||_{2,1}) + (γ/2)||FᵀF − I_c||_F²          (Eq. 9)

with ``L0 = D0 − S0`` the Laplacian of the heat-kernel kNN graph (Eq. 5). Features are
ranked by ``||w_i||_2``.
"""

from __future__ import annotations

import warnings

import numpy as np
from sklearn.cluster import KMeans
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state

from ..base import Selection, UFSSelector
from ..graph import laplacian
from ..linalg import FlooredSPDFactor, floored_spd_solve, l2p_reweight, row_norms, top_rows
from ..validation import check_dense_memory, resolve_init

__all__ = ["GOLFS", "sample_self_representation", "dense_arrays"]

_F_STEPS = ("line_search", "renormalize", "eq14")


def dense_arrays(n: int, d: int) -> int:
    """Dense ``n × n`` float64 arrays GOLFS holds at its peak.

    ``d ≥ n`` (stage 1 solves the ``n × n`` system, and stage 2's ridge solve is in the
    ``n × n`` dual): 5 — ``X G1 Xᵀ``, ``diag(κ g2)`` and their sum, then the sum, its
    Cholesky copy and the new and previous ``P``. ``d < n`` (factored stage 1): 3 —
    ``|P|``, ``|P| + |P|ᵀ`` and its half, then ``S1``, ``diag(D1)`` and ``L1``.
    """
    return 5 if d >= n else 3


def _relative_change(prev: float, cur: float) -> float:
    return abs(prev - cur) / max(abs(prev), 1.0)


def sample_self_representation(
    X: np.ndarray, kappa: float, *, max_iter: int = 100, tol: float = 1e-5, eps: float = 1e-10
) -> dict:
    """Stage 1 of GOLFS: IRLS for ``min_P ||Xᵀ − XᵀP||_{2,1} + κ||P||_{2,1}`` (Eqs. 3, 8).

    ``X`` is ``n × d``; the residual ``Xᵀ − XᵀP`` has one row per feature (weights
    ``G1``, ``d × d``), ``P`` one row per sample (weights ``G2``, ``n × n``). Eq. (8),
    ``P = (G2^{-1} X G1 Xᵀ + κI)^{-1} G2^{-1} X G1 Xᵀ = (X G1 Xᵀ + κ G2)^{-1} X G1 Xᵀ``,
    is the minimiser of the re-weighted quadratic majoriser, so the (ε-smoothed)
    objective does not increase. Initial weights ``G1 = I``, ``G2 = I``.

    When ``d < n`` the iteration runs in factored form: with ``B = X G1^{1/2}``
    (``n × d``) the push-through identity gives
    ``P = G2^{-1} B (Bᵀ G2^{-1} B + κ I_d)^{-1} Bᵀ = U Bᵀ`` (rank ``≤ d``), and the row
    norms of ``P`` (``u_i BᵀB u_iᵀ``) and of the residual (``Xᵀ − (XᵀU) Bᵀ``) cost
    ``O(nd²)``; the ``n × n`` matrix ``P`` is formed once at the end. Otherwise
    (``d ≥ n``) each step solves the ``n × n`` system (``O(n²d + n³)``).

    Returns ``P`` (``n × n``, dense), ``objective`` (smoothed Eq. 3 after every step),
    ``n_iter`` and ``converged``.
    """
    n, d = X.shape
    factored = d < n
    g1 = np.ones(d)
    g2 = np.ones(n)
    objective: list[float] = []
    converged = False
    for it in range(1, int(max_iter) + 1):
        if factored:
            B = X * np.sqrt(g1)  # n × d
            BtB = B.T @ B
            Q = (B.T / g2) @ B  # Bᵀ G2^{-1} B
            Q[np.diag_indices_from(Q)] += kappa
            U = floored_spd_solve(Q, B.T / g2, kappa, lower=True).T  # G2^{-1} B Q^{-1} (n × d)
            psq = np.einsum("ij,ij->i", U @ BtB, U)
            np.maximum(psq, 0.0, out=psq)
            Rt = X.T - (X.T @ U) @ B.T  # d × n
        else:
            A = (X * g1) @ X.T  # X G1 Xᵀ
            M = A + np.diag(kappa * g2)
            P = floored_spd_solve(M, A, kappa * float(g2.min()), lower=True)
            psq = row_norms(P, squared=True)
            Rt = X.T - X.T @ P
        rsq = row_norms(Rt, squared=True)
        objective.append(float(np.sqrt(rsq + eps).sum() + kappa * np.sqrt(psq + eps).sum()))
        # ℓ2,1 re-weighting g = 1 / (2 √(||·||² + ε)) (row norms as 1-column arrays)
        g1 = l2p_reweight(np.sqrt(rsq)[:, None], 1.0, eps)
        g2 = l2p_reweight(np.sqrt(psq)[:, None], 1.0, eps)
        if it > 1 and _relative_change(objective[-2], objective[-1]) <= tol:
            converged = True
            break
    if factored:
        P = U @ B.T
    return {"P": P, "objective": np.asarray(objective), "n_iter": it, "converged": converged}


class _RidgeSolver:
    """``W(F) = (XᵀX + β D)^{-1} Xᵀ F`` for a fixed diagonal ``D`` (Eq. 11).

    Written with ``E = D^{-1/2}`` and ``Z = X E`` as
    ``W = E (ZᵀZ + βI_d)^{-1} Zᵀ F = E Zᵀ (Z Zᵀ + βI_n)^{-1} F`` (Woodbury push-through),
    using the smaller of the two systems. Both are well conditioned (eigenvalues
    ``≥ β``) even when rows of ``W`` vanish and ``D_ii`` explodes.
    """

    def __init__(self, X: np.ndarray, dvec: np.ndarray, beta: float):
        n, d = X.shape
        self.X = X
        self.e = 1.0 / np.sqrt(dvec)
        self.Z = X * self.e
        self.primal = d <= n
        G = self.Z.T @ self.Z if self.primal else self.Z @ self.Z.T
        G[np.diag_indices_from(G)] += beta
        self.c = FlooredSPDFactor(G, beta, lower=True)

    def __call__(self, F: np.ndarray) -> np.ndarray:
        if self.primal:
            return self.e[:, None] * self.c.solve(self.Z.T @ F)
        return self.e[:, None] * (self.Z.T @ self.c.solve(F))


class GOLFS(UFSSelector):
    """GOLFS feature ranking (global self-representation graph + local kNN graph).

    Takes the raw (unstandardised) data and centres it (``input_space = "raw"``; see
    ``_fit`` for why).

    Parameters
    ----------
    n_features_to_select : int
        ``h`` (a prefix of the ranking).
    n_clusters : int
        ``c``, the number of columns of the pseudo-label matrix ``F``.
    lam, alpha, beta, gamma : float
        ``λ`` (weight of ``L0`` against ``L1``), ``α`` (regression term), ``β``
        (ℓ2,1 penalty on ``W``), ``γ`` (orthogonality penalty) of Eq. (9). The paper
        tunes every parameter over ``{10^-6, …, 10^6}`` (§3.3) and gives no defaults. The
        authors' released code (``ZhaoyuXingStat/GOLFS``) defaults to ``λ = 0.1, α = 1,
        β = 1, γ = 10e8``; with ``γ = 1e9`` the Laplacian terms move ``F`` by ~1e-9 (relative)
        per step, so ``F`` stays at its k-means initialisation and the planted features of
        ``golfs_example(1)`` are missed (TP@10 = 1). Our defaults keep ``λ = 0.1, α = 1``
        and use ``β = 100, γ = 100`` (chosen on a small scan of ``golfs_example(1)``, a
        simulation, not a benchmark data set; TP@10 = 9).
    kappa : float
        ``κ > 0`` of the self-representation problem (Eq. 3). (The paper allows
        ``κ = 0``, for which Eq. 8 is singular or trivially ``P = I``.)
    n_neighbors : int
        ``k`` of the kNN graph ``S0`` (the paper uses ``k = 5``).
    sigma : float or None
        Heat-kernel width **in the paper's parametrisation** ``exp(−||x_i − x_j||²/σ²)``
        (Eq. 5). :func:`ufs.graph.knn_graph` uses ``exp(−d²/(2σ_g²))``, so
        :meth:`graph_spec` passes ``σ_g = σ/√2``. ``None`` uses ``knn_graph``'s bandwidth
        rule (``σ_g`` = mean distance to the ``k`` neighbours).
    max_iter, tol : int, float
        Iteration cap and relative-objective-change tolerance, used for both stages.
    eps : float
        Smoothing ``ε`` of every ℓ2,1 re-weighting, ``1/(2√(||·||² + ε))``
        (:func:`ufs.linalg.l2p_reweight`); the paper's ``ς`` floor plays this role.
    max_halvings : int
        Step-exponent halvings per iteration of ``f_step="line_search"`` (see *F step*).
    f_step : {"line_search", "renormalize", "eq14"}
        How Algorithm 1 line 5 (Eq. 14) updates ``F`` (see *F step* below).
        ``"line_search"`` (default): ``F ← F ⊙ R^η``, the first ``η = 1, ½, ¼, …`` that
        does not increase the F-subproblem; ``"renormalize"``: the authors' code, Eq. (14)
        then every column of ``F`` scaled to unit norm; ``"eq14"``: Eq. (14) as printed.
    init : {"kmeans"}, callable or array-like of shape (n_samples, n_clusters)
        Initial ``F`` (Algorithm 1 stage 2 line 2), scikit-learn style
        (:func:`ufs.validation.resolve_init`). ``"kmeans"`` (default, as the authors'
        code): k-means labels ``Y`` (10 restarts, seeded by ``random_state``),
        ``F = Y(YᵀY)^{-1/2} + 0.02``. A callable is called as
        ``init(X, n_clusters, random_state)`` with ``X`` as passed to ``fit`` (constant
        features removed) and a ``RandomState``. An array is used as given. ``F`` must be
        finite, ``≥ 0`` and have a positive entry in every column (Eq. 14 is
        multiplicative: zeros stay zero).
    random_state : int, RandomState or None
        Seeds the k-means initialisation of ``F`` (the only random step).

    Algorithm (paper Algorithm 1, step by step; our ``X`` is ``n × d``)
    ---------------------------------------------------------------------
    Stage 1 (lines 1-7): :func:`sample_self_representation` (Eq. 8 IRLS from
    ``G1 = I, G2 = I``); ``S1 = (|P| + |P|ᵀ)/2`` (Eq. 4, ``P ⊙ sgn(P) = |P|``) and
    ``L1 = D1 − S1``. The diagonal of ``S1`` is set to zero: self-loops cancel in
    ``D1 − S1``, so ``L1`` is unchanged.

    Stage 2: ``S0`` = heat-kernel kNN graph (Eq. 5, via ``self._graph``, union
    symmetrised as Eq. 5's ``N_k(x_i) ∪ N_k(x_j)`` condition says), ``L0 = D0 − S0``
    (:func:`ufs.graph.laplacian`; the authors' code builds ``L`` by broadcasting the
    degree vector along rows, ``L_ij = d_j − S_ij``, which is not a Laplacian; we use the
    paper's ``D − S``). Initialise ``F`` (see below), ``W = (XᵀX + βI)^{-1}XᵀF``,
    ``D = diag(1/(2||w_i||))``, then repeat

    4. ``M = α[I − X(XᵀX + βD)^{-1}Xᵀ]``; only ``M F = α(F − X W(F))`` is needed,
       with ``W(F) = (XᵀX + βD)^{-1}XᵀF``, so ``M`` (``n × n``) is never formed
    5. ``F ← F ⊙ R^η`` with ``R = γF / (L1F + λL0F + MF + γFFᵀF)``; ``η = 1`` is
       Eq. (14) exactly (``f_step``, see *F step* below)
    6. ``W = (XᵀX + βD)^{-1}XᵀF`` with the same ``D`` (one Cholesky factor per
       iteration serves lines 4 and 6; see :class:`_RidgeSolver`)
    7. ``D = diag(1/(2||w_i||))``

    and record ``L(F, W)`` of Eq. (9) (with the ε-smoothed ℓ2,1 norm) in ``objective_``;
    Proposition 1 claims it does not increase (true for the default ``f_step``, see
    below). Stop when its relative change is below ``tol`` (every ``f_step``).

    Cost and memory. ``P``, ``S1`` and ``L1`` are inherently dense ``n × n`` (every
    sample represents every other; ``|P|`` has no low-rank structure), so GOLFS needs
    ``O(n²)`` memory and ``O(n²c)`` per stage-2 iteration for ``L1 F``; at most
    :func:`dense_arrays` of them at once, and ``fit`` refuses up front (``MemoryError``,
    :func:`ufs.validation.check_dense_memory`) when they exceed the dense-memory cap. Everything else
    is sparse (``L0``) or ``O(nd·min(n, d))`` (the ridge solve in the smaller dimension).

    Choices the paper leaves open.

    * ``F`` initialisation (Algorithm 1 line 2 only says "initialize"): ``init``; the
      default is the authors' k-means start (the ``0.02`` offset keeps every entry
      positive so the multiplicative update can move it).
    * ``G1, G2`` start at the identity; ``D`` starts from ``W`` of the identity ``D``.
    * Safeguard: Eq. (14) assumes a positive denominator. ``L1``, ``L0`` and ``M`` have
      negative entries, so an entry of the denominator can be ``≤ 0`` (there the
      gradient is negative, i.e. ``F_ij`` should grow; it happens for small ``γ``, and
      for ~3 % of the entry updates on standardised digits at the defaults, where the
      dense ``L1`` has large degrees). Such entries of ``F`` are left unchanged (counted
      in ``n_nonpositive_denominators_``) so that ``F`` stays non-negative and finite;
      this keeps the descent argument below valid. Applied in every ``f_step`` (the
      authors' code has no such guard: there such entries turn negative).
    * Every ``f_step`` keeps Algorithm 1's order and our stopping rule. The authors'
      code differs outside the F step too: it updates ``W`` and ``D`` before ``M`` (so
      ``D`` lags one F-step), adds ``1e-6 I`` to ``XᵀX + βD``, floors ``||w_i||`` at
      ``1e-16`` and stops when its own objective (``Tr(FᵀMF) + (γ/4)||FᵀF − I||_F``,
      not Eq. 9) changes by less than ``1e-3`` in absolute value.

    F step (``f_step``). The paper specifies the step (Eq. 14, Algorithm 1 line 5, no
    rescaling), so the default follows the paper and the authors' variant is an option.
    Proposition 1's auxiliary function (Eq. 28) does not bound the quartic term
    ``(γ/2)||FᵀF − I||²``, so Eq. (14) as printed can increase Eq. (9): if ``FᵀF = sI``
    and the graph terms are negligible (large ``γ``), Eq. (14) maps ``F → F/s`` and
    ``FᵀF`` alternates between ``sI`` and ``I/s`` for ever.

    * ``"line_search"`` (default; a correction of Eq. 14, not in the paper): try
      ``η = 1, ½, ¼, …`` (at most ``max_halvings`` halvings) and keep the first for which
      the F-subproblem (Eq. 12 / Eq. 24, current ``D``) does not increase. ``F ⊙ log R``
      is a descent direction (its entries have the sign of ``−∂L/∂F``), so a small
      enough ``η`` succeeds unless ``F`` is stationary (then ``η = 0``); with that the
      chain of Proposition 1's proof (Eq. 35) holds and ``objective_`` is
      non-increasing (tested). ``η = 1`` (Eq. 14 itself) is accepted in all but 1-3
      iterations per fit in the measurements below.
    * ``"renormalize"`` (the authors' released code, ``ZhaoyuXingStat/GOLFS``): Eq. (14),
      then ``F ← F diag(FᵀF)^{-1/2}`` (unit-norm columns) every iteration. Not part of
      Algorithm 1, so Proposition 1 says nothing about it; measured, it is monotone at
      the authors' ``γ = 1e9`` but not at moderate ``γ`` (below).
    * ``"eq14"``: Eq. (14) as printed (paper-literal; not monotone, below).

    Measured (Eq. 9 increases counted with tolerance ``1e-9·|L| + 1e-12``; default
    parameters, ``tol`` and ``max_iter``; one BLAS thread on a shared 2-core machine;
    ``golfs_example(e, random_state=s)``, ``s = 0, 1, 2``, ``c = 5``: Example 1
    raw-centred and z-scored, Example 2 raw-centred; digits: all 1797 raw
    ``load_digits`` samples, ``c = 10``):

    ================  ==================  ============  =========  =======  ==========
    data (fits)       f_step              increases¹    TP@10      iters    time (s)
    ================  ==================  ============  =========  =======  ==========
    Ex. 1 (6)         line_search         0             9-10       327-517  0.8-1.6
    Ex. 1 (6)         renormalize         0-3 (≤14 %)   9-10       343-485  1.0-1.2
    Ex. 1 (6)         eq14                31-38 (≤136×) 9-10       309-581  0.8-1.8
    Ex. 2 (3)         line_search         0             10         202-350  0.5-1.0
    Ex. 2 (3)         renormalize         0-1 (≤0.1 %)  10         205-351  0.4-1.1
    Ex. 2 (3)         eq14                33-35 (≤21×)  10         200-451  0.4-1.5
    digits (1)        line_search         0             –          320      4.7
    digits (1)        renormalize         59 (≤81 %)    –          358      3.5
    digits (1)        eq14                25 (≤1708×)   –          364      3.6
    ================  ==================  ============  =========  =======  ==========

    ¹ steps that increased Eq. (9) per fit (largest relative increase). TP@10 of all
    three variants is equal fit by fit; ``line_search`` ends at the lowest Eq. (9) in
    every run (e.g. 10.83 vs 10.91 renormalised), and the rankings barely differ (digits
    top-10 identical, top-20 19/20; k-means NMI on the top 10: 0.564 vs 0.563).
    With the authors' ``β = 1, γ = 1e9``, ``renormalize`` never increased Eq. (9)
    (0 increases in 9 simulation fits and on digits, 19-33 iterations), and neither did
    ``line_search``, which lands on the same point (Eq. 9 equal to 1e-6 relative), whereas
    ``eq14`` oscillates (every second step increases, no convergence in 1000); at those
    parameters ``F`` stays at its k-means start and TP@10 is 0-3 (Ex. 1), 6-7 (Ex. 2).
    At ``γ ≤ 1`` ``renormalize`` increases Eq. (9) often (e.g. ``γ = 1e-2``: ~75 of 150
    steps on the small planted test data). Hence ``line_search`` stays the default
    (paper's step, made monotone); ``"renormalize"`` is the authors' F step.

    Attributes
    ----------
    objective_ : ndarray
        Eq. (9) at the initial point and after every stage-2 iteration.
    rsr_objective_ : ndarray
        Smoothed Eq. (3) after every stage-1 iteration.
    n_iter_, converged_ : int, bool
        Stage 2 (``converged_`` is False if either stage hit ``max_iter``).
    rsr_n_iter_ : int
    F_ : ndarray
        Final non-negative pseudo-label matrix (``n × c``).
    W_ : ndarray
        Final coefficient matrix (``d × c``); ``scores_`` are its row norms.
    n_nonpositive_denominators_ : int
    step_exponents_ : ndarray
        Accepted ``η`` per iteration (1 = Eq. 14 unchanged; always 1 unless
        ``f_step="line_search"``).
    """

    kind = "ranking"
    score_power = 1  # ranks by ||w_i||: resolved_rank_ recorded
    input_space = "raw"

    def __init__(
        self,
        n_features_to_select: int = 10,
        n_clusters: int | None = None,
        *,
        lam: float = 0.1,
        alpha: float = 1.0,
        beta: float = 100.0,
        gamma: float = 100.0,
        kappa: float = 1.0,
        n_neighbors: int = 5,
        sigma: float | None = None,
        max_iter: int = 1000,
        tol: float = 1e-5,
        eps: float = 1e-10,
        max_halvings: int = 30,
        f_step: str = "line_search",
        init="kmeans",
        random_state=None,
    ):
        self.n_features_to_select = n_features_to_select
        self.n_clusters = n_clusters
        self.lam = lam
        self.alpha = alpha
        self.beta = beta
        self.gamma = gamma
        self.kappa = kappa
        self.n_neighbors = n_neighbors
        self.sigma = sigma
        self.max_iter = max_iter
        self.tol = tol
        self.eps = eps
        self.max_halvings = max_halvings
        self.f_step = f_step
        self.init = init
        self.random_state = random_state

    def graph_spec(self) -> dict:
        # Eq. (5) uses exp(−d²/σ²); knn_graph uses exp(−d²/(2σ_g²)): σ_g = σ/√2
        sigma = None if self.sigma is None else float(self.sigma) / np.sqrt(2.0)
        return {"n_neighbors": self.n_neighbors, "weight": "heat", "sigma": sigma}

    def _check_params(self) -> None:
        for name in ("alpha", "beta", "gamma", "kappa"):
            if not getattr(self, name) > 0:
                raise ValueError(f"{name} must be > 0; got {getattr(self, name)}")
        if not self.lam >= 0:
            raise ValueError(f"lam must be >= 0; got {self.lam}")
        if self.sigma is not None and not self.sigma > 0:
            raise ValueError(f"sigma must be > 0 or None; got {self.sigma}")
        if int(self.max_iter) < 1:
            raise ValueError("max_iter must be >= 1")
        if self.f_step not in _F_STEPS:
            raise ValueError(f"f_step must be one of {_F_STEPS}; got {self.f_step!r}")

    def _init_F(self, X: np.ndarray, Xc: np.ndarray, c: int) -> np.ndarray:
        """Initial ``F`` (Algorithm 1, stage 2, line 2) from ``init``: k-means runs on the
        centred ``Xc``, a callable receives ``X`` as passed to ``fit``."""
        rng = check_random_state(self.random_state)

        def kmeans() -> np.ndarray:
            seed = rng.randint(np.iinfo(np.int32).max)
            labels = KMeans(n_clusters=c, n_init=10, random_state=seed).fit(Xc).labels_
            Y = np.zeros((X.shape[0], c))
            Y[np.arange(X.shape[0]), labels] = 1.0
            counts = np.maximum(Y.sum(axis=0), 1.0)
            return Y / np.sqrt(counts) + 0.02

        F = resolve_init(
            self.init,
            {"kmeans": kmeans},
            (X.shape[0], c),
            X=X,
            n_clusters=c,
            random_state=rng,
            nonnegative=True,
        )
        if not (F > 0).any(axis=0).all():
            # Eq. (14) is multiplicative: a zero column stays zero for ever
            raise ValueError("init must have a positive entry in every column of F")
        return F

    def _objective(self, F, W, XW, L1F, L0F) -> float:
        """Eq. (9) with the ε-smoothed ℓ2,1 norm."""
        c = F.shape[1]
        FtF = F.T @ F
        FtF[np.diag_indices(c)] -= 1.0
        return float(
            np.vdot(F, L1F)
            + self.lam * np.vdot(F, L0F)
            + self.alpha
            * (np.sum((XW - F) ** 2) + self.beta * np.sqrt(row_norms(W, True) + self.eps).sum())
            + 0.5 * self.gamma * np.sum(FtF**2)
        )

    def _f_objective(self, F, L1F, L0F, MF) -> float:
        """The F-subproblem (Eq. 12 / Eq. 24) for the current ``D``."""
        c = F.shape[1]
        FtF = F.T @ F
        FtF[np.diag_indices(c)] -= 1.0
        return float(np.vdot(F, L1F + self.lam * L0F + MF) + 0.5 * self.gamma * np.sum(FtF**2))

    def _line_search(self, F, ratio, MF, L1F, L0F, L1, L0, X, solver):
        """``F ⊙ R^η`` for the first ``η = 1, ½, ¼, …`` that does not increase the
        F-subproblem (Eq. 12 / Eq. 24, current ``D``); ``η = 0`` (no move) if none does.
        Returns ``F_new, η, L1 F_new, L0 F_new, W(F_new)``."""
        g_old = self._f_objective(F, L1F, L0F, MF)
        eta = 1.0
        for _halving in range(self.max_halvings + 1):
            F_new = F * ratio**eta  # line 5 (η = 1: Eq. 14 exactly)
            L1F_new, L0F_new = L1 @ F_new, L0 @ F_new
            W_new = solver(F_new)  # line 6 (same D)
            MF_new = self.alpha * (F_new - X @ W_new)
            if self._f_objective(F_new, L1F_new, L0F_new, MF_new) <= g_old:
                return F_new, eta, L1F_new, L0F_new, W_new
            eta *= 0.5
        # no decrease along the multiplicative direction: F is stationary
        return F, 0.0, L1F, L0F, solver(F)

    def _fit(self, X: np.ndarray) -> Selection:
        self._check_params()
        check_dense_memory(dense_arrays(*X.shape), X.shape[0], "GOLFS")
        # Input space: the paper never standardises, and z-scoring erases the signal of
        # simulation Example 2 (variance carried by the true features): TP@10 drops from
        # 10/10 to 0/10. GOLFS therefore takes the raw data (input_space = "raw") and only
        # centres it, since its regressions have no intercept.
        Xc = X - X.mean(axis=0)
        F = self._init_F(X, Xc, self._k)
        X = Xc
        lam, alpha, beta, gamma, eps = self.lam, self.alpha, self.beta, self.gamma, self.eps

        # Stage 1: global structure (Eqs. 3, 4, 8)
        s1 = sample_self_representation(
            X, float(self.kappa), max_iter=self.max_iter, tol=self.tol, eps=eps
        )
        self.rsr_objective_ = s1["objective"]
        self.rsr_n_iter_ = s1["n_iter"]
        S1 = np.abs(s1.pop("P"))  # P is not needed any more: one n × n array less
        S1 = 0.5 * (S1 + S1.T)
        np.fill_diagonal(S1, 0.0)
        L1 = laplacian(S1)  # dense n × n (inherent)
        del S1

        # Stage 2: local structure (Eq. 5) and the F/W iteration (Algorithm 1 lines 1-9)
        L0 = laplacian(self._graph(X))  # sparse
        W = _RidgeSolver(X, np.ones(X.shape[1]), beta)(F)
        XW = X @ W
        L1F, L0F = L1 @ F, L0 @ F
        objective = [self._objective(F, W, XW, L1F, L0F)]
        n_bad = 0
        exponents = []
        converged = False
        for _ in range(int(self.max_iter)):
            solver = _RidgeSolver(X, l2p_reweight(W, 1.0, eps), beta)  # D from W (line 7)
            MF = alpha * (F - X @ solver(F))  # line 4
            denom = L1F + lam * L0F + MF + gamma * (F @ (F.T @ F))
            ok = denom > 0
            n_bad += int(np.count_nonzero(~ok & (F > 0)))
            ratio = np.where(ok, gamma * F / np.where(ok, denom, 1.0), 1.0)  # Eq. (14)
            if self.f_step == "line_search":
                F, eta, L1F, L0F, W = self._line_search(F, ratio, MF, L1F, L0F, L1, L0, X, solver)
            else:  # line 5: Eq. (14) as printed (η = 1); "renormalize": unit-norm columns
                F, eta = F * ratio, 1.0
                if self.f_step == "renormalize":
                    norms = np.linalg.norm(F, axis=0)
                    F = F / np.where(norms > 0, norms, 1.0)
                L1F, L0F = L1 @ F, L0 @ F
                W = solver(F)  # line 6 (same D)
            exponents.append(eta)
            XW = X @ W
            objective.append(self._objective(F, W, XW, L1F, L0F))
            if _relative_change(objective[-2], objective[-1]) <= self.tol:
                converged = True
                break

        self.objective_ = np.asarray(objective)
        self.n_iter_ = len(objective) - 1
        self.converged_ = converged and s1["converged"]
        self.F_ = F
        self.W_ = W
        self.n_nonpositive_denominators_ = n_bad
        self.step_exponents_ = np.asarray(exponents)
        if not s1["converged"]:
            warnings.warn(
                f"GOLFS stage 1 (self-representation IRLS) did not converge in "
                f"{self.max_iter} iterations (tol={self.tol})",
                ConvergenceWarning,
                stacklevel=3,
            )
        if not converged:
            warnings.warn(
                f"GOLFS stage 2 did not converge in {self.max_iter} iterations (tol={self.tol})",
                ConvergenceWarning,
                stacklevel=3,
            )
        scores = row_norms(W)
        return Selection(order=top_rows(scores, X.shape[1]), scores=scores)
