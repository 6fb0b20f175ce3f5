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
"""

from __future__ import annotations

import warnings
from collections.abc import Callable

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp
from scipy.linalg.lapack import dposv as _dposv
from sklearn import config_context
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import Lasso, lars_path

from ..base import Selection, UFSSelector
from ..eigen import EigenSolverError, component_eigenpairs, extreme_eigenvectors, graph_components
from ..graph import knn_graph, knn_indices
from ..linalg import MATLAB_EPS, l2p_reweight, project_rows_simplex, row_norms
from ..validation import check_dense_memory
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
#: floats per ``n × b`` block array of the batched SLEP iteration (memory bound)
_SLEP_BLOCK_FLOATS = 1 << 21
#: relative slack of the KKT test of :func:`exact_lasso`
_KKT_RTOL = 1e-9
#: queries × atoms of one tile of :func:`exact_lasso`'s correlation scans, small enough
#: that a tile (512 KB) and its masks stay in a core's L2 cache: at m = 10, 0.76-0.80 ns
#: per pair against 1.35 for 256 × 2048 tiles (4 MB) and 2.5 for whole rows of 70 000 atoms
_SCAN_TILE = (32, 2048)
#: floats of one chunk (samples × working set × m) of the batched homotopy
_BATCH_FLOATS = 1 << 19
#: relative safety margin of the representation bounds of :class:`_ScanOrder`
_CERT_MARGIN = 1e-12
#: the eigen-step's dense ``eigh`` up to this many nodes per component of ``L``'s pattern
DENSE_EIGEN_NODES = 1000
#: nodes above which the eigen-step starts LOBPCG from the previous iteration's ``Y``
WARM_EIGEN_NODES = 20_000
#: :func:`mean_pairwise_distance` computes each pair once above this many samples
SYMMETRIC_MEAN_MIN_SAMPLES = 20_000
#: samples solved against every atom first when :func:`exact_lasso` has no previous codes
_COLD_SUBSAMPLE = 4000


# -- S-step: one lasso per sample ------------------------------------------------------


def _slep_block(Z, idx, ratio, tol, max_iter, out, n_iter):
    """SLEP ``LeastR`` (the authors' options) for the samples ``idx``, batched by column.

    Column ``j`` solves ``min_x ½||Zᵀx − z_i||² + λ_i||x||_1`` with ``x_i = 0``
    (``i = idx[j]``): the row ``i`` of ``x``, of ``Aᵀy`` and of the gradient is kept at 0,
    which is the authors' design without column ``i``. Every column runs its own
    iteration (its own step size and stopping) exactly as a separate ``LeastR`` call.
    """
    b = idx.size
    cols = np.arange(b)
    Y = Z[idx].T  # m × b: the responses
    ATy = Z @ Y
    ATy[idx, cols] = 0.0
    lam = ratio * np.abs(ATy).max(axis=0)  # rFlag = 1: λ = ratio · λ_max
    # init = 0 (sll_opts default): x = ratio·Aᵀy with SLEP's ``initFactor``
    x = ATy.copy()
    Ax = Z.T @ x
    xn = np.abs(x).sum(axis=0)
    axax = np.einsum("ij,ij->j", Ax, Ax)
    scale = xn >= 1e-6
    with np.errstate(divide="ignore", invalid="ignore"):
        r = (np.einsum("ij,ij->j", Ax, Y) - lam * xn) / axax
    r = np.where(scale & (axax > 0), r, 1.0)
    x *= r
    Ax *= r
    L = np.ones(b)  # "we assume that the maximum eigenvalue of AᵀA is over 1"
    xp, Axp = x, Ax
    xxp = np.zeros_like(x)
    fprev = np.full(b, np.nan)
    alphap, alpha = 0.0, 1.0
    active = cols.copy()  # positions in the output block
    rows = idx.copy()  # the sample of each active column
    it = 0
    while active.size and it < max_iter:
        it += 1
        a = active.size
        beta = (alphap - 1.0) / alpha
        s = x + beta * xxp
        As = Ax + beta * (Ax - Axp)
        g = Z @ As - ATy
        g[rows, np.arange(a)] = 0.0
        xp, Axp = x, Ax
        x = np.empty_like(s)
        Ax = np.empty_like(As)
        bflag = np.zeros(a, dtype=bool)
        pend = np.arange(a)
        while pend.size:  # Armijo-Goldstein line search on L, per column
            Lp = L[pend]
            sp_ = s[:, pend]
            v = sp_ - g[:, pend] / Lp
            xv = np.sign(v) * np.maximum(np.abs(v) - lam[pend] / Lp, 0.0)
            d = xv - sp_
            Axv = Z.T @ xv
            Av = Axv - As[:, pend]
            r_sum = np.einsum("ij,ij->j", d, d)
            l_sum = np.einsum("ij,ij->j", Av, Av)
            x[:, pend] = xv
            Ax[:, pend] = Axv
            tiny = r_sum <= 1e-20
            bflag[pend[tiny]] = True
            bad = ~(tiny | (l_sum <= r_sum * Lp))
            L[pend[bad]] = np.maximum(2.0 * Lp[bad], l_sum[bad] / r_sum[bad])
            pend = pend[bad]
        alphap, alpha = alpha, (1.0 + np.sqrt(4.0 * alpha * alpha + 1.0)) / 2.0
        xxp = x - xp
        res = Ax - Y
        f = 0.5 * np.einsum("ij,ij->j", res, res) + lam * np.abs(x).sum(axis=0)
        stop = bflag | (np.abs(f - fprev) <= tol)  # tFlag = 0; fprev = NaN at it = 1
        fprev = f
        if stop.any():
            out[:, active[stop]] = x[:, stop]
            n_iter[active[stop]] = it
            keep = ~stop
            active, rows = active[keep], rows[keep]
            x, xp, Ax, Axp, xxp = x[:, keep], xp[:, keep], Ax[:, keep], Axp[:, keep], xxp[:, keep]
            Y, ATy, lam, L, fprev = Y[:, keep], ATy[:, keep], lam[keep], L[keep], fprev[keep]
    if active.size:  # max_iter reached
        out[:, active] = x
        n_iter[active] = max_iter + 1  # marks "not converged"


def slep_lasso(
    Z: np.ndarray, ratio: float, *, tol: float = 1e-3, max_iter: int = 10000
) -> tuple[np.ndarray, np.ndarray]:
    """Every sample's sparse code as the authors compute it: SLEP's ``LeastR`` with
    ``rFlag = 1, rsL2 = 0`` and ``sll_opts`` defaults.

    For sample ``i`` (row ``z_i`` of ``Z``, ``n × m``)::

        min_{x ∈ R^n, x_i = 0}  ½ ||Σ_j x_j z_j − z_i||² + λ_i ||x||_1,
        λ_i = ratio · max_{j≠i} |z_jᵀ z_i|      (λ_i = ratio · λ_max, ``rFlag = 1``).

    Solver (Liu & Ye's SLEP, ``mFlag = lFlag = 0``): Nesterov's accelerated proximal
    gradient (FISTA) with the Armijo-Goldstein search on the Lipschitz estimate
    ``L`` (start 1, ``L ← max(2L, ||AΔ||²/||Δ||²)``), soft-thresholding at ``λ/L``; the
    start is ``x = ρ·Aᵀz_i`` with SLEP's ``initFactor``
    ``ρ = (⟨Ax, y⟩ − λ||x||_1)/||Ax||²``; it stops when ``|f_t − f_{t−1}| ≤ tol``
    (``tFlag = 0``, absolute, SLEP's default ``tol = 1e-3``) or when a step moves less
    than 1e-10 (``||Δ||² ≤ 1e-20``), after at most ``max_iter`` (10⁴) steps.

    The loose default tolerance makes the result an *inexact* lasso solution, denser
    than the exact one (see :class:`FSASL`, ``lasso_solver``). Returns the dense
    ``n × n`` matrix ``S`` (column ``i`` = code of sample ``i``, ``S_ii = 0``) and the
    steps per sample (``max_iter + 1`` where the cap was reached).
    """
    Z = np.asarray(Z, dtype=np.float64)
    n = Z.shape[0]
    S = np.zeros((n, n))
    n_iter = np.zeros(n, dtype=np.int64)
    b = int(max(1, min(n, _SLEP_BLOCK_FLOATS // max(n, 1))))
    for start in range(0, n, b):
        idx = np.arange(start, min(n, start + b))
        blk = np.zeros((n, idx.size))
        it = np.zeros(idx.size, dtype=np.int64)
        _slep_block(Z, idx, float(ratio), float(tol), int(max_iter), blk, it)
        S[:, idx] = blk
        n_iter[idx] = it
    return S, n_iter


def _homotopy_lasso(
    A: np.ndarray, y: np.ndarray, lam: float, c: np.ndarray, max_steps: int
) -> np.ndarray | None:
    """``argmin ½||Ax − y||² + λ||x||_1`` by the LARS-lasso homotopy (Efron et al. 2004,
    §3.1 "lasso modification"; Osborne et al. 2000), ``A``: ``m × q``, ``c = Aᵀy``.

    The solution path is followed from ``λ_max = ||Aᵀy||_∞`` down to ``λ``: on the active
    set ``a`` (signs ``s``) the coefficients move along ``G⁻¹s`` (``G = A_aᵀA_a``) while
    every active correlation stays ``±λ(t)``; a breakpoint adds the first inactive atom
    whose correlation reaches the level and removes an atom whose coefficient reaches 0.
    Returns ``None`` on a degenerate path (singular ``G``, non-finite values, more than
    ``max_steps`` breakpoints); the caller then falls back to scikit-learn.
    """
    q = A.shape[1]
    x = np.zeros(q)
    C = float(np.abs(c).max()) if q else 0.0
    if not C > lam:
        return x
    act = np.array([int(np.argmax(np.abs(c)))])
    blocked = -1
    floor = 1e-12 * C
    with np.errstate(divide="ignore", invalid="ignore"):
        for _ in range(max_steps):
            sgn = np.sign(c[act])
            Aa = A[:, act] * sgn
            _, w, info = _dposv(Aa.T @ Aa, np.ones(act.size))
            if info != 0:
                return None
            a = A.T @ (Aa @ w)
            if not np.isfinite(a).all():
                return None
            dx = sgn * w
            # step to the next breakpoint: an inactive correlation reaches ±(C − γ) ...
            g1 = np.where(a < 1.0, (C - c) / (1.0 - a), np.inf)
            g2 = np.where(a > -1.0, (C + c) / (1.0 + a), np.inf)
            if blocked >= 0:  # a just-dropped atom sits on the level: skip its zero root only
                g1[blocked] = g1[blocked] if g1[blocked] > 1e-9 * C else np.inf
                g2[blocked] = g2[blocked] if g2[blocked] > 1e-9 * C else np.inf
            cand = np.minimum(g1, g2)
            cand[act] = np.inf
            j_in = int(np.argmin(cand))
            g_in = max(float(cand[j_in]), 0.0)
            # ... or an active coefficient reaches 0, or the level reaches λ
            gd = -x[act] / dx
            gd[~(gd > floor)] = np.inf
            k_out = int(np.argmin(gd))
            g_out = float(gd[k_out])
            g_lam = C - lam
            g = min(g_lam, g_in, g_out)
            x[act] += g * dx
            C -= g
            c = A.T @ (y - A @ x)
            if g == g_lam:
                return x
            if g == g_out:
                blocked = int(act[k_out])
                x[blocked] = 0.0
                act = np.delete(act, k_out)
                if act.size == 0:
                    return None
            else:
                act = np.append(act, j_in)
                blocked = -1
    return None


def _lasso_sklearn(A: np.ndarray, y: np.ndarray, lam: float, Xy: np.ndarray) -> np.ndarray:
    """The fallback of :func:`_lasso_small`: scikit-learn's LARS-lasso (``lars_path``,
    whose ``alpha`` is ``λ/m``) and, when LARS stops early (scikit-learn warns that the
    rest of the path is ill-conditioned), coordinate descent (``Lasso``) from its point."""
    m = A.shape[0]
    with (
        warnings.catch_warnings(record=True) as caught,
        config_context(skip_parameter_validation=True),
    ):
        warnings.simplefilter("always", ConvergenceWarning)
        _, _, coef = lars_path(A, y, Xy=Xy, alpha_min=lam / m, method="lasso", return_path=False)
    coef = np.asarray(coef, dtype=np.float64).ravel()
    if any(issubclass(w.category, ConvergenceWarning) for w in caught):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            cd = Lasso(
                alpha=lam / m, fit_intercept=False, tol=1e-12, max_iter=100_000, warm_start=True
            )
            cd.coef_ = coef.copy()
            coef = cd.fit(A, y).coef_.astype(np.float64)
    return coef


def lasso_kkt_violation(A: np.ndarray, y: np.ndarray, lam: float, x: np.ndarray) -> float:
    """Largest violation of the lasso optimality conditions, relative to ``λ``:
    ``|a_jᵀr| ≤ λ`` for every atom and ``a_jᵀr = λ sign(x_j)`` where ``x_j ≠ 0``
    (``r = y − Ax``). 0 at the exact solution."""
    g = A.T @ (y - A @ x)
    off = np.maximum(np.abs(g) - lam, 0.0)
    nz = x != 0
    on = np.abs(g[nz] - lam * np.sign(x[nz]))
    worst = max(float(off.max(initial=0.0)), float(on.max(initial=0.0)))
    return worst / lam


def _lasso_small(
    A: np.ndarray, y: np.ndarray, lam: float, c: np.ndarray
) -> tuple[np.ndarray, bool]:
    """Exact lasso on a working set: :func:`_homotopy_lasso`, checked by
    :func:`lasso_kkt_violation` (≤ 1e-9); if the check fails or the path is degenerate,
    :func:`_lasso_sklearn`. Returns ``(x, fell_back)``."""
    x = _homotopy_lasso(A, y, lam, c, max_steps=20 * A.shape[0] + 100)
    if x is not None and lasso_kkt_violation(A, y, lam, x) <= _KKT_RTOL:
        return x, False
    return _lasso_sklearn(A, y, lam, c), True


def _exact_lasso_one(
    Z: np.ndarray, i: int, lam: float, ws: np.ndarray, q: int
) -> tuple[np.ndarray, np.ndarray, int]:
    """Sample ``i``'s lasso by the plain working-set loop: :func:`_lasso_small` on ``ws``,
    the KKT conditions over all ``n − 1`` atoms, the ``q`` worst violators added, until
    none is left. Returns ``(atoms, coefficients, scikit-learn fallbacks)``."""
    n = Z.shape[0]
    y = Z[i]
    ws = np.setdiff1d(ws, [i])
    if ws.size == 0:
        c = np.abs(Z @ y)
        c[i] = -1.0
        ws = np.array([int(np.argmax(c))])
    fallbacks = 0
    while True:
        A = np.ascontiguousarray(Z[ws].T)
        coef, fb = _lasso_small(A, y, lam, A.T @ y)
        fallbacks += fb
        kkt = np.abs(Z @ (y - A @ coef))
        kkt[i] = 0.0
        kkt[ws] = 0.0
        viol = np.flatnonzero(kkt > lam * (1.0 + _KKT_RTOL))
        if viol.size == 0 or ws.size >= n - 1:
            break
        ws = np.union1d(ws, viol[np.argsort(-kkt[viol], kind="stable")[:q]])
    nz = coef != 0
    return ws[nz], coef[nz], fallbacks


def _homotopy_batch(
    A: np.ndarray, y: np.ndarray, lam: np.ndarray, max_steps: int
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_homotopy_lasso` for many problems at once: ``A`` is ``L × Q × m`` (problem
    ``l`` has the atoms ``A[l, j]``; zero rows pad shorter working sets and never enter),
    ``y`` is ``L × m``, ``λ > 0``. Every problem follows its own path (its own active set,
    breakpoints and step count); active sets are capped at ``min(m, Q)`` atoms (the
    general-position bound). Returns ``(x, ok)``, ``x`` ``L × Q``; ``ok`` is False where
    the path degenerated (singular Gram matrix, non-finite values, the cap or
    ``max_steps`` reached) — the caller solves those alone."""
    L, Q, m = A.shape
    K = min(m, Q)
    x_out = np.zeros((L, Q))
    ok = np.ones(L, dtype=bool)
    c = np.matmul(A, y[:, :, None])[:, :, 0]
    C = np.abs(c).max(axis=1, initial=0.0)
    idx = np.flatnonzero(C > lam)  # the others: x = 0
    if idx.size == 0 or K == 0:
        return x_out, ok
    A, c, C, lam = A[idx], c[idx], C[idx], lam[idx]
    b = idx.size
    rows = np.arange(b)
    j0 = np.argmax(np.abs(c), axis=1)
    act = np.full((b, K), -1, dtype=np.intp)  # active atoms by slot (-1: free)
    act[:, 0] = j0
    sgn = np.zeros((b, K))
    sgn[:, 0] = np.sign(c[rows, j0])
    Aa = np.zeros((b, K, m))  # signed active atoms
    Aa[:, 0] = A[rows, j0] * sgn[:, :1]
    xa = np.zeros((b, K))  # active coefficients
    nact = np.ones(b, dtype=np.intp)
    blocked = np.full(b, -1, dtype=np.intp)
    free = np.ones((b, Q), dtype=bool)
    free[rows, j0] = False
    slots = np.arange(K)
    steps = 0
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        while idx.size:
            steps += 1
            b = idx.size
            rows = np.arange(b)
            pad = slots[None, :] >= nact[:, None]
            G = np.matmul(Aa, Aa.transpose(0, 2, 1))
            G[:, slots, slots] += pad
            w = _batch_solve(G, (~pad).astype(np.float64))
            u = np.matmul(w[:, None, :], Aa)[:, 0, :]  # equiangular direction
            a = np.matmul(A, u[:, :, None])[:, :, 0]
            Cc = C[:, None]
            # step to the next breakpoint: a free correlation reaches ±(C − γ) ...
            g1 = np.where(a < 1.0, (Cc - c) / (1.0 - a), np.inf)
            g2 = np.where(a > -1.0, (Cc + c) / (1.0 + a), np.inf)
            hb = np.flatnonzero(blocked >= 0)
            if hb.size:  # a just-dropped atom sits on the level: skip its zero root only
                bj = blocked[hb]
                tiny = 1e-9 * C[hb]
                g1[hb, bj] = np.where(g1[hb, bj] > tiny, g1[hb, bj], np.inf)
                g2[hb, bj] = np.where(g2[hb, bj] > tiny, g2[hb, bj], np.inf)
            cand = np.minimum(g1, g2)
            cand[~free] = np.inf
            j_in = np.argmin(cand, axis=1)
            g_in = np.maximum(cand[rows, j_in], 0.0)
            # ... or an active coefficient reaches 0, or the level reaches λ
            dx = sgn * w
            gd = -xa / dx
            gd[~(gd > 1e-12 * Cc) | pad] = np.inf
            k_out = np.argmin(gd, axis=1)
            g_out = gd[rows, k_out]
            g_lam = C - lam
            g = np.minimum(np.minimum(g_lam, g_in), g_out)
            bad = ~np.isfinite(g) | ~np.isfinite(w).all(axis=1)
            xa += g[:, None] * dx
            xa[pad] = 0.0
            C = C - g
            c -= g[:, None] * a
            fin = (g == g_lam) & ~bad
            drop = np.flatnonzero(~fin & ~bad & (g == g_out))
            add = np.flatnonzero(~fin & ~bad & (g != g_out))
            if drop.size:
                ko = k_out[drop]
                last = nact[drop] - 1
                blocked[drop] = act[drop, ko]
                free[drop, act[drop, ko]] = True
                for arr in (act, sgn, xa, Aa):
                    arr[drop, ko] = arr[drop, last]
                act[drop, last] = -1
                sgn[drop, last] = 0.0
                xa[drop, last] = 0.0
                Aa[drop, last] = 0.0
                nact[drop] = last
                bad[drop[last == 0]] = True
            if add.size:
                full = nact[add] >= K
                bad[add[full]] = True
                add = add[~full]
                jd = j_in[add]
                sl = nact[add]
                s = np.sign(c[add, jd])
                act[add, sl] = jd
                sgn[add, sl] = s
                Aa[add, sl] = A[add, jd] * s[:, None]
                xa[add, sl] = 0.0
                free[add, jd] = False
                nact[add] = sl + 1
                blocked[add] = -1
            if steps >= max_steps:
                bad |= ~fin
            stop = fin | bad
            if not stop.any():
                continue
            f = np.flatnonzero(fin)
            if f.size:
                on = act[f] >= 0
                xo = np.zeros((f.size, Q))
                xo[np.nonzero(on)[0], act[f][on]] = xa[f][on]
                x_out[idx[f]] = xo
            ok[idx[bad]] = False
            k = ~stop
            idx, A, c, C, lam = idx[k], A[k], c[k], C[k], lam[k]
            act, sgn, Aa, xa = act[k], sgn[k], Aa[k], xa[k]
            nact, blocked, free = nact[k], blocked[k], free[k]
    return x_out, ok


def _batch_solve(G: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    """``G_l⁻¹ rhs_l`` for a stack of small systems; NaN rows where ``G_l`` is singular."""
    try:
        return np.linalg.solve(G, rhs[:, :, None])[:, :, 0]
    except np.linalg.LinAlgError:
        out = np.full(rhs.shape, np.nan)
        for t in range(G.shape[0]):
            try:
                out[t] = np.linalg.solve(G[t], rhs[t])
            except np.linalg.LinAlgError:
                pass
        return out


def _batch_kkt(
    A: np.ndarray, y: np.ndarray, lam: np.ndarray, x: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`lasso_kkt_violation` of every working-set problem of a batch, and the
    residuals ``y − Σ_j x_j a_j``."""
    r = y - np.matmul(x[:, None, :], A)[:, 0, :]
    g = np.matmul(A, r[:, :, None])[:, :, 0]
    off = np.maximum(np.abs(g) - lam[:, None], 0.0).max(axis=1, initial=0.0)
    on = np.where(x != 0, np.abs(g - lam[:, None] * np.sign(x)), 0.0).max(axis=1, initial=0.0)
    return np.maximum(off, on) / lam, r


def _sign_guess(A: np.ndarray, y: np.ndarray, lam: np.ndarray, x0: np.ndarray) -> np.ndarray:
    """The lasso solution if its support and signs are those of ``x0`` (e.g. the previous
    iteration's code): ``x_a = G_a⁻¹(A_aᵀy − λ s_a)``; rows whose signs come out
    inconsistent (or with an empty or over-``m`` support) are all zero. The caller checks
    the KKT conditions."""
    L, Q, m = A.shape
    nz = x0 != 0
    cnt = nz.sum(axis=1)
    K = int(cnt.max(initial=0))
    x = np.zeros((L, Q))
    use = (cnt > 0) & (cnt <= m)
    if K == 0 or not use.any():
        return x
    pos = np.argsort(~nz, axis=1, kind="stable")[:, :K]  # support first
    pad = np.arange(K)[None, :] >= cnt[:, None]
    s = np.where(pad, 0.0, np.sign(np.take_along_axis(x0, pos, axis=1)))
    Aa = np.take_along_axis(A, pos[:, :, None], axis=1) * s[:, :, None]
    G = np.matmul(Aa, Aa.transpose(0, 2, 1))
    G[:, np.arange(K), np.arange(K)] += pad
    rhs = np.matmul(Aa, y[:, :, None])[:, :, 0] - lam[:, None] * ~pad
    with np.errstate(invalid="ignore"):
        mag = _batch_solve(G, rhs)  # |x| on the guessed support
        use &= np.where(pad, True, mag > 0).all(axis=1)
    r, k = np.nonzero(~pad & use[:, None])
    x[r, pos[r, k]] = mag[r, k] * s[r, k]
    return x


# -- the correlation scans of exact_lasso ---------------------------------------------


def _scan(
    V: np.ndarray,
    D: np.ndarray,
    lens: np.ndarray,
    thr: np.ndarray,
    excl: np.ndarray,
    q: int | None,
):
    """``|d_jᵀv_i|`` of every query ``v_i`` (row of ``V``) with the first ``lens[i]`` rows
    of ``D``, skipping the positions ``excl[i]`` (``−1`` pads), in cache-sized tiles.

    Returns ``M`` (the largest value per query, 0 if none), ``has`` (some value
    ``> thr_i``) and the violators ``(query, position, value)``: every value ``> thr_i``,
    or, for a query with more than ``j`` of them in its first tile, every one ``≥``
    ``θ_i``, the ``j``-th largest of that tile, ``j = min(q, ⌈2q · tile/length⌉)``: the
    largest violators, about ``2q`` of them (at least one, the tile's largest).
    """
    nv = V.shape[0]
    M = np.zeros(nv)
    has = np.zeros(nv, dtype=bool)
    got: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    DT = np.ascontiguousarray(D.T)
    want = bool(np.isfinite(thr).any())
    tq, ta = _SCAN_TILE
    order = np.argsort(lens, kind="stable")
    for s in range(0, nv, tq):
        rows = order[s : s + tq]
        lb = lens[rows]
        top = int(lb[-1])
        if top == 0:
            continue
        Vb, tb, ex = V[rows], thr[rows], excl[rows]
        theta = None
        Mb = np.zeros(rows.size)
        for u in range(0, top, ta):
            w = min(ta, top - u)
            Cb = Vb @ DT[:, u : u + w]
            np.abs(Cb, out=Cb)
            er, ec = np.nonzero((ex >= u) & (ex < u + w))
            Cb[er, ex[er, ec] - u] = 0.0
            if lb[0] < u + w:  # rows sorted by length: blank the tail of short rows
                short = np.flatnonzero(lb < u + w)
                Cb[short] *= np.arange(u, u + w)[None, :] < lb[short, None]
            mx = Cb.max(axis=1)
            np.maximum(Mb, mx, out=Mb)
            if not want:
                continue
            vr = np.flatnonzero(mx > tb)
            if vr.size == 0:
                continue
            has[rows[vr]] = True
            sub = Cb[vr]
            hit = sub > tb[vr, None]
            if u == 0 and q is not None:  # θ: about 2q of the largest are kept
                j = int(min(q, max(1, -(-2 * q * w // top))))
                many = np.flatnonzero(hit.sum(axis=1) > j)
                if many.size:
                    theta = np.zeros(rows.size)
                    theta[vr[many]] = -np.partition(-sub[many], j - 1, axis=1)[:, j - 1]
            if theta is not None:
                hit &= sub >= theta[vr, None]
            r, col = np.nonzero(hit)
            got.append((rows[vr[r]], col + u, sub[r, col]))
        M[rows] = Mb
    if got:
        vi, vj, vv = (np.concatenate(t) for t in zip(*got, strict=True))
    else:
        vi, vj, vv = np.zeros(0, np.intp), np.zeros(0, np.intp), np.zeros(0)
    return M, has, (vi, vj, vv)


class _ScanOrder:
    """The atoms in the order the KKT scan reads them, with the bounds that let it stop
    early. ``codes`` (``n × n``, column ``j`` = coefficients of a representation
    ``z_j = Σ_l x_l z_l + r_j``; any coefficients work, e.g. the current or the previous
    lasso codes) gives, for every query ``v`` and atom ``j``::

        |z_jᵀv| ≤ κ_j max_{l ∈ supp(x)} |z_lᵀv| + ρ_j ||v||,  κ_j = ||x||_1, ρ_j = ||r_j||.

    The atoms ``E`` used by some representation come first; the others follow by
    increasing ``τ_j = (1 − κ_j)/ρ_j``. When every atom of ``E`` (except the query's own)
    satisfies ``|z_lᵀv| ≤ t`` and ``τ_j ≥ ||v||/t``, the bound proves ``|z_jᵀv| ≤ t``:
    the scan needs only the first ``|E| + #{τ_j < ||v||/t}`` atoms (:meth:`lengths`) plus
    the atoms whose representation uses the query's own atom (:meth:`own_pairs`).
    ``codes=None``: plain order, everything scanned."""

    def __init__(self, Z: np.ndarray, codes: sp.csc_matrix | None):
        n = Z.shape[0]
        if codes is None or codes.nnz == 0:
            self.order = np.arange(n)
            self.n_first = n
            self.tau = np.zeros(0)
            self.own = None
        else:
            E = np.unique(codes.indices)
            rest = np.setdiff1d(np.arange(n), E, assume_unique=True)
            kappa = np.asarray(abs(codes).sum(axis=0)).ravel()[rest] * (1.0 + _CERT_MARGIN)
            R = Z[rest] - codes[:, rest].T @ Z
            rho = np.sqrt(np.einsum("ij,ij->i", R, R)) * (1.0 + _CERT_MARGIN)
            slack = 1.0 - _CERT_MARGIN - kappa
            with np.errstate(divide="ignore", invalid="ignore"):
                tau = np.where(slack > 0, slack / rho, -np.inf)
            o = np.argsort(tau, kind="stable")
            self.order = np.concatenate([E, rest[o]])
            self.n_first = E.size
            self.tau = tau[o]
            # row l: the atoms outside E whose representation uses atom l
            self.own = codes[:, rest[o]].tocsr()
            self.own_atoms = rest[o]
        self.pos = np.empty(n, dtype=np.intp)
        self.pos[self.order] = np.arange(n)

    def lengths(self, t: np.ndarray) -> np.ndarray:
        """Atoms to scan for queries with ``||v|| / threshold = t``."""
        return self.n_first + np.searchsorted(self.tau, t, side="left")

    def own_pairs(self, queries: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(k, j)``: atom ``j`` outside ``E`` is represented with atom ``queries[k]``."""
        if self.own is None:
            return np.zeros(0, np.intp), np.zeros(0, np.intp)
        sub = self.own[queries]
        return np.repeat(np.arange(queries.size), np.diff(sub.indptr)), self.own_atoms[sub.indices]


def _top_violators(vi, vj, vv, q: int, nq: int, pad: int) -> np.ndarray:
    """The (at most) ``q`` largest violators of each query, ``nq × q`` padded with ``pad``."""
    out = np.full((nq, q), pad, dtype=np.intp)
    if vi.size:
        o = np.lexsort((-vv, vi))
        vi, vj = vi[o], vj[o]
        rank = np.arange(vi.size) - np.searchsorted(vi, vi, side="left")
        keep = rank < q
        out[vi[keep], rank[keep]] = vj[keep]
    return out


class _WorkingSets:
    """Per-sample working sets (``n × width`` atom indices, padded with ``n``, sorted) and
    the current coefficients on them."""

    def __init__(self, n: int, m: int):
        self.n = n
        self.atoms = np.full((n, 1), n, dtype=np.intp)
        self.x = np.zeros((n, 1))
        self.count = np.zeros(n, dtype=np.intp)
        self.residual = np.zeros((n, m))

    def merge(self, rows: np.ndarray, new: np.ndarray) -> None:
        """Add the atoms ``new`` (``len(rows) × k``, padded with ``n``) to the rows' sets
        (their coefficients are reset)."""
        n = self.n
        both = np.sort(np.concatenate([self.atoms[rows], new], axis=1), axis=1)
        both[:, 1:][both[:, 1:] == both[:, :-1]] = n
        both.sort(axis=1)
        cnt = (both < n).sum(axis=1)
        width = max(int(cnt.max(initial=0)), 1)
        if width > self.atoms.shape[1]:
            extra = width - self.atoms.shape[1]
            self.atoms = np.pad(self.atoms, ((0, 0), (0, extra)), constant_values=n)
            self.x = np.pad(self.x, ((0, 0), (0, extra)))
        w = self.atoms.shape[1]
        self.atoms[rows] = n
        self.atoms[rows, : min(w, both.shape[1])] = both[:, :w]
        self.x[rows] = 0.0
        self.count[rows] = cnt

    def contains(self, rows: np.ndarray, atoms: np.ndarray) -> np.ndarray:
        """Whether ``atoms[t]`` is in the working set of ``rows[t]`` (a binary search in
        the row-major keys, sorted since every row is)."""
        step = self.n + 1
        keys = (np.arange(self.n)[:, None] * step + self.atoms).ravel()
        want = rows * step + atoms
        at = np.minimum(np.searchsorted(keys, want), keys.size - 1)
        return keys[at] == want

    def set_code(self, i: int, atoms: np.ndarray, coef: np.ndarray, residual) -> None:
        """Replace sample ``i``'s working set by ``atoms`` (sorted) with ``coef``."""
        if atoms.size > self.atoms.shape[1]:
            extra = atoms.size - self.atoms.shape[1]
            self.atoms = np.pad(self.atoms, ((0, 0), (0, extra)), constant_values=self.n)
            self.x = np.pad(self.x, ((0, 0), (0, extra)))
        self.atoms[i] = self.n
        self.x[i] = 0.0
        self.atoms[i, : atoms.size] = atoms
        self.x[i, : atoms.size] = coef
        self.count[i] = atoms.size
        self.residual[i] = residual

    def codes(self) -> sp.csc_matrix:
        """Column ``i`` = the code of sample ``i``."""
        nz = self.x != 0
        indptr = np.concatenate([[0], np.cumsum(nz.sum(axis=1))])
        return sp.csc_matrix((self.x[nz], self.atoms[nz], indptr), shape=(self.n, self.n))


def _solve_batched(
    Z: np.ndarray,
    Zp: np.ndarray,
    lam: np.ndarray,
    ws: _WorkingSets,
    todo: np.ndarray,
    guess: np.ndarray | None,
) -> int:
    """Exact lassos of the samples ``todo`` on their working sets, in chunks of similar
    size: the sign guess from ``guess`` (coefficients aligned with ``ws``) where it passes
    the KKT test, else :func:`_homotopy_batch`, else :func:`_lasso_small` alone. Stores
    coefficients and residuals in ``ws``; returns the scikit-learn fallbacks."""
    m = Z.shape[1]
    fallbacks = 0
    order = todo[np.argsort(ws.count[todo], kind="stable")]
    pos = 0
    while pos < order.size:
        width = max(int(ws.count[order[pos]]), 1)
        step = max(1, _BATCH_FLOATS // ((width + m) * m))
        idx = order[pos : pos + step]
        pos += idx.size
        width = max(int(ws.count[idx].max()), 1)
        atoms = ws.atoms[idx, :width]
        A = Zp[atoms]
        y, lm = Z[idx], lam[idx]
        x = np.zeros((idx.size, width))
        left = np.arange(idx.size)
        if guess is not None:
            g = guess[idx, :width]
            g = np.pad(g, ((0, 0), (0, width - g.shape[1])))
            xg = _sign_guess(A, y, lm, g)
            tried = np.flatnonzero((xg != 0).any(axis=1))
            v, _ = _batch_kkt(A[tried], y[tried], lm[tried], xg[tried])
            good = tried[v <= _KKT_RTOL]
            x[good] = xg[good]
            left = np.setdiff1d(left, good, assume_unique=True)
        if left.size:
            xh, okh = _homotopy_batch(A[left], y[left], lm[left], 20 * m + 100)
            v, _ = _batch_kkt(A[left], y[left], lm[left], xh)
            x[left] = xh
            for r in left[~(okh & (v <= _KKT_RTOL))]:
                k = int(ws.count[idx[r]])
                Ak = np.ascontiguousarray(A[r, :k].T)
                coef, fb = _lasso_small(Ak, y[r], float(lm[r]), Ak.T @ y[r])
                x[r] = 0.0
                x[r, :k] = coef
                fallbacks += fb
        ws.x[idx, :width] = x
        ws.residual[idx] = y - np.matmul(x[:, None, :], A)[:, 0, :]
    return fallbacks


def _lasso_lambdas(Z: np.ndarray, ratio: float, reps: _ScanOrder) -> np.ndarray:
    """``λ_i = ratio · max_{j≠i} |z_jᵀz_i|``, scanning only what ``reps`` cannot bound:
    first the atoms ``E``, then the others whose bound exceeds the maximum found."""
    n = Z.shape[0]
    allq = np.arange(n)
    D = Z[reps.order]
    inf = np.full(n, np.inf)
    own = reps.pos[:, None]
    first = reps.n_first
    M, _, _ = _scan(Z, D[:first], np.full(n, first), inf, np.where(own < first, own, -1), None)
    k, j = reps.own_pairs(allq)
    if k.size:
        np.maximum.at(M, k, np.abs(np.einsum("ij,ij->i", Z[k], Z[j])))
    if first < n:
        with np.errstate(divide="ignore"):
            t = np.where(M > 0, np.sqrt(np.einsum("ij,ij->i", Z, Z)) / M, np.inf)
        lens = np.searchsorted(reps.tau, t, side="left")
        M2, _, _ = _scan(Z, D[first:], lens, inf, np.where(own >= first, own - first, -1), None)
        np.maximum(M, M2, out=M)
    return ratio * M


def exact_lasso(
    Z: np.ndarray, ratio: float, *, working_set: int | None = None, support=None
) -> sp.csc_matrix:
    """The same lasso problems as :func:`slep_lasso`, solved exactly; ``S`` stays sparse.

    For every sample ``i`` (``λ_i = ratio · max_{j≠i}|z_jᵀz_i|``; codes with ``λ_i = 0``
    are 0) the result satisfies the optimality (KKT) conditions of the full problem,
    ``|z_jᵀr_i| ≤ λ_i`` for every atom ``j ≠ i`` with equality and the coefficient's sign
    on the support (``r_i = z_i − Σ_l x_l z_l``), to the relative slack
    ``_KKT_RTOL = 1e-9``; it is therefore the lasso solution (unique when the atoms are in
    general position, with at most ``m`` non-zeros). Working-set method, all samples at
    once:

    0. ``λ_i``: the maximum over the atoms ``E`` of the previous codes, then over the atoms
       the representation bound of :class:`_ScanOrder` cannot keep below it
       (:func:`_lasso_lambdas`); every atom without previous codes.
    1. Working sets: ``support[:, i]`` (the previous iteration's code) when given, whose
       support and signs are tried first (one ``G⁻¹`` solve, :func:`_sign_guess`); the
       candidate atoms are the atoms of the previous codes. Without it, the ``q`` atoms
       most correlated with ``z_i``; above 16 000 samples a subsample of
       ``_COLD_SUBSAMPLE`` (4000) samples is solved against all atoms first, the atoms of
       its codes are the candidates and every other sample starts from its ``q`` most
       correlated candidates.
    2. Each working-set lasso is solved by the LARS homotopy, batched over samples
       (:func:`_homotopy_batch`; a path that degenerates goes to :func:`_lasso_small`).
    3. KKT on the candidate atoms, up to ``q`` of the worst violators added per round
       (:func:`_scan`), until no candidate violates; then on *all* atoms
       (:class:`_ScanOrder`): an atom ``j`` outside the atoms of the current codes is
       skipped only when the representation bound proves ``|z_jᵀr_i| ≤ λ_i(1 + 1e-9)``
       (every other atom is computed), violators join the working set and the
       candidates, and the rounds resume. Correlations are computed in ``32 × 2048``
       tiles of a GEMM (:data:`_SCAN_TILE`).

    ``q`` (``working_set``) defaults to ``2m``. A working set that grows beyond
    ``max(20m, 200)`` atoms is finished by :func:`_exact_lasso_one` (the same loop for
    one sample, ``O(nm)`` per round). ``exact_lasso.fallbacks`` counts scikit-learn
    fallbacks of the last call.
    """
    Z = np.asarray(Z, dtype=np.float64)
    n, m = Z.shape
    q = int(working_set) if working_set is not None else 2 * m
    q = max(1, min(n - 1, q))
    cap = max(20 * m, 200, q + 1)
    Zp = np.vstack([Z, np.zeros((1, m))])  # row n: the padding atom
    prev = None
    if support is not None:  # the previous codes, without self-atoms or stored zeros
        C = sp.coo_matrix(support, dtype=np.float64)
        keep = (C.row != C.col) & (C.data != 0)
        prev = sp.csc_matrix((C.data[keep], (C.row[keep], C.col[keep])), shape=(n, n))
        prev.sum_duplicates()
        prev.eliminate_zeros()
        prev.sort_indices()
    lam = _lasso_lambdas(Z, float(ratio), _ScanOrder(Z, prev))
    active = np.flatnonzero(lam > 0)
    thr = lam * (1.0 + _KKT_RTOL)
    ws = _WorkingSets(n, m)
    ws.residual[:] = Z
    alone = np.zeros(n, dtype=bool)  # verified against every atom already
    fallbacks = 0

    def violators(todo, atoms, lens, extra=None):
        """The ``q`` worst violators of each sample's code among the first ``lens``
        of ``atoms`` (and the ``extra`` pairs), its own atom and working set excluded."""
        pos = np.full(n + 1, -1, dtype=np.intp)
        pos[atoms] = np.arange(atoms.size)
        excl = pos[np.concatenate([todo[:, None], ws.atoms[todo]], axis=1)]
        V = ws.residual[todo]
        _, has, (vi, vj, vv) = _scan(V, Z[atoms], lens, thr[todo], excl, q)
        vj = atoms[vj]
        if extra is not None:
            k, j = extra
            keep = (pos[j] >= lens[k]) & ~ws.contains(todo[k], j)
            k, j = k[keep], j[keep]
            v = np.abs(np.einsum("ij,ij->i", V[k], Z[j]))
            hit = v > thr[todo[k]]
            has[k[hit]] = True
            vi, vj, vv = (np.concatenate(t) for t in ((vi, k[hit]), (vj, j[hit]), (vv, v[hit])))
        return has, _top_violators(vi, vj, vv, q, todo.size, n)

    def generate(todo, cand, guess=None):
        """Rounds on the candidate atoms ``cand`` until no candidate violates."""
        nonlocal fallbacks
        while todo.size:
            fallbacks += _solve_batched(Z, Zp, lam, ws, todo, guess)
            guess = None
            has, top = violators(todo, cand, np.full(todo.size, cand.size))
            todo, top = todo[has], top[has]
            ws.merge(todo, top)
            big = ws.count[todo] > cap
            for i in todo[big]:
                a, v, fb = _exact_lasso_one(Z, int(i), float(lam[i]), ws.atoms[i, : ws.count[i]], q)
                fallbacks += fb
                ws.set_code(int(i), a, v, Z[i] - v @ Z[a])
                alone[i] = True
            todo = todo[~big]

    guess = None
    todo = np.zeros(0, dtype=np.intp)
    cand = np.zeros(0, dtype=np.intp)
    if prev is not None:
        cnt = np.diff(prev.indptr)
        rows = np.repeat(np.arange(n), cnt)
        slot = np.arange(prev.nnz) - prev.indptr[rows]
        init = np.full((n, max(int(cnt.max(initial=0)), 1)), n, dtype=np.intp)
        init[rows, slot] = prev.indices
        ws.merge(np.arange(n), init)  # sorted, unique atoms: the same slots
        guess = np.zeros_like(ws.x)
        guess[rows, slot] = prev.data
        cand = np.unique(prev.indices)
        todo = active[ws.count[active] > 0]
    cold = np.setdiff1d(active, todo, assume_unique=True)
    if cold.size:
        # cold start: the most correlated atoms (the violators of x = 0) as working sets;
        # a subsample solved against every atom yields the candidate atoms of the rest
        sub = cold
        if cold.size > 2 * _COLD_SUBSAMPLE and n > 4 * _COLD_SUBSAMPLE:
            sub = cold[np.linspace(0, cold.size - 1, _COLD_SUBSAMPLE).astype(np.intp)]
        everything = np.arange(n)
        _, top = violators(sub, everything, np.full(sub.size, n))
        ws.merge(sub, top)
        generate(sub, everything)
        alone[sub] = True
        rest = np.setdiff1d(cold, sub, assume_unique=True)
        if rest.size:
            cand = np.union1d(cand, ws.codes().indices)
            _, top = violators(rest, cand, np.full(rest.size, cand.size))
            ws.merge(rest, top)
            todo = np.union1d(todo, rest)
    while todo.size:
        generate(todo, cand, guess)
        guess = None
        todo = todo[~alone[todo]]
        if cand.size == n or todo.size == 0:
            break
        # every atom: the current codes bound the atoms outside their supports
        reps = _ScanOrder(Z, ws.codes())
        V = ws.residual[todo]
        t = np.sqrt(np.einsum("ij,ij->i", V, V)) / thr[todo]
        has, top = violators(todo, reps.order, reps.lengths(t), extra=reps.own_pairs(todo))
        todo, top = todo[has], top[has]
        ws.merge(todo, top)
        cand = np.union1d(cand, top[top < n])
    exact_lasso.fallbacks = fallbacks
    S = ws.codes()
    S.sort_indices()
    return S


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
    eigen-step. Since then ``Z``'s ``c ≤ 10`` columns are searched by HNSW (session 7),
    the first graph reuses μ's kNN search of ``X`` (its first ``k`` neighbours) and the
    scans use L2-sized tiles (session 9): n = 7·10⁴ 519 CPU-s on the slower machine type
    that took 639 s before (``docs/benchmarks.md``). ``"lars"`` at n = 2000: 8.5 CPU-s (the
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
