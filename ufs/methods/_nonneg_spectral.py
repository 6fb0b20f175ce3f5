"""Private kernels shared by NDFS, RUFS and EUFS (non-negative spectral analysis +
ℓ2,1 sparse regression; K-means UFS paper ``kmeans_ufs.md`` Eqs. 33-35).

Nothing here forms a dense ``n × n`` matrix: the graph stays sparse and every
``(XᵀRX + B)^{-1}`` is applied through a ``min(n, p)``-sized factorisation.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from sklearn.cluster import KMeans
from sklearn.utils import check_random_state

from ..graph import laplacian
from ..linalg import floored_spd_solve, row_norms

__all__ = [
    "GRID",
    "normalized_laplacian_split",
    "kmeans_indicator",
    "ridge_solve",
    "row_shrink",
    "multiplicative_step",
    "orth_residual",
    "check_positive",
]

#: ``{10^-6, 10^-4, ..., 10^4, 10^6}`` — the grid of NDFS (Li et al. 2012), of the
#: K-means UFS paper §V-B and of DGUFS's settings.
GRID = [1e-6, 1e-4, 1e-2, 1.0, 1e2, 1e4, 1e6]

_TINY = 1e-12


def check_positive(**params: float) -> None:
    for name, value in params.items():
        if not float(value) > 0:
            raise ValueError(f"{name} must be > 0; got {value}")


def normalized_laplacian_split(S) -> tuple[sp.csr_matrix, sp.csr_matrix, np.ndarray]:
    """``L̂ = D^{-1/2}(D − S)D^{-1/2}`` from :func:`ufs.graph.laplacian` and its split
    ``L̂ = diag(m) − A`` with ``A = D^{-1/2} S D^{-1/2} ≥ 0`` (entry-wise) and ``m`` the
    indicator of non-isolated nodes. Multiplicative updates put ``diag(m) F`` in the
    denominator and ``A F`` in the numerator. All sparse."""
    L = laplacian(S, normalized=True)
    m = np.asarray(L.diagonal()).copy()
    A = (sp.diags(m) - L).tocsr()
    A.eliminate_zeros()
    return L, A, m


def kmeans_indicator(
    X: np.ndarray, k: int, random_state, offset: float = 0.2, n_init: int = 10
) -> np.ndarray:
    """``n × k`` cluster indicator of k-means on ``X`` (seeded) plus ``offset``.

    Li et al.'s NDFS code initialises ``F`` from k-means labels as ``Y + 0.2``: a
    multiplicative update can never move an entry away from exactly 0, so the offset
    keeps every entry free to move."""
    rs = check_random_state(random_state)
    seed = int(rs.randint(np.iinfo(np.int32).max))
    labels = KMeans(n_clusters=k, n_init=n_init, random_state=seed).fit_predict(X)
    F = np.full((X.shape[0], k), float(offset))
    F[np.arange(X.shape[0]), labels] += 1.0
    return F


def ridge_solve(
    X: np.ndarray,
    b: np.ndarray,
    Y: np.ndarray,
    r: np.ndarray | None = None,
    *,
    gram: np.ndarray | None = None,
) -> np.ndarray:
    """``(Xᵀ R X + diag(b))^{-1} Xᵀ R Y`` with ``R = diag(r)`` (``r = 1`` if None), ``b > 0``.

    ``p ≤ n``: Cholesky of the ``p × p`` matrix; ``gram = XᵀX`` may be passed (with
    ``r = None``) by iterations whose ``X`` does not change, so it is formed once.
    ``p > n``: Woodbury, ``B^{-1}Xᵀ(R^{-1} + X B^{-1} Xᵀ)^{-1} Y`` with an ``n × n``
    system — only when ``n < p``, so no matrix larger than ``min(n, p)²`` is ever formed
    (``gram`` is ignored). Both systems are solved by
    :func:`ufs.linalg.floored_spd_solve` with the bound they satisfy exactly (``min b``,
    ``min 1/r``): a ridge far below the Gram matrix's scale (RUFS at α/β = 1e12) can
    defeat Cholesky by round-off.
    """
    n, p = X.shape
    if p <= n:
        Xr = X if r is None else X * r[:, None]
        G = gram.copy() if gram is not None and r is None else Xr.T @ X
        G[np.diag_indices_from(G)] += b
        return floored_spd_solve(G, Xr.T @ Y, float(np.min(b)))
    binv = 1.0 / b
    K = (X * binv[None, :]) @ X.T
    rinv = 1.0 if r is None else 1.0 / r
    K[np.diag_indices_from(K)] += rinv
    return binv[:, None] * (X.T @ floored_spd_solve(K, Y, float(np.min(rinv))))


def row_shrink(M: np.ndarray, tau: float) -> np.ndarray:
    """Proximal operator of ``τ||·||_{2,1}``: each row scaled by ``max(1 − τ/||m_i||, 0)``."""
    nr = row_norms(M)
    scale = np.maximum(1.0 - tau / np.maximum(nr, _TINY), 0.0)
    return M * scale[:, None]


def multiplicative_step(
    F: np.ndarray, num: np.ndarray, den: np.ndarray, *, power: float = 1.0
) -> np.ndarray:
    """``F ⊙ (num / den)^power`` for entry-wise non-negative ``num`` and ``den`` (the
    negative and positive parts of the gradient). ``den`` is floored at ``1e-12`` (the
    usual ``+eps`` guard of the original codes), so ``F ≥ 0`` is preserved exactly."""
    ratio = num / np.maximum(den, _TINY)
    return F * (ratio if power == 1.0 else ratio**power)


def orth_residual(F: np.ndarray) -> float:
    """``||FᵀF − I||_F²``."""
    G = F.T @ F
    G[np.diag_indices_from(G)] -= 1.0
    return float(np.sum(G * G))
