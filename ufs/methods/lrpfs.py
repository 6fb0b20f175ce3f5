"""LRPFS: Unsupervised Feature Selection with Latent Relationship Penalty Term (Ma, Huang,
Li, Wang; Axioms 13(1):6, 2024; authors' MATLAB code ``huangyulei1/LRPFS``, ``LRPFS.m``).

**Name clash.** Two published methods are called LRPFS. This module implements the one
above (the authors' code the parity reference ran). The LRPFS of FSBC's Tables 2-4
(``fsbc.md`` ref. [53]) is a different, earlier method: W. Zheng, C. Xu, J. Yang, J. Gao,
F. Zhu, "Low-rank structure preserving for unsupervised feature selection",
Neurocomputing 314 (2018) 360-370 (selected features as a dictionary with a low-rank
representation). It is not implemented here, and this method is registered as
``lrpfs_ma2024``, not ``lrpfs``, so that it is never compared with FSBC's published
``lrpfs`` numbers (``config/published/fsbc.csv``).

Sources. Only the abstract and the outline of the Axioms paper were available to us
(§3.1 "Latent Relationship Penalty Term", §3.2 "Objective Function", §3.3 "Optimization":
fix V update W, fix W update V; Algorithm 1), so its equation numbers are not cited. The
model below is the objective the authors' code evaluates and minimises; each step is
derived here from it. Samples are rows (``X`` is ``n × p``; the code takes ``p × n``).

Model::

    min_{W ≥ 0, V ≥ 0}  ||XW − V||_F²  +  ||VVᵀ − λ D X Xᵀ D||_F²  +  α ||W||_{2,1}

* ``W`` (``p × c``) maps the data to a ``c``-dimensional latent representation ``V``
  (``n × c``); features are ranked by ``||w_i||`` (descending).
* The latent relationship penalty asks the inner products of the latent representation,
  ``VVᵀ``, to reproduce those of the data, ``XXᵀ``, with each sample weighted by its
  "attribute score" ``D_ii``: the degree of sample ``i`` in a heat-kernel kNN graph.
* ``λ`` scales the data's inner products, ``α`` weights the row sparsity of ``W``.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable

import numpy as np
from sklearn.cluster import KMeans
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state

from ..base import Selection, UFSSelector
from ..graph import degree
from ..linalg import MATLAB_EPS, row_norms
from ..preprocessing import check_input_space
from ..validation import resolve_init
from ._nonneg_spectral import check_positive, ridge_solve

__all__ = ["LRPFS", "kmeans_feature_centroids", "INITS", "UPDATES"]

#: named values of ``init`` (V⁰)
INITS = ("kmeans",)
#: values of ``update``
UPDATES = ("authors", "mm")
#: the authors' floor on the initial ``W`` (``max(W, 1e-8)``)
W_FLOOR = 1e-8
#: columns of the ``min(n, p)``-sided Gram formed at once by :func:`_gram_fro2`
_BLOCK = 512


def kmeans_feature_centroids(X: np.ndarray, n_clusters: int, random_state=None) -> np.ndarray:
    """The authors' ``V⁰``: k-means on the *features* (the ``p`` columns of ``X`` as
    points in ``R^n``) into ``c`` groups; ``V⁰`` is the ``n × c`` matrix of centroids.

    As ``litekmeans(X_pxn, c)`` with its defaults: ``c`` random features as the starting
    centres, one replicate, Lloyd iterations until the labels stop changing (at most
    100). The seed comes from ``random_state`` (Octave's ``rng('default')`` stream cannot
    be reproduced; pass the authors' array as ``init``). Needs ``p ≥ c``. For ``X ≥ 0``
    the centroids are clipped at 0 (scikit-learn's centring leaves ~1e-17 negatives).
    """
    n, p = X.shape
    c = int(n_clusters)
    if p < c:
        raise ValueError(
            f"init='kmeans' clusters the {p} features into n_clusters={c} groups; "
            "it needs n_features >= n_clusters (pass an n × c array as init instead)"
        )
    rs = check_random_state(random_state)
    seed = int(rs.randint(np.iinfo(np.int32).max))
    km = KMeans(n_clusters=c, init="random", n_init=1, max_iter=100, tol=0.0, random_state=seed)
    V = np.ascontiguousarray(km.fit(X.T).cluster_centers_.T)
    if (X >= 0).all():  # means of non-negative columns; undo KMeans' centring round-off
        np.maximum(V, 0.0, out=V)
    return V


def _gram_fro2(M: np.ndarray) -> float:
    """``||MᵀM||_F² = ||MMᵀ||_F²`` through the smaller Gram, ``_BLOCK`` columns at a
    time (never more than ``min(n, p) × _BLOCK`` floats)."""
    A = M if M.shape[0] >= M.shape[1] else M.T  # Gram AᵀA has the smaller side
    total = 0.0
    for s in range(0, A.shape[1], _BLOCK):
        G = A.T @ A[:, s : s + _BLOCK]
        total += float(np.sum(G * G))
    return total


class LRPFS(UFSSelector):
    """LRPFS (Ma, Huang, Li, Wang 2024); ranks features by ``||w_i||`` (descending).

    Defaults follow the authors' code (``LRPFS.m`` with the graph of its usage example)
    where the paper is silent; ``tests/test_parity.py`` (case ``lrpfs``) checks them
    against that code's output. Not the LRPFS of FSBC's tables (see the module
    docstring).

    Parameters
    ----------
    n_features_to_select, n_clusters : int
        ``h`` and ``c`` (``W`` and ``V`` have ``c`` columns; the authors set ``c`` to the
        number of classes).
    alpha : float, default 1e3
        Weight of ``||W||_{2,1}`` (the authors' usage example: ``1e3``).
    lam : float, default 0.1
        ``λ``, the scale of the data's inner products in the penalty (usage example:
        ``1e-1``).
    n_neighbors, weight, sigma : the kNN graph whose degrees are the attribute scores
        (``ufs.graph.knn_graph``: union-symmetrised, as the authors' ``lapgraph``).
        Defaults ``k = 5``, heat kernel ``exp(−||x_i − x_j||²/(2σ²))`` with the authors'
        fixed ``t = σ = 10`` (not data-scaled); ``sigma=None`` uses the shared default
        (mean kNN distance). The authors' ``k = 0`` (complete graph) is not offered: it
        is a dense ``n × n`` kernel.
    self_loop : bool, default True
        ``D_ii = 1 + Σ_j S_ij``: each sample also counts its own weight ``exp(0) = 1``.
        This is what the ``lapgraph`` of the reference run (zzf495's ``utils``) returns:
        its degrees equal the shared graph's plus exactly 1 at all 400 samples of the
        parity input (to 5e-13). ``False``: ``D_ii = Σ_j S_ij``, the degrees of the
        ``lapgraph.m`` (Cai's ``constructW``, ``bSelfConnected = 0``) in the authors'
        repository.
    eta : float, default 0.1
        Ridge of the initial ``W⁰ = max((XᵀX + ηI)^{-1} XᵀV⁰, 1e-8)`` (the code's ``eta``).
    init : {"kmeans"}, callable or array ``n × c``, default "kmeans"
        ``V⁰``. ``"kmeans"``: the authors' recipe, :func:`kmeans_feature_centroids`
        (k-means on the features, centroids as columns), seeded by ``random_state``. A
        callable is called as ``init(X, n_clusters, random_state)``
        (:func:`ufs.validation.resolve_init`).
    update : {"authors", "mm"}, default "authors"
        ``"authors"``: the code's multiplicative rules (below), whose first W-step uses
        ``U = I``. ``"mm"``: a monotone variant (ours, not in the paper or the code):
        the same W-step with ``U`` from ``W⁰`` also in the first iteration, and a V-step
        that minimises a majoriser of the objective exactly; needs ``X ≥ 0``.
    input_space : {"unit_range", "standardized", "raw"}, default "unit_range"
        Which matrix the workflow passes to ``fit`` and builds the graph on
        (:func:`ufs.preprocessing.input_matrix`). ``"unit_range"``: features min-max
        scaled to ``[0, 1]``. The model has ``W, V ≥ 0`` and multiplicative updates, which
        keep that sign only for ``X ≥ 0``; the authors' usage example feeds raw image
        data (COIL20). ``"standardized"``: z-scores, the input of the parity reference;
        there the iteration is numerically chaotic (*Numerical behaviour*). ``fit`` uses
        ``X`` as given.
    max_iter : int, default 30
        The authors' ``maxIter`` (usage example: 30).
    tol : float, default 1e-6
        The authors' stop: ``|f_t − f_{t−1}| / f_{t−1} < tol`` from iteration 3 on
        (``f`` = ``objective_``). ``0`` runs exactly ``max_iter`` iterations (no warning);
        otherwise a ``ConvergenceWarning`` if ``max_iter`` is reached first.
    eps : float, default MATLAB ``eps`` (2.2e-16)
        The authors' ``eps``: ``+ε`` in the denominators and the IRLS smoothing
        ``||w_i||_ε = sqrt(||w_i||² + ε)``.
    random_state : seeds ``init="kmeans"``.
    callback : optional ``callback(t, W=W, V=V)`` after every iteration.

    Attributes
    ----------
    W_, V_ : the last iterate; ``scores_`` are the row norms of ``W_``.
    V_init_, W_init_ : ``V⁰`` and ``W⁰``.
    degrees_ : the attribute scores ``D_ii`` (length ``n``).
    objective_ : the model's objective (``ℓ2,1`` as ``Σ_i ||w_i||_ε``) after each
        iteration, ``objective_[t − 1]`` after iteration ``t``, as the code's ``obj``.
    objective_init_ : the same at ``(W⁰, V⁰)``.
    n_iter_, converged_ : iterations run; whether the ``tol`` test stopped the loop.
    diverged_ : the iterates became non-finite; the last finite pair is returned.

    Algorithm (the code's loop; ``A = λ D X Xᵀ D``, never formed)
    -------------------------------------------------------------
    ``V ← V⁰``, ``W ← W⁰``, ``U ← I``. Repeat ``t = 1, 2, …``:

    1. W-step (fix V). ``W ← W ⊙ XᵀV / (XᵀXW + αUW + ε)``: the multiplicative rule of
       ``||XW − V||² + α tr(WᵀUW)`` (negative / positive part of its gradient).
    2. V-step (fix W). ``V ← V ⊙ (XW + 2AV) / (V + 2VVᵀV + ε)``: the same ratio for the
       gradient ``2(V − XW) + 4(VVᵀV − AV)`` of the first two terms.
    3. ``U_ii = 1 / (2 ||w_i||_ε)`` (ℓ2,1 re-weighting for the next W-step); record
       ``f_t``; stop by ``tol`` (above).

    ``AV = λ d ⊙ (X (Xᵀ (d ⊙ V)))`` and ``VVᵀV = V (VᵀV)``: ``O(npc + nc²)`` per
    iteration, nothing ``n × n`` (the code forms ``D X Xᵀ Dᵀ`` and ``V Vᵀ``). The
    objective's constant ``λ²||D X Xᵀ D||_F² = λ²||Xᵀ D² X||_F²`` is computed once,
    through the smaller Gram in blocks.

    ``update="mm"`` (for ``X ≥ 0``, so ``XW ≥ 0`` and ``A ≥ 0`` entry-wise). Step 1 as
    above with ``U`` re-weighted from ``W⁰`` in the first iteration too: with ``U`` from
    the current ``W`` it is a Lee-Seung step on a majoriser of the W-objective (IRLS
    bound on ``||w_i||_ε``), so the objective does not increase. Step 2: with
    ``V = V̄ ⊙ x``, the quartic term is bounded by ``Σ (V̄V̄ᵀV̄)_ik V̄_ik x_ik⁴`` (AM-GM)
    and the negative terms ``−2tr((XW)ᵀV) − 2tr(VᵀAV)`` by
    ``−Σ n_ik V̄_ik log x_ik + const`` with ``n = 2XW + 4AV̄`` (``y ≥ 1 + log y``); the
    separable majoriser is minimised by ``x² = n / (V̄ + sqrt(V̄² + 4 (V̄V̄ᵀV̄) ⊙ n))``.
    Both rules have the same fixed points as the code's (``x = 1`` iff the gradient
    vanishes). Tested monotone (``tests/test_lrpfs.py``).

    Numerical behaviour (measured; why the parity case asserts less than the usual bar)
    -----------------------------------------------------------------------------------
    The V-ratio maps ``V = sQ`` to roughly ``Q/s`` when the quartic term dominates, so
    the code's iteration does not settle: on the [0, 1]-scaled digits input the
    objective alternates between ~7.3e8 and 3.7e11-5.1e11 for 300 iterations (``"mm"``
    falls monotonically from 7.4e8 to 9.0e5 from the same start, ``random_state=0``). With mixed-sign data (z-scores,
    the parity input) ``XW`` and ``AV`` have mixed signs, ``W`` and ``V`` change sign
    and denominators pass near 0: the run is chaotic. The authors' objective jumps
    between 8e8 and 2.5e21 over its 30 iterations, and a relative perturbation of 1e-15
    in ``V⁰`` changes the objective by 34 % at iteration 5, and the final top 10 shares
    1-5 features with the unperturbed run's (3 seeds each of 1e-15 and 1e-13 noise; the
    top 20: 8-12). Floating-point differences alone (BLAS, association order)
    therefore decide the final ranking; see ``ufs/parity/cases/lrpfs.py``.
    """

    kind = "ranking"
    score_power = 1  # ranks by ||w_i||: resolved_rank_ recorded
    input_space = "unit_range"

    def min_n_features(self, n_clusters):  # init="kmeans" clusters the p features: c <= p
        return n_clusters if isinstance(self.init, str) and self.init == "kmeans" else 1

    def __init__(
        self,
        n_features_to_select: int = 10,
        n_clusters: int | None = None,
        *,
        alpha: float = 1e3,
        lam: float = 0.1,
        n_neighbors: int = 5,
        weight: str = "heat",
        sigma: float | None = 10.0,
        self_loop: bool = True,
        eta: float = 0.1,
        init: str | Callable | np.ndarray = "kmeans",
        update: str = "authors",
        input_space: str = "unit_range",
        max_iter: int = 30,
        tol: float = 1e-6,
        eps: float = MATLAB_EPS,
        random_state=None,
        callback=None,
    ):
        self.n_features_to_select = n_features_to_select
        self.n_clusters = n_clusters
        self.alpha = alpha
        self.lam = lam
        self.n_neighbors = n_neighbors
        self.weight = weight
        self.sigma = sigma
        self.self_loop = self_loop
        self.eta = eta
        self.init = init
        self.update = update
        self.input_space = input_space
        self.max_iter = max_iter
        self.tol = tol
        self.eps = eps
        self.random_state = random_state
        self.callback = callback

    def graph_spec(self) -> dict:
        return {"n_neighbors": self.n_neighbors, "weight": self.weight, "sigma": self.sigma}

    # -- pieces -------------------------------------------------------------------------
    def attribute_scores(self, S) -> np.ndarray:
        """``D_ii``: degree of sample ``i`` in ``S``, plus 1 with ``self_loop``."""
        return degree(S) + (1.0 if self.self_loop else 0.0)

    def _apply_A(self, X: np.ndarray, d: np.ndarray, V: np.ndarray) -> np.ndarray:
        """``A V = λ D X Xᵀ D V`` without forming ``A``."""
        return float(self.lam) * (d[:, None] * (X @ (X.T @ (d[:, None] * V))))

    def objective(
        self,
        X: np.ndarray,
        d: np.ndarray,
        W: np.ndarray,
        V: np.ndarray,
        *,
        const: float | None = None,
    ) -> float:
        """``||XW − V||² + ||VVᵀ − λDXXᵀD||² + α Σ_i ||w_i||_ε`` (the code's ``obj``).

        The middle term is expanded as ``||VᵀV||² − 2 tr(VᵀAV) + λ²||XᵀD²X||²``;
        ``const`` is the last summand if already known."""
        if const is None:
            const = float(self.lam) ** 2 * _gram_fro2(d[:, None] * X)
        R = X @ W - V
        G = V.T @ V
        wn = np.sqrt(row_norms(W, squared=True) + float(self.eps))
        return float(
            np.sum(R * R)
            + np.sum(G * G)
            - 2.0 * np.sum(V * self._apply_A(X, d, V))
            + const
            + float(self.alpha) * wn.sum()
        )

    def _check_params(self) -> None:
        check_positive(alpha=self.alpha, lam=self.lam, eta=self.eta, eps=self.eps)
        if self.update not in UPDATES:
            raise ValueError(f"update must be one of {UPDATES}; got {self.update!r}")
        check_input_space(self.input_space)
        if int(self.max_iter) < 1:
            raise ValueError(f"max_iter must be >= 1; got {self.max_iter}")
        if not float(self.tol) >= 0:
            raise ValueError(f"tol must be >= 0; got {self.tol}")

    # -- fit ----------------------------------------------------------------------------
    def _fit(self, X: np.ndarray) -> Selection:
        self._check_params()
        n, p = X.shape
        c = int(self._k)
        alpha, eps, tol = float(self.alpha), float(self.eps), float(self.tol)
        mm = self.update == "mm"
        nonneg = bool((X >= 0).all())
        if mm and not nonneg:
            raise ValueError(
                "update='mm' needs X >= 0 (its majoriser assumes XW >= 0 and DXXᵀD >= 0); "
                "use input_space='unit_range' data or update='authors'"
            )
        if not nonneg:
            warnings.warn(
                "LRPFS on data with negative entries: the multiplicative updates do not keep "
                "W, V >= 0 and the iteration is numerically chaotic (see the LRPFS docstring); "
                "input_space='unit_range' gives non-negative data",
                UserWarning,
                stacklevel=3,
            )
        d = self.attribute_scores(self._graph(X))
        V = resolve_init(
            self.init,
            {"kmeans": lambda: kmeans_feature_centroids(X, c, self.random_state)},
            (n, c),
            X=X,
            n_clusters=c,
            random_state=self.random_state,
            nonnegative=mm,
        )
        W = np.maximum(ridge_solve(X, np.full(p, float(self.eta)), V), W_FLOOR)
        self.V_init_, self.W_init_ = V.copy(), W.copy()
        const = float(self.lam) ** 2 * _gram_fro2(d[:, None] * X)
        self.objective_init_ = self.objective(X, d, W, V, const=const)
        # U⁰: the code starts from U = I; "mm" re-weights from W⁰
        u = 0.5 / np.sqrt(row_norms(W, squared=True) + eps) if mm else np.ones(p)
        XW = X @ W
        history: list[float] = []
        converged = diverged = False
        it = 0
        for it in range(1, int(self.max_iter) + 1):
            W_prev, V_prev, XW_prev = W, V, XW
            # step 1: W-step
            W = W * ((X.T @ V) / (X.T @ XW + alpha * u[:, None] * W + eps))
            XW = X @ W
            # step 2: V-step
            AV = self._apply_A(X, d, V)
            VVtV = V @ (V.T @ V)
            if mm:
                num = 2.0 * XW + 4.0 * AV
                x2 = num / (V + np.sqrt(V * V + 4.0 * VVtV * num) + eps)
                V = V * np.sqrt(x2)
            else:
                V = V * ((XW + 2.0 * AV) / (V + 2.0 * VVtV + eps))
            if not (np.isfinite(W).all() and np.isfinite(V).all()):
                W, V, XW = W_prev, V_prev, XW_prev
                diverged = True
                it -= 1
                break
            # step 3: re-weighting for the next W-step, objective, stopping rule
            wn = np.sqrt(row_norms(W, squared=True) + eps)
            u = 0.5 / wn
            history.append(self.objective(X, d, W, V, const=const))
            if self.callback is not None:
                self.callback(it, W=W, V=V)
            if tol > 0 and it > 2 and abs(history[-1] - history[-2]) < tol * history[-2]:
                converged = True
                break
        self.W_, self.V_ = W, V
        self.degrees_ = d
        self.objective_ = np.asarray(history)
        self.n_iter_ = it
        self.converged_ = converged
        self.diverged_ = diverged
        if diverged:
            warnings.warn(
                f"LRPFS iterates became non-finite at iteration {it + 1}; returning the last "
                "finite iterate",
                ConvergenceWarning,
                stacklevel=3,
            )
        elif tol > 0 and not converged:
            warnings.warn(
                f"LRPFS did not converge in {self.max_iter} iterations (tol={tol:g})",
                ConvergenceWarning,
                stacklevel=3,
            )
        scores = row_norms(W)
        return Selection(order=np.argsort(-scores, kind="stable"), scores=scores)
