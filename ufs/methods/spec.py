"""SPEC, spectral feature selection (Zhao & Liu, "Spectral feature selection for
supervised and unsupervised learning", ICML 2007).

Notation of the paper (its §3; the summary ``papers/beyond_the_seeds.md`` §1): a sample similarity ``S`` (n × n), ``D = diag(S 1)``, the
normalised Laplacian ``𝓛 = D^{-1/2} (D − S) D^{-1/2}`` with eigenpairs ``(λ_j, ξ_j)``,
``0 = λ_1 ≤ … ≤ λ_n ≤ 2`` and ``ξ_1 = D^{1/2} 1 / ‖D^{1/2} 1‖``. A feature ``f`` (a column
of ``X``) is normalised as ``f̂ = D^{1/2} f / ‖D^{1/2} f‖`` and expanded as
``α_j = f̂ᵀ ξ_j``. The three ranking functions::

    φ1(f) = f̂ᵀ 𝓛 f̂ = Σ_j α_j² λ_j               small is good
    φ2(f) = φ1(f) / (1 − α_1²)                    small is good
    φ3(f) = Σ_{j=2}^{k} (2 − λ_j) α_j²            large is good

How they are computed here (nothing ``n × n`` is dense, no full eigendecomposition):

* ``φ1 = fᵀ (D − S) f / fᵀ D f`` (substitute ``f̂``): one sparse product per feature block.
* ``φ2``: ``α_1² = (1ᵀ D f)² / (fᵀ D f · 1ᵀ D 1)``, so ``φ2 = fᵀ L f / (fᵀ D f − (1ᵀ D
  f)² / 1ᵀ D 1)`` — the Laplacian Score of He, Cai & Niyogi (their Eq. 5, centred ``f̃``,
  ``L 1 = 0``) on the same graph. It is computed by
  :func:`ufs.methods.laplacian_score.laplacian_scores`, the one implementation of that
  formula (a test checks the identity against the eigen-expansion).
* ``φ3``: the ``k`` largest eigenpairs of ``D^{-1/2} S D^{-1/2}`` (eigenvalues ``1 − λ_j``),
  by :func:`ufs.methods._spectral.normalized_affinity_pairs`, ``ξ_1`` in closed form. On
  a disconnected graph (or a connected one with ``λ_2`` below 1e-9) ``λ = 0`` is
  repeated: ``ξ_2 … ξ_b`` are then an orthonormal basis of the block's complement of
  ``ξ_1`` (an SVD of the block with ``ξ_1`` projected out), so only ``ξ_1`` is dropped. When the
  ``k``-th eigenvalue is repeated beyond the ``k`` computed (``Eigenpairs.
  tied_at_boundary``), ``φ3`` depends on which basis of that eigenspace is taken: the fit
  says so with :class:`~ufs.fit_warnings.RoundoffSolveWarning` (marked degenerate).

Choices the paper leaves open, and scikit-feature's reading:

* The graph: the paper uses an RBF kernel over all samples; here it is the shared kNN
  heat-kernel graph (:mod:`ufs.graph`, no self-loops), as for every graph method.
  :func:`spec_scores` accepts any affinity, dense or sparse, which is how the parity test
  feeds it scikit-feature's ``rbf_kernel(X, gamma=1)``.
* ``k`` of ``φ3``: the number of clusters ``c`` (the paper ties ``k`` to the number of
  clusters), i.e. the ``c − 1`` leading non-trivial eigenvectors.
* The order. The paper's: ascending ``φ1``, ``φ2``, descending ``φ3``. scikit-feature's
  ``SPEC.feature_ranking`` sorts the other way round for each style (``φ1``/``φ2``
  descending, ``φ3`` ascending), while its own sentinel for a zero feature (1000 for
  ``φ1``/``φ2``, −1000 for ``φ3``) is the *worst* value only in the paper's order. The
  paper's order is the default; ``order="skfeature"`` reproduces scikit-feature's.
* A feature with ``fᵀ D f = 0`` up to round-off (zero wherever the graph has edges) has
  no score: it is ranked last (``φ1``, ``φ2`` = +inf; ``φ3`` = −inf).
* The label-free default is ``φ3``: on the shared graph ``φ2`` *is* the Laplacian Score
  (a method the benchmark already has), and ``φ1`` ignores how much of a feature is its
  mean over the graph (the trivial direction ``ξ_1``).
"""

from __future__ import annotations

import warnings

import numpy as np
import scipy.sparse as sp

from ..base import Selection, UFSSelector
from ..fit_warnings import DegenerateFitWarning, RoundoffSolveWarning
from ..graph import degree
from ._spectral import normalized_affinity_pairs
from .laplacian_score import laplacian_scores

__all__ = ["SPEC", "spec_scores", "STYLES", "ORDERS"]

#: the paper's three ranking functions
STYLES = ("phi1", "phi2", "phi3")
#: ``paper``: small φ1/φ2 and large φ3 first; ``skfeature``: scikit-feature's reverse
ORDERS = ("paper", "skfeature")
#: order up to which φ3's eigenpairs come from a dense ``eigh`` (per component)
DENSE_LIMIT = 200


def _degenerate(den: np.ndarray, d: np.ndarray, X: np.ndarray) -> np.ndarray:
    """``fᵀ D f`` zero up to the rounding of its own terms."""
    scale = float(d.sum()) * (16 * np.finfo(float).eps * np.max(np.abs(X), axis=0, initial=0.0))
    return den <= scale**2


def _phi1(X: np.ndarray, S, d: np.ndarray) -> np.ndarray:
    den = np.einsum("ij,ij->j", d[:, None] * X, X)  # fᵀ D f
    num = den - np.einsum("ij,ij->j", X, np.asarray(S @ X))  # fᵀ (D − S) f
    with np.errstate(divide="ignore", invalid="ignore"):
        phi = np.maximum(num / den, 0.0)  # 𝓛 is PSD: clip round-off below 0
    return np.where(_degenerate(den, d, X), np.inf, phi)


def _phi3(X: np.ndarray, S, d: np.ndarray, k: int, seed: int) -> tuple[np.ndarray, bool]:
    n = d.shape[0]
    if not 1 <= k <= n - 1:
        raise ValueError(f"phi3 needs 1 <= k <= n_samples - 1 = {n - 1}; got k={k}")
    if k == 1:  # Σ_{j=2}^{1}: no eigenvector, every score 0 (the estimator says so)
        return np.zeros(X.shape[1]), False
    w, U, tied = normalized_affinity_pairs(S, k, d, seed=seed, dense_limit=DENSE_LIMIT)
    lam = 1.0 - w[1:]
    Fh = np.sqrt(d)[:, None] * X  # D^{1/2} f, per column
    norm2 = np.einsum("ij,ij->j", Fh, Fh)
    alpha2 = (U[:, 1:].T @ Fh) ** 2  # (k − 1) × p, times ‖D^{1/2} f‖²
    with np.errstate(divide="ignore", invalid="ignore"):
        phi = ((2.0 - lam)[:, None] * alpha2).sum(axis=0) / norm2
    return np.where(_degenerate(norm2, d, X), -np.inf, phi), tied


def spec_scores(
    X: np.ndarray, S, style: str = "phi3", *, k: int | None = None, seed: int = 0
) -> tuple[np.ndarray, bool]:
    """SPEC's ranking function ``style`` (module docstring) of every column of
    ``X`` (n × p) on the affinity ``S`` (sparse or dense, symmetric, non-negative).
    Returns ``(phi, tied)``: ``phi`` the paper's values (small is good for ``phi1``,
    ``phi2``; large for ``phi3``; a feature without a score is ±inf, ranked last) and
    ``tied`` whether ``phi3``'s ``k``-th eigenvalue is repeated beyond the ``k`` computed
    (the score then depends on the basis chosen in that eigenspace)."""
    if style not in STYLES:
        raise ValueError(f"style must be one of {STYLES}; got {style!r}")
    X = np.asarray(X, dtype=np.float64)
    d = degree(S) if sp.issparse(S) else np.asarray(S).sum(axis=1)
    if not float(d.sum()) > 0:
        raise ValueError("the sample graph has no edges")
    if style == "phi1":
        return _phi1(X, S, d), False
    if style == "phi2":
        return laplacian_scores(X, S), False
    if k is None:
        raise ValueError("phi3 needs k (the number of clusters)")
    return _phi3(X, S, d, int(k), seed)


class SPEC(UFSSelector):
    """Rank features by a SPEC ranking function (Zhao & Liu 2007; module docstring).

    Parameters
    ----------
    n_features_to_select : int
        ``h``; the ranking itself does not depend on it.
    n_clusters : int, optional
        ``c``: ``φ3``'s ``k`` when ``k`` is not given.
    style : {"phi3", "phi2", "phi1"}
        The ranking function: ``φ3`` (default), ``φ2`` (on this graph, the Laplacian
        Score) or ``φ1``.
    k : int, optional
        ``φ3``'s ``k`` (its ``k − 1`` leading non-trivial eigenvectors); default ``c``.
    order : {"paper", "skfeature"}
        ``paper``: ascending ``φ1``/``φ2``, descending ``φ3``; ``skfeature``: the reverse,
        as scikit-feature's ``feature_ranking`` sorts.
    n_neighbors, weight, sigma
        The shared kNN graph (:func:`ufs.graph.knn_graph`), as for the Laplacian Score.
    random_state : int
        Seed of the Lanczos start vectors (``φ3`` above the dense limit).

    ``scores_`` is larger-is-better in the chosen order (``−φ1``, ``−φ2``, ``φ3`` in the
    paper's; negated for ``skfeature``); ``spec_values_`` holds the paper's ``φ``.
    ``feature_order_`` sorts ``scores_`` decreasingly, ties to the lower index.
    """

    kind = "ranking"
    requires_n_clusters = False

    def __init__(
        self,
        n_features_to_select: int = 10,
        *,
        n_clusters: int | None = None,
        style: str = "phi3",
        k: int | None = None,
        order: str = "paper",
        n_neighbors: int = 5,
        weight: str = "heat",
        sigma: float | None = None,
        random_state: int = 0,
    ):
        self.n_features_to_select = n_features_to_select
        self.n_clusters = n_clusters
        self.style = style
        self.k = k
        self.order = order
        self.n_neighbors = n_neighbors
        self.weight = weight
        self.sigma = sigma
        self.random_state = random_state

    def graph_spec(self) -> dict:
        return {"n_neighbors": self.n_neighbors, "weight": self.weight, "sigma": self.sigma}

    def _fit(self, X: np.ndarray) -> Selection:
        if self.order not in ORDERS:
            raise ValueError(f"order must be one of {ORDERS}; got {self.order!r}")
        if self.style not in STYLES:
            raise ValueError(f"style must be one of {STYLES}; got {self.style!r}")
        k = self.k if self.k is not None else getattr(self, "_k", None)
        if self.style == "phi3" and k is None:
            raise ValueError("style='phi3' needs k or n_clusters")
        S = self._graph(X)
        phi, tied = spec_scores(X, S, self.style, k=k, seed=int(self.random_state))
        if self.style == "phi3" and k == 1:
            warnings.warn(
                "SPEC phi3 with k = 1 (one cluster) sums over no eigenvector: every score is "
                "0 and the order is the features' index order",
                DegenerateFitWarning,
                stacklevel=3,
            )
        if tied:
            warnings.warn(
                f"SPEC phi3: the {k}-th eigenvalue of the normalised Laplacian is repeated "
                "beyond the k computed; the scores depend on which basis of that eigenspace "
                "is taken",
                RoundoffSolveWarning,
                stacklevel=3,
            )
        better = -phi if self.style in ("phi1", "phi2") else phi  # the paper: larger first
        if self.order == "skfeature":
            better = -better
        better = np.where(np.isfinite(phi), better, -np.inf)  # no score: last in both orders
        order = np.argsort(-better, kind="stable")
        self.spec_values_ = phi
        return Selection(order=order, scores=better)
