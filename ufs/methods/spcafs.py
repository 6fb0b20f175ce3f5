"""Sparse PCA via ℓ2,p-norm regularisation for UFS (Li, Nie, Bian & Li; ``spcafs.md``).

Model (the paper already writes ``X ∈ R^{n×d}``, samples as rows, as the API does)::

    min_{WᵀW = I}  −Tr(Wᵀ S_t W) + γ Σ_i (w_iᵀ w_i + ε)^{p/2},   S_t = Xᵀ H X      (Eq. 23)

with ``H = I − 11ᵀ/n`` (Eq. 18), ``W ∈ R^{d×m}``, ``0 < p ≤ 1``.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg as sla

from ..base import Selection, UFSSelector
from ..linalg import leading_right_singular_vectors
from ..preprocessing import check_input_space
from ._reweighted_eigen import LowRankSym, reweighted_eigen, store_ranking

__all__ = ["SPCAFS", "AUTO_GAMMA_RATIO"]

SOLVERS = ("auto", "dense", "lowrank")
#: ``gamma="auto"``: ``γ = AUTO_GAMMA_RATIO · λ_max(S_t)``, a fraction of the data's own
#: scale (see the ``gamma`` parameter)
AUTO_GAMMA_RATIO = 1e-2


def _largest_eigenvalue(S: np.ndarray) -> float:
    """``λ_max`` of the symmetric ``S`` (LAPACK, only the top eigenvalue)."""
    d = S.shape[0]
    return float(sla.eigh(S, eigvals_only=True, subset_by_index=[d - 1, d - 1])[0])


class SPCAFS(UFSSelector):
    """SPCAFS: rank features by the row norms of an ℓ2,p-sparse PCA projection.

    Parameters
    ----------
    n_features_to_select : int
        ``h`` (the ranking itself does not depend on it).
    n_clusters : int
        ``c``; only used for the default reduced dimension ``m = c − 1`` (§6.1.2).
    gamma : float or "auto"
        ``γ > 0`` of Eq. (20). Paper grid (§6.1.2): ``{10⁻⁶, 10⁻⁴, 10⁻², 1, 10², 10⁴, 10⁶}``.
        Default ``10⁴``: the one value the paper fixes (§6.4.1, sensitivity study in m).
        ``"auto"`` (the registry's label-free default): ``γ = AUTO_GAMMA_RATIO ·
        λ_max(S_t)``. An absolute ``γ`` means different things on different data: ``S_t``
        scales with ``n`` and with the features' units (λ_max from 838 on z-scored Wine to
        5·10⁸ on raw warpAR10P), and once ``γ`` nears the leading eigenvalues the ℓ2,1 term
        wins and ``W`` collapses to ``m`` unit rows, the other rows at the smoothing level
        ``√ε`` — the ranking after position ``m`` is then round-off (marked degenerate). At
        ``γ = 10⁴`` 18 of the mirror's 27 z-scored data sets collapse; at
        ``0.01 · λ_max`` none does (``benchmarks/spcafs_gamma.py``). ``gamma_`` holds
        the value used.
    p : float
        ``0 < p ≤ 1`` of the ℓ2,p regulariser (default 1, as in §6.1.2). The authors' code
        hard-codes ``p = 1``; here any ``p`` in ``(0, 1]`` uses Eq. (26) as written.
    n_components : int, optional
        ``m``, the reduced dimension; ``None`` → ``max(c − 1, 1)`` (§6.1.2).
    eps : float
        ``ε`` of Eq. (22) ("a sufficiently small constant"): 1e-8.
    max_iter, tol : int, float
        Stop when the relative decrease of objective (23) is ≤ ``tol`` or after
        ``max_iter`` W-updates (the paper: "always converges within 30 iterations").
    solver : {"auto", "dense", "lowrank"}
        How step 3 of Algorithm 1 (the ``m`` smallest eigenvectors of ``−S_t + γG``) is
        solved; both are exact (see :mod:`ufs.methods._reweighted_eigen`). ``"dense"``
        forms ``S_t`` (``d × d``) and calls LAPACK. ``"lowrank"`` uses ``S_t = B Σ² Bᵀ``
        from the thin SVD of the centred data (``rank r ≤ min(n − 1, d)``) and
        shift-invert Lanczos with the Woodbury identity, never forming a ``d × d``
        matrix: ``O(dr)`` memory and ``O(dr²)`` work per iteration, versus ``O(d³)``.
        ``"auto"`` picks ``"lowrank"`` when ``d > 500`` and ``r ≤ d/4``.
    input_space : {"standardized", "raw", "unit_range"}
        Which matrix the workflow passes to ``fit`` (:func:`ufs.preprocessing.input_matrix`).
        The paper only says SPCAFS works on "normalized data" (§5.2), "a prerequisite for
        all data mining tasks". ``"standardized"`` (default): z-scores, our reading. ``"raw"``: the data as given, centred by ``H`` only (Eq. 18), so ``S_t``
        keeps the features' variances (the registered variant ``spcafs_raw``).
        ``"unit_range"``: min-max scaled. The reading matters: on Imm40 (pixels in
        [0, 0.92]) the top 100 features give k-means ACC 0.43 (z-scores) vs 0.69 (raw),
        with MCFS at 0.62 (docs/methods.md). ``fit`` itself uses ``X`` as given.
    callback : callable, optional
        ``callback(t, W=W, g=g, objective=f)`` after every W-update (tests/monitoring).

    Algorithm 1, step by step
    -------------------------
    1. ``S_t = XᵀHX``, ``G = I``.
    2. repeat: ``W`` = eigenvectors of ``(−S_t + γG)`` for the ``m`` smallest eigenvalues
       (Eq. 27); ``g_ii = (p/2)(w_iᵀw_i + ε)^{(p−2)/2}`` (Eq. 26).
    3. score feature ``i`` by ``||w_i||₂`` and rank in descending order (ties → lower index).

    Choices the paper leaves open. The stopping rule ("until converge") is the relative
    objective change above. The first iterate (``G = I``) is ordinary PCA. The objective
    recorded is Eq. (23) including ``ε`` — the quantity Theorem 2 proves non-increasing.
    No standardisation is done here: the workflow passes z-scored data, and ``S_t`` uses
    the data as given (the paper's "normalized data", §5.2).

    Attributes
    ----------
    W_ : ndarray (d × m)
    gamma_ : float, the ``γ`` used (``gamma="auto"``: from the data)
    objective_, n_iter_, converged_
    solver_ : str, the solver actually used
    """

    kind = "ranking"
    score_power = 1  # ranks by ||w_i||: resolved_rank_ recorded

    def min_n_features(self, n_clusters):  # m = n_components (default c - 1) < p
        return (max(n_clusters - 1, 1) if self.n_components is None else self.n_components) + 1

    def __init__(
        self,
        n_features_to_select: int = 10,
        n_clusters: int | None = None,
        *,
        gamma: float | str = 1e4,
        p: float = 1.0,
        n_components: int | None = None,
        eps: float = 1e-8,
        max_iter: int = 300,
        tol: float = 1e-5,
        solver: str = "auto",
        input_space: str = "standardized",
        callback=None,
    ):
        self.n_features_to_select = n_features_to_select
        self.n_clusters = n_clusters
        self.gamma = gamma
        self.p = p
        self.n_components = n_components
        self.eps = eps
        self.max_iter = max_iter
        self.tol = tol
        self.solver = solver
        self.input_space = input_space
        self.callback = callback

    def _fit(self, X: np.ndarray) -> Selection:
        if self.solver not in SOLVERS:
            raise ValueError(f"solver must be one of {SOLVERS}; got {self.solver!r}")
        check_input_space(self.input_space)
        n, d = X.shape
        m = max(self._k - 1, 1) if self.n_components is None else int(self.n_components)
        if not 1 <= m < d:
            raise ValueError(
                f"n_components must be in [1, n_features - 1] with n_features={d}; got {m}"
            )
        Xc = X - X.mean(axis=0)  # H X (Eq. 18)
        solver = self.solver
        if solver == "auto":
            solver = "lowrank" if d > 500 and min(n - 1, d) <= d // 4 else "dense"
        if solver == "lowrank":
            # S_t = Xcᵀ Xc = V diag(s²) Vᵀ from the thin SVD of Xc (n × d); M = −S_t
            s, V = leading_right_singular_vectors(Xc)
            keep = s > (s[0] if s.size else 0.0) * max(n, d) * np.finfo(float).eps
            M = LowRankSym(B=V[:, keep], w=-(s[keep] ** 2))
        else:
            M = -(Xc.T @ Xc)
        if isinstance(self.gamma, str):
            if self.gamma != "auto":
                raise ValueError(f"gamma must be a number > 0 or 'auto'; got {self.gamma!r}")
            top = float(-M.w.min()) if solver == "lowrank" else _largest_eigenvalue(-M)
            gamma = AUTO_GAMMA_RATIO * top if top > 0 else 1.0
        else:
            gamma = float(self.gamma)
            if not gamma > 0:
                raise ValueError(f"gamma must be > 0; got {self.gamma!r}")
        self.gamma_ = gamma
        res = reweighted_eigen(
            M,
            m,
            gamma=gamma,
            p=float(self.p),
            eps=float(self.eps),
            max_iter=self.max_iter,
            tol=float(self.tol),
            callback=self.callback,
            name="SPCAFS",
        )
        return store_ranking(self, res, solver)
