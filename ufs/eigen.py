"""Extreme eigenpairs of symmetric matrices and operators, exact on repeated eigenvalues.

Every method that needs a few smallest or largest eigenpairs goes through this module:

* :func:`extreme_eigenvectors` – any symmetric matrix, sparse matrix or
  ``LinearOperator``. Dense ``eigh`` up to ``dense_limit`` (exact for repeated
  eigenvalues). Above, **certified Lanczos**: ARPACK (``eigsh``) is a single-vector
  Krylov method and in exact arithmetic finds one vector per *distinct* eigenvalue, so
  on a repeated eigenvalue it can return some copies and then the next eigenvalue instead
  of the missing copies, with small residuals (MCFS on a 9-component graph returned 4 of
  9 unit eigenvalues). So every result is checked: each pair's residual
  ``||Av − λv|| ≤ RESIDUAL_RTOL · scale``, then the extreme eigenvalue of ``A`` on the
  orthogonal complement of the vectors found (a second Lanczos run on the deflated
  operator ``PAP``, the found span moved out of the way) must lie beyond the ``m``-th
  value found by more than ``TIE_RTOL · scale``. A missed pair it finds is added and
  all are refined by Rayleigh–Ritz, until the check passes (each round adds at least one
  pair, so at most ``m + 2`` rounds). A result that still fails is recomputed densely up
  to :data:`DENSE_FALLBACK_LIMIT` and otherwise raises :class:`EigenSolverError`:
  never silently wrong. One exception above the limit: when the ``m`` pairs passed their
  residuals and only the collection of copies of a repeated ``m``-th eigenvalue failed,
  they are returned with a :class:`~ufs.base.RoundoffSolveWarning` (the fit is marked
  degenerate: its answer is one basis of a tied eigenspace).
* :func:`component_eigenpairs` – a sparse symmetric matrix is block-diagonal over the
  connected components of its sparsity pattern (``connected_components``), so its
  eigenpairs are the union of the blocks'. Graph operators have a known *trivial* pair
  per component, in closed form: ``D − S`` has ``0`` with the component's indicator,
  ``D^{-1/2} S D^{-1/2}`` has ``1`` with ``D^{1/2} 1_C``. They are built exactly
  (checked by their residual), and only the remaining pairs are solved for, per
  component, where the trivial eigenvalue is simple. A graph with many components (faces,
  objects, gene-expression classes) then costs nothing more than a connected one.

When the ``m``-th and ``(m+1)``-th eigenvalues are equal (to ``TIE_RTOL``) the wanted
subspace is not unique; the result reports it (``tied_at_boundary``) and any basis of the
tied eigenspace is as valid as another (the authors' MATLAB codes are equally arbitrary).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import NamedTuple

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp
import scipy.sparse.csgraph as csgraph
import scipy.sparse.linalg as spla

from .fit_warnings import RoundoffSolveWarning

__all__ = [
    "EigenSolverError",
    "Eigenpairs",
    "extreme_eigenvectors",
    "graph_components",
    "component_eigenpairs",
    "missed_pairs",
    "RESIDUAL_RTOL",
    "TIE_RTOL",
    "DENSE_FALLBACK_LIMIT",
]

#: a pair is accepted when ``||Av − λv|| ≤ RESIDUAL_RTOL · scale`` (``scale``: an estimate
#: of ``||A||₂``, see ``_norm_estimate``); ARPACK at ``tol = 0`` reaches ~1e-14
RESIDUAL_RTOL = 1e-8
#: eigenvalues closer than ``TIE_RTOL · scale`` count as one repeated eigenvalue
TIE_RTOL = 1e-9
#: the order up to which a failed iterative result is recomputed by dense ``eigh``
#: (``8 n²`` bytes: 288 MB at 6 000)
DENSE_FALLBACK_LIMIT = 6000


class EigenSolverError(RuntimeError):
    """The iterative eigen-solver's result failed its checks and the order is too large
    for the dense fallback."""


class Eigenpairs(NamedTuple):
    """``values`` (increasing for the smallest, decreasing for the largest), ``vectors``
    (orthonormal columns), the number of connected components of the operator's pattern
    (1 when not examined) and whether the ``m``-th eigenvalue is repeated beyond the
    ``m`` returned (the returned subspace is then one of many equally valid ones)."""

    values: np.ndarray
    vectors: np.ndarray
    n_components: int = 1
    tied_at_boundary: bool = False


def _wants_largest(n: int, m: int, which: str) -> bool:
    """Check a request for ``m`` of ``n`` eigenpairs; ``True`` for the largest."""
    if not 1 <= m <= n:
        raise ValueError(f"need 1 <= m <= {n}; got m={m}")
    if which not in ("smallest", "largest"):
        raise ValueError("which must be 'smallest' or 'largest'")
    return which == "largest"


def _sorted(w: np.ndarray, V: np.ndarray, largest: bool) -> tuple[np.ndarray, np.ndarray]:
    order = np.argsort(-w if largest else w, kind="stable")
    return w[order], V[:, order]


def _fix_signs(V: np.ndarray) -> np.ndarray:
    """Signs chosen so that each column's largest-magnitude entry is positive."""
    if V.size == 0:
        return V
    idx = np.argmax(np.abs(V), axis=0)
    s = np.sign(V[idx, np.arange(V.shape[1])])
    s[s == 0] = 1.0
    return V * s


def _dense(A) -> np.ndarray:
    if sp.issparse(A):
        M = A.toarray()
    elif isinstance(A, np.ndarray):
        M = np.array(A, dtype=np.float64)
    else:  # LinearOperator
        M = np.asarray(spla.aslinearoperator(A).matmat(np.eye(A.shape[0])), dtype=np.float64)
    return (M + M.T) / 2.0


def _dense_extreme(M: np.ndarray, m: int, largest: bool) -> tuple[np.ndarray, np.ndarray]:
    n = M.shape[0]
    lo, hi = (n - m, n - 1) if largest else (0, m - 1)
    w, V = sla.eigh(M, subset_by_index=[lo, hi], check_finite=False)
    if V.shape[1] != m:
        # LAPACK's subset driver (dsyevr, MRRR) can return fewer vectors than asked when
        # the wanted eigenvalues are (nearly) equal: all of them by divide and conquer
        w, V = sla.eigh(M, driver="evd", check_finite=False)
        w, V = w[lo : hi + 1], V[:, lo : hi + 1]
    return _sorted(w, V, largest)


def _complement_top(B, V: np.ndarray, threshold: float, scale: float, rng):
    """The (up to 2) largest eigenpairs of ``B`` on the orthogonal complement of the
    orthonormal ``V`` that lie at or above ``threshold`` (Lanczos on ``PBP``, ``P = I −
    VVᵀ``; ``span(V)`` is given the eigenvalue ``threshold − scale``, or ``0`` when that is
    below ``threshold``, so that none of its vectors can pass). ``B(X)`` applies the operator to an ``n × s`` block."""
    n, k = V.shape
    shift = threshold - max(scale, np.finfo(float).tiny)
    if threshold > 0:
        # 0 is below the threshold too, and it does not stretch the spectrum Lanczos sees:
        # a shift-invert operator's span(V) holds 1/δ-sized eigenvalues, and moving them
        # to -||B|| made the Lanczos gap ratios ~1e-7 (SOGFS on digits ran for minutes)
        shift = max(shift, 0.0)

    def deflated(X):
        X = np.asarray(X).reshape(n, -1)
        PX = X - V @ (V.T @ X)
        BPX = B(PX)
        return BPX - V @ (V.T @ BPX) + shift * (V @ (V.T @ X))

    Dop = spla.LinearOperator(
        (n, n), matvec=lambda x: deflated(x).ravel(), matmat=deflated, dtype=np.float64
    )
    v0 = rng.standard_normal(n)
    v0 -= V @ (V.T @ v0)
    # a Ritz value's error is ~ residual² / gap, so 1e-10 decides ">= threshold" as well as
    # machine precision would, in fewer steps
    t, U = spla.eigsh(Dop, k=min(2, n - k - 1), which="LA", v0=v0, tol=1e-10)
    keep = (t >= threshold) & (np.linalg.norm(V.T @ U, axis=0) < 0.5)
    return t[keep], U[:, keep]


def missed_pairs(A, V: np.ndarray, threshold: float, *, seed: int = 0) -> np.ndarray:
    """Eigenvalues of the symmetric ``A`` at or above ``threshold`` on the orthogonal
    complement of the orthonormal ``V`` (at most 2; empty: none was missed). A certificate
    for an iterative "every eigenvalue above ``threshold``" result (DGUFS's L-step):
    Lanczos misses copies of a repeated eigenvalue, this finds them."""
    n = A.shape[0]
    if V.shape[1] >= n - 2:
        raise ValueError("too few dimensions left to certify iteratively")
    op = spla.aslinearoperator(A)
    scale = max(abs(float(threshold)), 1.0)
    t, _ = _complement_top(
        lambda X: np.asarray(op.matmat(np.asarray(X).reshape(n, -1))),
        V,
        threshold,
        scale,
        np.random.default_rng(seed),
    )
    return t


def _norm_estimate(A, B, n: int, rng) -> float:
    """A scale of ``||A||₂`` for the tolerances: the largest absolute row sum (an upper
    bound) of a matrix; for an operator, a few block power steps (a lower bound within a
    small factor). The found eigenvalues alone are no scale: the wanted ones may all be 0
    (a Laplacian's null space)."""
    if sp.issparse(A) or isinstance(A, np.ndarray):
        return float(abs(A).sum(axis=1).max())
    X = rng.standard_normal((n, 4))
    est = 0.0
    for _ in range(6):
        X, _ = np.linalg.qr(B(X))
        est = max(est, float(np.linalg.norm(B(X), axis=0).max()))
    return est


def _canonical_ties(w: np.ndarray, V: np.ndarray, tau: float) -> np.ndarray:
    """Inside each run of equal eigenvalues (to ``tau``; a single eigenvalue is a run of
    one, whose sign is fixed this way) replace the vectors by a basis that depends only on
    their span: ``P G`` orthonormalised (``P`` the span's projector,
    ``G`` a fixed seeded Gaussian block, QR with a positive diagonal). ARPACK draws restart
    vectors from a random state it keeps between calls, so without this the basis inside a
    repeated eigenvalue depended on what ran before in the process."""
    V = V.copy()
    start = 0
    for j in range(1, w.size + 1):
        if j < w.size and abs(w[j] - w[j - 1]) <= tau:
            continue
        if j > start:  # a single vector too: its sign
            Vc = V[:, start:j]
            G = np.random.default_rng(0).standard_normal((V.shape[0], j - start))
            Q, R = np.linalg.qr(Vc @ (Vc.T @ G))
            V[:, start:j] = Q * np.sign(np.diag(R))
        start = j
    return V


def _certified_lanczos(
    A, m: int, largest: bool, seed: int, ncv: int | None = None, *, salvage: bool = False
):
    """ARPACK plus the deflation check of the module docstring; ``None`` on failure.

    Returns ``(w, V, tied, salvaged)`` with ``m`` pairs, or ``None`` when a residual fails,
    ARPACK does not converge or the rounds run out. ``salvage``: when the failure comes
    while collecting copies of the ``m``-th eigenvalue — the ``m`` pairs found earlier
    passed their residuals and every pair found since is a tie (a huge eigenspace, whose
    Lanczos copies lose accuracy: UDFS on allaml, multiplicity ~7 000), return those
    ``m`` pairs flagged ``tied`` and ``salvaged`` instead of ``None`` (their span is one of
    many equally valid ones, and not made canonical)."""
    n = A.shape[0]
    op = spla.aslinearoperator(A)
    sgn = 1.0 if largest else -1.0
    rng = np.random.default_rng(seed)

    def B(X):  # the operator whose *largest* eigenpairs are wanted
        return sgn * np.asarray(op.matmat(np.asarray(X).reshape(n, -1)))

    Bop = spla.LinearOperator((n, n), matvec=lambda x: B(x).ravel(), matmat=B, dtype=np.float64)
    try:
        k0 = min(m, n - 1)
        ncv = None if ncv is None else min(n, max(int(ncv), 2 * k0 + 1))
        w, V = spla.eigsh(Bop, k=k0, which="LA", v0=rng.standard_normal(n), tol=0, ncv=ncv)
    except (spla.ArpackNoConvergence, spla.ArpackError):
        return None
    w, V = _sorted(w, V, True)
    norm = 0.0  # ||A|| is estimated only when the found eigenvalues are too small a scale
    rounds = m + 2
    # the m pairs last seen with good residuals while only ties have been added since
    certified = None

    def failed():
        return (*certified, True, True) if salvage and certified is not None else None

    for r in range(rounds):
        scale = max(float(np.abs(w).max()), norm, np.finfo(float).tiny)
        resid = np.linalg.norm(B(V) - V * w, axis=0)
        if not np.all(np.isfinite(w)):
            return failed()
        if resid.max() > RESIDUAL_RTOL * scale and not norm:
            norm = _norm_estimate(A, B, n, rng)
            scale = max(scale, norm)
        if resid.max() > RESIDUAL_RTOL * scale:
            return failed()
        k = V.shape[1]
        if k >= n - 2:
            return None  # nothing left to certify iteratively: the dense fallback decides
        wm = w[m - 1]
        tau = TIE_RTOL * scale
        try:
            t, U = _complement_top(B, V, wm - tau, scale, rng)
        except (spla.ArpackNoConvergence, spla.ArpackError):
            return failed()
        # a missed pair beyond the m-th means V[:, :m] is not the answer yet
        certified = None if (t > wm + tau).any() else (w[:m].copy(), V[:, :m].copy())
        # a complement eigenvalue beyond the m-th found one is a missed pair; one equal to
        # it (to tau) is a tie at the boundary, collected too so that the whole tied
        # eigenspace is known and its basis can be made canonical
        if t.size == 0:
            tied = bool(k > m and w[m] >= wm - tau)
            return w[:m], _canonical_ties(w, V, tau)[:, :m], tied, False
        if r == rounds - 1 and not (t > wm + tau).any():
            return w[:m], V[:, :m], True, False  # a tie too large to collect: not canonical
        # Rayleigh–Ritz on the found span plus the new directions
        Q, _ = np.linalg.qr(np.column_stack([V, U - V @ (V.T @ U)]))
        H = Q.T @ B(Q)
        theta, Y = sla.eigh((H + H.T) / 2.0, check_finite=False)
        w, V = _sorted(theta, Q @ Y, True)
    return None


def extreme_eigenvectors(
    A,
    m: int,
    *,
    which: str = "smallest",
    dense_limit: float = 1000,
    seed: int = 0,
    ncv: int | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """The ``m`` smallest or largest eigenpairs of a symmetric matrix or operator.

    Dense ``eigh`` (restricted to the wanted index range) when the order is at most
    ``dense_limit``; otherwise certified Lanczos (module docstring), which also accepts
    sparse matrices and ``LinearOperator``s, with a dense fallback up to
    :data:`DENSE_FALLBACK_LIMIT` and :class:`EigenSolverError` above. Eigenvalues are
    returned in increasing order (``which="smallest"``) or decreasing order
    (``which="largest"``); the Lanczos start vectors are seeded, so the result is
    deterministic. Inside a repeated eigenvalue the basis is arbitrary (solver-dependent).
    ``ncv``: ARPACK's Lanczos basis size for the first run (default ``max(2m + 1, 20)``).
    """
    res = _extreme(A, m, which, dense_limit, seed, ncv)
    return res.values, res.vectors


def _extreme(
    A, m: int, which: str, dense_limit: float, seed: int, ncv: int | None = None
) -> Eigenpairs:
    n = A.shape[0]
    largest = _wants_largest(n, m, which)
    if not (n <= dense_limit or m >= n - 2):
        # the dense fallback decides where it may; above its limit a tie that Lanczos could
        # not collect is returned flagged instead of raising
        found = _certified_lanczos(A, m, largest, seed, ncv, salvage=n > DENSE_FALLBACK_LIMIT)
        if found is not None:
            w, V, tied, salvaged = found
            if salvaged:
                warnings.warn(
                    f"the {m} {which} eigenpairs of a {n} x {n} operator lie in a repeated "
                    f"eigenvalue ({float(w[m - 1]):.6g}) whose eigenspace certified Lanczos "
                    "could not collect, and n > DENSE_FALLBACK_LIMIT forbids the dense "
                    "fallback: one of its many equally valid bases is returned",
                    RoundoffSolveWarning,
                    stacklevel=3,
                )
            return Eigenpairs(w if largest else -w, V, 1, tied)
        if n > DENSE_FALLBACK_LIMIT:
            raise EigenSolverError(
                f"the {m} {which} eigenpairs of a {n} × {n} operator failed the residual or "
                f"multiplicity check of certified Lanczos, and n > DENSE_FALLBACK_LIMIT = "
                f"{DENSE_FALLBACK_LIMIT} forbids the dense fallback"
            )
    M = _dense(A)
    k = min(m + 1, n)
    w, V = _dense_extreme(M, k, largest)
    scale = max(float(np.abs(w).max()), float(np.abs(M).sum(axis=1).max()), np.finfo(float).tiny)
    tied = bool(k > m and abs(w[m] - w[m - 1]) <= TIE_RTOL * scale)
    return Eigenpairs(w[:m], V[:, :m], 1, tied)


def graph_components(A) -> tuple[int, np.ndarray]:
    """Connected components of the sparsity pattern of a (symmetric) matrix: ``(count,
    labels)``, labels numbered in order of each component's first node."""
    n, labels = csgraph.connected_components(sp.csr_matrix(A), directed=False)
    return int(n), labels


#: ``solve(B, k, start)``: the ``k`` extreme pairs of a block ``B`` (a connected component),
#: in the order wanted, as ``(values, vectors)``
BlockSolver = Callable[[sp.csr_matrix, int, "np.ndarray | None"], tuple[np.ndarray, np.ndarray]]


def component_eigenpairs(
    A,
    m: int,
    *,
    which: str,
    trivial_weights: np.ndarray | None = None,
    trivial_value: float = 0.0,
    dense_limit: int = 1000,
    seed: int = 0,
    start: np.ndarray | None = None,
    solve: BlockSolver | None = None,
    check_ties: bool = True,
) -> Eigenpairs:
    """The ``m`` extreme eigenpairs of a sparse symmetric ``A``, one component at a time.

    ``trivial_weights`` ``g`` (optional): on every component ``C`` with ``g_C ≠ 0``,
    ``g_C / ||g_C||`` is an eigenvector of ``A`` with eigenvalue ``trivial_value``, the
    extreme one on the wanted side (``D − S``: ``g = 1``, ``0``, smallest;
    ``D^{-1/2} S D^{-1/2}``: ``g = √d``, ``1``, largest). It is used in closed form after a
    residual check (a failing check drops it: the block is then solved as it is).
    The other pairs come from ``solve(block, k, start_block)`` (default: the certified
    :func:`extreme_eigenvectors` with ``dense_limit`` and ``seed``), which is asked for
    one more pair than needed; its pair closest to the trivial vector is replaced by it.

    Order of the result: by eigenvalue; exact ties (the trivial pairs) by component size,
    larger first, then by first node. Nontrivial vectors have their largest-magnitude
    entry positive. ``start`` (``n × s``, e.g. the previous iteration's vectors) is passed
    to ``solve`` restricted to each component's rows. ``check_ties=False`` asks each block
    for exactly the pairs needed (no extra pair to see a tie at the boundary; for solvers
    in an inner loop whose cost grows with the block, e.g. LOBPCG) and reports no tie.
    """
    A = sp.csr_matrix(A)
    n = A.shape[0]
    largest = _wants_largest(n, m, which)
    sgn = 1.0 if largest else -1.0
    if solve is None:

        def solve(B, k, _start):
            return extreme_eigenvectors(B, k, which=which, dense_limit=dense_limit, seed=seed)

    n_comp, labels = graph_components(A)
    if n_comp == 1:
        groups = [np.arange(n)]
    else:
        order = np.argsort(labels, kind="stable")
        bounds = np.cumsum(np.bincount(labels, minlength=n_comp))[:-1]
        groups = np.split(order, bounds)
        groups.sort(key=lambda g: (-g.size, int(g[0])))
    # candidates: (sort key, component rank, position, nodes, vector, value)
    cand: list[tuple[float, int, int, np.ndarray, np.ndarray, float]] = []
    n_trivial = 0
    blocks = []
    for rank, nodes in enumerate(groups):
        B = A if n_comp == 1 else A[nodes][:, nodes]
        v = None
        if trivial_weights is not None:
            g = np.asarray(trivial_weights, dtype=np.float64)[nodes]
            if np.linalg.norm(g) > 0:
                g = g / np.linalg.norm(g)
                scale = max(float(abs(B).sum(axis=1).max()), abs(trivial_value), 1e-300)
                if np.linalg.norm(B @ g - trivial_value * g) <= RESIDUAL_RTOL * scale:
                    v = g
        if v is not None:
            cand.append((-sgn * trivial_value, rank, 0, nodes, v, float(trivial_value)))
            n_trivial += 1
        blocks.append((rank, nodes, B, v))
    need = m + int(check_ties) - n_trivial  # one more than needed: a tie at the boundary is seen
    if need > 0:
        for rank, nodes, B, v in blocks:
            nb = nodes.size
            k = min(need + (v is not None), nb)
            if k < 1 or (v is not None and nb == 1):
                continue
            if nb == 1:
                w, V = np.array([float(B[0, 0])]), np.ones((1, 1))
            else:
                st = None if start is None else np.asarray(start)[nodes]
                w, V = solve(B, k, st)
                w, V = np.asarray(w, dtype=np.float64), np.asarray(V, dtype=np.float64)
            if v is not None:
                drop = int(np.argmax(np.abs(v @ V)))
                keep = np.delete(np.arange(V.shape[1]), drop)
                w, V = w[keep], V[:, keep]
                V = V - np.outer(v, v @ V)
                V /= np.linalg.norm(V, axis=0)
            V = _fix_signs(V)
            for j in range(V.shape[1]):
                cand.append((-sgn * float(w[j]), rank, j + 1, nodes, V[:, j], float(w[j])))
    cand.sort(key=lambda c: (c[0], c[1], c[2]))
    chosen = cand[:m]
    if len(chosen) < m:
        raise EigenSolverError(f"found {len(chosen)} of the {m} eigenpairs asked for")
    values = np.array([c[5] for c in chosen])
    vectors = np.zeros((n, m))
    for j, c in enumerate(chosen):
        vectors[c[3], j] = c[4]
    scale = max(float(np.abs(values).max()), float(abs(A).sum(axis=1).max()), np.finfo(float).tiny)
    tied = len(cand) > m and abs(cand[m][5] - values[-1]) <= TIE_RTOL * scale
    return Eigenpairs(values, vectors, n_comp, bool(tied))
