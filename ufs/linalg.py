"""Shared linear-algebra kernels: ℓ2,0 row projection, orthogonal Procrustes,
leading singular vectors and deterministic orthonormal completion (extreme eigenpairs:
:mod:`ufs.eigen`, re-exported here).

Each is written once here and used by every solver that needs it.
"""

from __future__ import annotations

import warnings

import numpy as np
import scipy.linalg as sla

from .eigen import extreme_eigenvectors  # noqa: F401  (re-exported: written in ufs.eigen)
from .fit_warnings import RoundoffSolveWarning

__all__ = [
    "spd_solve",
    "floored_spd_solve",
    "FlooredSPDFactor",
    "MATLAB_EPS",
    "row_norms",
    "sign_split",
    "top_rows",
    "project_rows_l20",
    "procrustes",
    "thin_svd",
    "orthonormal_completion",
    "leading_right_singular_vectors",
    "extreme_eigenvectors",
    "l21_norm",
    "l2p_reweight",
    "project_rows_simplex",
]


#: MATLAB's ``eps`` (2.2e-16): the IRLS smoothing ``√(||w||² + eps)`` of the authors' codes
MATLAB_EPS = float(np.finfo(float).eps)


def row_norms(M: np.ndarray, squared: bool = False) -> np.ndarray:
    """Euclidean norm of each row of ``M``."""
    sq = np.einsum("ij,ij->i", M, M)
    return sq if squared else np.sqrt(sq)


def top_rows(scores: np.ndarray, h: int) -> np.ndarray:
    """Indices of the ``h`` largest ``scores``, largest first; ties go to the lower index."""
    scores = np.asarray(scores, dtype=np.float64)
    if h >= scores.shape[0]:
        return np.argsort(-scores, kind="stable")
    # argpartition is O(p); widen the candidate set to every score tied with the h-th.
    kth = np.partition(-scores, h - 1)[h - 1]
    cand = np.flatnonzero(-scores <= kth)
    return cand[np.argsort(-scores[cand], kind="stable")][:h]


def project_rows_l20(F: np.ndarray, h: int) -> tuple[np.ndarray, np.ndarray]:
    """Euclidean projection onto ``{W : ||W||_{2,0} <= h}`` (row sparsity).

    Keeps the ``h`` rows of largest ℓ2 norm and zeroes the rest (K-means UFS Eq. 26;
    DGUFS Algorithm 1 / Theorem 1). Returns ``(W, idx)`` with ``idx`` the kept rows in
    decreasing norm order.
    """
    idx = top_rows(row_norms(F, squared=True), h)
    W = np.zeros_like(F)
    W[idx] = F[idx]
    return W, idx


#: ``_polar_gram`` takes one pass when ``λ_min(HᵀH) ≥ _POLAR_ONE_PASS · λ_max`` (cond(H) ≤ 10)
_POLAR_ONE_PASS = 1e-2
#: ... and declines (SVD fallback) when the rotated columns are not orthogonal to this
#: (``||ŶᵀŶ − I||_F``): H rank-deficient, or cond(H) ≳ 1e5 for a generic spectrum (≳ 1e10
#: for the K-means UFS ADMM's: k large singular values, the other h − k nearly equal)
_POLAR_FTOL = 1e-4


def procrustes(H: np.ndarray, method: str = "auto") -> np.ndarray:
    """``argmax_U Tr(Uᵀ H)`` subject to ``UᵀU = I`` (orthogonal Procrustes).

    With the thin SVD ``H = P Σ Qᵀ`` the maximiser is the polar factor ``U = P Qᵀ =
    H (HᵀH)^{-1/2}``. ``method="svd"`` computes it from LAPACK's ``gesdd``;
    ``method="auto"`` (default) from the eigen-decomposition of the small Gram matrix
    (:func:`_polar_gram`, about 3-6 products of ``H``'s size instead of an SVD) and
    falls back to the SVD when that route declines (numerically rank-deficient ``H``).
    Both are backward stable; they agree to ``~eps·cond(H)``.
    """
    if method not in ("auto", "svd"):
        raise ValueError(f"method must be 'auto' or 'svd'; got {method!r}")
    if method == "auto":
        if H.shape[0] < H.shape[1]:  # wide: polar(H) = polar(Hᵀ)ᵀ
            U = _polar_gram(H.T)
            U = None if U is None else U.T
        else:
            U = _polar_gram(H)
        if U is not None:
            return U
    return _polar_svd(H)


def thin_svd(A: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The thin SVD ``A = U diag(s) Vᵀ`` as ``(U, s, Vᵀ)``, every dense SVD of the package.

    LAPACK's divide-and-conquer ``gesdd`` first (fast; the result is exactly scipy's
    default). It can fail to converge ("SVD did not converge") on badly scaled input —
    seen once in the benchmark, K-means UFS on leukemia — so the QR-iteration driver
    ``gesvd``, slower but robust, is the fallback: a valid SVD either way, so no flag.
    """
    try:
        return sla.svd(A, full_matrices=False, lapack_driver="gesdd", check_finite=False)
    except np.linalg.LinAlgError:
        return sla.svd(A, full_matrices=False, lapack_driver="gesvd", check_finite=False)


def _polar_svd(H: np.ndarray) -> np.ndarray:
    """``P Qᵀ`` from the thin SVD ``H = P Σ Qᵀ`` (:func:`thin_svd`)."""
    P, _, Qt = thin_svd(H)
    return P @ Qt


_SQRT_SERIES = (0.5, -0.125, 0.0625, -0.0390625)  # (1 + x)^{1/2} − 1
_INV_SQRT_SERIES = (-0.5, 0.375, -0.3125, 0.2734375)  # (1 + x)^{-1/2} − 1


def _polar_gram(H: np.ndarray) -> np.ndarray | None:
    """Polar factor ``H (HᵀH)^{-1/2}`` of a tall ``H`` (m × h, m ≥ h) without an SVD.

    1. ``HᵀH = Q Λ Qᵀ`` (``eigh``). If ``cond(HᵀH) ≤ 1/_POLAR_ONE_PASS`` (= 100) return
       ``H Q Λ^{-1/2} Qᵀ`` (error ``~eps·cond(H)²`` ≤ 1e-13).
    2. Otherwise the Gram has lost the small singular directions (its eigenvalues
       below ``eps·λ_max`` are noise), but ``Q`` still separates the scales: ``Y = HQ``
       has nearly orthogonal columns. With ``d`` their norms, ``Ŷ = Y D^{-1}`` and
       ``F = ŶᵀŶ − I`` (small, computed accurately), ``Ŷ = W S`` with ``W = Ŷ(I+F)^{-1/2}``
       orthonormal and ``S = (I+F)^{1/2}`` (binomial series), so
       ``polar(H) = W · polar(S D) · Qᵀ``. ``polar(SD)`` (h × h, ``SD`` = identity plus
       small times a diagonal) is found by Newton steps ``Ω ← Ω cay(K)``,
       ``k_ij = (t_ij d_j − t_ji d_i)/(d_i + d_j)`` with ``T = ΩᵀS − I`` (the first-order
       skew correction making ``ΩᵀSD`` symmetric; quadratic convergence).
       Rounding enters only through ``Y = HQ`` (a backward error ``~eps·||H||``), as
       for the SVD.
    ``||F||_F`` is about ``eps·cond(H)²`` capped by the relative spread of the small
    singular values (the Gram mixes eigenvectors only among nearly equal ones).
    Returns ``None`` (caller falls back to the SVD) when ``d_min ≤ eps·d_max`` or
    ``||F||_F > _POLAR_FTOL`` (= 1e-4): rank-deficient, or ill-conditioned with a
    spread-out small spectrum.
    """
    h = H.shape[1]
    if h == 0:
        return None
    lam, Q = sla.eigh(H.T @ H, overwrite_a=True, check_finite=False, driver="evd")
    if not lam[-1] > 0:
        return None
    if lam[0] >= _POLAR_ONE_PASS * lam[-1]:
        return H @ ((Q / np.sqrt(lam)) @ Q.T)
    Y = H @ Q
    F = Y.T @ Y  # Ŷ = Y D^{-1} is never formed: D^{-1} is folded into the h × h factors
    d = np.sqrt(F.diagonal())  # the column norms of Y, without another pass over it
    if not d.min() > MATLAB_EPS * d.max():
        return None
    F /= d
    F /= d[:, None]
    F.flat[:: h + 1] -= 1.0
    f = float(np.sqrt(np.dot(F.ravel(), F.ravel())))
    if not f <= _POLAR_FTOL:
        return None
    dfrac = d[:, None] / (d[:, None] + d)  # d_i / (d_i + d_j)
    if f <= 1e-8:
        # C = I − F/2 and Ω = I + K with k_ij = (F_ij/2)(d_j − d_i)/(d_i + d_j); dropping
        # F², F·K and K² (≤ f² ≤ 1e-16): C Ω = I − F ∘ d_i/(d_i + d_j)
        M = F * dfrac
        np.negative(M, out=M)
        M.flat[:: h + 1] += 1.0
    else:
        M = _polar_gram_correction(F, f, d, dfrac)
        if M is None:
            return None
    M /= d[:, None]
    return Y @ (M @ Q.T)


def _polar_gram_correction(F, f, d, dfrac):
    """``(I+F)^{-1/2} · polar((I+F)^{1/2} D)`` for ``||F||_F = f ≤ _POLAR_FTOL``."""
    h = F.shape[0]
    # C = (I+F)^{-1/2} and E = (I+F)^{1/2} − I, series truncated below 1e-17
    C = _INV_SQRT_SERIES[0] * F
    E = _SQRT_SERIES[0] * F
    Fj = F
    for j in range(1, len(_SQRT_SERIES)):
        if f ** (j + 1) < 1e-17:
            break
        Fj = Fj @ F
        C += _INV_SQRT_SERIES[j] * Fj
        E += _SQRT_SERIES[j] * Fj
    C.flat[:: h + 1] += 1.0
    # Ω = polar((I + E) D), Newton from Ω = I (T = E):
    # k_ij = (t_ij d_j − t_ji d_i)/(d_i + d_j) = t_ij (1 − dfrac_ij) − t_ji dfrac_ij
    Om = None
    T = E
    for _ in range(8):
        K = T - (T + T.T) * dfrac
        kn = float(np.sqrt(np.dot(K.ravel(), K.ravel())))
        if kn <= 1e-8:  # I + K is orthogonal to kn² ≤ 1e-16
            K.flat[:: h + 1] += 1.0
            R = K
        else:  # Cayley transform (I − K/2)^{-1}(I + K/2), orthogonal to rounding
            Ip = 0.5 * K
            Ip.flat[:: h + 1] += 1.0
            R = sla.solve(Ip.T, Ip, check_finite=False)  # (I − K/2) = (I + K/2)ᵀ
        Om = R if Om is None else Om @ R
        if kn <= 1e-8:
            return C @ Om
        T = Om.T @ E + Om.T
        T.flat[:: h + 1] -= 1.0
    return None


def orthonormal_completion(Q: np.ndarray, m: int) -> np.ndarray:
    """``m`` orthonormal columns orthogonal to the orthonormal columns of ``Q`` (p × r).

    Deterministic rule: take the coordinate axes ``e_j`` whose residual after projecting
    out ``span(Q)`` is longest (``1 - ||Q[j]||²``; ties to the lower ``j``), project them,
    and orthonormalise by Householder QR; an axis that turns out to be dependent is dropped
    and the next one in that order is tried. Costs ``O(p (r + m) m)``; no ``p × p`` matrix
    is formed.
    """
    p, r = Q.shape
    if r + m > p:
        raise ValueError(f"cannot complete {r} columns by {m} in dimension {p}")
    residual = 1.0 - row_norms(Q, squared=True)
    order = np.argsort(-residual, kind="stable")
    basis = Q
    out: list[np.ndarray] = []
    found = start = 0
    while found < m:
        take = order[start : start + m - found]
        start += take.size
        if take.size == 0:
            raise RuntimeError("orthonormal completion ran out of coordinate axes")
        E = np.zeros((p, take.size))
        E[take, np.arange(take.size)] = 1.0
        for _ in range(2):  # re-orthogonalise once for stability
            E -= basis @ (basis.T @ E)
        Qe, R = np.linalg.qr(E)
        Qe = Qe[:, np.abs(np.diag(R)) > 1e-8]
        out.append(Qe)
        basis = np.hstack([basis, Qe])
        found += Qe.shape[1]
    return np.hstack(out) if out else np.zeros((p, 0))


#: the Gram route of ``leading_right_singular_vectors(Z, m)`` needs ``σ_m² ≥ this · σ_1²``
_GRAM_SVD_RTOL = 1e-4


def leading_right_singular_vectors(
    Z: np.ndarray, m: int | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Singular values (decreasing) and right singular vectors (as columns, p × r) of ``Z``.

    ``m=None``: all of them (thin SVD, ``r = min(n, p)``). ``m`` given: at least the
    leading ``m``; when ``p ≤ n`` they come from ``eigh`` of the ``p × p`` Gram ``ZᵀZ``
    restricted to its top ``m`` eigenpairs (``r = m``; ~5× faster than the SVD at
    3500 × 2000), provided ``σ_m² ≥ 1e-4 σ_1²`` so that squaring the condition number
    costs at most a factor ``σ_1/σ_m ≤ 100`` in the accuracy of the vectors
    (``~eps·σ_1²/(σ_m² − σ_{m+1}²)``, against ``~eps·σ_1/(σ_m − σ_{m+1})`` for the SVD);
    otherwise (or ``p > n``) the thin SVD is used and all are returned.
    Signs are fixed so that the largest-magnitude entry of each vector is positive, so
    the output does not depend on the LAPACK build. Deterministic.
    """
    n, p = Z.shape
    V = None
    if m is not None and 1 <= m < p <= n:
        lam, Vg = sla.eigh(
            Z.T @ Z, subset_by_index=[p - m, p - 1], overwrite_a=True, check_finite=False
        )
        if lam[0] >= _GRAM_SVD_RTOL * lam[-1] > 0:
            s, V = np.sqrt(lam[::-1]), Vg[:, ::-1]
    if V is None:
        _, s, Vt = thin_svd(Z)
        V = Vt.T
    idx = np.argmax(np.abs(V), axis=0)
    signs = np.sign(V[idx, np.arange(V.shape[1])])
    signs[signs == 0] = 1.0
    return s, V * signs


def l21_norm(W: np.ndarray) -> float:
    """``||W||_{2,1} = Σ_i ||w_i||_2`` (sum of row norms)."""
    return float(row_norms(W).sum())


def l2p_reweight(W: np.ndarray, p: float = 1.0, eps: float = 1e-8) -> np.ndarray:
    """Diagonal of the re-weighting matrix for ``||W||_{2,p}^p`` (iteratively re-weighted
    least squares): ``g_i = (p/2) (||w_i||² + ε)^{(p−2)/2}`` (SPCAFS; ``p = 1`` gives the
    usual ℓ2,1 weight ``1 / (2 √(||w_i||² + ε))`` of UDFS, NDFS, RUFS, RSR, SOGFS).
    ``ε > 0`` keeps zero rows finite.
    """
    if not 0 < p <= 2:
        raise ValueError(f"p must be in (0, 2]; got {p}")
    return (p / 2.0) * (row_norms(W, squared=True) + eps) ** ((p - 2.0) / 2.0)


def project_rows_simplex(V: np.ndarray) -> np.ndarray:
    """Euclidean projection of each row onto the probability simplex
    ``{a : a ≥ 0, Σ a = 1}`` (sort-based, vectorised over rows; Duchi et al. 2008)."""
    V = np.atleast_2d(np.asarray(V, dtype=np.float64))
    n, m = V.shape
    U = -np.sort(-V, axis=1)
    css = np.cumsum(U, axis=1) - 1.0
    ind = np.arange(1, m + 1)
    cond = U - css / ind > 0
    rho = m - 1 - np.argmax(cond[:, ::-1], axis=1)
    theta = css[np.arange(n), rho] / (rho + 1.0)
    return np.maximum(V - theta[:, None], 0.0)


def sign_split(M: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(M⁺, M⁻)`` with ``M = M⁺ − M⁻`` and both ≥ 0 entry-wise (``½(|M| ± M)``): the
    numerator/denominator split of signed multiplicative updates."""
    return np.maximum(M, 0.0), np.maximum(-M, 0.0)


class FlooredSPDFactor:
    """A factorisation of a symmetric ``M`` known to satisfy ``M ⪰ floor·I`` (``floor > 0``):
    factor once, :meth:`solve` many right-hand sides.

    Cholesky first (a solve is then exactly ``cho_solve(cho_factor(M, lower), B)``). When
    round-off has pushed ``M`` out of the positive definite cone (a ridge of ``1e-12``
    beside a Gram matrix of norm ``1e6``, say), the factorisation fails; then
    ``M = Q Λ Qᵀ`` (``eigh``) with ``Λ`` raised to the bound ``floor`` that the exact ``M``
    satisfies, ``M⁻¹B ≈ Q max(Λ, floor)⁻¹ Qᵀ B``, and a
    :class:`~ufs.base.RoundoffSolveWarning` says so: the answer is then decided by
    round-off, and the workflow marks the fit ``degenerate`` (◊,
    :func:`ufs.pipeline.status.fit_status`). ``floored`` says which path was taken.
    """

    def __init__(self, M: np.ndarray, floor: float, *, lower: bool = False):
        self.floored = False
        try:
            self._cho = sla.cho_factor(M, lower=lower, check_finite=False)
            return
        except np.linalg.LinAlgError:
            pass
        lam, self._Q = np.linalg.eigh(0.5 * (M + M.T))
        raised = int(np.count_nonzero(lam < floor))
        warnings.warn(
            f"Cholesky failed on a {M.shape[0]}x{M.shape[0]} system that is positive definite "
            f"in exact arithmetic (smallest eigenvalue {lam[0]:.3g}, bound {floor:.3g}); "
            f"solved by eigendecomposition with {raised} eigenvalue(s) raised to the bound",
            RoundoffSolveWarning,
            stacklevel=3,
        )
        self.floored = True
        self._lam = np.maximum(lam, floor)

    def solve(self, B: np.ndarray) -> np.ndarray:
        """``M⁻¹B`` for a vector or matrix ``B``."""
        if not self.floored:
            return sla.cho_solve(self._cho, B, check_finite=False)
        QtB = self._Q.T @ B
        return self._Q @ (QtB / (self._lam[:, None] if QtB.ndim == 2 else self._lam))


def floored_spd_solve(
    M: np.ndarray, B: np.ndarray, floor: float, *, lower: bool = False
) -> np.ndarray:
    """``M⁻¹B`` for a symmetric ``M ⪰ floor·I``: one :class:`FlooredSPDFactor` and one solve
    (Cholesky, or, when round-off defeats it, a floored eigendecomposition and a warning)."""
    return FlooredSPDFactor(M, floor, lower=lower).solve(B)


def spd_solve(
    A, B: np.ndarray, *, tol: float = 1e-12, maxiter: int = 1000
) -> tuple[np.ndarray, bool]:
    """``A⁻¹B`` for a sparse symmetric positive definite ``A`` by conjugate gradients with
    a Jacobi preconditioner, all columns of ``B`` at once (one sparse product per
    iteration for the whole block, each column its own step sizes).

    For well-conditioned systems such as ``L + λI`` (a graph Laplacian plus a ridge),
    where a sparse LU of a kNN-graph Laplacian fills in badly at large n. Returns
    ``(X, converged)``: every column's residual ``‖b − Ax‖ ≤ tol·‖b‖`` within
    ``maxiter`` iterations (a column with ``b = 0`` gives ``x = 0``).
    """
    B = np.asarray(B, dtype=np.float64)
    vec = B.ndim == 1
    B = B.reshape(B.shape[0], -1)
    dinv = 1.0 / np.asarray(A.diagonal(), dtype=np.float64)
    X = np.zeros_like(B)
    R = B.copy()
    Z = dinv[:, None] * R
    P = Z.copy()
    rz = np.einsum("ij,ij->j", R, Z)
    bnorm = np.linalg.norm(B, axis=0)
    goal = tol * np.where(bnorm > 0, bnorm, 1.0)
    converged = False
    for _ in range(int(maxiter)):
        if np.all(np.linalg.norm(R, axis=0) <= goal):
            converged = True
            break
        AP = A @ P
        pAp = np.einsum("ij,ij->j", P, AP)
        alpha = np.divide(rz, pAp, out=np.zeros_like(rz), where=pAp > 0)
        X += P * alpha
        R -= AP * alpha
        Z = dinv[:, None] * R
        rz_new = np.einsum("ij,ij->j", R, Z)
        beta = np.divide(rz_new, rz, out=np.zeros_like(rz), where=rz > 0)
        P = Z + P * beta
        rz = rz_new
    else:
        converged = bool(np.all(np.linalg.norm(R, axis=0) <= goal))
    return (X.ravel() if vec else X), converged
