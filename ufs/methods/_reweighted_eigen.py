"""Re-weighted eigen iteration shared by SPCAFS and UDFS (private kernel).

Problem (both papers; ``W ∈ R^{d×m}``, features as rows)::

    min_W  Tr(Wᵀ M W) + γ Σ_i (||w_i||² + ε)^{p/2}    s.t.  WᵀW = I         (SPCAFS Eq. 23)

with ``M = −S_t`` (SPCAFS) or ``M = Xᵀ L X`` (UDFS Eq. 12 with ``p = 1``). Iteration
(SPCAFS Algorithm 1, UDFS Algorithm 1): start from ``G = I``; then repeat

1. ``W`` = eigenvectors of ``M + γ G`` for the ``m`` smallest eigenvalues   (Eq. 27)
2. ``G = diag(g)``, ``g_i = (p/2)(||w_i||² + ε)^{(p−2)/2}``                 (Eq. 26)

Each step cannot increase the ε-smoothed objective above (SPCAFS Theorem 2, which
needs the *global* minimiser of step 1, i.e. the exact ``m`` smallest eigenvectors).

Two exact eigen-solvers:

* ``"dense"``: ``M`` is formed (``d × d``) and step 1 is LAPACK ``eigh`` restricted to
  the ``m`` smallest (via :func:`ufs.linalg.extreme_eigenvectors`). ``O(d³)`` per step.
* ``"lowrank"``: ``M = B diag(w) Bᵀ`` with ``B`` orthonormal (``d × r``, ``r ≤ n``);
  ``M`` is never formed. ``A = γ diag(g) + M`` is diagonal-plus-rank-``r``, so for a
  shift ``σ`` below the spectrum, ``(A − σI)⁻¹`` is applied exactly in ``O(dr)`` by the
  Woodbury identity (with ``U = B |w|^{1/2}``, ``J = sign(w)``, ``D' = γ g − σ``)::

      (D' + U J Uᵀ)⁻¹ = D'⁻¹ − D'⁻¹ U K⁻¹ Uᵀ D'⁻¹,    K = J + Uᵀ D'⁻¹ U   (r × r)

  and Lanczos (ARPACK ``eigsh``) on this operator finds its ``m`` largest eigenvalues
  ``1/(λ_j − σ)``, i.e. the ``m`` smallest of ``A``, to machine precision. Shift-invert
  is used (not plain Lanczos on ``A``) because ``A``'s spectrum is very wide: weights of
  vanishing rows reach ``γ (p/2) ε^{(p−2)/2}`` (5·10³ γ for ``p = 1``, ``ε = 10⁻⁸``), so
  plain Lanczos for the smallest eigenvalues converges slowly, whereas after the inversion
  those huge eigenvalues collapse to ≈ 0. ``σ = min_i γ g_i + min(0, min w) − δ`` is a
  certified lower bound (Weyl, as ``B`` is orthonormal); we additionally *verify*
  ``A − σI ≻ 0`` by Haynsworth inertia additivity: ``A − σI ≻ 0`` iff ``K`` has exactly
  ``#{w < 0}`` negative eigenvalues. Cost per step ``O(d r² + r³)`` set-up plus
  ``O(d r)`` per Lanczos matrix-vector product — linear in ``d``.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import scipy.sparse.linalg as spla
from sklearn.exceptions import ConvergenceWarning

from ..base import Selection
from ..linalg import extreme_eigenvectors, l2p_reweight, row_norms, thin_svd, top_rows

__all__ = ["LowRankSym", "ReweightedEigenResult", "reweighted_eigen", "smoothed_objective"]


@dataclass(frozen=True)
class LowRankSym:
    """Symmetric ``M = B diag(w) Bᵀ`` with orthonormal columns ``B`` (``d × r``)."""

    B: np.ndarray
    w: np.ndarray

    @property
    def shape(self) -> tuple[int, int]:
        d = self.B.shape[0]
        return d, d

    def matmat(self, V: np.ndarray) -> np.ndarray:
        return self.B @ (self.w[:, None] * (self.B.T @ V))

    def toarray(self) -> np.ndarray:
        return (self.B * self.w) @ self.B.T

    @classmethod
    def from_factor(cls, F: np.ndarray, core: np.ndarray, rtol: float | None = None):
        """``M = F core Fᵀ`` (``F``: ``d × q``, ``core`` symmetric ``q × q``) in the
        orthonormal form: thin SVD ``F = P Σ Qᵀ``, then the eigen-decomposition
        ``Σ Qᵀ core Q Σ = E diag(w) Eᵀ`` gives ``B = P E``. Directions with
        ``|w| ≤ rtol · max|w|`` are dropped (numerically zero)."""
        P, s, Qt = thin_svd(F)
        tol_s = (s[0] if s.size else 0.0) * max(F.shape) * np.finfo(float).eps
        keep = s > tol_s
        P, s, Qt = P[:, keep], s[keep], Qt[keep]
        C = (s[:, None] * (Qt @ core @ Qt.T)) * s[None, :]
        w, E = np.linalg.eigh((C + C.T) / 2.0)
        if rtol is None:
            rtol = max(F.shape) * np.finfo(float).eps
        big = np.abs(w) > rtol * (np.abs(w).max() if w.size else 0.0)
        return cls(B=P @ E[:, big], w=w[big])


@dataclass
class ReweightedEigenResult:
    W: np.ndarray  # d × m, orthonormal columns
    objective: np.ndarray  # smoothed objective after every W-update
    n_iter: int
    converged: bool
    eigenvalues: np.ndarray  # the m smallest eigenvalues of M + γG at the last step


def _quad_trace(M, W: np.ndarray) -> float:
    """``Tr(Wᵀ M W)`` for a dense ``M`` or a :class:`LowRankSym`."""
    if isinstance(M, LowRankSym):
        Y = M.B.T @ W
        return float(np.sum(M.w[:, None] * Y * Y))
    return float(np.sum(W * (M @ W)))


def smoothed_objective(M, W: np.ndarray, gamma: float, p: float, eps: float) -> float:
    """``Tr(WᵀMW) + γ Σ_i (||w_i||² + ε)^{p/2}`` (SPCAFS Eq. 23)."""
    reg = np.sum((row_norms(W, squared=True) + eps) ** (p / 2.0))
    return _quad_trace(M, W) + gamma * float(reg)


def _smallest_lowrank(M: LowRankSym, diag: np.ndarray, m: int, seed: int):
    """``m`` smallest eigenpairs of ``diag(diag) + M`` by shift-invert Lanczos (Woodbury)."""
    d = diag.shape[0]
    scale = max(float(np.max(np.abs(diag))), float(np.max(np.abs(M.w))) if M.w.size else 0.0)
    lower = float(diag.min()) + min(0.0, float(M.w.min()) if M.w.size else 0.0)
    sigma = lower - 1e-6 * max(scale, 1.0)
    U = M.B * np.sqrt(np.abs(M.w))
    J = np.sign(M.w)
    Dp = diag - sigma  # > 0
    Dinv = 1.0 / Dp
    K = np.diag(J) + U.T @ (Dinv[:, None] * U)
    mu, Q = np.linalg.eigh((K + K.T) / 2.0)
    if int(np.sum(mu < 0)) != int(np.sum(J < 0)) or np.any(mu == 0):
        raise RuntimeError("shift is not below the spectrum (inertia check failed)")
    DU = Dinv[:, None] * U

    def solve(v: np.ndarray) -> np.ndarray:
        v = v.reshape(d, -1)
        t = Dinv[:, None] * v
        return t - DU @ (Q @ ((Q.T @ (U.T @ t)) / mu[:, None]))

    op = spla.LinearOperator((d, d), matvec=solve, matmat=solve, dtype=np.float64)
    # certified Lanczos: an eigenvalue repeated (a collapsed fit's equal row weights) is found
    # in full
    theta, V = extreme_eigenvectors(op, m, which="largest", dense_limit=0, seed=seed)
    lam = sigma + 1.0 / theta
    order = np.argsort(lam)
    V = V[:, order]
    # one Rayleigh-Ritz refinement on the exact A restores full accuracy of the basis
    V, _ = np.linalg.qr(V)
    AV = diag[:, None] * V + M.matmat(V)
    w_ritz, Y = np.linalg.eigh((V.T @ AV + AV.T @ V) / 2.0)
    return w_ritz, V @ Y


def _smallest(M, diag: np.ndarray, m: int, seed: int):
    if isinstance(M, LowRankSym):
        if m < diag.shape[0] - 1:
            return _smallest_lowrank(M, diag, m, seed)
        M = M.toarray()
    A = M.copy()
    A[np.diag_indices_from(A)] += diag
    return extreme_eigenvectors(A, m, which="smallest", dense_limit=np.inf)


def reweighted_eigen(
    M,
    m: int,
    *,
    gamma: float,
    p: float = 1.0,
    eps: float = 1e-8,
    max_iter: int = 100,
    tol: float = 1e-6,
    callback=None,
    seed: int = 0,
    name: str = "re-weighted eigen iteration",
) -> ReweightedEigenResult:
    """Run the iteration in the module docstring.

    ``M``: dense symmetric ``d × d`` array (``"dense"`` solver) or :class:`LowRankSym`
    (``"lowrank"`` solver). Stops when the relative decrease of the smoothed objective
    is at most ``tol`` (``|f_{t−1} − f_t| ≤ tol · max(|f_t|, |f_{t−1}|)``) or after
    ``max_iter`` W-updates (then a :class:`ConvergenceWarning` is issued). ``callback``
    is called as ``callback(t, W=W, g=g, objective=f_t)`` after every W-update.
    """
    if not gamma > 0:
        raise ValueError(f"gamma must be > 0; got {gamma}")
    if not 0 < p <= 1:
        raise ValueError(f"p must be in (0, 1]; got {p}")
    if not eps > 0:
        raise ValueError(f"eps must be > 0; got {eps}")
    if int(max_iter) < 1:
        raise ValueError(f"max_iter must be >= 1; got {max_iter}")
    d = M.shape[0]
    if not 1 <= m <= d:
        raise ValueError(f"need 1 <= m <= n_features = {d}; got m={m}")
    g = np.ones(d)  # Algorithm 1 line 1: G = I
    objective: list[float] = []
    converged = False
    W = lam = None
    it = 0
    for it in range(1, int(max_iter) + 1):
        lam, W = _smallest(M, gamma * g, m, seed)  # Eq. (27)
        g = l2p_reweight(W, p=p, eps=eps)  # Eq. (26)
        f = smoothed_objective(M, W, gamma, p, eps)
        objective.append(f)
        if callback is not None:
            callback(it, W=W, g=g, objective=f)
        if it >= 2:
            prev = objective[-2]
            if abs(prev - f) <= tol * max(abs(prev), abs(f), np.finfo(float).tiny):
                converged = True
                break
    if not converged:
        warnings.warn(
            f"{name} did not converge in {max_iter} iterations "
            f"(last relative change {abs(objective[-2] - objective[-1]) / max(abs(objective[-1]), 1e-300):.2e})"
            if len(objective) >= 2
            else f"{name} stopped after {max_iter} iteration(s)",
            ConvergenceWarning,
            stacklevel=3,
        )
    return ReweightedEigenResult(
        W=W, objective=np.asarray(objective), n_iter=it, converged=converged, eigenvalues=lam
    )


def store_ranking(est, res: ReweightedEigenResult, solver: str) -> Selection:
    """Record a finished iteration on the estimator and rank features by ``||w_i||``."""
    est.solver_ = solver
    est.W_ = res.W
    est.objective_ = res.objective
    est.n_iter_ = res.n_iter
    est.converged_ = res.converged
    scores = row_norms(res.W)
    return Selection(order=top_rows(scores, res.W.shape[0]), scores=scores)
