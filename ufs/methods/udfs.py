"""ℓ2,1-norm regularised discriminative feature selection (UDFS; Yang, Shen, Ma, Huang &
Zhou, IJCAI 2011).

Model (paper: ``X ∈ R^{d×n}``, samples as columns; here ``X`` is ``n × d`` and every
formula is transposed at the boundary, so ``X̃_i`` below is ``(k+1) × d``)::

    min_{WᵀW = I}  Tr(Wᵀ M W) + γ ||W||_{2,1},     M = Xᵀ L X,
    L = Σ_i S_i B_i S_iᵀ,   B_i = H_{k+1} (H_{k+1} X̃_i X̃_iᵀ H_{k+1} + λ I)⁻¹ H_{k+1},

where ``X̃_i`` stacks sample ``i`` and its ``k`` nearest neighbours, ``S_i ∈ {0,1}^{n×(k+1)}``
selects them and ``H_{k+1} = I − 11ᵀ/(k+1)``.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..base import Selection, UFSSelector
from ..graph import knn_indices
from ._reweighted_eigen import LowRankSym, reweighted_eigen, store_ranking

__all__ = ["UDFS", "udfs_local_matrix"]

SOLVERS = ("auto", "dense", "lowrank")
#: memory cap (in floats) of the stacked local sets built at once by udfs_local_matrix
_CHUNK_FLOATS = 1 << 24


def udfs_local_matrix(X: np.ndarray, n_neighbors: int = 5, lam: float = 1e-3) -> sp.csr_matrix:
    """The sparse ``n × n`` matrix ``L = Σ_i S_i B_i S_iᵀ`` (vectorised over ``i``).

    Local set of sample ``i``: itself first, then its ``k`` nearest neighbours by
    :func:`ufs.graph.knn_indices` (Euclidean; the sample itself excluded there). Each
    term adds a ``(k+1) × (k+1)`` block on the rows/columns of the local set, so
    ``nnz(L) ≤ n (k+1)²``. ``L`` is symmetric positive semi-definite and ``L 1 = 0``
    (``H_{k+1} 1 = 0``), so ``M = XᵀLX`` does not depend on centring ``X``.
    """
    X = np.asarray(X, dtype=np.float64)
    n = X.shape[0]
    k = int(n_neighbors)
    if not lam > 0:
        raise ValueError(f"lam must be > 0; got {lam}")
    nbrs, _ = knn_indices(X, k)
    idx = np.hstack([np.arange(n)[:, None], nbrs])  # n × (k+1): S_i
    q = k + 1
    Hq = np.eye(q) - 1.0 / q
    B = np.empty((n, q, q))
    # chunks keep the (chunk × (k+1) × d) stack of local sets at ≤ _CHUNK_FLOATS floats
    step = max(1, _CHUNK_FLOATS // (q * X.shape[1]))
    for start in range(0, n, step):
        Xl = X[idx[start : start + step]]  # X̃_i for the chunk
        Xl = Xl - Xl.mean(axis=1, keepdims=True)  # H_{k+1} X̃_i
        gram = np.einsum("iad,ibd->iab", Xl, Xl)  # H X̃ X̃ᵀ H, (k+1) × (k+1) per sample
        gram[:, np.arange(q), np.arange(q)] += lam
        B[start : start + step] = Hq @ np.linalg.inv(gram) @ Hq
    B = 0.5 * (B + np.swapaxes(B, 1, 2))
    rows = np.repeat(idx, q, axis=1).ravel()
    cols = np.tile(idx, (1, q)).ravel()
    L = sp.csr_matrix((B.ravel(), (rows, cols)), shape=(n, n))  # duplicates are summed
    L.sum_duplicates()
    return L


class UDFS(UFSSelector):
    """UDFS: rank features by the row norms of the ℓ2,1-regularised local-discriminative
    projection ``W`` (``d × c``).

    Parameters
    ----------
    n_features_to_select : int
        ``h`` (the ranking itself does not depend on it).
    n_clusters : int
        ``c``; ``W`` has ``c`` columns (the paper's ``W ∈ R^{d×c}``).
    gamma : float
        ``γ > 0``, weight of ``||W||_{2,1}``. Grid ``{10⁻⁶, 10⁻⁴, …, 10⁶}``: the grid on which
        SPCAFS (§6.1.2) tunes UDFS (with ``k = 5``). Label-free default ``1`` (grid centre;
        no value is singled out by the papers at hand).
    lam : float
        ``λ > 0`` inside ``B_i``: a ridge term that only makes the local scatter
        invertible (the local set has ``k + 1 ≤ d`` points, so ``H X̃_i X̃_iᵀ H`` is singular
        along ``1`` and possibly more). Default ``10⁻³`` ("small"; cf. scikit-feature issue
        #69, which also notes that scikit-feature wrongly reuses ``γ`` here). The original
        paper's text was not available to confirm its value.
    n_neighbors : int
        ``k``, local set size ``k + 1`` (paper: 5).
    eps : float
        Smoothing of ``||w_i||`` in the re-weighting, ``g_i = 1/(2 sqrt(||w_i||² + ε))``.
    max_iter, tol : int, float
        Stop when the relative decrease of the (ε-smoothed) objective is ≤ ``tol``.
    solver : {"auto", "dense", "lowrank"}
        ``"dense"`` forms ``M`` (``d × d``); ``"lowrank"`` uses ``M = B diag(w) Bᵀ`` of
        rank ``≤ n`` and the shift-invert Lanczos solver of
        :mod:`ufs.methods._reweighted_eigen`. ``"auto"``: low-rank when ``d > 500`` and
        ``n ≤ d/4``.
    callback : callable, optional
        ``callback(t, W=W, g=g, objective=f)`` after every W-update.

    Algorithm (paper Algorithm 1)
    -----------------------------
    1. Build ``L`` (sparse, :func:`udfs_local_matrix`) and ``M = XᵀLX``; ``G = I``.
    2. repeat: ``W`` = the ``c`` eigenvectors of ``M + γG`` with the smallest eigenvalues;
       ``G_ii = 1/(2||w_i||)`` (ε-smoothed; :func:`ufs.linalg.l2p_reweight` with p = 1).
    3. Rank features by ``||w_i||₂``, descending (ties → lower index).

    Notes. ``L`` is never dense: it has at most ``n(k+1)²`` non-zeros. The recorded
    objective is ``Tr(WᵀMW) + γ Σ_i sqrt(||w_i||² + ε)``, the quantity the re-weighting
    provably does not increase. scikit-feature's implementation fills ``S_i`` with the
    neighbour list of sample ``q`` instead of sample ``i`` (``Si[idx_new[q], q]``) and
    reuses ``γ`` as ``λ``; neither is done here. The kNN sets are not a symmetrised graph,
    so this method has no :meth:`graph_spec`.

    Degenerate first step when ``d ≥ n + c``. ``L 1 = 0`` and ``rank(X) ≤ n``, so ``M`` has a
    null space of dimension ``≥ d − n + 1``. With ``G = I`` (paper's initialisation) every
    ``c``-frame inside ``null(M)`` minimises step 1 equally, so the first ``W`` — and the
    local optimum the iteration then reaches — is fixed only by the eigen-solver's choice
    of basis (deterministic, but the dense and low-rank paths may choose differently).
    This is a property of the model (directions ``v`` with ``Xv = 0`` cost nothing), not
    of the solver; it makes UDFS rankings on ``d ≫ n`` data weakly informative.
    """

    kind = "ranking"
    score_power = 1  # ranks by ||w_i||: resolved_rank_ recorded

    def min_n_features(self, n_clusters):  # W: p × c, orthonormal columns (p > c)
        return n_clusters + 1

    def __init__(
        self,
        n_features_to_select: int = 10,
        n_clusters: int | None = None,
        *,
        gamma: float = 1.0,
        lam: float = 1e-3,
        n_neighbors: int = 5,
        eps: float = 1e-8,
        max_iter: int = 300,
        tol: float = 1e-5,
        solver: str = "auto",
        callback=None,
    ):
        self.n_features_to_select = n_features_to_select
        self.n_clusters = n_clusters
        self.gamma = gamma
        self.lam = lam
        self.n_neighbors = n_neighbors
        self.eps = eps
        self.max_iter = max_iter
        self.tol = tol
        self.solver = solver
        self.callback = callback

    def _fit(self, X: np.ndarray) -> Selection:
        if self.solver not in SOLVERS:
            raise ValueError(f"solver must be one of {SOLVERS}; got {self.solver!r}")
        n, d = X.shape
        m = int(self._k)
        if not 1 <= m < d:
            raise ValueError(f"n_clusters must be < n_features = {d}; got {m}")
        L = udfs_local_matrix(X, self.n_neighbors, float(self.lam))
        self.L_ = L
        solver = self.solver
        if solver == "auto":
            solver = "lowrank" if d > 500 and n <= d // 4 else "dense"
        if solver == "lowrank":
            # M = Xᵀ L X = F core Fᵀ with F = Xᵀ (d × n), core = L (n × n, sparse → dense)
            Q, R = np.linalg.qr(X.T)  # Xᵀ = Q R, M = Q (R L Rᵀ) Qᵀ
            core = R @ (L @ R.T)
            M = LowRankSym.from_factor(Q, 0.5 * (core + core.T))
        else:
            M = X.T @ (L @ X)
            M = 0.5 * (M + M.T)
        res = reweighted_eigen(
            M,
            m,
            gamma=float(self.gamma),
            p=1.0,
            eps=float(self.eps),
            max_iter=self.max_iter,
            tol=float(self.tol),
            callback=self.callback,
            name="UDFS",
        )
        return store_ranking(self, res, solver)
