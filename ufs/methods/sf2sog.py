"""SF2SOG: sparse and flexible projection for UFS with an optimal graph.

Wang, Zhang, Bian, Wang, Nie, Li, "Sparse and Flexible Projections for Unsupervised
Feature Selection", IEEE TKDE 35(6), 2023 (online 2022). The model implemented is the
one the K-means UFS paper states for it (``kmeans_ufs.md`` §IV, Eq. 36), in the paper's
notation ``X ∈ R^{p×n}``::

    min_{Y,W,G}  Tr(YᵀL̂_G Y) + λ ||WᵀX − Yᵀ||_F² + γ ||G − S||_F²
    s.t. WᵀW = I,  ||Wᵀ||_{2,0} = h,  0 ≤ G_ij ≤ 1,  Σ_j G_ij = 1.

Our ``X`` is ``n × p`` (rows are samples), so ``||WᵀX − Yᵀ||`` becomes ``||XW − Y||``
with ``W ∈ R^{p×m}``, ``Y ∈ R^{n×m}``.
"""

from __future__ import annotations

import warnings

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state

from ..base import Selection, UFSSelector
from ..linalg import (
    FlooredSPDFactor,
    extreme_eigenvectors,
    project_rows_l20,
    row_norms,
    spd_solve,
    top_rows,
)
from ..validation import check_dense_memory, resolve_init
from ._optimal_graph import (
    SYMMETRIC_ORDERING,
    graph_objective_terms,
    pair_sqdist,
    simplex_rows_on_support,
    sym_laplacian,
)

__all__ = ["SF2SOG", "FULL_SUPPORT_ARRAYS", "ipu_support", "sparse_pca_ipu"]

#: above this many samples ``(L + λI)⁻¹`` is applied by conjugate gradients
#: (:func:`ufs.linalg.spd_solve`, relative residual 1e-12) instead of a sparse LU
CG_MIN_SAMPLES = 5000
#: ``graph_support="full"``: peak memory in dense ``n × n`` float64 equivalents — the pair
#: lists (rows, columns, weights and distances over all ``n(n − 1)`` pairs), ``G`` and its
#: Laplacian as sparse matrices with ~n² entries, the dense Laplacian, ``L + λI`` and its
#: Cholesky copy. Measured with ``tracemalloc``: 13.6–13.8 × 8n² bytes at n = 400–1 200
#: (``tests/test_dense_memory.py`` checks the bound); refused above the shared cap.
FULL_SUPPORT_ARRAYS = 14
#: up to this many features ``M`` (p × p) is formed densely; above, it is an operator
_DENSE_P_LIMIT = 2000


def ipu_support(W: np.ndarray, AW: np.ndarray, h: int) -> np.ndarray:
    """The IPU support step: the ``h`` largest ``diag(AW(WᵀAW)⁺WᵀA)``, sorted.

    Those are the squared row norms of ``R = AW (WᵀAW)^{-1/2}`` (pseudo-inverse root:
    eigenvalues ``≤ 1e-12 · max`` are dropped); ties go to the lower index. ``W`` need
    not be sparse: applied to a dense ``W`` it is the support rule of the same group's
    ℓ2,0 code (Dong, Nie, Tian, Wang, Li, TPAMI 2025, ``L20sparse``).
    """
    G = W.T @ AW
    e, U = np.linalg.eigh((G + G.T) / 2.0)
    keep = e > max(e.max(), 0.0) * 1e-12
    R = AW @ (U[:, keep] / np.sqrt(e[keep]))
    _, J = project_rows_l20(R, h)
    return np.sort(J)


def sparse_pca_ipu(
    apply_A,
    block_A,
    p: int,
    m: int,
    h: int,
    W0: np.ndarray,
    *,
    max_iter: int = 50,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``max Tr(WᵀAW)`` s.t. ``WᵀW = I``, ``||W||_{2,0} ≤ h`` for ``A ⪰ 0`` (p × p).

    Iterative support update of Tian, Nie, Wang, Li ("Learning feature sparse principal
    subspace", NeurIPS 2020, Algorithm "IPU"): with ``R = AW (WᵀAW)^{-1/2}``,

    1. ``J`` = the ``h`` rows of ``R`` with the largest norms (``diag(AW(WᵀAW)⁺WᵀA)``;
       :func:`ufs.linalg.project_rows_l20`);
    2. ``W_J`` = the ``m`` leading eigenvectors of the reduced ``A_JJ`` (h × h),
       ``W`` = 0 off ``J``.

    Monotone: for any ``J``, ``Tr(P_JJ) = ||Π A^{1/2} E_J||²_F ≤ λ_1..m(A_JJ)`` (Π the
    projector on ``range(A^{1/2}W)``), and ``Tr(P_{J_t J_t}) ≥ Tr(W_tᵀAW_t)``; hence
    ``Tr(W_{t+1}ᵀAW_{t+1}) ≥ Tr(P_{J_{t+1}J_{t+1}}) ≥ Tr(P_{J_tJ_t}) ≥ Tr(W_tᵀAW_t)``.
    First ``W0`` is replaced by the best ``W`` on its own support (step 2), then steps
    1-2 repeat until the support repeats. ``apply_A(W)`` returns ``AW``; ``block_A(J)``
    returns ``A_JJ``. ``W0`` must be feasible. Returns ``(W, J, trace)`` with
    ``Tr(WᵀAW)`` per iterate (``trace[0]`` = ``W0``'s) and ``J`` sorted.
    """
    J = np.sort(np.flatnonzero(np.any(W0 != 0, axis=1)))
    trace = [float(np.einsum("ij,ij->", W0, apply_A(W0)))]

    def reduced(J):
        _, V = extreme_eigenvectors(block_A(J), m, which="largest")
        W = np.zeros((p, m))
        W[J] = V
        return W

    # the best W on the current support first (W0 may be optimal for an older A)
    W = reduced(J)
    AW = apply_A(W)
    trace.append(float(np.einsum("ij,ij->", W, AW)))
    for _ in range(int(max_iter)):
        Jn = ipu_support(W, AW, h)
        if np.array_equal(Jn, J):
            break
        W = reduced(Jn)
        J = Jn
        AW = apply_A(W)
        trace.append(float(np.einsum("ij,ij->", W, AW)))
    return W, J, np.asarray(trace)


class SF2SOG(UFSSelector):
    """SF2SOG (subset): exactly ``h`` features from an ℓ2,0-constrained orthogonal projection.

    Parameters
    ----------
    n_features_to_select : int
        ``h``; the ℓ2,0 constraint keeps exactly ``h`` non-zero rows (support) of ``W``.
    n_clusters : int
        ``c``; ``W`` and ``Y`` have ``m = min(c, h)`` columns (``W ∈ R^{p×k}`` in §IV;
        ``m ≤ h`` is needed for ``WᵀW = I`` with ``h`` non-zero rows).
    lam : float
        ``λ``, weight of the flexible-embedding residual ``||XW − Y||²``.
    gamma : float
        ``γ``, weight of ``||G − S||²``.
    n_neighbors : int
        ``k`` of the kNN graph ``S`` (K-means UFS §V-B: 5) and of the support of ``G``.
    max_iter, tol : int, float
        Outer iterations; stop when the support is unchanged and the objective's
        relative decrease is ``≤ tol``.
    max_iter_w : int
        Support-update (IPU) iterations per W-step.
    init : {"diag", "random"}, callable or array (p × m), default "diag"
        Initial support of ``W`` (see "Initial support" below). An array (or the result
        of ``init(X, n_clusters, random_state)``, :func:`ufs.validation.resolve_init`)
        with exactly ``h`` non-zero rows gives the support directly; any other ``W0``
        (e.g. dense) gets one IPU support step (:func:`ipu_support`) at ``G = S``.
    graph_support : {"knn", "full"}, default "knn"
        Candidate entries of ``G``: the kNN support of ``S`` (sparse, ``O(nk)``), or
        every pair ``i ≠ j`` (Eq. 36 as written; ``O(n²)`` memory and a dense Cholesky
        of ``L_G + λI`` per iteration).
    random_state : int, RandomState or None
        Seeds ``init="random"`` only.

    Choices (the text gives only Eq. 36; each is documented here)
    ------------------------------------------------------------
    * ``S`` – the sample graph of :meth:`graph_spec` (kNN, ``k = 5``, heat kernel, the
      footnote definition of §IV), each row divided by its sum so that ``S`` itself
      satisfies the constraints on ``G`` (otherwise ``||G − S||`` could never vanish).
    * ``L̂_G`` – ``L_G = D − (G + Gᵀ)/2``, so ``Tr(YᵀL_GY) = ½ Σ_ij g_ij ||y_i − y_j||²``.
      §IV calls it "normalized"; with ``G1 = 1`` the out-degrees are already 1, and the
      degree-normalised form would couple the rows and lose the closed-form G-step of
      the optimal-graph literature (Nie et al. 2014), which this model inherits.
    * ``Y`` unconstrained (as Eq. 36 states): the Y-step is exact,
      ``Y = λ (L_G + λI)^{-1} XW`` (sparse LU of the kNN-sparse ``L_G + λI``).
    * W-step: eliminating ``Y`` gives ``min_W Tr(WᵀMW)`` with
      ``M = λ Xᵀ L_G (L_G + λI)^{-1} X ⪰ 0`` (p × p) under ``WᵀW = I``,
      ``||W||_{2,0} = h``. Written as ``max Tr(WᵀAW)``, ``A = σI − M``, ``σ = λ_max(M)``
      (the smallest shift that makes ``A ⪰ 0``; constant on the feasible set since
      ``Tr(WᵀσIW) = σm``), it is solved by :func:`sparse_pca_ipu` (support chosen by the
      ℓ2,0 row projection, rows by the reduced ``h × h`` eigen-problem). That solver is
      from the same group (Nie, Wang; the same rule as ``L20sparse`` in Dong, Nie, Tian,
      Wang, Li's public SPDFS code) and made for this exact subproblem; the SF2SOG
      paper's own W-algorithm is not in the public text (only its abstract is). It is
      warm-started from the previous ``W``. It is a *local* method: see "Finding".
    * Initial support (``init``): ``"diag"`` (default) – the ``h`` features with the
      smallest ``M_ii = λ x_iᵀ L_S (L_S + λI)^{-1} x_i`` (each feature's own cost; ties
      to the lower index), then ``W_J`` = the ``m`` smallest eigenvectors of ``M_JJ``.
      ``"random"`` – a Gaussian orthonormal ``p × m`` ``W0`` and one support step (the
      group's SPDFS code starts alike, from ``orth(rand)`` with uniform entries and one
      ``L20sparse`` step); not known to be SF2SOG's. (The ℓ2,0 projection of the unconstrained minimiser is not
      usable: for ``p > n``, ``M`` has a null space of dimension ``≥ p − n`` and that
      minimiser is an arbitrary basis of it.)
    * G-step (exact, row-wise, over the candidate entries): ``½ Σ_j g_ij d_ij +
      γ Σ_j (g_ij − s_ij)²`` is minimised on the simplex by
      ``g_i = Proj_Δ(s_i − d_i / (4γ))``, ``d_ij = ||y_i − y_j||²``. Self-loops are
      excluded in both modes (``d_ii = 0`` would otherwise attract weight that costs
      nothing). ``graph_support="knn"`` (default) restricts ``G`` to the kNN support of
      ``S``: a deviation from Eq. 36 for every finite ``γ`` (the simplex threshold is
      negative, so close pairs off the support would get weight), kept as the default
      for its ``O(nk)`` cost. Measured on the planted data below at ``λ = γ = 1``:
      ``"knn"`` 7.4 entries per row, objective 75.91; ``"full"`` 30.4 entries per row,
      objective 63.64; the same 11 planted features. ``"full"`` is Eq. 36 as written.
    * Order of the returned features: decreasing ``||w_i||`` (ties to the lower index).

    Monotonicity: every step is an exact (Y, G) or monotone (W) block minimisation of
    the same objective, so ``objective_`` (and ``objective_steps_``) do not increase.

    Finding (verified step by step in ``tests/test_sf2sog.py``)
    -----------------------------------------------------------
    Data: ``planted_clusters(n_per=75, n_clusters=4, n_signal=12, n_noise=138,
    sep=2.5, seed=0)`` (n = 300, 12 informative of 150, centres N(0, 2.5²), noise N(0, 1)),
    standardised; ``h = 20``, ``c = 4``. Each block step matches a generic solver
    (Y: BFGS; G: SLSQP per row; W: brute force over supports on small problems; the
    objective formula against dense ``Tr(YᵀL_GY)``); ``WᵀW = I``, exactly ``h`` rows and
    rows of ``G`` on the simplex hold at every iteration; every block step decreases
    Eq. (36). No implementation error was found.

    * The reported failure (≤ 2 planted features in the top 20 over the 7×7 grid) does
      not reproduce: the default fit finds 11 of 12 at all 49 points
      (λ, γ ∈ {1e-6, 1e-4, …, 1e6}), with either ``graph_support``; seeds 0–9 at
      λ = γ = 1: 11, 12, 12, 12, 11, 12, 12, 11, 12, 12 (LapScore and MCFS: 11 on seed 0).
      The grid is flat: ``γ`` changes nothing anywhere.
    * That recovery is the initial support's doing. The default initial support
      already holds the 11, and the ℓ2,0 W-step is local: the final support differs
      from it by 0 (λ ≤ 1e-4), 0–1 (1e-2, 1) or 2 (λ ≥ 1e2) features at every grid
      point. ``init="random"`` reproduces the
      issue's numbers: ``random_state=1`` gives 0 (λ ≤ 1e-2), 1 (λ = 1), 2 (λ ≥ 1e2)
      planted features for every γ (random ≈ 1.6); at λ = 1e-6 twelve random starts end
      with 0–4 planted features at objectives 3.6–4.4× the default's.
    * What the model rewards is collinearity, not cluster structure. ``WᵀW = I`` does
      not normalise the variance of ``XW``, so ``min Tr(WᵀMW)`` picks low-variance
      directions. The 12 informative columns span a rank-3 cluster signal plus noise,
      and ``XW`` is their within-cluster noise: between-cluster R² ≤ 0.02, variance
      0.12–0.19 per column (a feature: 1), graph Rayleigh quotient 4.5 (a noise
      feature: 3.9). The model does not need all planted features either. A
      swap search on the W-problem finds supports with 7–10 of them whose Eq. (36)
      objective after a full fit is lower (72.0–72.9 vs 75.9). With 4 near-duplicate
      noise pairs added, a support of those pairs and 12 noise features (0 planted)
      reaches an objective 23–33× lower than the default fit's (11 planted), for
      λ ∈ {1e-6, 1, 1e6}. LapScore on the same graph picks none of the pairs.

    Dense matrices (``graph_support="knn"``): none ``n × n``. ``graph_support="full"``
    holds about ``FULL_SUPPORT_ARRAYS`` (14) ``n × n`` float64 equivalents and is refused
    up front above the shared dense-memory cap (:func:`ufs.validation.check_dense_memory`;
    n = 8 757 at 8 GiB). ``L (L + λI)^{-1} X``
    (n × p) is computed by one sparse LU solve per iteration; ``M`` is a dense ``p × p``
    matrix when ``p ≤ 2000``; above, only ``MW``, ``M_JJ`` and ``λ_max(M)`` (Lanczos)
    are computed from the ``n × p`` factors.

    Attributes
    ----------
    W_ : ndarray (p × m), exactly ``h`` non-zero rows generically (support ``support_J_``)
    Y_ : ndarray (n × m)
    G_ : scipy.sparse.csr_matrix, the learned graph (rows on the simplex)
    objective_ : ndarray, Eq. (36) after every outer iteration
    objective_steps_ : ndarray, Eq. (36) at the start and after every block step
        (``[f_0, f_after(W,Y)_1, f_after(G)_1, f_after(W,Y)_2, …]``)
    init_support_ : ndarray, the initial support (sorted)
    n_iter_, converged_ : int, bool
    """

    kind = "subset"

    def __init__(
        self,
        n_features_to_select: int = 10,
        n_clusters: int | None = None,
        *,
        lam: float = 1.0,
        gamma: float = 1.0,
        n_neighbors: int = 5,
        max_iter: int = 50,
        tol: float = 1e-6,
        max_iter_w: int = 50,
        init="diag",
        graph_support: str = "knn",
        random_state=None,
    ):
        self.n_features_to_select = n_features_to_select
        self.n_clusters = n_clusters
        self.lam = lam
        self.gamma = gamma
        self.n_neighbors = n_neighbors
        self.max_iter = max_iter
        self.tol = tol
        self.max_iter_w = max_iter_w
        self.init = init
        self.graph_support = graph_support
        self.random_state = random_state

    def graph_spec(self) -> dict:
        return {"n_neighbors": int(self.n_neighbors), "weight": "heat"}

    def _check_params(self) -> None:
        if not self.lam > 0:
            raise ValueError(f"lam must be > 0; got {self.lam}")
        if not self.gamma > 0:
            raise ValueError(f"gamma must be > 0; got {self.gamma}")
        if int(self.max_iter) < 1 or int(self.max_iter_w) < 1:
            raise ValueError("max_iter and max_iter_w must be >= 1")
        if self.graph_support not in ("knn", "full"):
            raise ValueError(f"graph_support must be 'knn' or 'full'; got {self.graph_support!r}")

    @staticmethod
    def _row_stochastic(S: sp.csr_matrix) -> sp.csr_matrix:
        S = sp.csr_matrix(S, dtype=np.float64)
        d = np.asarray(S.sum(axis=1)).ravel()
        if np.any(d <= 0):
            raise ValueError("the sample graph has a row without positive weights")
        return sp.csr_matrix(sp.diags(1.0 / d) @ S)

    def _fit(self, X: np.ndarray) -> Selection:
        self._check_params()
        n, p = X.shape
        h = self._h
        m = min(self._k, h)
        lam, gamma = float(self.lam), float(self.gamma)
        if self.graph_support == "full":
            check_dense_memory(
                FULL_SUPPORT_ARRAYS,
                n,
                "SF2SOG(graph_support='full')",
                hint="graph_support='knn' (the default) keeps every n × n object sparse",
            )
        S = self._row_stochastic(self._graph(X))
        S.sort_indices()
        if self.graph_support == "knn":
            Sc = S.tocoo()
            rows, cols, s_vals = Sc.row, Sc.col, Sc.data  # CSR order: grouped by row
        else:  # every pair i ≠ j (Eq. 36 as written; O(n²) memory)
            rows = np.repeat(np.arange(n), n - 1)
            cols = np.delete(np.arange(n * n) % n, np.arange(n) * (n + 1))
            s_vals = np.asarray(S[rows, cols]).ravel()
        I_n = sp.identity(n, format="csc")

        def w_problem(G):
            """``apply_M``, ``block_M``, ``σ`` and the Y-solver for the graph ``G``."""
            L = sym_laplacian(G)
            if self.graph_support == "knn" and n > CG_MIN_SAMPLES:
                # L + λI is well conditioned (λ > 0): CG, where the LU of a kNN-graph
                # Laplacian fills in (n = 20 000: 2 s per factorisation, every iteration)
                A = (L + lam * I_n).tocsr()

                def solve(B):
                    Y, ok = spd_solve(A, B, tol=1e-12)
                    if not ok:  # e.g. a tiny λ: the exact factorisation
                        lu = spla.splu(A.tocsc(), permc_spec=SYMMETRIC_ORDERING)
                        return lu.solve(np.asarray(B, dtype=np.float64))
                    return Y
            elif self.graph_support == "knn":
                lu = spla.splu(sp.csc_matrix(L + lam * I_n), permc_spec=SYMMETRIC_ORDERING)

                def solve(B):
                    return lu.solve(np.asarray(B, dtype=np.float64))
            else:  # G has ~n² entries: a dense Cholesky beats a sparse LU
                L = L.toarray()
                cf = FlooredSPDFactor(L + lam * np.eye(n), lam)

                def solve(B):
                    return cf.solve(np.asarray(B, dtype=np.float64))

            LZ = L @ solve(X)  # L (L + λI)^{-1} X, n × p
            diag_M = lam * np.einsum("ij,ij->j", X, LZ)
            if p <= _DENSE_P_LIMIT:
                Mf = lam * (X.T @ LZ)
                Mf = (Mf + Mf.T) / 2.0
                sigma = float(extreme_eigenvectors(Mf, 1, which="largest", dense_limit=200)[0][0])

                def apply_M(W):
                    return Mf @ W

                def block_M(J):
                    return Mf[np.ix_(J, J)]
            else:

                def apply_M(W):
                    return lam * (X.T @ (LZ @ W))

                def block_M(J):
                    B = lam * (X[:, J].T @ LZ[:, J])
                    return (B + B.T) / 2.0

                op = spla.LinearOperator(
                    (p, p), matvec=lambda v: apply_M(v.reshape(-1, 1)).ravel(), dtype=np.float64
                )
                sigma = float(extreme_eigenvectors(op, 1, which="largest", dense_limit=0)[0][0])
            sigma = max(sigma, 0.0)
            return apply_M, block_M, sigma, solve, L, diag_M

        def objective(W, Y, G):
            smooth = 0.5 * graph_objective_terms(G, Y)
            fit = float(np.sum((X @ W - Y) ** 2))
            D = (G - S).tocoo()
            return smooth + lam * fit + gamma * float(np.dot(D.data, D.data))

        G = S.copy()
        apply_M, block_M, sigma, solve, L, diag_M = w_problem(G)

        def on_support(J):
            _, V = extreme_eigenvectors(block_M(J), m, which="smallest")
            W = np.zeros((p, m))
            W[J] = V
            return W

        def random_w():
            Q = check_random_state(self.random_state).standard_normal((p, m))
            return np.linalg.qr(Q)[0]

        # initial support (class docstring, "init")
        W0 = resolve_init(
            self.init,
            {"diag": lambda: on_support(np.sort(top_rows(-diag_M, h))), "random": random_w},
            (p, m),
            X=X,
            n_clusters=self._k,
            random_state=self.random_state,
        )
        J = np.flatnonzero(np.any(W0 != 0, axis=1))
        if J.size != h:  # dense (or other) W0: one IPU support step at G = S
            J = ipu_support(W0, sigma * W0 - apply_M(W0), h)
        J = J0 = np.sort(J)
        W = on_support(J)
        Y = lam * solve(X @ W)
        steps = [objective(W, Y, G)]

        obj = []
        converged = False
        for it in range(1, int(self.max_iter) + 1):
            if it > 1:
                apply_M, block_M, sigma, solve, L, _ = w_problem(G)
            # W-step: max Tr(Wᵀ(σI − M)W) over the ℓ2,0 / Stiefel set, warm-started
            s_ = sigma
            am, bm = apply_M, block_M
            W, J_new, _ = sparse_pca_ipu(
                lambda V, am=am, s_=s_: s_ * V - am(V),
                lambda J, bm=bm, s_=s_: s_ * np.eye(J.size) - bm(J),
                p,
                m,
                h,
                W,
                max_iter=self.max_iter_w,
            )
            # Y-step: exact flexible embedding
            Y = lam * solve(X @ W)
            steps.append(objective(W, Y, G))
            # G-step: row-wise simplex projection on the candidate pairs
            d = pair_sqdist(Y, rows, cols)
            G = simplex_rows_on_support(rows, cols, s_vals - d / (4.0 * gamma), n)
            obj.append(objective(W, Y, G))
            steps.append(obj[-1])
            same = np.array_equal(J_new, J)
            J = J_new
            if it > 1 and same and obj[-2] - obj[-1] <= float(self.tol) * max(abs(obj[-1]), 1e-300):
                converged = True
                break

        self.W_, self.Y_, self.G_ = W, Y, G
        self.support_J_ = J
        self.objective_ = np.asarray(obj)
        self.objective_steps_ = np.asarray(steps)
        self.init_support_ = J0
        self.n_iter_ = it
        self.converged_ = converged
        if not converged:
            warnings.warn(
                f"SF2SOG did not converge in {self.max_iter} iterations",
                ConvergenceWarning,
                stacklevel=3,
            )
        norms = row_norms(W, squared=True)
        order = J[np.argsort(-norms[J], kind="stable")]
        return Selection(order=order)
