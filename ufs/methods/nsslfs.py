"""NSSLFS: robust unsupervised feature selection by non-negative sparse subspace learning
(W. Zheng, H. Yan, J. Yang, "Robust unsupervised feature selection by nonnegative sparse
subspace learning", Neurocomputing 334 (2019) 156-171, doi:10.1016/j.neucom.2019.01.015;
reference [29] of FSBC, ``fsbc.md`` §2 and §4.2).

Provenance — read this first. The paper's full text (and therefore its equation numbers)
could not be retrieved here, and there is no author code and no reference output. What
this module implements is reconstructed from the most authoritative descriptions that
were available:

* the paper's abstract (bibliographic record of the DOI above): the unsupervised feature
  selection problem is cast "as a matrix factorization problem from the viewpoint of
  sparse subspace learning"; "by minimizing the reconstruction residual, the learned
  feature weight matrix with the ℓ2,1-norm and the non-negative constraints" removes
  irrelevant features and "captures the underlying low dimensional structure of the data
  points"; "l1-norm error function is used to resistant to outliers and sparse noise"; "an
  efficient iterative algorithm" with a convergence proof; "although there is a
  subtraction item in our multiplicative update rule, we validate its non-negativity";
* FSBC §2 ("Zheng et al. used sparse subspace learning to select features … learn the
  subspace structure of data in the process of feature selection") and §4.2 ("an
  unsupervised feature selection with sparse subspace learning").

The equations are therefore numbered (N1)-(N8) here — OUR numbering, not the paper's.

Model (X is ``n × p``, samples as rows; ``W`` is the ``p × k`` feature weight matrix,
``H`` the ``k × p`` basis of the subspace, ``k`` = ``n_components``)::

    (N1)  min_{W ≥ 0, H ≥ 0}  ||X − XWH||_1 + λ ||W||_{2,1} + (β/2) ||H||_F²

``||·||_1`` is the entry-wise ℓ1 norm ("sparse noise"). The reconstruction ``X ≈ (XW)H``
is the matrix-factorisation subspace model of MFFS (Wang et al., Pattern Recognition 48,
2015), which NSSLFS makes robust (ℓ1) and sparse (ℓ2,1). Features are ranked by
``||w_i||_2`` (descending). The last term is ours (see "Choices").
"""

from __future__ import annotations

import warnings
from collections.abc import Callable

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state

from ..base import Selection, UFSSelector
from ..linalg import l2p_reweight, row_norms, sign_split, top_rows
from ..preprocessing import check_input_space
from ..validation import resolve_init

__all__ = ["NSSLFS", "nsslfs_objective", "nqp_multiplicative_update", "INITS"]

#: named values of ``init`` (W⁰) and ``h_init`` (H⁰)
INITS = ("random",)

_TINY = 1e-300
#: entries are kept ≥ this after every step (see "Choices": no entry locks at zero)
_FLOOR = 1e-150


def nsslfs_objective(
    X: np.ndarray, W: np.ndarray, H: np.ndarray, lam: float, beta: float, eps: float
) -> float:
    """The smoothed objective (N2) that the algorithm decreases::

        J_ε(W, H) = Σ_ij √(E_ij² + ε) + λ Σ_i √(||w_i||² + ε) + (β/2)||H||_F²,
        E = X − XWH.

    ``J ≤ J_ε ≤ J + √ε (np + λp)`` with ``J`` the unsmoothed (N1).
    """
    return _objective(_smoothed_abs(X - (X @ W) @ H, eps), W, H, lam, beta, eps)


def _smoothed_abs(E: np.ndarray, eps: float) -> np.ndarray:
    """``√(E² + ε)`` entry-wise (in place on ``E``)."""
    np.multiply(E, E, out=E)
    E += eps
    return np.sqrt(E, out=E)


def _objective(
    R: np.ndarray, W: np.ndarray, H: np.ndarray, lam: float, beta: float, eps: float
) -> float:
    """(N2) from ``R = √(E² + ε)``."""
    return float(
        R.sum() + lam * np.sqrt(row_norms(W, squared=True) + eps).sum() + 0.5 * beta * np.sum(H * H)
    )


def nqp_multiplicative_update(
    V: np.ndarray, P: np.ndarray, N: np.ndarray, b: np.ndarray, floor: float = 0.0
) -> np.ndarray:
    """One multiplicative step for a non-negative quadratic program (N5).

    For ``F(v) = ½ vᵀ(A⁺ − A⁻)v + bᵀv`` over ``v ≥ 0`` with entry-wise non-negative
    ``A⁺, A⁻`` and ``P = A⁺v``, ``N = A⁻v`` at the current ``v``::

        v_u ← v_u · (−b_u + √(b_u² + 4 P_u N_u)) / (2 P_u)

    (Sha, Saul & Lee, NIPS 2002). The numerator contains a subtraction but is ≥ 0 because
    ``√(b² + 4PN) ≥ |b|``; for ``b > 0`` it is evaluated as ``4PN / (b + √(b² + 4PN))``
    (no cancellation), i.e. ``v_u ← v_u · 2N_u / (b_u + √(b_u² + 4P_uN_u))``. The step
    minimises a separable auxiliary function of ``F`` that touches it at ``v``, so it
    never increases ``F``. With ``N = 0`` and ``b ≤ 0`` it is the Lee-Seung ratio
    ``v ⊙ (−b)/P``. The result is floored at ``floor`` (a zero entry stays zero
    otherwise).
    """
    root = np.sqrt(b * b + 4.0 * P * N)
    pos = b > 0
    factor = np.empty_like(V)
    factor[~pos] = (root[~pos] - b[~pos]) / np.maximum(2.0 * P[~pos], _TINY)
    factor[pos] = 2.0 * N[pos] / (b[pos] + root[pos])
    return np.maximum(V * factor, floor)


def _balance(W: np.ndarray, H: np.ndarray, lam: float, beta: float, eps: float) -> np.ndarray:
    """Per-component scales ``s`` for ``W → W diag(s)``, ``H → diag(s)^{-1} H`` (N8).

    ``XWH`` does not change; of (N2) only ``λΣ_i√(||w_i||² + ε) + (β/2)||H||_F²`` does.
    One majorise-minimise step on it: with ``D`` of (N3) the majoriser
    ``Σ_b (c_b s_b² + e_b / s_b²)``, ``c_b = λ Σ_i D_ii W_ib²``, ``e_b = (β/2)||h_b||²``,
    is separable and minimised by ``s_b = (e_b / c_b)^{1/4}``; so the step never increases
    (N2). A component with ``c_b = 0`` or ``e_b = 0`` keeps ``s_b = 1``.
    """
    d = l2p_reweight(W, 1.0, eps)
    c = lam * (d[:, None] * W * W).sum(axis=0)
    e = 0.5 * beta * np.einsum("ij,ij->i", H, H)
    ok = (c > 0) & (e > 0)
    s = np.ones(W.shape[1])
    s[ok] = (e[ok] / c[ok]) ** 0.25
    return s


class NSSLFS(UFSSelector):
    """NSSLFS (Zheng, Yan & Yang, Neurocomputing 2019); ranks features by ``||w_i||_2``.

    Reconstructed from the paper's abstract and FSBC's description (module docstring):
    the paper's text, equation numbers and parameter settings were not available, so
    (N1)-(N8) are our numbering and the algorithm is our derivation for the model.

    Parameters
    ----------
    n_features_to_select : int
        ``h`` (a prefix of the ranking; NSSLFS ranks every feature).
    n_clusters : int, optional
        Number of clusters ``c``; the default subspace dimension (below).
    n_components : int, optional
        ``k``, the number of columns of ``W`` (rows of ``H``), ``1 ≤ k ≤ p``. Default:
        ``n_clusters``; one of the two is required.
    lam : float, default 1.0
        ``λ > 0``, weight of ``||W||_{2,1}`` in (N1). Registry grid ``{10^-3, …, 10^3}``.
    beta : float, default 1.0
        ``β ≥ 0``, weight of ``(β/2)||H||_F²`` (ours; it fixes the scale, see "Choices").
        ``beta=0`` is (N1) without that term, i.e. the model as the abstract states it.
    init, h_init : {"random"}, callable or array
        ``W⁰`` (``p × k``) and ``H⁰`` (``k × p``), non-negative. ``"random"``: uniform
        ``[0, 1)`` entries from ``random_state`` (``W⁰`` drawn first), then rescaled so that
        ``||XW⁰H⁰||_F = ||X||_F`` (the factor split evenly between the two when both are
        random, put on the random one otherwise; arrays and callables are used as given).
        A callable is called as ``init(X, k, random_state)``
        (:func:`ufs.validation.resolve_init`). ``p`` counts the non-constant features.
    max_iter : int, default 2000
    tol : float, default 1e-5
        Stop when one iteration decreases ``J_ε`` (N2) by ``≤ tol`` relative; a
        ``ConvergenceWarning`` if that does not happen within ``max_iter``. ``tol = 0``
        runs exactly ``max_iter`` iterations (no warning).
    eps : float, default 1e-6
        Smoothing ``ε > 0`` of both non-smooth terms (N2), i.e. of the ℓ1 weights ``G``
        and the ℓ2,1 weights ``D`` (N3).
    input_space : {"standardized", "unit_range", "raw"}, default "standardized"
        The matrix the workflow passes in (:mod:`ufs.preprocessing`). The updates hold for
        data of either sign; on non-negative data (``"unit_range"``, or raw pixel/count
        data) the W- and H-steps reduce to Lee-Seung ratios.
    random_state : seeds the random initialisation.
    callback : optional ``callback(t, W=W, H=H)`` after every iteration.

    Algorithm (ours for (N1): majorise-minimise with multiplicative NQP steps)
    ------------------------------------------------------------------------
    The smoothed objective (N2) :func:`nsslfs_objective` is minimised. From
    ``√u ≤ u/(2√u₀) + √u₀/2``, at the current ``(W, H)`` with ``E = X − XWH`` the
    re-weighting (N3)::

        G_ij = 1 / (2√(E_ij² + ε)),      D_ii = 1 / (2√(||w_i||² + ε))

    gives the quadratic majoriser (N4) of ``J_ε`` (equal to it at the current point)::

        Σ_ij G_ij (X − XWH)_ij² + λ Σ_i D_ii ||w_i||² + (β/2)||H||_F² + const.

    With the other block fixed, each block of (N4) is a non-negative quadratic program;
    one step of (N5) :func:`nqp_multiplicative_update` decreases it — the abstract's
    multiplicative rule with a "subtraction item" whose non-negativity is checked. Data of
    either sign are split as ``X = X⁺ − X⁻``. One iteration:

    1. ``G, D`` from (N3) at ``(W, H)``.
    2. W-step (N6): (N5) with ``b = −Xᵀ(G ⊙ X)Hᵀ`` and::

           P = [X⁺ᵀ(G ⊙ X⁺WH) + X⁻ᵀ(G ⊙ X⁻WH)]Hᵀ + λDW
           N = [X⁺ᵀ(G ⊙ X⁻WH) + X⁻ᵀ(G ⊙ X⁺WH)]Hᵀ

       (``P − N`` is the gradient of the quadratic part of ½(N4) in ``W``; both bilinear
       forms have non-negative coefficients because ``G, H ≥ 0``, which (N5) needs).
    3. ``G`` from (N3) again at the new ``W`` (re-majorise); ``A = XW = A⁺ − A⁻``.
    4. H-step (N7): (N5) with ``b = −Aᵀ(G ⊙ X)`` and::

           P = A⁺ᵀ(G ⊙ A⁺H) + A⁻ᵀ(G ⊙ A⁻H) + (β/2)H,   N = A⁺ᵀ(G ⊙ A⁻H) + A⁻ᵀ(G ⊙ A⁺H)

    5. Scale step (N8), ``β > 0`` only: ``W ← W diag(s)``, ``H ← diag(s)^{-1} H`` with
       ``s`` from :func:`_balance` (``XWH`` unchanged; one MM step on the two penalties).
    6. Record ``J_ε(W, H)``; stop on ``tol``.

    Steps 2, 4 and 5 each decrease a majoriser of ``J_ε`` that is tight at the current
    point, so ``J_ε`` never increases (checked at every iteration in the tests). Every
    entry is kept ``≥ 10^-150`` by each multiplicative step (so ``W, H > 0``). One iteration costs ``O(npk)`` time; the
    largest arrays are ``n × p`` (data, residual, weights): nothing ``n × n`` or ``p × p``.

    Choices the paper leaves open (here: that the available description leaves open)
    ------------------------------------------------------------------------------
    * **Model details**: entry-wise ℓ1 loss (the abstract's "ℓ1-norm error function" for
      "sparse noise"; not the sample-wise ℓ2,1), the factorisation ``X ≈ (XW)H`` (MFFS),
      ℓ2,1 on ``W``, ``W, H ≥ 0``, ranking by ``||w_i||_2``.
    * **Scale (β)**: ``(XW)H`` is unchanged by ``W → W/a, H → aH`` while
      ``λ||W||_{2,1}`` falls by ``a``, so (N1) without a bound on ``H`` has no minimiser.
      With ``β = 0`` the iterates drift (measured on planted clusters, λ = 100, 3000
      iterations: ``||W||_{2,1}`` fell at every iteration, 19.6 → 1.05, ``||H||_F`` rose
      at 99.6 % of them, 2.3 → 23.7); the ranking stays usable. ``(β/2)||H||_F²`` makes
      the model well-posed and keeps the H-step a quadratic program. ``(λ, β)`` and
      ``(λ/a, a²β)`` give the same problem up to ``W → aW, H → H/a``, which does not
      change the ranking (exactly so as ``ε → 0``): only ``λ²β`` matters, hence ``β = 1``
      is fixed and ``λ`` tuned. At a fixed point of step 5,
      ``λ Σ_i ||w_i||²/√(||w_i||² + ε) = β||H||_F²`` (tested).
    * **Algorithm**: IRLS majorisation of both non-smooth terms with ``ε = 1e-6``; the
      multiplicative NQP step of Sha, Saul & Lee for each block, W before H; the scale
      step (N8); the floor ``10^-150`` (a multiplicative step keeps an exact zero at zero
      forever — without the floor, entries that underflowed to 0 stayed there with a
      negative gradient, a non-stationary point; with it they recover in one step, since
      the ratio then scales as ``1/v``).
    * **Convergence** is slow, as usual for multiplicative updates: 820-1600 iterations
      to a relative decrease of 1e-5 on 160 × 50 planted clusters (300-400 to 1e-4), about
      1050-1250 on 2000-10000 × 100 Gaussian data; hence ``max_iter = 2000``. With
      ``ε = 0.1`` or ``10^-3`` the iterates reach a KKT point of (N2) (tested); at
      ``ε ≤ 10^-6`` (nearly exact ℓ1) the smoothed problem is stiff and the KKT residual is
      still a few percent after 20 000 iterations.
    * **Subspace dimension** ``k = n_clusters`` by default; **initialisation** uniform
      random, scale-matched; **stopping** relative decrease of ``J_ε`` ``≤ 10^-5`` or 2000
      iterations; ``objective_`` records ``J_ε`` (N2), not the unsmoothed (N1).

    Attributes
    ----------
    W_, H_ : ndarray
        The factors at exit (``p × k``, ``k × p``, non-negative).
    W_init_, H_init_ : ndarray
        ``W⁰`` and ``H⁰`` (after the scale matching of ``"random"``).
    objective_ : ndarray
        ``J_ε`` at ``(W⁰, H⁰)`` and after every iteration (non-increasing).
    n_iter_, converged_ : int, bool
    n_components_ : int
        ``k``.
    """

    kind = "ranking"
    score_power = 1  # ranks by ||w_i||: resolved_rank_ recorded
    requires_n_clusters = False

    def min_n_features(self, n_clusters):  # k = n_components (default c) <= p
        return n_clusters if self.n_components is None else self.n_components

    def __init__(
        self,
        n_features_to_select: int = 10,
        n_clusters: int | None = None,
        *,
        n_components: int | None = None,
        lam: float = 1.0,
        beta: float = 1.0,
        init: str | Callable | np.ndarray = "random",
        h_init: str | Callable | np.ndarray = "random",
        max_iter: int = 2000,
        tol: float = 1e-5,
        eps: float = 1e-6,
        input_space: str = "standardized",
        random_state=None,
        callback=None,
    ):
        self.n_features_to_select = n_features_to_select
        self.n_clusters = n_clusters
        self.n_components = n_components
        self.lam = lam
        self.beta = beta
        self.init = init
        self.h_init = h_init
        self.max_iter = max_iter
        self.tol = tol
        self.eps = eps
        self.input_space = input_space
        self.random_state = random_state
        self.callback = callback

    # -- parameters ---------------------------------------------------------------------
    def _check_params(self, p: int) -> int:
        check_input_space(self.input_space)
        if not float(self.lam) > 0:
            raise ValueError(f"lam must be > 0; got {self.lam}")
        if not float(self.beta) >= 0:
            raise ValueError(f"beta must be >= 0; got {self.beta}")
        if not float(self.eps) > 0:
            raise ValueError(f"eps must be > 0; got {self.eps}")
        if not float(self.tol) >= 0:
            raise ValueError(f"tol must be >= 0; got {self.tol}")
        if (
            isinstance(self.max_iter, bool)
            or int(self.max_iter) != self.max_iter
            or self.max_iter < 1
        ):
            raise ValueError(f"max_iter must be an integer >= 1; got {self.max_iter!r}")
        k = self.n_components if self.n_components is not None else self.n_clusters
        if k is None:
            raise ValueError("NSSLFS needs n_components or n_clusters (the subspace dimension k)")
        if isinstance(k, bool) or int(k) != k or not 1 <= int(k) <= p:
            raise ValueError(
                f"n_components (default: n_clusters) must be an integer in [1, {p}]; got {k!r}"
            )
        return int(k)

    def _initial(self, X: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        p = X.shape[1]
        rs = check_random_state(self.random_state)
        W0 = resolve_init(
            self.init,
            {"random": lambda: rs.random_sample((p, k))},
            (p, k),
            X=X,
            n_clusters=k,
            random_state=self.random_state,
            nonnegative=True,
        )
        H0 = resolve_init(
            self.h_init,
            {"random": lambda: rs.random_sample((k, p))},
            (k, p),
            X=X,
            n_clusters=k,
            random_state=self.random_state,
            nonnegative=True,
            name="h_init",
        )
        w_rand = isinstance(self.init, str)
        h_rand = isinstance(self.h_init, str)
        if w_rand or h_rand:
            rec = np.linalg.norm((X @ W0) @ H0)
            if rec > 0:
                s = np.linalg.norm(X) / rec
                if w_rand and h_rand:
                    W0 *= np.sqrt(s)
                    H0 *= np.sqrt(s)
                elif w_rand:
                    W0 *= s
                else:
                    H0 *= s
        return W0, H0

    # -- solver -------------------------------------------------------------------------
    def _fit(self, X: np.ndarray) -> Selection:
        p = X.shape[1]
        k = self._check_params(p)
        lam, beta, eps, tol = map(float, (self.lam, self.beta, self.eps, self.tol))
        W, H = self._initial(X, k)
        self.W_init_, self.H_init_ = W.copy(), H.copy()
        Xp, Xm = sign_split(X)
        signed = bool(Xm.any())
        A = X @ W
        R = _smoothed_abs(X - A @ H, eps)  # √(E² + ε), E the current residual
        objective = [_objective(R, W, H, lam, beta, eps)]
        converged = False
        it = 0
        for it in range(1, int(self.max_iter) + 1):
            # 1. re-weighting (N3) at (W, H)
            G = 0.5 / R
            d = l2p_reweight(W, 1.0, eps)
            # 2. W-step (N6)
            b = -X.T @ ((G * X) @ H.T)
            if signed:
                Bp = (Xp @ W) @ H
                Bm = (Xm @ W) @ H
                P = Xp.T @ ((G * Bp) @ H.T) + Xm.T @ ((G * Bm) @ H.T)
                N = Xp.T @ ((G * Bm) @ H.T) + Xm.T @ ((G * Bp) @ H.T)
            else:
                P = X.T @ ((G * (A @ H)) @ H.T)
                N = np.zeros_like(W)
            P += lam * d[:, None] * W
            W = nqp_multiplicative_update(W, P, N, b, _FLOOR)
            # 3. re-majorise (N3) at the new W
            A = X @ W
            G = 0.5 / _smoothed_abs(X - A @ H, eps)
            # 4. H-step (N7)
            Ap, Am = sign_split(A)
            b = -A.T @ (G * X)
            P = Ap.T @ (G * (Ap @ H)) + Am.T @ (G * (Am @ H)) + 0.5 * beta * H
            N = Ap.T @ (G * (Am @ H)) + Am.T @ (G * (Ap @ H))
            H = nqp_multiplicative_update(H, P, N, b, _FLOOR)
            # 5. scale step (N8): loss-invariant rescaling of the k components
            if beta > 0:
                s = _balance(W, H, lam, beta, eps)
                W *= s
                H /= s[:, None]
                A *= s
            # 6. objective (N2) and stopping rule
            R = _smoothed_abs(X - A @ H, eps)
            objective.append(_objective(R, W, H, lam, beta, eps))
            if self.callback is not None:
                self.callback(it, W=W, H=H)
            prev, cur = objective[-2], objective[-1]
            if tol > 0 and prev - cur <= tol * abs(prev):
                converged = True
                break
        self.objective_ = np.asarray(objective)
        self.n_iter_ = it
        self.converged_ = converged
        self.n_components_ = k
        self.W_, self.H_ = W, H
        if tol > 0 and not converged:
            warnings.warn(
                f"NSSLFS did not converge in {self.max_iter} iterations (tol={tol:g})",
                ConvergenceWarning,
                stacklevel=3,
            )
        scores = row_norms(W)
        return Selection(order=top_rows(scores, p), scores=scores)
