"""The S-step of FSASL (:mod:`ufs.methods.fsasl`): one lasso per sample.

The global structure ``S`` represents every projected sample ``z_i`` sparsely by the
others: ``min_s ||z_i − Σ_{j≠i} s_j z_j||² + α ||s||_1``, ``n`` lasso problems of ``n − 1``
atoms each. Two solvers give the same codes (``tests/test_fsasl.py``): the authors'
(:func:`slep_lasso`, SLEP's ``LeastR`` accelerated gradient, batched over samples, dense
``n × n``; what the parity cases reproduce) and an exact homotopy with working sets and
certified correlation scans (:func:`exact_lasso`, sparse, for data sets too large for the
dense path). Split out of ``fsasl.py`` (the solver is 860 of its 1 470 lines);
the model and its other steps stay there.

Size (~900 lines): two complete lasso solvers (SLEP's accelerated gradient and an exact
homotopy with certified scans), each with its stopping rules; split out of ``fsasl.py``
already, and each solver is one unit.
"""

from __future__ import annotations

import warnings

import numpy as np
import scipy.sparse as sp
from scipy.linalg.lapack import dposv as _dposv
from sklearn import config_context
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import Lasso, lars_path

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
