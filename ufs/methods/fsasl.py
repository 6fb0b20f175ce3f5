"""FSASL: unsupervised feature selection with adaptive structure learning (Du & Shen,
"Unsupervised Feature Selection with Adaptive Structure Learning", KDD 2015).

The paper's text was not available to us; the model is summarised from its abstract and
optimisation outline, and every step below follows the authors' code (``FSASL.m`` of
``csliangdu/FSASL``, with SLEP's ``LeastR`` as its lasso solver), which the parity cases
reproduce. Samples are rows here (``X`` is ``n × p``); the paper and the code use columns.

Model. A projection ``W`` (``p × c``) is learned together with two sample graphs built in
the projected space ``Z = XW``: a *global* structure ``S`` (``n × n``, ``s_ii = 0``), the
sparse representation of every projected sample by the others, and a *local* structure
``A`` (``n × n``), probabilistic neighbours whose rows lie on the simplex::

    min_{W,S,A}  λ1 Σ_i (||z_i − Σ_j s_ji z_j||² + α ||s_i||_1)
               + λ2 Σ_ij (||z_i − z_j||² a_ij + μ a_ij²)  + λ3 ||W||_{2,1}
    s.t. s_ii = 0,  a_iᵀ1 = 1, a_i ≥ 0,   z_i = Wᵀx_i.

With ``S`` and ``A`` fixed the two structures enter through one Laplacian-like matrix
``L = λ1 (I − S)(I − S)ᵀ + λ2 (D_A − A)`` (``A`` symmetrised), and the ``W``-step is the
two-stage (spectral regression) relaxation of ``min Tr(WᵀXᵀLXW) + λ3||W||_{2,1}``: first
the ``c`` smallest eigenvectors ``Y`` of ``L``, then ``min_W ||XW − Y||² + λ3||W||_{2,1}``.
Features are ranked by ``||w_i||²``, descending.

The S-step's lasso solvers (the authors' SLEP and an exact homotopy) live in
:mod:`ufs.methods._lasso` (re-exported here); this module holds the model, its A-, L- and
W-steps and the estimator.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp
from sklearn.exceptions import ConvergenceWarning

from ..base import Selection, UFSSelector
from ..eigen import EigenSolverError, component_eigenpairs, extreme_eigenvectors, graph_components
from ..graph import knn_graph, knn_indices
from ..linalg import MATLAB_EPS, l2p_reweight, project_rows_simplex, row_norms
from ..validation import check_dense_memory
from ._lasso import exact_lasso, lasso_kkt_violation, slep_lasso  # the S-step's solvers
from ._optimal_graph import (
    _lobpcg_smallest,
    adaptive_neighbor_graph,
    laplacian_smallest,
    pair_sqdist,
)

__all__ = [
    "FSASL",
    "LASSO_SOLVERS",
    "AUTO_SLEP_MAX_SAMPLES",
    "WARM_EIGEN_NODES",
    "DENSE_ARRAYS",
    "slep_lasso",
    "exact_lasso",
    "ls21",
    "lasso_kkt_violation",
    "mean_pairwise_distance",
]

#: values of ``lasso_solver``
LASSO_SOLVERS = ("auto", "slep", "lars")
#: ``lasso_solver="auto"``: the authors' ``"slep"`` up to this many samples, ``"lars"`` above
AUTO_SLEP_MAX_SAMPLES = 4000
#: dense ``n × n`` float64 arrays ``lasso_solver="slep"`` holds at its peak: ``S`` plus,
#: in the ``L`` step, ``B = I − S``, ``L = BBᵀ``, the densified graph Laplacian or
#: ``L + Lᵀ``, and ``(L + Lᵀ)/2`` (the S-step holds old and new ``S``, the eigen-step ``S``,
#: ``L`` and the solver's copy); refused above :func:`ufs.validation.dense_memory_cap`
DENSE_ARRAYS = 5
#: the eigen-step's dense ``eigh`` up to this many nodes per component of ``L``'s pattern
DENSE_EIGEN_NODES = 1000
#: nodes above which the eigen-step starts LOBPCG from the previous iteration's ``Y``
WARM_EIGEN_NODES = 20_000
#: :func:`mean_pairwise_distance` computes each pair once above this many samples
SYMMETRIC_MEAN_MIN_SAMPLES = 20_000


# -- A-step: the local structure -------------------------------------------------------


def mean_pairwise_distance(X: np.ndarray, *, chunk_floats: int = 1 << 22) -> float:
    """Mean of the full ``n × n`` Euclidean distance matrix (zero diagonal included),
    computed in row blocks (``O(n · block)`` memory) — Cai's ``constructW`` default
    heat-kernel width ``t``. The diagonal is set to exactly 0: ``√(max(d², 0))`` of the
    rounding noise of ``||x||² + ||x||² − 2xᵀx`` (up to ~1e-7 per entry) would move ``t``
    by ~1e-11 relative with the BLAS's summation order. Above
    :data:`SYMMETRIC_MEAN_MIN_SAMPLES` samples: :func:`_mean_distance_tiled` (each pair
    once, cache-sized tiles; n = 7·10⁴, p = 100: 13.5 s against 41 s), the same value
    up to rounding (2e-16 relative at n = 3000)."""
    X = np.asarray(X, dtype=np.float64)
    n = X.shape[0]
    if n > SYMMETRIC_MEAN_MIN_SAMPLES:
        return _mean_distance_tiled(X)
    sq = np.einsum("ij,ij->i", X, X)
    step = max(1, chunk_floats // max(n, 1))
    total = 0.0
    for start in range(0, n, step):
        blk = X[start : start + step]
        d2 = sq[start : start + step, None] + sq[None, :] - 2.0 * (blk @ X.T)
        d2[np.arange(blk.shape[0]), np.arange(start, start + blk.shape[0])] = 0.0
        total += float(np.sqrt(np.maximum(d2, 0.0)).sum())
    return total / (n * n)


def _mean_distance_tiled(X: np.ndarray, rows: int = 512, cols: int = 2048) -> float:
    """:func:`mean_pairwise_distance` over the pairs ``i ≤ j`` (the others counted twice)
    in ``rows × cols`` tiles computed in place (``cols ≥ rows``)."""
    n = X.shape[0]
    sq = np.einsum("ij,ij->i", X, X)
    XT = np.ascontiguousarray(X.T)
    total = 0.0
    for a in range(0, n, rows):
        b = min(n, a + rows)
        blk, sb = X[a:b], sq[a:b, None]
        for u in range(a, n, cols):
            G = blk @ XT[:, u : u + cols]
            G *= -2.0
            G += sb
            G += sq[None, u : u + cols]
            if u == a:  # the diagonal block: zero diagonal, each pair once
                G[np.arange(b - a), np.arange(b - a)] = 0.0
            np.maximum(G, 0.0, out=G)
            np.sqrt(G, out=G)
            if u == a:
                total += float(G[:, : b - a].sum()) + 2.0 * float(G[:, b - a :].sum())
            else:
                total += 2.0 * float(G.sum())
    return total / (n * n)


def _adaptive_graph(Z: np.ndarray, k: int, mu: float) -> sp.csr_matrix:
    """Rows ``a_i = Proj_Δ(−d_i / (2μ))`` over the ``k`` nearest others of ``z_i``
    (``d_ij = ||z_i − z_j||²``), then ``(A + Aᵀ)/2``."""
    n = Z.shape[0]
    idx, _ = knn_indices(Z, k)
    r = np.repeat(np.arange(n), k)
    d = pair_sqdist(Z, r, idx.ravel()).reshape(n, k)
    P = project_rows_simplex(-d / (2.0 * mu))
    A = sp.csr_matrix((P.ravel(), (r, idx.ravel())), shape=(n, n))
    A = ((A + A.T) * 0.5).tocsr()
    A.eliminate_zeros()
    return A


# -- W-step ----------------------------------------------------------------------------


def ls21(
    X: np.ndarray,
    Y: np.ndarray,
    r: float,
    *,
    n_iter: int = 10,
    eps: float = MATLAB_EPS,
    gram: np.ndarray | None = None,
    callback: Callable | None = None,
) -> np.ndarray:
    """``min_W ||XW − Y||_F² + r ||W||_{2,1}`` by ``n_iter`` IRLS steps from ``D = I``
    (the authors' ``LS21``): ``W ← (XᵀX + r D)^{-1} XᵀY``,
    ``D_ii = 1/(2√(||w_i||² + ε))``. Each step does not increase the ε-smoothed objective
    ``||XW − Y||² + r Σ_i √(||w_i||² + ε)``. ``p > n`` uses the Woodbury form
    ``W = E Xᵀ (I + X E Xᵀ)^{-1} Y`` with ``E = (rD)^{-1}`` (the same ``W``).
    ``callback(t, W)`` after every step (tests)."""
    n, p = X.shape
    d = np.ones(p)
    XY = X.T @ Y
    if p <= n and gram is None:
        gram = X.T @ X
    W = np.zeros((p, Y.shape[1]))
    for t in range(1, n_iter + 1):
        if p <= n:
            M = gram + np.diag(r * d)
            W = np.linalg.solve(M, XY)
        else:
            e = 1.0 / (r * d)
            K = (X * e) @ X.T
            K[np.diag_indices_from(K)] += 1.0
            W = e[:, None] * (X.T @ np.linalg.solve(K, Y))
        d = l2p_reweight(W, 1.0, eps)
        if callback is not None:
            callback(t, W)
    return W


# -- the estimator -------------------------------------------------------------------


class FSASL(UFSSelector):
    """FSASL (Du & Shen 2015): rank features by ``||w_i||²`` of the projection learned
    jointly with a global (sparse-representation) and a local (adaptive-neighbour)
    sample graph.

    Parameters
    ----------
    n_features_to_select : int
        ``h`` (FSASL ranks all features).
    n_clusters : int
        ``c``: columns of ``W`` and of the spectral embedding ``Y``.
    lambda1, lambda2, lambda3 : float
        Weights of the global structure (``λ1 ≥ 0``; the authors fix it to 1), of the
        local structure (``λ2 ≥ 0``) and of ``||W||_{2,1}`` (``λ3 > 0``), the authors'
        names. The authors' experiment script (``fs_unsup_fsasl_11_11_1``) searches
        ``λ2, λ3 ∈ {10⁻⁵, …, 10⁵}`` with ``λ1 = 1``; default 1 each (the code's).
    sparsity : float
        ``ρ ∈ (0, 1]``, the lasso weight as a fraction of ``λ_max`` (the code's
        ``SLEPreg``; ``λ_i = ρ max_{j≠i}|z_jᵀz_i|``). Default 0.01 (code and script).
    n_neighbors : int
        ``k`` (the code's ``Localk``, 5): neighbours of the first graph and of each row of
        the adaptive graph, and the ``k + 1`` distances that set ``μ``.
    local_reg : float or None
        ``μ > 0`` of the local term (the code's ``LocalReg``). ``None`` (default): the
        authors' ``estimateReg`` on the input ``X``, ``μ = mean_i ½(k d_i,k+1 −
        Σ_{j≤k} d_ij)`` over squared distances to the ``k + 1`` nearest others (Nie et
        al.'s adaptive-neighbour rule; :func:`ufs.methods._optimal_graph.adaptive_neighbor_graph`).
    max_iter : int
        Outer iterations, all of them run (the code has no stopping test). Default 50,
        the authors' experiment script; ``FSASL.m``'s own default is 1.
    tol : float
        ``0`` (default): exactly ``max_iter`` iterations, ``converged_ = False``, no
        warning (the authors' rule). ``> 0``: stop when ``objective_`` changes by
        ``≤ tol`` relative; a ``ConvergenceWarning`` if ``max_iter`` comes first. The
        objective is not monotone (below), so this is a stationarity test only.
    global_first_iter : bool or None
        Whether iteration 1 runs the S-step (on ``X`` itself). ``None`` (default): the
        authors' rule ``max_iter < 5 or t > 1`` — with ``max_iter ≥ 5`` iteration 1
        uses only the local graph.
    lasso_solver : {"auto", "slep", "lars"}
        How the S-step's lassos are solved (all solve the same problem, scaled as SLEP:
        ``½||Ax − y||² + λ_i||x||_1``).

        * ``"auto"`` (default): ``"slep"`` up to :data:`AUTO_SLEP_MAX_SAMPLES` (4000)
          samples, ``"lars"`` above; the choice is recorded in ``lasso_solver_``. Up to
          4000 samples (every parity case, every benchmark data set but usps,
          n = 11 000, and FSBC's mnist4000 and 20ng) the result is the authors' ``"slep"``
          one, unchanged. The two give different ``S`` (below: SLEP's inexact, dense
          codes against the exact, sparse ones), so results do not continue smoothly
          across the threshold. Why 4000: SLEP is ``O(n³)`` per iteration (dense
          ``(I − S)(I − S)ᵀ`` and its eigenvectors) and took 34 CPU-s at n = 2000, 289 at
          4000 and 589 at 5000 (random ``n × 100``, ``c = 10``, 50 iterations): 4000 keeps
          it inside the 10-minute budget with a margin; ``"lars"`` takes 15 CPU-s at 5000
          and 39 at 10⁴.
        * ``"slep"`` (the authors'): :func:`slep_lasso`, SLEP's accelerated
          gradient with its default stop ``|Δf| ≤ 1e-3`` (absolute). Inexact: on digits
          (``fsasl__maxiter1``, ``m = p = 56``) the summed lasso objective is 906.68
          against the optimum 885.72 (+2.4 %), with 88 non-zeros per code where the
          exact codes have 45. In the projected space (``m = c = 10``) the lasso values
          are ~1e-3, so every lasso stops after 2 steps: at iteration 50 the summed
          objective is 0.230 against 0.117 and the codes have 376 of 399 non-zeros
          (optimum ≤ 10) — ``S`` is then close to the thresholded, rescaled Gram
          matrix of the start ``ρ Aᵀy``, not a sparse representation. ``S`` and ``L``
          are dense ``n × n`` (the eigen-step ``O(n³)``): refused when
          :data:`DENSE_ARRAYS` ``· 8n²`` bytes exceed the dense-memory cap
          (:func:`ufs.validation.check_dense_memory`).
        * ``"lars"``: :func:`exact_lasso`, the exact lasso solutions (every code meets the
          optimality conditions over all ``n − 1`` atoms to 1e-9 relative; batched
          LARS-lasso homotopies on working sets, warm-started from the previous
          iteration's codes). ``S`` is sparse (``≤ m`` non-zeros per column in general
          position), ``L`` sparse, the eigen-step Lanczos above 1000 samples and LOBPCG
          above :data:`WARM_EIGEN_NODES`. Results differ from the authors' by design:
          digits objective 1.2e-5 relative above the reference and the same top 10/20/50
          after one iteration; 3.1e-2 below it and overlap@10/20/50 of 6/12/49 after 50
          iterations.
    lasso_tol, lasso_max_iter : float, int
        SLEP's ``tol`` (1e-3) and ``maxIter`` (10⁴) for ``"slep"``. A tight ``lasso_tol``
        (e.g. 1e-12) makes ``"slep"`` converge to the exact solutions.
    ls21_iter : int
        IRLS steps of the W-step (the code's ``LS21``: 10, restarted from ``D = I`` in
        every outer iteration).
    callback : callable, optional
        ``callback(t, W=W, S=S, A=A, Y=Y, objective=f)`` after every outer iteration.

    Algorithm (authors' ``FSASL.m``, ``X`` as ``n × p``; ``Z = X`` before the first W)
    ------------------------------------------------------------------------------
    ``μ`` from ``X`` (above). For ``t = 1 … max_iter``:

    1. S-step (global structure; skipped in ``t = 1`` unless ``global_first_iter``):
       per sample the lasso of :func:`slep_lasso` on ``Z`` (``s_ii = 0``);
       ``L_G = (I − S)(I − S)ᵀ``.
    2. A-step (local structure). ``t = 1``: Cai's ``constructW`` graph of ``X``: 5
       nearest others, heat kernel ``exp(−d²/(2σ²))`` with ``σ`` the mean of all
       pairwise Euclidean distances (:func:`mean_pairwise_distance`; Cai samples 3000
       points when ``n > 3000``, we use all pairs), symmetrised by ``max``.
       ``t > 1``: ``a_i = Proj_Δ(−d_i/(2μ))`` over the ``k`` nearest others of ``z_i``
       in the projected space (the closed-form adaptive-neighbour step), then
       ``A ← (A + Aᵀ)/2``; ``L_L = D_A − A``.
    3. ``L = λ1 L_G + λ2 L_L``; ``Y`` = the ``c`` smallest eigenvectors of ``L``.
    4. W-step: :func:`ls21` ``(X, Y, λ3)``; ``Z = XW``.
    5. ``objective_[t]`` = the code's ``objHistory``:
       ``Tr(ZᵀLZ) + λ1 ρ Σ|s_ij| + λ2 μ Σ a_ij² + λ3 Σ_i ||w_i||`` (note ``ρ``, not the
       per-sample ``λ_i``, weighs ``|S|``).

    Choices the paper leaves open (all the authors' code's): the S-step's solver and its
    tolerance; the first graph (heat kernel, not adaptive); ``μ`` estimated once from
    the input; the relaxed W-step (eigenvectors, then a regression); ``LS21`` restarted
    with 10 IRLS steps; no S-step in iteration 1 when ``max_iter ≥ 5``; ``Y`` is not
    reused between iterations. The objective is not monotone (digits: 1316.4, 1313.3,
    1331.0, … 1361.4, … 1351.8 over 50 iterations): step 4 minimises a relaxation and
    the inexact lassos do not minimise step 1.

    Differences from the code (no effect on the parity input): a sample is never its own
    neighbour (the code takes positions 2..k+1 of a sorted distance row, which can keep
    the sample when a duplicate sorts first); neighbours are found by a kNN search, not
    an ``n × n`` distance matrix; the eigenvectors come from ``eigh`` (subset) or
    Lanczos instead of a full ``eig``, which only changes ``Y`` by a rotation inside
    its eigenspace when eigenvalue ``c`` is separated from ``c + 1`` (``W``'s row norms
    are invariant to it).

    Cost per outer iteration. S-step: ``n`` lassos with ``n − 1`` atoms in ``R^m``
    (``m = c``; ``m = p`` in a first-iteration S-step). ``"slep"``: ``O(n² m)`` per
    accelerated-gradient step for all samples at once (digits: up to a few hundred steps
    on ``X``, 2 in the projected space), ``O(n²)`` memory, plus ``(I − S)(I − S)ᵀ`` and
    its eigenvectors, ``O(n³)``. ``"lars"`` (:func:`exact_lasso`): correlation scans in
    GEMM tiles over the atoms the codes use plus those the representation bound cannot
    clear (n = 7·10⁴: ~6 000 + a few hundred of 70 000 per sample), batched homotopies
    on working sets of ~10-150 atoms; nothing ``n × n`` is dense; ``S`` and ``L`` sparse
    (``nnz(L) ≤ Σ_i (nnz(s_i) + 1)² + O(nk)``). Iterations 2-3 are the expensive ones
    (the codes change completely, every working set is rebuilt: ~30 s each at
    n = 7·10⁴), later ones reuse the previous codes (~75 % of the signs-and-supports
    guesses hold; S-step ~2 s). Measured with ``benchmarks/bench_scaling.py`` (random
    ``n × 100``, ``c = 10``, ``h = 20``, 50 iterations, one BLAS thread, shared 2-core VM,
    default ``"auto"``): n = 2000 (``"slep"``) 34 CPU-s, 294 MB peak RSS; n = 4000
    (``"slep"``) 289 CPU-s, 617 MB; n = 5000 with ``"slep"`` 589 CPU-s, 949 MB;
    n = 10⁴ (``"lars"``) 39 CPU-s, 98 MB; n = 7·10⁴ (``"lars"``) 493 CPU-s, 606 MB —
    iteration 1 ~27 s (σ 13.5 s, two kNN searches of ``X``, the first eigen-step), then
    per iteration ~4.5 s for the kNN search of ``Z`` (NN-descent), ~2 s S-step, ~1.6 s
    eigen-step. Since then ``Z``'s ``c ≤ 10`` columns are searched by HNSW,
    the first graph reuses μ's kNN search of ``X`` (its first ``k`` neighbours) and the
    scans use L2-sized tiles: n = 7·10⁴ 519 CPU-s on the slower machine type
    that took 639 s before (``docs/performance.md``). ``"lars"`` at n = 2000: 8.5 CPU-s (the
    former per-sample loop: 73-128 s), n = 10⁴: 39 s (former: 726 s).

    Attributes
    ----------
    W_ : ndarray (p × c)
    S_ : scipy.sparse.csr_matrix (n × n), the last S-step's codes (column ``i`` codes
        sample ``i``; all zero when no S-step ran)
    A_ : scipy.sparse.csr_matrix (n × n), the last local graph (symmetric)
    embedding_ : ndarray (n × c), the last ``Y``
    local_reg_ : float, ``μ``
    objective_ : ndarray, one value per outer iteration (formula above)
    lasso_n_iter_ : ndarray or None, SLEP steps per sample in the last S-step
    lasso_solver_ : str, the solver used, ``"slep"`` or ``"lars"`` (``"auto"`` resolved)
    n_iter_, converged_ : int, bool
    """

    kind = "ranking"
    score_power = 2  # ranks by ||w_i||²: resolved_rank_ recorded

    def __init__(
        self,
        n_features_to_select: int = 10,
        n_clusters: int | None = None,
        *,
        lambda1: float = 1.0,
        lambda2: float = 1.0,
        lambda3: float = 1.0,
        sparsity: float = 0.01,
        n_neighbors: int = 5,
        local_reg: float | None = None,
        max_iter: int = 50,
        tol: float = 0.0,
        global_first_iter: bool | None = None,
        lasso_solver: str = "auto",
        lasso_tol: float = 1e-3,
        lasso_max_iter: int = 10000,
        ls21_iter: int = 10,
        callback: Callable | None = None,
    ):
        self.n_features_to_select = n_features_to_select
        self.n_clusters = n_clusters
        self.lambda1 = lambda1
        self.lambda2 = lambda2
        self.lambda3 = lambda3
        self.sparsity = sparsity
        self.n_neighbors = n_neighbors
        self.local_reg = local_reg
        self.max_iter = max_iter
        self.tol = tol
        self.global_first_iter = global_first_iter
        self.lasso_solver = lasso_solver
        self.lasso_tol = lasso_tol
        self.lasso_max_iter = lasso_max_iter
        self.ls21_iter = ls21_iter
        self.callback = callback

    # -- checks --------------------------------------------------------------------
    def _check_params(self, n: int, p: int) -> tuple[int, int]:
        if self.lasso_solver not in LASSO_SOLVERS:
            raise ValueError(
                f"lasso_solver must be one of {LASSO_SOLVERS}; got {self.lasso_solver!r}"
            )
        l1, l2, l3 = (float(v) for v in (self.lambda1, self.lambda2, self.lambda3))
        if not (l1 >= 0 and l2 >= 0 and np.isfinite(l1) and np.isfinite(l2)):
            raise ValueError(f"lambda1, lambda2 must be finite and >= 0; got {l1}, {l2}")
        if l1 == 0 and l2 == 0:
            raise ValueError("lambda1 and lambda2 cannot both be 0 (L = 0: no structure)")
        if not (l3 > 0 and np.isfinite(l3)):
            raise ValueError(f"lambda3 must be finite and > 0; got {l3}")
        if not 0 < float(self.sparsity) <= 1:
            raise ValueError(f"sparsity must be in (0, 1]; got {self.sparsity}")
        if self.local_reg is not None and not float(self.local_reg) > 0:
            raise ValueError(f"local_reg must be > 0 or None; got {self.local_reg}")
        k = int(self.n_neighbors)
        if not 1 <= k <= n - 2:
            raise ValueError(f"n_neighbors must be in [1, n_samples-2] = [1, {n - 2}]; got {k}")
        c = int(self._k)
        if not 1 <= c < n:
            raise ValueError(f"n_clusters must be in [1, n_samples) = [1, {n}); got {c}")
        if int(self.max_iter) < 1 or int(self.ls21_iter) < 1 or int(self.lasso_max_iter) < 1:
            raise ValueError("max_iter, ls21_iter and lasso_max_iter must be >= 1")
        if not float(self.tol) >= 0 or not float(self.lasso_tol) >= 0:
            raise ValueError("tol and lasso_tol must be >= 0")
        self.lasso_solver_ = self.lasso_solver
        if self.lasso_solver == "auto":
            self.lasso_solver_ = "slep" if n <= AUTO_SLEP_MAX_SAMPLES else "lars"
        if self.lasso_solver_ == "slep" and l1 > 0:
            check_dense_memory(
                DENSE_ARRAYS,
                n,
                "FSASL(lasso_solver='slep')",
                hint="use lasso_solver='lars' (exact lassos, sparse S)",
            )
        return k, c

    # -- steps ---------------------------------------------------------------------
    def _s_step(self, Z: np.ndarray, S_prev):
        rho = float(self.sparsity)
        if self.lasso_solver_ == "slep":
            S, its = slep_lasso(
                Z, rho, tol=float(self.lasso_tol), max_iter=int(self.lasso_max_iter)
            )
            return S, its
        return exact_lasso(Z, rho, support=S_prev), None

    @staticmethod
    def _l_matrix(S, A: sp.csr_matrix, l1: float, l2: float):
        """``L = λ1 (I − S)(I − S)ᵀ + λ2 (D_A − A)``: dense when ``S`` is dense."""
        n = A.shape[0]
        LL = sp.diags(np.asarray(A.sum(axis=1)).ravel()) - A
        if S is None or l1 == 0:
            return (l2 * LL).tocsr()
        if isinstance(S, np.ndarray):
            B = -S
            B[np.diag_indices(n)] += 1.0
            L = B @ B.T
            L *= l1
            if l2 > 0:
                L += (l2 * LL).toarray()
            return 0.5 * (L + L.T)
        B = (sp.identity(n, format="csc") - S).tocsc()
        L = (l1 * (B @ B.T) + l2 * LL).tocsr()
        return ((L + L.T) * 0.5).tocsr()

    @staticmethod
    def _smallest(L, c: int, start: np.ndarray | None = None) -> np.ndarray:
        """``c`` smallest eigenvectors: dense ``eigh`` (subset) for a dense ``L``; a sparse
        ``L`` is solved per connected component of its pattern
        (:func:`ufs.eigen.component_eigenpairs`: repeated eigenvalues across components are
        found exactly; ``L`` is not a plain graph Laplacian, so no pair is known in closed
        form), each component by: dense ``eigh`` up to 1000 nodes; above, certified Lanczos
        (:func:`ufs.eigen.extreme_eigenvectors`, ``ncv = max(4c + 1, 41)``, seeded start)
        and shift-invert only if Lanczos fails. ``(I − S)(I − S)ᵀ`` links each sample to
        the atoms of its code, a graph whose LU factor fills in (n = 10⁴: ``splu`` 84 s and
        > 1 GB, Lanczos 0.4-1.7 s; ARPACK's default ``ncv = 2c + 1`` needed 45 000
        products, 16 s, on the first graph at n = 10⁴). Above :data:`WARM_EIGEN_NODES`
        nodes: LOBPCG (:func:`ufs.methods._optimal_graph.laplacian_smallest`'s block
        solver, Jacobi preconditioner, tolerance 1e-9·‖L‖, residual- and
        orthogonality-checked; a block method finds an eigenvalue repeated up to the block
        size) from ``start`` (the previous iteration's ``Y``; seeded random columns in
        iteration 1), Lanczos if the check fails. n = 7·10⁴: first graph 2.5 s against
        17.7 s for Lanczos (subspaces agree to 7e-12), later iterations 0.5-2 s against
        8-13 s."""
        if isinstance(L, np.ndarray):
            return sla.eigh(L, subset_by_index=[0, c - 1], overwrite_a=True, check_finite=False)[1]

        def solve(B, k, st):
            nb = B.shape[0]
            if nb <= DENSE_EIGEN_NODES or k >= nb - 2:
                return extreme_eigenvectors(B, k, which="smallest", dense_limit=nb)
            if nb > WARM_EIGEN_NODES and 5 * (k + 4) < nb:
                found = _lobpcg_smallest(sp.csr_matrix(B), k, 0, st)
                if found is not None:
                    return found
            try:
                return extreme_eigenvectors(
                    B, k, which="smallest", dense_limit=0, ncv=max(4 * k + 1, 41)
                )
            except EigenSolverError:
                return laplacian_smallest(B, k)

        return component_eigenpairs(
            L, c, which="smallest", start=start, solve=solve, check_ties=False
        ).vectors

    def objective(self, S, A: sp.csr_matrix, W: np.ndarray, Z: np.ndarray) -> float:
        """The authors' ``objHistory`` value (step 5) of ``(S, A, W)``, ``Z = XW``."""
        l1, l2, l3 = float(self.lambda1), float(self.lambda2), float(self.lambda3)
        f = 0.0
        if S is not None and l1 > 0:
            R = Z - S.T @ Z  # (I − S)ᵀ Z
            f += l1 * float(np.sum(R * R)) + l1 * float(self.sparsity) * float(abs(S).sum())
        if l2 > 0:
            deg = np.asarray(A.sum(axis=1)).ravel()
            f += l2 * (float(np.sum(deg[:, None] * Z * Z)) - float(np.sum(Z * (A @ Z))))
            f += l2 * self.local_reg_ * float(A.multiply(A).sum())
        return f + l3 * float(row_norms(W).sum())

    def _fit(self, X: np.ndarray) -> Selection:
        n, p = X.shape
        k, c = self._check_params(n, p)
        l1, l2, l3 = float(self.lambda1), float(self.lambda2), float(self.lambda3)
        T = int(self.max_iter)
        first_global = (T < 5) if self.global_first_iter is None else bool(self.global_first_iter)
        first_global = first_global or l2 == 0  # otherwise L = 0 in iteration 1
        neighbors = None  # the first graph's k neighbours, when already searched
        if self.local_reg is None:
            idx, dist = knn_indices(X, k + 1)
            self.local_reg_ = adaptive_neighbor_graph(idx, dist**2)[1]
            neighbors = (idx[:, :k], dist[:, :k])
        else:
            self.local_reg_ = float(self.local_reg)
        mu = self.local_reg_
        gram = X.T @ X if p <= n else None
        Z = X
        S = None
        S_prev = None
        W = np.zeros((p, c))
        Y = None
        objective: list[float] = []
        converged = False
        self.lasso_n_iter_ = None
        it = 0
        for it in range(1, T + 1):
            # 1. global structure
            if l1 > 0 and (it > 1 or first_global):
                S, its = self._s_step(Z, S_prev)
                self.lasso_n_iter_ = its
                S_prev = S if sp.issparse(S) else None
                if its is not None and np.any(its > int(self.lasso_max_iter)):
                    warnings.warn(
                        f"FSASL: {int(np.sum(its > int(self.lasso_max_iter)))} SLEP lasso(s) "
                        f"reached lasso_max_iter = {self.lasso_max_iter}",
                        ConvergenceWarning,
                        stacklevel=3,
                    )
            else:
                S = None
            # 2. local structure
            if l2 > 0:
                if it == 1:
                    sigma = mean_pairwise_distance(X)
                    A = knn_graph(X, k, weight="heat", sigma=sigma, neighbors=neighbors)
                else:
                    A = _adaptive_graph(Z, k, mu)
            else:
                A = sp.csr_matrix((n, n))
            # 3. embedding
            L = self._l_matrix(S, A, l1, l2)
            Y = self._smallest(L, c, start=Y)
            if sp.issparse(L):  # a dense L (SLEP codes) is one component in practice
                self.n_graph_components_ = graph_components(L)[0]
            del L
            # 4. projection
            W = ls21(X, Y, l3, n_iter=int(self.ls21_iter), gram=gram)
            Z = X @ W
            f = self.objective(S, A, W, Z)
            objective.append(f)
            if self.callback is not None:
                self.callback(it, W=W, S=S, A=A, Y=Y, objective=f)
            if self.tol > 0 and it > 1:
                prev = objective[-2]
                if abs(prev - f) <= float(self.tol) * max(abs(prev), 1e-300):
                    converged = True
                    break
        self.objective_ = np.asarray(objective)
        self.n_iter_ = it
        self.converged_ = converged
        if self.tol > 0 and not converged:
            warnings.warn(
                f"FSASL did not converge in {T} iterations (tol={self.tol:g})",
                ConvergenceWarning,
                stacklevel=3,
            )
        self.W_ = W
        self.S_ = sp.csr_matrix(S) if S is not None else sp.csr_matrix((n, n))
        self.A_ = A.tocsr()
        self.embedding_ = Y
        scores = row_norms(W, squared=True)
        return Selection(order=np.argsort(-scores, kind="stable"), scores=scores)
