"""The leading eigenpairs of a graph's normalised affinity ``D^{-1/2} S D^{-1/2}``
(eigenvalues ``1 − λ`` of the normalised Laplacian), with the trivial vector first.

On every connected component ``D^{1/2} 1_C`` is an eigenvector with eigenvalue 1; the
solver (:func:`ufs.eigen.component_eigenpairs`) builds those in closed form. The trivial
vector of the whole graph, ``ξ_1 = D^{1/2} 1 / ‖D^{1/2} 1‖``, is then a combination of
them, and the rest of the eigenvalue-1 block (one more vector per further component, or a
connected graph's ``λ_2`` below 1e-9) is taken as an orthonormal basis of the block's
complement of ``ξ_1`` (an SVD of the block with ``ξ_1`` projected out). A QR of
``[ξ_1, block]`` would not do: when the block's first vector *is* ``ξ_1`` its second QR
column is round-off, not an eigenvector.

MCFS's embedding (``ufs.methods.mcfs.spectral_embedding``) has its own copy, with the QR:
moving it here changes MCFS's code version, so it moves with the next regeneration of the
benchmark.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..eigen import component_eigenpairs
from ..linalg import thin_svd

__all__ = ["normalized_affinity_pairs"]

#: the eigenvalue-1 block: within this of 1
BLOCK_TOL = 1e-9


def normalized_affinity_pairs(
    S, m: int, d: np.ndarray, *, seed: int = 0, dense_limit: int = 200
) -> tuple[np.ndarray, np.ndarray, bool]:
    """The ``m`` largest eigenpairs ``(w, U)`` of ``D^{-1/2} S D^{-1/2}`` (``d``: the
    degrees), ``w`` decreasing and ``U[:, 0] = ξ_1``, and whether the ``m``-th eigenvalue
    is repeated beyond the ``m`` computed (module docstring)."""
    with np.errstate(divide="ignore"):
        dmh = np.where(d > 0, 1.0 / np.sqrt(d), 0.0)
    Dm = sp.diags(dmh)
    M = (Dm @ sp.csr_matrix(S) @ Dm).tocsr()
    res = component_eigenpairs(
        M,
        m,
        which="largest",
        trivial_weights=np.sqrt(d),
        trivial_value=1.0,
        dense_limit=dense_limit,
        seed=seed,
    )
    w, U = res.values, res.vectors.copy()
    u0 = np.sqrt(d) / np.linalg.norm(np.sqrt(d))
    b = int(np.sum(w > w[0] - BLOCK_TOL))
    if b > 1:
        block = U[:, :b] - np.outer(u0, u0 @ U[:, :b])
        left, _, _ = thin_svd(block)
        U[:, 1:b] = left[:, : b - 1]
    U[:, 0] = u0
    return w, U, bool(res.tied_at_boundary)
