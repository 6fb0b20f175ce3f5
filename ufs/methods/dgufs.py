"""Dependence Guided Unsupervised Feature Selection (Guo & Zhu, AAAI 2018; ``dgufs.md``).

Model (paper notation, data ``X ∈ R^{d×n}``, one column per sample), Eq. (5)::

    min_{Y,L}  −β Tr(SᵀL) − (1−β) Tr(YᵀY H L H) + α rank(L)
    s.t.       ||X − Y||_{2,0} = d − m,  ||Y||_{2,0} = m,
               L ⪰ 0,  L ∈ {0,1}^{n×n},  diag(L) = I,

solved by the ADMM of Algorithm 2 on the split (6)-(7) with ``Z = Y`` and
``L = M − diag(M) + I``. The API takes ``X`` as ``n × d`` (scikit-learn); the solver
transposes it once at the boundary and works in the paper's ``d × n`` layout, so every
update below reads exactly like the paper; ``Y_`` is transposed back to ``n × d``.

Size (~750 lines): Algorithm 2's ADMM in the paper's ``d × n`` layout, with the fused
``n × n`` passes that keep its memory bounded and the exact/iterative eigen-solver
paths; one estimator, kept whole so that each update reads like its equation.
"""

from __future__ import annotations

import warnings

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp
import scipy.sparse.linalg as spla
from sklearn.exceptions import ConvergenceWarning

from ..base import DegenerateFitWarning, Selection, UFSSelector
from ..eigen import missed_pairs
from ..linalg import project_rows_l20
from ..preprocessing import check_input_space
from ..validation import check_dense_memory, check_penalty_schedule

#: ``|A|`` beyond this is treated as overflow (LAPACK squares entries; 1e150² ≈ 1e300)
_OVERFLOW = 1e150

__all__ = [
    "DGUFS",
    "DENSE_ARRAYS",
    "ITERATIVE_MIN_N",
    "rank_prox_psd",
    "eigh_above",
    "minmax_offdiag",
    "binary_threshold",
    "relaxed_l0_threshold",
]


#: dense ``n × n`` float64 arrays at the peak of an iteration: ``L``, ``M``, ``Λ₂`` and the
#: ``L``-step's ``A`` (symmetrised in place into ``Ã``, then reused for the next ``L``),
#: plus LAPACK ``syevr``'s ``n × n`` eigenvector array when the exact eigen-solver runs
#: (``S`` stays sparse; every other ``n × n`` update runs in row blocks or tiles)
DENSE_ARRAYS = 5

#: ``n`` from which the ``L``-step computes the eigenpairs above ``√η`` with ARPACK
#: (:func:`eigh_above`) instead of LAPACK ``syevr``; below it (every parity case and test
#: size) the exact ``syevr`` path runs, bit for bit as before
ITERATIVE_MIN_N = 1500
#: the iterative block (``r`` + a margin, doubled while it does not reach below ``√η``)
#: may grow to this fraction of ``n``; beyond it ``syevr`` is cheaper and runs instead
_ITERATIVE_MAX_FRACTION = 0.05
#: every iterative eigenpair must satisfy ``‖Ãq − λq‖ ≤ _EIG_RTOL · ‖Ã‖`` (else ``syevr``)
_EIG_RTOL = 1e-10
#: bytes of one array's row block in the fused ``n × n`` passes (cache-sized)
_BLOCK_BYTES = 1 << 21
#: side of the square tiles of the in-place symmetrisation
_TILE = 256


def _row_blocks(n: int):
    """``(i0, i1, diag)`` row blocks of an ``n × n`` array, ``diag`` indexing the block's
    diagonal entries."""
    step = max(1, _BLOCK_BYTES // (8 * max(n, 1)))
    for i0 in range(0, n, step):
        i1 = min(n, i0 + step)
        yield i0, i1, (np.arange(i1 - i0), np.arange(i0, i1))


def _offdiag_minmax(C: np.ndarray) -> tuple[float, float]:
    """Minimum and maximum of the off-diagonal entries of ``C`` (one pass, row blocks)."""
    lo, hi = np.inf, -np.inf
    for i0, i1, d in _row_blocks(C.shape[0]):
        blo, bhi, _ = _block_extremes(C[i0:i1], d)
        lo, hi = min(lo, blo), max(hi, bhi)
    return lo, hi


def _block_extremes(blk: np.ndarray, d) -> tuple[float, float, np.ndarray]:
    """Off-diagonal minimum and maximum of a row block and its diagonal entries (``d``
    indexes them). Two reductions: the diagonal entries are replaced, for the reductions,
    by an off-diagonal entry of the same row (restored on return)."""
    keep = blk[d]
    rows, cols = d
    if blk.shape[1] > 1:
        blk[d] = blk[rows, (cols + 1) % blk.shape[1]]
        lo, hi = float(blk.min()), float(blk.max())
    else:  # no off-diagonal entry
        lo, hi = np.inf, -np.inf
    blk[d] = keep
    return lo, hi, keep


def _symmetrize_inplace(A: np.ndarray, lo: float | None = None, hi: float | None = None) -> None:
    """``A ← (A + Aᵀ)/2`` in place, tile by tile (no ``n × n`` temporary). With ``lo`` and
    ``hi`` (the off-diagonal extremes of ``A``) it is applied to ``minmax_offdiag(A)``
    instead. Each entry is computed by the same floating-point operations as
    ``0.5 * (r + r.T)`` on the whole array, so the result is bit-identical to it."""
    n = A.shape[0]
    if lo is not None and not hi > lo:  # constant off-diagonal: minmax_offdiag gives 0
        A[:] = 0.0
        return
    span = None if lo is None else hi - lo
    for i0 in range(0, n, _TILE):
        i1 = min(n, i0 + _TILE)
        D = A[i0:i1, i0:i1]
        if span is not None:
            D -= lo
            D /= span
            np.fill_diagonal(D, 0.0)
        D[...] = 0.5 * (D + D.T)
        for j0 in range(i1, n, _TILE):
            j1 = min(n, j0 + _TILE)
            U = A[i0:i1, j0:j1]
            V = A[j0:j1, i0:i1]
            if span is not None:
                U -= lo
                U /= span
                V -= lo
                V /= span
            U += V.T
            U *= 0.5
            V[...] = U.T


def _abs_rowsum_max(A: np.ndarray) -> float:
    """``‖A‖_∞ = max_i Σ_j |A_ij|`` in row blocks (no ``n × n`` temporary)."""
    out = 0.0
    for i0, i1, _ in _row_blocks(A.shape[0]):
        out = max(out, float(np.abs(A[i0:i1]).sum(axis=1).max()))
    return out


def _eigsh_above(At: np.ndarray, thr: float, anorm: float, k_hint: int):
    """The eigenpairs of the symmetric ``At`` above ``thr`` by ARPACK (Lanczos), or
    ``None`` when they cannot be certified (the caller then runs ``syevr``).

    A block of the ``k = max(k_hint + 1, 2)`` largest eigenpairs is computed and doubled
    until its smallest eigenvalue (plus its residual) is ``≤ thr``; Lanczos can still miss
    copies of a repeated eigenvalue, so the complement of the block must have no eigenvalue
    above ``thr`` (:func:`ufs.eigen.missed_pairs`); every pair must satisfy ``‖At q − λ q‖ ≤ _EIG_RTOL · anorm``
    (``anorm ≥ ‖At‖₂``). ``None`` when the block would exceed
    ``_ITERATIVE_MAX_FRACTION · n``, ARPACK fails, or a residual is too large."""
    n = At.shape[0]
    kmax = int(_ITERATIVE_MAX_FRACTION * n)
    k = max(int(k_hint) + 1, 2)
    v0 = np.random.default_rng(0).standard_normal(n)  # fixed: the result is deterministic
    while k <= kmax:
        try:
            w, V = spla.eigsh(At, k=k, which="LA", v0=v0, tol=0.0)
        except (spla.ArpackNoConvergence, spla.ArpackError):
            return None
        order = np.argsort(-w, kind="stable")
        w, V = w[order], V[:, order]
        res = np.linalg.norm(At @ V - V * w, axis=0)
        if not np.all(res <= _EIG_RTOL * anorm):  # also catches nan
            return None
        if w[-1] + res[-1] <= thr:  # the block reaches below the threshold
            keep = w > thr
            # ... and Lanczos left no copy of a repeated eigenvalue above it out
            try:
                if missed_pairs(At, V, thr).size:
                    return None
            except (spla.ArpackNoConvergence, spla.ArpackError, ValueError):
                return None
            return w[keep], np.ascontiguousarray(V[:, keep])
        if k == kmax:
            return None
        k = min(2 * k, kmax)
    return None


def eigh_above(
    At: np.ndarray, thr: float, *, k_hint: int = 0, overwrite: bool = False
) -> tuple[np.ndarray, np.ndarray, str]:
    """All eigenpairs of the symmetric ``At`` with eigenvalue ``> thr``, decreasing:
    ``(w, Q, path)``.

    * ``"none"``: ``min(‖At‖_F, ‖At‖_∞) ≤ thr`` bounds every eigenvalue, nothing computed;
    * ``"exact"`` (``n <`` :data:`ITERATIVE_MIN_N`): LAPACK ``syevr`` restricted to the
      value range ``(thr, ∞)``;
    * ``"iterative"``: ARPACK on a block of ``r`` + a margin largest eigenpairs, enlarged
      until it reaches below ``thr``, every pair checked by its residual
      (:func:`_eigsh_above`; ``k_hint`` is the expected ``r``, e.g. the previous rank);
    * ``"fallback"``: the iterative step failed or the block got too large (more than
      ``_ITERATIVE_MAX_FRACTION · n`` pairs): ``syevr`` as in ``"exact"``.

    The iterative result is the same object as ``syevr``'s (every eigenvalue above
    ``thr``, never a truncation) to round-off; eigenvector signs may differ.
    ``overwrite``: ``At`` may be destroyed (``syevr`` then works in place, no copy).
    """
    n = At.shape[0]
    empty = np.zeros(0), np.zeros((n, 0))
    # exact shortcut: every eigenvalue is bounded by ‖Ã‖_F and by the max row sum ‖Ã‖_∞
    fro = np.linalg.norm(At)
    if fro <= thr:
        return *empty, "none"
    bound = min(fro, _abs_rowsum_max(At))
    if bound <= thr:
        return *empty, "none"
    path = "exact"
    if n >= ITERATIVE_MIN_N:
        found = _eigsh_above(At, thr, bound, k_hint)
        if found is not None:
            return *found, "iterative"
        path = "fallback"
    # At is symmetric: its transpose is the same matrix, Fortran-ordered (no copy)
    w, Q = sla.eigh(
        At.T if overwrite else At,
        subset_by_value=(thr, np.inf),
        driver="evr",
        check_finite=False,
        overwrite_a=overwrite,
    )
    order = np.argsort(-w, kind="stable")
    return w[order], Q[:, order], path


def rank_prox_psd(A: np.ndarray, eta: float) -> tuple[np.ndarray, np.ndarray]:
    """Theorem 2: ``argmin_{L ⪰ 0} ||L − A||_F² + η rank(L)`` as a factor ``(w, Q)``.

    ``L* = Q diag(w) Qᵀ`` where ``(w, Q)`` are the eigenpairs of ``Ã = (A + Aᵀ)/2`` with
    eigenvalue ``> √η`` (the others are set to zero). Only those eigenpairs are computed
    (:func:`eigh_above`: LAPACK ``syevr`` restricted to the value range ``(√η, ∞)``, or
    from ``n =`` :data:`ITERATIVE_MIN_N` on ARPACK with a residual check and ``syevr`` as
    the fallback), which is much cheaper than a full decomposition when few survive; when
    ``min(‖Ã‖_F, ‖Ã‖_∞) ≤ √η`` no eigenvalue can exceed ``√η`` and ``L* = 0`` is returned
    without any decomposition. Eigenvalues are returned decreasing.
    """
    At = 0.5 * (A + A.T)
    w, Q, _ = eigh_above(At, np.sqrt(eta), overwrite=True)
    return w, Q


def minmax_offdiag(C: np.ndarray) -> np.ndarray:
    """The authors' ``speedUp.m`` (from SCAMS): zero the diagonal of ``C`` and min-max
    scale its off-diagonal entries to ``[0, 1]`` (in place). A constant off-diagonal
    (e.g. ``C = 0``, where the MATLAB code would divide by zero) maps to 0."""
    diag = np.einsum("ii->i", C)  # a writable view: no n × n mask or copy
    diag[:] = np.inf
    lo = C.min()
    diag[:] = -np.inf
    hi = C.max()
    diag[:] = lo  # becomes 0 below
    C -= lo
    if hi > lo:
        C /= hi - lo
    else:
        C[:] = 0.0
    return C


def binary_threshold(B: np.ndarray) -> np.ndarray:
    """Eq. (11): ``argmin_{M' ∈ {0,1}^{n×n}} ||M' − B||_F²`` (entry ``≥ 1/2`` → 1)."""
    return (B >= 0.5).astype(np.float64)


def relaxed_l0_threshold(B: np.ndarray, lam: float) -> np.ndarray:
    """§4.3 relaxation: ``argmin_{M' ∈ [0,1]^{n×n}} ||M' − B||_F² + λ ||M'||_0`` entrywise.

    For each entry the non-zero candidate is ``clip(b, 0, 1)`` at cost
    ``(b − clip(b))² + λ`` and the zero candidate costs ``b²``. Hence: if ``λ > 1`` no
    fractional value can win and the solution is binary, ``1`` iff ``b > (1 + λ)/2``;
    otherwise ``b`` is kept where ``√λ ≤ b ≤ 1``, set to 1 where ``b > 1`` and to 0
    where ``b < √λ``. (This is also what the authors' ``solve_l0_binary.m`` computes.)
    """
    if lam > 1.0:
        return (B > 0.5 * (1.0 + lam)).astype(np.float64)
    M = np.minimum(B, 1.0)
    M[B < np.sqrt(lam)] = 0.0
    return M


def smallest_norm_selection(X: np.ndarray, idx, rtol: float = 1e-9) -> bool:
    """Whether the features ``idx`` are the ``len(idx)`` of smallest Euclidean norm in ``X``
    (ties to ``rtol`` relative count as equal): then a fit's selection is the trivial
    smallest-norm filter, whatever its model did."""
    sq = np.einsum("ij,ij->j", X, X)
    sel = np.zeros(sq.size, dtype=bool)
    sel[np.asarray(idx, dtype=np.int64)] = True
    if sel.all() or not sel.any():
        return False
    tol = rtol * max(float(sq.max()), np.finfo(float).tiny)
    return bool(sq[sel].max() <= sq[~sel].min() + tol)


class DGUFS(UFSSelector):
    """DGUFS: select exactly ``m`` features and cluster the samples jointly (Algorithm 2).

    Defaults follow the authors' released code (``eeGuoJun/AAAI2018_DGUFS``, ``DGUFS.m``)
    where it differs from the paper as printed; each earlier (paper) variant stays
    available as a named parameter value: ``update_order="paper"``, ``gamma=None``,
    ``rescale=False``, ``input_space="standardized"``.

    Parameters
    ----------
    n_features_to_select : int
        ``m``, the number of features; the selection is the ``m`` non-zero rows of ``Y``.
    n_clusters : int
        ``c``; used only to read cluster labels off ``L`` at the end (§4.3). The model
        itself controls ``rank(L)`` through ``α`` (Eq. 5), not through ``c``.
    alpha : float
        ``α > 0``, weight of ``rank(L)``; the paper's grid is ``{10¹, …, 10⁵}`` (§5.3).
    beta : float
        ``β ∈ (0, 1)``, trade-off between ``J₁ = −Tr(SᵀL)`` and the HSIC term
        ``J₂``; the paper's grid is ``{0.1, 0.3, 0.5, 0.7, 0.9}`` (§5.3).
    n_neighbors : int
        ``k`` of the binary kNN graph ``S`` (Eq. 3); 5 in all the paper's experiments.
    gamma : float or None
        ``0.005`` (default): the §4.3 relaxation ``M ∈ [0,1]^{n×n}`` with an extra
        ``γ ||M||_0`` penalty (:func:`relaxed_l0_threshold`), with the ``γ`` the paper
        recommends and the authors' code hard-wires. ``None``: the exact binary
        ``M``-update of Eq. (11) (the previous default).
    rescale : bool
        ``True`` (default): apply the authors' ``speedUp.m`` (:func:`minmax_offdiag`) to
        ``H Yᵀ Z H`` and to ``A`` in the ``L``-step, as their code does. Not in the paper;
        it keeps ``L`` bounded, but it zeroes ``diag(A)`` while ``M`` has a unit
        diagonal, so ``‖L − M‖_∞`` does not reach ``tol`` (it stayed ≥ 0.65 in all our
        runs) and the fit runs ``max_iter`` iterations. ``False``: the paper's updates
        (the previous default; see *Numerical behaviour*).
    update_order : {"authors", "paper"}
        ``"authors"`` (default): ``Z, Y, L, M`` per iteration, as ``DGUFS.m``; the
        ``M``-step then thresholds the new ``L``. ``"paper"``: ``Y, Z, M, L`` as printed
        in Algorithm 2 (the previous default).
    input_space : {"unit_range", "standardized", "raw"}
        Which matrix the workflow passes to ``fit`` and builds ``S`` on
        (:func:`ufs.preprocessing.input_matrix`). ``"unit_range"`` (default): every
        feature min-max scaled to ``[0, 1]``, the data the authors feed their code (the
        paper does not say). ``"standardized"``: z-scores (the previous default); there
        every feature has norm ``√n`` and the selection is decided by round-off (see
        *Numerical behaviour*). ``fit`` itself uses ``X`` as given: called directly,
        pass ``ufs.preprocessing.unit_range(X)``.
    mu0, rho, mu_max : float
        Penalty schedule, Eq. (15) and Algorithm 2 line 2 (= the authors' code):
        ``μ = 1e-6``, ``ρ = 1.1``, ``μ_max = 1e10``.
    max_iter : int
        Iteration cap (default 100, as in the authors' code; §4.2 reports convergence
        "within less than 50 iterations").
    tol : float
        Stopping tolerance on the primal residuals, see *Stopping rule*.
    callback : callable, optional
        Called after every iteration as ``callback(t, Y=Y, Z=Z, M=M, L=L, mu=mu)`` with
        the paper-layout (``d × n`` / ``n × n``) arrays, which must not be modified. The
        ``n × n`` buffers ``M`` and ``L`` are updated in place by later iterations: copy
        what you keep.

    Algorithm (Algorithm 2, step by step; paper layout ``d × n``)
    --------------------------------------------------------------
    ``S`` = binary kNN graph of Eq. (3) (``ufs.graph.knn_graph(weight="binary")``, union
    symmetrised, no self-loops); ``H = (I − 11ᵀ/n)/(n − 1)`` (footnote 4). Initialise
    ``Y = Z = Λ₁ = 0``, ``L = M = Λ₂ = 0``, ``μ = μ0``. The steps are

    * Y: ``Y = P_m(Z + ((1−β) Z H L H + Λ₁)/μ)``                                   (Eq. 8)
    * Z: ``X − Z = P_{d−m}(X − Y − ((1−β) Y H L H − Λ₁)/μ)``                      (Eq. 9)
    * M: ``M' = [L + Λ₂/μ ≥ 1/2]`` (Eq. 11; with ``gamma``, the §4.3 relaxation with
      ``λ = 2γ/μ``), then ``M = M' − diag(M') + I``
    * L: ``A = M + ((1−β) H Yᵀ Z H + β S − Λ₂)/μ`` (with ``rescale``:
      ``A = r(M + ((1−β) r(H Yᵀ Z H) + β S − Λ₂)/μ)``, ``r`` = :func:`minmax_offdiag`);
      ``L = Q T_{√η}(Ω) Qᵀ`` from the eigen-decomposition of ``(A + Aᵀ)/2`` with
      ``η = 2α/μ``                                                      (Eq. 12, Thm. 2)

    in the order ``Z, Y, L, M`` (``"authors"``) or ``Y, Z, M, L`` (``"paper"``), each
    using the latest value of the others, followed by

    * ``Λ₁ += μ (Z − Y)``, ``Λ₂ += μ (L − M)``, ``μ = min(ρ μ, μ_max)``     (Eqs. 13-15)

    where ``P_k`` keeps the ``k`` rows of largest ℓ2 norm (Algorithm 1 / Theorem 1,
    :func:`ufs.linalg.project_rows_l20`; equal norms go to the lower row index, as the
    authors' stable ``sort(…, 'descend')``).

    Cost. DGUFS inherently works with dense ``n × n`` matrices: ``M``, ``L``, ``Λ₂`` and
    ``A`` are dense and the ``L``-step needs the eigenpairs of an ``n × n`` matrix above
    ``√η`` (§4.2 counts a full ``O(n³)`` decomposition per iteration). We compute none
    when ``min(‖Ã‖_F, ‖Ã‖_∞) ≤ √η``; otherwise (:func:`eigh_above`) LAPACK ``syevr``
    restricted to ``(√η, ∞)`` (``O(n³)``: ~80 s at n = 10 000) below
    :data:`ITERATIVE_MIN_N` (1 500) samples, and from there ARPACK on a block of the
    previous rank + 1 largest eigenpairs (``O(n²)`` per matrix-vector product), doubled
    until its smallest eigenvalue is below ``√η``, every pair checked by its residual and
    ``syevr`` as the fallback (also when more than ``n/20`` pairs survive). The surviving
    rank is small in practice: ``Ã`` is a rank-``(m+1)`` matrix (``H Yᵀ Z H`` and the
    rescaling's constant) plus ``βS/μ``-type terms, and ``rank_L_`` ≤ 1 in the default
    setting at n = 2 000-11 000 (planted data, USPS). Memory is ``O(n² + nd)``: at most
    :data:`DENSE_ARRAYS` (5) dense ``n × n`` arrays at once (``S`` stays sparse; every
    other ``n × n`` update runs in cache-sized row blocks or tiles, in place), and ``fit``
    refuses up front (``MemoryError``, :func:`ufs.validation.check_dense_memory`) when
    they exceed the dense-memory cap. Everything else avoids other ``n × n`` products:
    ``L`` is kept as its factor ``Q diag(w) Qᵀ`` (rank ``r``), so
    ``Z H L H = ((Z HQ) w) (HQ)ᵀ`` costs ``O(ndr)`` and ``Tr(SᵀL) = Σ_k w_k q_kᵀ S q_k``
    ``O(nnz(S) r)``; ``H`` is never formed (it is a centring, applied as a mean
    subtraction); ``H Yᵀ Z H`` uses only the ``m`` non-zero rows of ``Y`` (``O(n²m)``).

    Stopping rule. ``‖Z − Y‖_∞ < tol`` and ``‖L − M‖_∞ < tol`` (the primal residuals of
    the two equality constraints of Eq. 6, checked after the four steps, before the
    multiplier update), or ``max_iter`` iterations. This is the rule of the authors' code
    (``tol = 5e-7``, 100 iterations); the paper only says it caps the iterations (§4.2,
    "no established theory … for the global convergence of ADMM applied to non-convex
    problems"). Hitting ``max_iter`` issues a ``ConvergenceWarning``; the selection (the
    support of ``Y``, exactly ``m`` rows by construction) is still returned.

    Numerical behaviour (measured; reported to the lead).

    * The selection is decided by the first ``Z``-update. From ``Y = Λ₁ = L = 0`` it is
      ``X − Z = P_{d−m}(X)``, which keeps ``X`` on its ``m`` smallest-norm rows; a row of
      ``Y`` can only become non-zero through ``Z`` or ``Λ₁``, whose other rows stay
      zero, so the support of ``Y`` is that set from then on (both orders; in the
      paper's order iteration 1 has ``Y = P_m(0)``, rows ``0 … m−1``, all zero). So
      DGUFS returns the ``m`` features of smallest ``Σ_i x_ij²`` of the matrix it is
      given: on [0, 1]-scaled data the features that sit near their minimum; on
      z-scored data every norm is ``√n`` and the choice is round-off (not reproducible
      across BLAS builds — the reason the default input is ``"unit_range"``). It finds
      0 of 10 planted features on ``golfs_example(1)``.
    * With the authors' variant and ``α = 10³`` (the registry default), the rank
      threshold ``√(2α/μ)`` (``4.5·10⁴`` at ``μ = 10⁻⁶``, still ~380 after 100
      iterations) exceeds every eigenvalue of the rescaled ``A`` on our data (digits,
      n = 400), so ``L = 0`` throughout: objective 0, ``rank_L_ = 0``, residuals
      ``(0, 1)``, 100 iterations, every label 0 — exactly what the authors' code returns.
    * With ``rescale=False`` and the paper's ``μ0 = 1e-6`` the ``L``-step gives
      ``L ≈ β S/μ`` (entries ~1e6) at once, the bilinear HSIC term is then multiplied by
      ``1/μ`` in the ``Y``/``Z``-steps and the iterates grow by many orders of magnitude
      per iteration; ``|A|`` exceeds 1e150 within 4 iterations on every data set we tried.
      We then stop, keep the last finite iterate, set ``diverged_`` and issue a
      ``ConvergenceWarning``. ``μ0 = 1`` (with ``α = 10``) converges in ~40-60
      iterations on our test data.

    Cluster labels (§4.3). ``L`` is available as its eigen-factor, so we take its ``c``
    largest eigenpairs (as the authors' code, ``eigs(L, c, 'la')``),
    ``V̂ = Q_c diag(√w_c)`` and label each sample by the position of the largest
    ``|V̂|`` entry in its row (Eq. 16), renumbered ``0 … c'−1`` (``c' ≤ c``; fewer
    clusters appear when ``rank(L) < c`` or a column never wins). If ``L = 0``
    every sample gets label 0 (the authors' ``eigs`` of a zero matrix gives arbitrary
    labels).

    Choices the paper leaves open.

    * Data scaling: the paper does not say; the authors' experiments feed [0, 1]-scaled
      data, hence ``input_space="unit_range"`` (see above).
    * ``S``: the paper's Eq. (3) has no self-loops; the authors' ``getS.m`` counts the
      sample itself among its ``k`` neighbours. We follow the paper (shared graph code).
    * Selection order: ``order`` lists the ``m`` selected features by decreasing row
      norm of ``Y`` (the order returned by Algorithm 1).

    Attributes
    ----------
    labels_ : ndarray of shape (n_samples,)
        Cluster labels read off ``L`` (see above).
    Y_ : ndarray of shape (n_samples, n_informative_features)
        Final ``Y`` in the API layout (transpose of the paper's); exactly ``m`` non-zero
        columns (the selected features; constant features are not part of it).
    L_eigenvalues_, L_eigenvectors_ : ndarray of shape (r,), (n_samples, r)
        The final ``L = Q diag(w) Qᵀ`` as its factor (eigenvalues decreasing).
    rank_L_ : int
        Rank of the final ``L``.
    degenerate_ : bool
        The selection is exactly the ``m`` features of smallest norm
        (:func:`smallest_norm_selection`): a trivial filter decided the answer (seen for
        every ``(α, β)`` tried on the benchmark's data, as with the authors' code); warned
        (``DegenerateFitWarning``) and marked ``degenerate`` (◊) by the workflow.
    eigen_steps_ : dict
        How many ``L``-steps ended on each path of :func:`eigh_above`: ``"none"`` (norm
        bound, nothing computed), ``"exact"`` (``syevr``), ``"iterative"`` (ARPACK),
        ``"fallback"`` (``syevr`` after the iterative step was not certified).
    residuals_ : ndarray of shape (n_iter_, 2)
        ``(‖Z − Y‖_∞, ‖L − M‖_∞)`` after every iteration.
    objective_ : ndarray of shape (n_iter_,)
        Objective of Eq. (5), ``−β Tr(SᵀL) − (1−β) Tr(YᵀY HLH) + α rank(L)``, at the
        iterates ``(Y, L)`` (ADMM on this non-convex problem is not monotone).
    n_iter_, converged_ : int, bool
    diverged_ : bool
        The iteration overflowed (see *Numerical behaviour*); ``n_iter_`` counts the
        finite iterations and the returned state is the last finite one.
    mu_ : float
        Final penalty ``μ``.
    """

    kind = "subset"
    input_space = "unit_range"

    def __init__(
        self,
        n_features_to_select: int = 10,
        n_clusters: int | None = None,
        *,
        alpha: float = 1e3,
        beta: float = 0.5,
        n_neighbors: int = 5,
        gamma: float | None = 0.005,
        rescale: bool = True,
        update_order: str = "authors",
        input_space: str = "unit_range",
        mu0: float = 1e-6,
        rho: float = 1.1,
        mu_max: float = 1e10,
        max_iter: int = 100,
        tol: float = 5e-7,
        callback=None,
    ):
        self.n_features_to_select = n_features_to_select
        self.n_clusters = n_clusters
        self.alpha = alpha
        self.beta = beta
        self.n_neighbors = n_neighbors
        self.gamma = gamma
        self.rescale = rescale
        self.update_order = update_order
        self.input_space = input_space
        self.mu0 = mu0
        self.rho = rho
        self.mu_max = mu_max
        self.max_iter = max_iter
        self.tol = tol
        self.callback = callback

    def graph_spec(self) -> dict:
        return {"n_neighbors": int(self.n_neighbors), "weight": "binary"}

    def _check_params(self) -> None:
        if not self.alpha > 0:
            raise ValueError(f"alpha must be > 0; got {self.alpha}")
        if not 0 < self.beta < 1:
            raise ValueError(f"beta must be in (0, 1); got {self.beta}")
        if self.gamma is not None and not self.gamma > 0:
            raise ValueError(f"gamma must be None or > 0; got {self.gamma}")
        if self.update_order not in ("authors", "paper"):
            raise ValueError(
                f"update_order must be 'authors' or 'paper'; got {self.update_order!r}"
            )
        check_input_space(self.input_space)
        check_penalty_schedule(self.mu0, self.rho, self.mu_max)
        if int(self.max_iter) < 1:
            raise ValueError(f"max_iter must be >= 1; got {self.max_iter}")
        if not self.tol >= 0:
            raise ValueError(f"tol must be >= 0; got {self.tol}")

    def _fit(self, X: np.ndarray) -> Selection:
        self._check_params()
        check_dense_memory(DENSE_ARRAYS, X.shape[0], "DGUFS")
        m, c = self._h, self._k
        # S stays sparse: βS enters A row block by row block, Tr(SᵀL) uses L's factor
        S = sp.csr_matrix(self._graph(X), dtype=np.float64, copy=True)
        S.sum_duplicates()
        Xp = np.ascontiguousarray(X.T)  # paper layout d × n
        d, n = Xp.shape
        alpha, beta = float(self.alpha), float(self.beta)
        gamma, rescale = self.gamma, bool(self.rescale)
        scale = 1.0 / (n - 1)  # footnote 4: H = (I − 11ᵀ/n)/(n − 1)
        s_ptr = S.indptr
        s_rows = np.repeat(np.arange(n), np.diff(s_ptr))
        s_cols, bS_vals = S.indices, beta * S.data
        blocks = list(_row_blocks(n))

        def center(A: np.ndarray) -> np.ndarray:
            """``A H`` for ``A`` with n columns."""
            return (A - A.mean(axis=1, keepdims=True)) * scale

        Y = np.zeros((d, n))
        Z = np.zeros((d, n))
        Lam1 = np.zeros((d, n))
        # the only dense n × n arrays: L, M, Λ₂ and the L-step's A (updated in place; the
        # arrays handed to the callback are overwritten by later iterations)
        L = np.zeros((n, n))
        M = np.zeros((n, n))
        Lam2 = np.zeros((n, n))
        A = np.empty((n, n))
        w = np.zeros(0)
        Q = np.zeros((n, 0))
        HQ = Q
        mu = float(self.mu0)
        objective, residuals = [], []
        converged = False
        idx = None
        eig_paths = dict.fromkeys(("none", "exact", "iterative", "fallback"), 0)

        def apply_hlh(A: np.ndarray) -> np.ndarray:
            """``A H L H`` with ``L = Q diag(w) Qᵀ``, i.e. ``((A HQ) w) (HQ)ᵀ``."""
            if w.size == 0:
                return np.zeros_like(A)
            return ((A @ HQ) * w) @ HQ.T

        def y_step(Z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            """Eq. (8): ``Y = P_m(Z + ((1−β) Z H L H + Λ₁)/μ)`` (Algorithm 1)."""
            return project_rows_l20(Z + ((1.0 - beta) * apply_hlh(Z) + Lam1) / mu, m)

        def z_step(Y: np.ndarray) -> np.ndarray:
            """Eq. (9): ``X − Z = P_{d−m}(X − Y − ((1−β) Y H L H − Λ₁)/μ)``."""
            R, _ = project_rows_l20(Xp - Y - ((1.0 - beta) * apply_hlh(Y) - Lam1) / mu, d - m)
            return Xp - R

        def m_block(i0: int, i1: int, dg) -> None:
            """Eq. (11) (or §4.3 with γ) on ``L + Λ₂/μ``, then ``M = M' − diag(M') + I``,
            on rows ``i0:i1`` of ``M`` (in place)."""
            B = L[i0:i1] + Lam2[i0:i1] / mu
            M[i0:i1] = (
                binary_threshold(B) if gamma is None else relaxed_l0_threshold(B, 2 * gamma / mu)
            )
            M[i0:i1][dg] = 1.0

        def m_step() -> None:
            for i0, i1, dg in blocks:
                m_block(i0, i1, dg)

        def m_step_residual_multiplier(new_m: bool) -> float:
            """(Optionally the M-step, then) ``‖L − M‖_∞`` and ``Λ₂ += μ (L − M)`` (Eq. 14) in
            one pass. Λ₂ is updated before the stopping test: when it stops, Λ₂ is not used
            again."""
            r2 = 0.0
            for i0, i1, dg in blocks:
                if new_m:
                    m_block(i0, i1, dg)
                LM = L[i0:i1] - M[i0:i1]
                r2 = float(np.max([r2, LM.max(), -LM.min()]))  # max |L − M|
                LM *= mu
                Lam2[i0:i1] += LM
            return r2

        def l_step(Y, idx, Z) -> tuple[np.ndarray, np.ndarray]:
            """Eq. (12) + Theorem 2: the factor ``(w, Q)`` of the new ``L``, built in ``A``
            (destroyed); ``LinAlgError`` when ``A`` overflowed. The elementwise updates
            run in row blocks and the symmetrisation in tiles, each entry by the same
            floating-point operations as on whole arrays."""
            Yc = center(Y[idx])  # only the m non-zero rows of Y contribute
            np.matmul(Yc.T, center(Z[idx]), out=A)  # H Yᵀ Z H
            if rescale:
                lo, hi = _offdiag_minmax(A)
            lo2, hi2 = np.inf, -np.inf
            for i0, i1, dg in blocks:
                blk = A[i0:i1]
                if rescale:  # minmax_offdiag
                    if hi > lo:
                        blk -= lo
                        blk /= hi - lo
                    else:
                        blk[:] = 0.0
                    blk[dg] = 0.0
                blk *= 1.0 - beta
                sl = slice(s_ptr[i0], s_ptr[i1])
                blk[s_rows[sl] - i0, s_cols[sl]] += bS_vals[sl]  # + βS
                blk -= Lam2[i0:i1]
                blk /= mu
                blk += M[i0:i1]
                blo, bhi, diag = _block_extremes(blk, dg)
                amax = np.max([-blo, bhi, np.max(np.abs(diag))])  # max |A|, nan propagates
                if not amax <= _OVERFLOW:  # also catches inf / nan
                    raise np.linalg.LinAlgError("overflow")
                lo2, hi2 = min(lo2, blo), max(hi2, bhi)
            if rescale:  # Ã = (r(A) + r(A)ᵀ)/2, r = minmax_offdiag
                _symmetrize_inplace(A, lo2, hi2)
            else:
                _symmetrize_inplace(A)
            w_new, Q_new, path = eigh_above(
                A, np.sqrt(2.0 * alpha / mu), k_hint=w.size, overwrite=True
            )
            eig_paths[path] += 1
            return w_new, Q_new

        authors = self.update_order == "authors"
        diverged = False
        with np.errstate(over="ignore", invalid="ignore"):  # overflow is detected below
            for it in range(1, int(self.max_iter) + 1):
                prev = (Y, idx)
                if authors:  # DGUFS.m: Z, Y, L, M
                    Z = z_step(Y)
                    Y, idx = y_step(Z)
                else:  # Algorithm 2: Y, Z, M, L
                    Y, idx = y_step(Z)
                    Z = z_step(Y)
                    m_step()
                try:
                    w_new, Q_new = l_step(Y, idx, Z)
                except np.linalg.LinAlgError:  # keep the last finite iterate
                    Y, idx = prev
                    diverged = True
                    it -= 1
                    break
                w, Q = w_new, Q_new
                HQ = (Q - Q.mean(axis=0, keepdims=True)) * scale  # H Q
                L, A = A, L  # the new L goes to the L-step's buffer, the old one is reused
                if w.size:
                    np.matmul(Q * w, Q.T, out=L)
                else:
                    L.fill(0.0)
                # primal residuals of Eq. (6); with "authors", the M-step in the same pass
                ZY = Z - Y
                r1 = float(np.max(np.abs(ZY)))
                r2 = m_step_residual_multiplier(new_m=authors)
                residuals.append((r1, r2))
                objective.append(self._objective(Y, S, Q, HQ, w, alpha, beta))
                if self.callback is not None:
                    self.callback(it, Y=Y, Z=Z, M=M, L=L, mu=mu)
                if r1 < self.tol and r2 < self.tol:
                    converged = True
                    break
                # Eqs. (13)-(15) (Λ₂ was updated with the residual above)
                Lam1 += mu * ZY
                mu = min(self.rho * mu, float(self.mu_max))

        if idx is None:  # diverged in the first iteration (cannot happen for finite X)
            raise FloatingPointError("DGUFS overflowed in its first iteration")
        self.n_iter_ = it
        self.converged_ = converged
        self.diverged_ = diverged
        self.mu_ = mu
        self.objective_ = np.asarray(objective)
        self.residuals_ = np.asarray(residuals).reshape(-1, 2)
        self.Y_ = Y.T.copy()
        self.L_eigenvalues_ = w
        self.L_eigenvectors_ = Q
        self.rank_L_ = int(w.size)
        self.eigen_steps_ = eig_paths
        self.labels_ = self._labels(w, Q, c)
        if diverged:
            warnings.warn(
                f"DGUFS ADMM overflowed after {it} iterations (the iterates grow like 1/μ; "
                "see the class docstring); the last finite iterate is returned",
                ConvergenceWarning,
                stacklevel=3,
            )
        elif not converged:
            warnings.warn(
                f"DGUFS ADMM did not converge in {self.max_iter} iterations "
                f"(primal residuals ‖Z−Y‖∞ = {residuals[-1][0]:.2e}, "
                f"‖L−M‖∞ = {residuals[-1][1]:.2e}, tol = {self.tol:g})",
                ConvergenceWarning,
                stacklevel=3,
            )
        self.degenerate_ = smallest_norm_selection(X, idx)
        if self.degenerate_:
            warnings.warn(
                f"DGUFS selected exactly the {len(idx)} features of smallest norm (a trivial "
                "filter: the ADMM's Y-step keeps the columns that cost least to copy; on "
                "z-scored data every norm is equal and round-off picks them)",
                DegenerateFitWarning,
                stacklevel=3,
            )
        return Selection(order=np.asarray(idx, dtype=np.int64))

    @staticmethod
    def _objective(Y, S, Q, HQ, w, alpha: float, beta: float) -> float:
        """Eq. (5): ``−β Tr(SᵀL) − (1−β) Tr(YᵀY HLH) + α rank(L)`` from ``L = Q diag(w) Qᵀ``
        and the sparse ``S`` (symmetric or not: ``Tr(SᵀL) = Σ_k w_k q_kᵀ S q_k``)."""
        tr_sl = float(np.einsum("ik,ik->k", Q, S @ Q) @ w) if w.size else 0.0
        # Tr(YᵀY HLH) = ||Y HQ diag(√w)||_F² (w > 0)
        tr_hsic = float(np.sum(((Y @ HQ) ** 2) * w)) if w.size else 0.0
        return -beta * tr_sl - (1.0 - beta) * tr_hsic + alpha * w.size

    @staticmethod
    def _labels(w: np.ndarray, Q: np.ndarray, c: int) -> np.ndarray:
        """§4.3 / Eq. (16): argmax |V̂| per sample with ``V̂ = Q_c diag(√w_c)``."""
        n = Q.shape[0]
        k = min(c, w.size)
        if k == 0:
            return np.zeros(n, dtype=np.int64)
        V = Q[:, :k] * np.sqrt(w[:k])
        raw = np.argmax(np.abs(V), axis=1)
        return np.unique(raw, return_inverse=True)[1].astype(np.int64)
