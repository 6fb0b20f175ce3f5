"""EUFS: Embedded Unsupervised Feature Selection (Wang, Tang & Liu, AAAI 2015).

Model (K-means UFS paper ``kmeans_ufs.md`` Eq. 35; paper ``X`` is ``p × n``)::

    min_{U, V}  ||X − U Vᵀ||_{2,1} + α||V||_{2,1} + β Tr(Uᵀ L̂ U)   s.t. UᵀU = I, U ≥ 0

in our ``n × p`` orientation: ``U`` (``n × c``) is the non-negative orthogonal cluster
indicator, ``V`` (``p × c``) the latent feature matrix; the first ℓ2,1 norm sums the
residual norms of the samples (rows of ``X − UVᵀ``), the second the row norms of ``V``.
(``kmeans_ufs.md`` writes the same model with ``Y, V, ν, β``.)
"""

from __future__ import annotations

import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state

from ..base import Selection, UFSSelector
from ..linalg import l21_norm, procrustes, row_norms
from ..validation import resolve_init
from ._nonneg_spectral import (
    check_positive,
    kmeans_indicator,
    normalized_laplacian_split,
    row_shrink,
)

__all__ = ["EUFS"]


class EUFS(UFSSelector):
    """EUFS (Wang, Tang & Liu, AAAI 2015); ranks features by ``||v_i||`` (descending).

    Parameters
    ----------
    n_features_to_select, n_clusters : int
    alpha, beta : float
        Weights of ``||V||_{2,1}`` and of the graph term (Eq. 35); tuned over
        ``{10^-6, 10^-4, ..., 10^6}`` in the K-means UFS paper (§V-B).
    n_neighbors, weight, sigma : kNN graph (``k = 5``, binary weights by default).
    mu0, rho, mu_max : ADMM penalty schedule ``μ ← min(ρμ, μ_max)``.
    max_iter, tol : stop when both primal residuals ``||Z − U||_F/√c`` and
        ``||X − UVᵀ − E||_F/||X||_F`` are below ``tol``.
    inner_iter : cap on the accelerated projected-gradient steps of the Z-subproblem.
    init : {"kmeans"}, callable or array of shape (n_samples, n_clusters)
        The initial cluster indicator ``U⁰`` (``n × c``, rows = samples, non-negative),
        used as given for both ``U⁰`` and its non-negative copy ``Z⁰`` (then
        ``V⁰ = XᵀU⁰``). ``"kmeans"`` (default): the k-means indicator with unit-norm
        columns (see *Choices*). A callable is called as ``init(X, n_clusters,
        random_state)`` with the (constant-free) ``X`` the solver sees and a
        ``RandomState``. Negative entries raise ``ValueError`` (``Z ≥ 0``); a feasible
        start also has orthonormal columns (not enforced: step 3 makes ``U``
        orthonormal from iteration 1 on). ``Z_`` of a previous fit (``U_``'s
        non-negative copy) warm-starts.
    random_state : seeds the k-means initialisation.
    callback : optional ``callback(t, U=U, V=V, Z=Z, E=E, mu=mu)`` after every iteration.

    Algorithm (ADMM of Wang et al.)
    -------------------------------
    With ``E = X − UVᵀ`` and the non-negative copy ``Z = U``, the augmented Lagrangian is
    ``||E||_{2,1} + α||V||_{2,1} + βTr(ZᵀL̂Z) + ⟨Λ1, Z − U⟩ + ⟨Λ2, X − UVᵀ − E⟩
    + (μ/2)(||Z − U||² + ||X − UVᵀ − E||²)`` with ``UᵀU = I``, ``Z ≥ 0``. Per iteration:

    1. ``E = prox_{||·||_{2,1}/μ}(X − UVᵀ + Λ2/μ)`` — row-wise shrinkage;
    2. ``V = prox_{α||·||_{2,1}/μ}((X − E + Λ2/μ)ᵀ U)`` — exact because ``UᵀU = I`` makes
       ``||A − UVᵀ||² = ||AᵀU − V||² + const``;
    3. ``U = argmax_{UᵀU=I} Tr(Uᵀ[(Z + Λ1/μ) + (X − E + Λ2/μ)V])`` — orthogonal Procrustes;
    4. ``Z = argmin_{Z ≥ 0} βTr(ZᵀL̂Z) + (μ/2)||Z − (U − Λ1/μ)||²`` — a non-negative QP
       solved by accelerated projected gradient (FISTA, step ``1/(4β + μ)`` since
       ``||L̂|| ≤ 2``, warm start, at most ``inner_iter`` steps);
    5. ``Λ1 += μ(Z − U)``, ``Λ2 += μ(X − UVᵀ − E)``, ``μ ← min(ρμ, μ_max)``.

    Only the sparse graph and ``n × p``, ``n × c`` arrays are used.

    Choices. ``U⁰ = Z⁰`` is the k-means indicator (k-means on ``X``, ``n_init = 10``,
    seeded) with unit-norm columns — feasible (orthonormal and non-negative;
    ``init="kmeans"``, the only named initialisation);
    ``V⁰ = XᵀU⁰``; ``E⁰ = 0``, ``Λ = 0``. The paper does not state ``μ0, ρ``; we use
    ``μ0 = 1e-2``, ``ρ = 1.1``, ``μ_max = 1e8`` (standard ADMM schedule). The
    non-negativity holds exactly for ``Z`` at every iteration; ``U`` (orthonormal) equals
    ``Z`` at convergence (``||Z − U||`` is driven to 0 by the growing ``μ``). ADMM does
    not decrease the objective monotonically; ``objective_`` records Eq. (35) at
    ``(U, V)`` per iteration. Observed: ``UᵀU = I, U ≥ 0`` is a combinatorial set
    (disjoint column supports), and ``||Z − U||_F`` typically stalls around 0.3 rather
    than reaching ``tol`` (ConvergenceWarning); the ranking (``||v_i||``) is stable long
    before that. Large ``α`` (≳ 1 on standardised data) makes ``V = 0`` optimal (the
    ℓ2,1 loss gains less than ``α||V||_{2,1}`` costs); a warning is issued then. Hence
    the default ``α = 1e-2``.
    """

    kind = "ranking"
    score_power = 1  # ranks by ||w_i||: resolved_rank_ recorded

    def __init__(
        self,
        n_features_to_select: int = 10,
        n_clusters: int | None = None,
        *,
        alpha: float = 1e-2,
        beta: float = 1.0,
        n_neighbors: int = 5,
        weight: str = "binary",
        sigma: float | None = None,
        mu0: float = 1e-2,
        rho: float = 1.1,
        mu_max: float = 1e8,
        max_iter: int = 300,
        tol: float = 1e-5,
        inner_iter: int = 50,
        init="kmeans",
        random_state=None,
        callback=None,
    ):
        self.n_features_to_select = n_features_to_select
        self.n_clusters = n_clusters
        self.alpha = alpha
        self.beta = beta
        self.n_neighbors = n_neighbors
        self.weight = weight
        self.sigma = sigma
        self.mu0 = mu0
        self.rho = rho
        self.mu_max = mu_max
        self.max_iter = max_iter
        self.tol = tol
        self.inner_iter = inner_iter
        self.init = init
        self.random_state = random_state
        self.callback = callback

    def graph_spec(self) -> dict:
        return {"n_neighbors": self.n_neighbors, "weight": self.weight, "sigma": self.sigma}

    def objective(self, L, X, U, V) -> float:
        """Eq. (35) in our orientation."""
        return float(
            row_norms(X - U @ V.T).sum()
            + self.alpha * l21_norm(V)
            + self.beta * np.sum(U * (L @ U))
        )

    def _z_step(self, L, Z, T, mu):
        """``argmin_{Z≥0} βTr(ZᵀL̂Z) + (μ/2)||Z − T||²`` by FISTA from ``Z``."""
        beta = float(self.beta)
        step = 1.0 / (4.0 * beta + mu)
        Y, t = Z, 1.0
        for _ in range(int(self.inner_iter)):
            Zn = np.maximum(Y - step * (2.0 * beta * (L @ Y) + mu * (Y - T)), 0.0)
            tn = 0.5 * (1.0 + np.sqrt(1.0 + 4.0 * t * t))
            Y = Zn + ((t - 1.0) / tn) * (Zn - Z)
            done = np.linalg.norm(Zn - Z) <= 1e-8 * max(np.linalg.norm(Zn), 1.0)
            Z, t = Zn, tn
            if done:
                break
        return Z

    def _initial_indicator(self, X: np.ndarray) -> np.ndarray:
        """``U⁰`` (``n × c``) from ``init`` (a fresh array; ``init`` is not modified)."""
        k = self._k
        rs = check_random_state(self.random_state)

        def kmeans() -> np.ndarray:
            U = kmeans_indicator(X, k, rs, offset=0.0)
            return U / np.linalg.norm(U, axis=0)

        return resolve_init(
            self.init,
            {"kmeans": kmeans},
            (X.shape[0], k),
            X=X,
            n_clusters=k,
            random_state=rs,
            nonnegative=True,
        )

    def _fit(self, X: np.ndarray) -> Selection:
        check_positive(alpha=self.alpha, beta=self.beta, mu0=self.mu0, tol=self.tol)
        if not self.rho >= 1 or not self.mu_max >= self.mu0:
            raise ValueError("need rho >= 1 and mu_max >= mu0")
        if int(self.max_iter) < 1 or int(self.inner_iter) < 1:
            raise ValueError("max_iter and inner_iter must be >= 1")
        alpha = float(self.alpha)
        L, _, _ = normalized_laplacian_split(self._graph(X))
        U = self._initial_indicator(X)
        Z = U.copy()
        V = X.T @ U
        E = np.zeros_like(X)
        L1 = np.zeros_like(U)
        L2 = np.zeros_like(X)
        mu = float(self.mu0)
        xnorm = max(np.linalg.norm(X), 1e-300)
        sqrt_c = np.sqrt(U.shape[1])
        objective = [self.objective(L, X, U, V)]
        converged = False
        it = 0
        for it in range(1, int(self.max_iter) + 1):
            E = row_shrink(X - U @ V.T + L2 / mu, 1.0 / mu)  # step 1
            A = X - E + L2 / mu
            V = row_shrink(A.T @ U, alpha / mu)  # step 2
            U = procrustes(Z + L1 / mu + A @ V)  # step 3
            Z = self._z_step(L, Z, U - L1 / mu, mu)  # step 4
            R1 = Z - U
            R2 = X - U @ V.T - E
            L1 += mu * R1  # step 5
            L2 += mu * R2
            mu = min(mu * float(self.rho), float(self.mu_max))
            objective.append(self.objective(L, X, U, V))
            if self.callback is not None:
                self.callback(it, U=U, V=V, Z=Z, E=E, mu=mu)
            if np.linalg.norm(R1) / sqrt_c < self.tol and np.linalg.norm(R2) / xnorm < self.tol:
                converged = True
                break
        self.objective_ = np.asarray(objective)
        self.n_iter_ = it
        self.converged_ = converged
        self.U_, self.V_, self.Z_ = U, V, Z
        if not converged:
            warnings.warn(
                f"EUFS ADMM did not converge in {self.max_iter} iterations",
                ConvergenceWarning,
                stacklevel=3,
            )
        scores = row_norms(V)
        if not scores.any():
            warnings.warn(
                "EUFS: V is identically zero (alpha too large for these data: the ℓ2,1 "
                "penalty outweighs any fit); the feature ranking is arbitrary (by index)",
                UserWarning,
                stacklevel=3,
            )
        return Selection(order=np.argsort(-scores, kind="stable"), scores=scores)
