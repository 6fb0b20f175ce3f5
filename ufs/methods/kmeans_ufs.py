"""K-means derived unsupervised feature selection (Sun, Ding & Fan; ``kmeans_ufs.md``).

Model (paper notation, data ``X ∈ R^{p×n}`` with standardised rows)::

    min_S  -Tr(Sᵀ A S)   s.t. S selects h rows,      A = P_k Σ_k² P_kᵀ      (Eq. 8)
    min_V  -Tr(Vᵀ A V)   s.t. VᵀV = I, ||Vᵀ||_{2,0} = h                        (Eq. 11)

where ``X = P Σ Qᵀ`` is the SVD. The API takes ``X`` as ``n × p`` (scikit-learn); the
paper's ``P`` are therefore the *right* singular vectors of our matrix.
"""

from __future__ import annotations

import warnings

import numpy as np
from scipy.linalg import get_blas_funcs
from sklearn.exceptions import ConvergenceWarning

from ..base import DegenerateFitWarning, Selection, UFSSelector
from ..linalg import (
    leading_right_singular_vectors,
    orthonormal_completion,
    procrustes,
    row_norms,
    top_rows,
)
from ..preprocessing import standardize as zscore
from ..validation import check_penalty_schedule, resolve_init

__all__ = ["KMeansUFS", "kmeans_ufs_factor"]


def kmeans_ufs_factor(
    Z: np.ndarray, k: int, n_vectors: int | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Low-rank factor ``B = P_k Σ_k`` (p × k) with ``A = B Bᵀ`` (Eq. 8).

    Returns ``(B, s, P)``: the factor, singular values of ``Z`` (decreasing) and the
    right singular vectors ``P`` (p × r). ``A`` itself (p × p) is never formed.
    ``n_vectors=None``: all of them (thin SVD); otherwise at least the leading
    ``max(k, n_vectors)`` (:func:`ufs.linalg.leading_right_singular_vectors`: an
    ``eigh`` of the ``p × p`` Gram restricted to them when that is accurate).
    """
    m = None if n_vectors is None else max(int(k), int(n_vectors))
    s, P = leading_right_singular_vectors(Z, m)
    kk = min(k, s.shape[0])
    return P[:, :kk] * s[:kk], s, P


class KMeansUFS(UFSSelector):
    """K-means UFS: select ``h`` features minimising the K-means-derived objective.

    Parameters
    ----------
    n_features_to_select : int
        ``h``, the number of features to select.
    n_clusters : int
        ``k``, the number of clusters; ``A`` keeps the leading ``k`` singular directions.
    solver : {"admm", "exact"}
        ``"admm"`` runs the paper's bi-linear ADMM (Algorithm 1). ``"exact"`` returns the
        global optimum of models (8) and (11), see *Exact solver* below.
    standardize : bool
        Z-score features first, as the paper prescribes (§II). Idempotent on data that
        are already standardised. With ``False`` the data are used as given.
    mu0, rho, mu_max : float
        Penalty schedule of Eqs. (17)-(19): ``μ ← ρ μ`` while ``μ < μ_max``
        (Algorithm 1 line 1 and §III-C: ``μ0 = 0.1``, ``ρ = 1.05``, ``μ_max = 1e7``).
    max_iter : int
        Iteration cap (§III-D: 3000).
    patience : int
        Stop when the selected set is unchanged for this many consecutive iterations
        (§III-D: 30).
    init : {"svd"}, callable or array of shape (n_features, n_features_to_select)
        The initial iterate ``V⁰ = U⁰ = W⁰`` (``p × h``, rows = features, Eq. 32) of the
        ADMM; ignored by ``solver="exact"``. ``p`` counts the non-constant features only
        (constant ones are removed before fitting). ``"svd"`` (default): the paper's
        ``P_h`` with the deterministic completion of :meth:`initial_basis` (see
        *Initialisation choice*). A callable is called as ``init(Z, n_clusters, None)``
        with ``Z`` the (standardised, constant-free) data the solver sees. An array or
        callable result is used as given (no orthonormalisation; the paper's start is
        orthonormal, and the first iteration makes ``U`` orthonormal, ``||V||_F² = h``
        and ``W`` ``h``-row-sparse); it must not be all zeros (Eq. 29 would divide by
        0). ``V_`` of a previous fit can be passed back, but only the iterate restarts
        (``Ω = Γ = 0``, ``μ = μ0``), so this is not a resumption of that run.
    callback : callable, optional
        Called after every ADMM iteration as ``callback(t, V=V, U=U, W=W, mu=mu)``
        (for monitoring and tests; the arrays must not be modified).

    Algorithm (paper Algorithm 1, step by step)
    -------------------------------------------
    Initialise ``V = U = W = P_h`` (or ``init``), ``Ω = Γ = 0``, ``μ = μ0`` (Eq. 32),
    then repeat

    1. ``D = A U + μ (U − Ω/μ) + μ (W − Γ/μ)``;  ``V = √h · D / ||D||_F``        (Eq. 29)
    2. ``H = A V + μ (V + Ω/μ)``;  ``U = P_H Q_Hᵀ`` from the thin SVD of H          (Eq. 31)
    3. ``W`` = rows of ``V + Γ/μ`` with the ``h`` largest norms, others zero       (Eq. 26)
    4. ``Ω += μ (V − U)``, ``Γ += μ (V − W)``, ``μ ← ρ μ``                     (Eqs. 17-19)

    ``A M`` is evaluated as ``B (Bᵀ M)`` with ``B = P_k Σ_k`` (p × k), and ``P_H Q_Hᵀ``
    as the polar factor ``H (HᵀH)^{-1/2}`` from an ``h × h`` eigen-decomposition
    (:func:`ufs.linalg.procrustes`; SVD fallback), so an iteration costs about
    ``8pkh + 3ph²`` flops (``HᵀH`` by ``syrk`` and one ``p × h`` product) when
    ``cond(H) ≤ 10``, ``8pkh + 6ph²`` otherwise (a second, rotated pass), plus
    ``O(h³)``. ``B`` and ``P_h`` come from the top eigenpairs of ``ZᵀZ`` when ``p ≤ n``
    and ``σ_h² ≥ 1e-4 σ_1²`` (:func:`ufs.linalg.leading_right_singular_vectors`).

    Initialisation choice (``init="svd"``). ``A`` has rank ``k`` (usually ``< h``), so
    "the first h eigenvectors of A" (Eq. 32) is not unique beyond the k-th. We complete it with the
    leading ``h`` right singular vectors of the standardised data (the paper's ``P_h``
    of ``X = PΣQᵀ``), which coincide with A's eigenvectors on the first k. When ``h``
    exceeds the rank ``r`` of the data, the remaining ``h − r`` directions come from
    :func:`ufs.linalg.orthonormal_completion` (coordinate axes with the largest residual,
    orthonormalised; deterministic). The iteration is equivariant under ``V → VR`` for
    orthogonal ``R``, so singular-vector signs do not affect the selection.

    Exact solver. For any ``V`` with ``h`` non-zero rows ``J`` and ``VᵀV = I``, the
    ``h × h`` block ``V_J`` is orthogonal, so ``Tr(VᵀAV) = Tr(V_Jᵀ A_JJ V_J) =
    Tr(A_JJ) = Σ_{j∈J} A_jj``. Hence the optimum of (8) and of (11) is the ``h``
    features with the largest ``diag(A)``, i.e. the largest squared row norms of ``B``
    (ties to the lower index).

    Attributes
    ----------
    objective_ : ndarray
        ``−Tr(SᵀAS)`` of the selection held by ``W`` after every iteration (one value
        for the exact solver).
    selection_objective_, exact_objective_ : float
        Objective of the returned selection and of the global optimum.
    optimality_gap_ : float
        ``(selection_objective_ − exact_objective_) / |exact_objective_|`` (≥ 0).
    n_iter_, converged_ : int, bool
        ADMM iterations run and whether the selection settled; the exact solver is one
        closed-form step (``n_iter_ = 1``, ``converged_ = True``), so
        ``objective_.shape == (n_iter_,)`` for both solvers.
    degenerate_ : bool
        The ADMM kept its first iterate's selection to the end (it stopped after
        ``patience + 1`` iterations): the answer is the initialisation's, the ``h`` largest
        rows of ``V⁰`` (``P_h`` by default), a rule the iterations never touched. A large
        ``μ⁰`` does this (the penalty pins ``V`` to ``V⁰``; the paper's Fig. 3 grid at
        ``μ⁰ = 10⁶``). Warned (``DegenerateFitWarning``) and marked ◊ by the
        workflow. Always ``False`` for the exact solver.
    V_ : ndarray
        The last ADMM iterate ``V`` (``p × h``; ADMM solver only).
    diag_A_ : ndarray
        ``diag(A)`` per informative feature (the exact solver's scores).
    """

    kind = "subset"

    def __init__(
        self,
        n_features_to_select: int = 10,
        n_clusters: int | None = None,
        *,
        solver: str = "admm",
        standardize: bool = True,
        mu0: float = 0.1,
        rho: float = 1.05,
        mu_max: float = 1e7,
        max_iter: int = 3000,
        patience: int = 30,
        init="svd",
        callback=None,
    ):
        self.n_features_to_select = n_features_to_select
        self.n_clusters = n_clusters
        self.solver = solver
        self.standardize = standardize
        self.mu0 = mu0
        self.rho = rho
        self.mu_max = mu_max
        self.max_iter = max_iter
        self.patience = patience
        self.init = init
        self.callback = callback

    def _check_solver_params(self) -> None:
        if self.solver not in ("admm", "exact"):
            raise ValueError(f"solver must be 'admm' or 'exact'; got {self.solver!r}")
        check_penalty_schedule(self.mu0, self.rho, self.mu_max)
        if int(self.max_iter) < 1 or int(self.patience) < 1:
            raise ValueError("max_iter and patience must be >= 1")

    def _fit(self, X: np.ndarray) -> Selection:
        self._check_solver_params()
        h, k = self._h, self._k
        Z = zscore(X).X if self.standardize else X
        # the default init needs P_h, the exact solver only the k triplets of B; the ADMM
        # computes P_h whatever init is, so that init=V⁰ reproduces init="svd" bit for bit
        B, s, P = kmeans_ufs_factor(Z, k, n_vectors=h if self.solver == "admm" else k)
        diag_a = row_norms(B, squared=True)
        self.diag_A_ = diag_a
        exact = top_rows(diag_a, h)
        self.exact_objective_ = -float(diag_a[exact].sum())
        if self.solver == "exact":
            order = exact
            self.objective_ = np.array([self.exact_objective_])
            self.n_iter_, self.converged_ = 1, True  # one closed-form step
            self.degenerate_ = False
        else:
            V0 = resolve_init(
                self.init,
                {"svd": lambda: self.initial_basis(s, P, h, n_rows=Z.shape[0])},
                (Z.shape[1], h),
                X=Z,
                n_clusters=k,
            )
            if not V0.any():
                raise ValueError("init is all zeros; V⁰ = 0 makes Eq. (29) divide by 0")
            order = self._admm(B, V0, diag_a, h)
        self.selection_objective_ = -float(diag_a[order].sum())
        denom = abs(self.exact_objective_)
        self.optimality_gap_ = (
            (self.selection_objective_ - self.exact_objective_) / denom if denom > 0 else 0.0
        )
        return Selection(order=order, scores=diag_a if self.solver == "exact" else None)

    @staticmethod
    def initial_basis(s: np.ndarray, P: np.ndarray, h: int, n_rows: int) -> np.ndarray:
        """``P_h`` of Eq. (32) with the deterministic completion described above."""
        p = P.shape[0]
        tol = (s[0] if s.size else 0.0) * max(n_rows, p) * np.finfo(float).eps
        r = int(np.sum(s > tol))
        if h <= r:
            return P[:, :h].copy()
        return np.hstack([P[:, :r], orthonormal_completion(P[:, :r], h - r)])

    def _admm(self, B, V, diag_a, h) -> np.ndarray:
        # The steps of Algorithm 1 with in-place BLAS-1 updates (daxpy) and the row
        # sparsity of W exploited: after the first iteration W has h non-zero rows, kept
        # as ``w_vals`` (its rows ``w_rows``); a dense W is built only for the callback.
        # Ω + μV is formed once, in Ω's array: it is H's shift (Eq. 31) and the first half
        # of Ω's update (Eq. 17). V and U are fresh arrays every iteration (the callback
        # may keep them).
        Bt = np.ascontiguousarray(B.T)
        V = np.ascontiguousarray(V)
        axpy = get_blas_funcs("axpy", (V,))
        U = V.copy()
        w_rows, w_vals = None, V.copy()  # W⁰ = V⁰: dense (w_rows None)
        Omega = np.zeros_like(V)
        Gamma = np.zeros_like(V)
        om, ga = Omega.ravel(), Gamma.ravel()
        mu = float(self.mu0)
        rho, mu_max = float(self.rho), float(self.mu_max)
        patience, callback = int(self.patience), self.callback
        sqrt_h = np.sqrt(h)
        prev = None
        stable = 0
        objective = []
        converged = False
        idx = None
        for it in range(1, int(self.max_iter) + 1):
            # Eq. (29): V-update, D = A U + μU − Ω + μW − Γ, V = √h D / ||D||_F
            D = B @ (Bt @ U)
            d = D.ravel()
            axpy(U.ravel(), d, a=mu)
            d -= om
            d -= ga
            if w_rows is None:
                axpy(w_vals.ravel(), d, a=mu)
            else:
                D[w_rows] += mu * w_vals
            d *= sqrt_h / np.sqrt(np.dot(d, d))
            V = D
            # Eq. (31): U-update by orthogonal Procrustes on H = A V + μ E, E = V + Ω/μ;
            # Ω ← Ω + μV here, − μU below (Eq. 17)
            axpy(d, om, a=mu)
            H = B @ (Bt @ V)
            H += Omega
            U = procrustes(H)
            # Eq. (26): W-update, ℓ2,0 row projection of F = V + Γ/μ, and Eq. (18),
            # Γ += μ(V − W), in Γ's array: Γ + μV = μF, so the rows of F with the largest
            # norms are those of Γ + μV, W = F there, and Γ + μ(V − W) = μF − μW is μF
            # with those h rows zeroed (three fewer passes over p × h arrays than forming F)
            axpy(d, ga, a=mu)
            idx = top_rows(row_norms(Gamma, squared=True), h)
            w_rows, w_vals = idx, Gamma[idx] / mu
            Gamma[idx] = 0.0
            # Eqs. (17), (19): Ω += μ(V − U) (its μV half above), μ ← ρμ
            axpy(U.ravel(), om, a=-mu)
            if mu < mu_max:
                mu *= rho
            objective.append(-float(diag_a[idx].sum()))
            if callback is not None:
                W = np.zeros_like(V)
                W[idx] = w_vals
                callback(it, V=V, U=U, W=W, mu=mu)
            current = np.sort(idx)
            stable = stable + 1 if prev is not None and np.array_equal(current, prev) else 0
            prev = current
            if stable >= patience:
                converged = True
                break
        self.objective_ = np.asarray(objective)
        self.n_iter_ = it
        self.converged_ = converged
        self.mu_ = mu
        self.V_ = V
        # stable counts iterations that kept the previous one's selection: patience of them
        # after the first iteration means the first selection was never changed
        self.degenerate_ = bool(converged and it == patience + 1)
        if self.degenerate_:
            warnings.warn(
                f"K-means UFS kept its first iterate's selection for all {it} iterations "
                f"(mu0 = {self.mu0:g}): the answer is the initialisation's h largest rows, "
                "not the ADMM's",
                DegenerateFitWarning,
                stacklevel=3,
            )
        if not converged:
            warnings.warn(
                f"K-means UFS ADMM did not converge in {self.max_iter} iterations "
                f"(selection changed within the last {self.patience})",
                ConvergenceWarning,
                stacklevel=3,
            )
        return idx
