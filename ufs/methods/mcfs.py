"""Multi-Cluster Feature Selection (Cai, Zhang & He, "Unsupervised Feature Selection for
Multi-Cluster Data", KDD 2010).

Algorithm (paper §3; the paper's data matrix is ``n × p`` like ours, rows are samples)::

    1. S: heat-kernel kNN graph (k = 5), D = diag(S 1), L = D − S           (§3.1)
    2. Y = the c eigenvectors of  L y = λ D y  with the smallest eigenvalues,
       the trivial constant one excluded (spectral embedding, Eq. 2)        (§3.1)
    3. for each column y_k:  min_a ||y_k − X a||²  s.t. ||a||_1 ≤ γ,
       γ chosen so that a_k has exactly h non-zeros (LARS, Eq. 4)          (§3.2)
    4. MCFS(j) = max_k |a_{k,j}|; select the h features with the largest score (§3.3)

Defaults follow Cai's code (``MCFS_p.m`` → ``SR.m``, "RidgeLasso" with LARS) where it
differs from the printed equations: step 3 adds ``ridge = 0.001`` to the diagonal of the
Gram matrix ``XᵀX`` (not to the data), and each ``a_k`` is scaled to unit ℓ2 norm before
the max of step 4. ``ridge=0, coef_normalization="none"`` is the paper as printed.
"""

from __future__ import annotations

import warnings

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp
from sklearn.linear_model import lars_path, lars_path_gram

from ..base import Selection, UFSSelector
from ..eigen import component_eigenpairs
from ..graph import degree
from ..linalg import top_rows

__all__ = [
    "MCFS",
    "spectral_embedding",
    "lars_cardinality",
    "sparse_spectral_regression",
    "mcfs_scores",
]

#: above this many features the p × p Gram matrix is not formed (memory 8 p² bytes)
GRAM_LIMIT = 3000
#: dense ``eigh`` only up to this many samples per graph component; above, certified
#: Lanczos on the sparse ``M`` (a kNN graph has ``O(nk)`` non-zeros, so Lanczos beats an
#: ``O(n³)`` dense solve early)
DENSE_LIMIT = 200
#: values of ``coef_normalization``
COEF_NORMALIZATIONS = ("unit", "none")


def spectral_embedding(S, c: int, *, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """The ``c`` smallest non-trivial generalised eigenpairs of ``L y = λ D y`` (Eq. 2).

    Solved, as in Cai's ``Eigenmap.m``, through the largest eigenvectors ``u`` of the
    sparse normalised affinity ``M = D^{-1/2} S D^{-1/2}`` (``M u = (1 − λ) u``) and
    mapped back with ``y = D^{-1/2} u``. The trivial pair (``λ = 0``, ``y ∝ 1``, i.e.
    ``u ∝ D^{1/2} 1``) is dropped. When the graph is disconnected ``λ = 0`` is repeated;
    then, as in ``Eigenmap.m``, the ``λ = 0`` block is re-orthonormalised against
    ``D^{1/2} 1`` (QR) and only that direction is dropped, the other component
    indicators are kept. Returns ``(lam, Y)`` with ``lam`` increasing and ``Y`` ``n × c``.
    Eigenvector signs are arbitrary; MCFS scores do not depend on them (see ``MCFS``).
    Solver: :func:`ufs.eigen.component_eigenpairs` on the sparse ``M`` (nothing ``n × n``
    is dense): per connected component, the unit eigenvector ``D^{1/2} 1_C`` in closed form
    and the other pairs by dense ``eigh`` up to ``DENSE_LIMIT`` samples, certified
    Lanczos above. Every unit eigenvalue of a disconnected graph is found exactly (plain
    Lanczos returned 4 of 9 on a 9-component COIL20 graph). When ``c + 1`` is
    smaller than the number of components the unit block straddles the boundary and
    which indicators are kept is arbitrary (here: the largest components; in Cai's code,
    whatever ``eigs`` returns).
    """
    d = degree(S) if sp.issparse(S) else np.asarray(S).sum(axis=1)
    n = d.shape[0]
    if not 1 <= c <= n - 1:
        raise ValueError(f"need 1 <= n_clusters <= n_samples - 1 = {n - 1}; got {c}")
    with np.errstate(divide="ignore"):
        dmh = np.where(d > 0, 1.0 / np.sqrt(d), 0.0)
    Dm = sp.diags(dmh)
    M = (Dm @ sp.csr_matrix(S) @ Dm).tocsr()
    res = component_eigenpairs(
        M,
        c + 1,
        which="largest",
        trivial_weights=np.sqrt(d),
        trivial_value=1.0,
        dense_limit=DENSE_LIMIT,
        seed=seed,
    )
    w, U = res.values, res.vectors
    u0 = np.sqrt(d)
    u0 /= np.linalg.norm(u0)
    b = int(np.sum(w > w[0] - 1e-9))  # size of the top (eigenvalue-1) block
    if b > 1:
        Q, _ = np.linalg.qr(np.column_stack([u0, U[:, :b]]))
        U = U.copy()
        U[:, 1:b] = Q[:, 1:b]  # the block's complement of u0; column 0 is dropped
    Y = dmh[:, None] * U[:, 1:]
    return 1.0 - w[1:], Y


def lars_cardinality(
    X: np.ndarray,
    y: np.ndarray,
    h: int,
    *,
    method: str = "lasso",
    ridge: float = 0.0,
    gram: np.ndarray | None = None,
) -> np.ndarray:
    """Coefficients of the first point of the LARS path with ``h`` non-zeros (Eq. 4).

    ``method="lasso"``: the lasso path computed by LARS with the lasso modification
    (variables may leave the active set), i.e. Eq. (4) with the smallest ℓ1 bound ``γ``
    at which ``||a||_0 = h``. ``method="lar"``: plain least-angle regression, as
    ``sklearn.linear_model.Lars(n_nonzero_coefs=h)`` and scikit-feature. ``X`` must be
    column-centred (the regression has an intercept; centring ``y`` is then implicit).

    ``ridge`` (``α ≥ 0``) runs the path on the ridge-perturbed Gram ``XᵀX + α I`` with the
    same ``Xᵀy``: the elastic-net path of ``||y − Xa||² + α||a||²`` under the ℓ1 bound, as
    Cai's ``SR.m`` ("RidgeLasso"). It equals LARS on the augmented data
    ``[X; √α I]``, ``[y; 0]``. ``0`` is Eq. (4) as printed. With ``α > 0`` the Gram is
    positive definite, so every ``h ≤ p`` is reachable even when ``h`` exceeds the rank of
    ``X``. The Gram is formed when ``p ≤ GRAM_LIMIT``. Above, ``α = 0`` runs LARS on ``X``;
    ``α > 0`` with ``"lasso"`` uses :func:`_lars_ridge_gram_free` (nothing ``p × p`` is
    formed), and with ``"lar"`` runs scikit-learn's LAR on the augmented data (dense,
    ``8 (n + p) p`` bytes). The LAR variant is not Gram-free because scikit-learn's
    ``"lar"`` flips the sign of an active variable whose coefficient crosses zero.
    Textbook LAR keeps it, so the two paths part there.

    If the path ends before ``h`` variables are active, the end point is returned.
    scikit-learn ends its path once ``C/n ≤ 1.2e-7`` (float32 eps). With a small ridge
    that is before the last one or two variables join, which matters only for ``h``
    close to ``p > n``. The Gram-free route runs to the exact end. Coefficients below
    1e-12 × the largest count as zero: scikit-learn can leave about 1e-17 on a variable
    it drops. ``gram``, if given, must be the perturbed Gram ``XᵀX + α I`` (shared across several
    responses; its first diagonal entry is checked).
    """
    n, p = X.shape
    if ridge < 0 or not np.isfinite(ridge):
        raise ValueError(f"ridge must be a finite number >= 0; got {ridge!r}")
    y = y - y.mean()
    if gram is None and p <= GRAM_LIMIT and ridge > 0:
        gram = X.T @ X
        gram[np.diag_indices(p)] += ridge
    if gram is not None:
        g00 = float(X[:, 0] @ X[:, 0]) + ridge
        if not np.isclose(gram[0, 0], g00, rtol=1e-8, atol=1e-12):
            raise ValueError(
                f"gram[0, 0] = {gram[0, 0]!r} is not X[:, 0]ᵀX[:, 0] + ridge = {g00!r}"
            )
    elif ridge > 0 and method == "lasso":
        return _lars_ridge_gram_free(X, y, h, ridge)
    elif ridge > 0:  # "lar": sklearn's LAR on the augmented data, 8 (n + p) p bytes
        X = np.vstack([X, np.sqrt(ridge) * np.eye(p)])
        y = np.concatenate([y, np.zeros(p)])
    max_iter = h
    while True:
        if gram is not None:
            _, _, coefs = lars_path_gram(
                X.T @ y, gram, n_samples=n, max_iter=max_iter, method=method
            )
        else:
            _, _, coefs = lars_path(X, y, max_iter=max_iter, method=method)
        # a dropped variable can keep a rounding-level coefficient (1e-17) at its kink
        tiny = 1e-12 * np.max(np.abs(coefs), axis=0, keepdims=True)
        coefs = np.where(np.abs(coefs) > tiny, coefs, 0.0)
        nnz = np.count_nonzero(coefs, axis=0)
        hit = np.flatnonzero(nnz >= h)
        if hit.size:
            return coefs[:, hit[0]]
        # no h-sparse point yet: the path either ended (rank reached) or dropped variables
        if coefs.shape[1] < max_iter + 1 or max_iter >= 4 * max(h, p):
            return coefs[:, -1]
        max_iter *= 2


def _lars_ridge_gram_free(X: np.ndarray, y: np.ndarray, h: int, ridge: float) -> np.ndarray:
    """The point of :func:`lars_cardinality` (``"lasso"``) on ``XᵀX + α I``, without
    forming any ``p × p`` matrix (for ``p > GRAM_LIMIT``; ``α > 0``, ``X`` and ``y``
    centred).

    LARS with the lasso modification (Efron et al. 2004) on the Gram ``G = XᵀX + α I``.
    The correlations are ``c = Xᵀy − G a``. The active set ``A`` moves along ``w``, where
    ``G_AA w = sign(c_A)``, so ``|c_A|`` falls at unit rate. An inactive ``c_j`` falls at
    rate ``(Xᵀ X_A w)_j``. Each step goes to the first join (``|c_j| = |c_A|``) or to the
    first zero crossing of an active coefficient (that variable is dropped). ``G_AA`` is
    kept as a Cholesky factor grown by one row per join. A step costs ``O(np)``. Returns
    the first kink with ``h`` non-zeros, or the end of the path.
    """
    n, p = X.shape
    a = np.zeros(p)
    c = X.T @ y
    active: list[int] = []
    is_active = np.zeros(p, dtype=bool)
    L = np.zeros((0, 0))
    dropped = -1  # just left the active set at |c| = C: its own side may not rejoin at γ = 0

    def add(j: int) -> None:
        nonlocal L
        k = len(active)
        ell = sla.solve_triangular(L, X[:, active].T @ X[:, j], lower=True) if k else np.zeros(0)
        L2 = np.zeros((k + 1, k + 1))
        L2[:k, :k] = L
        L2[k, :k] = ell
        L2[k, k] = np.sqrt(max(float(X[:, j] @ X[:, j]) + ridge - float(ell @ ell), 1e-12 * ridge))
        L = L2
        active.append(j)
        is_active[j] = True

    j0 = int(np.argmax(np.abs(c)))
    if c[j0] == 0:
        return a
    add(j0)
    for _ in range(4 * max(h, p) + 1):
        A = np.asarray(active)
        s = np.sign(c[A])
        C = float(np.max(np.abs(c[A])))
        w = sla.cho_solve((L, True), s)
        rate = X.T @ (X[:, A] @ w)  # −dc_j/dγ for inactive j (active: s_j − α w_j)
        with np.errstate(divide="ignore", invalid="ignore"):
            g1 = (C - c) / (1.0 - rate)  # c_j reaches +(C − γ)
            g2 = (C + c) / (1.0 + rate)  # c_j reaches −(C − γ)
        if dropped >= 0:
            (g1 if c[dropped] > 0 else g2)[dropped] = np.inf
        g = np.minimum(np.where(g1 > 0, g1, np.inf), np.where(g2 > 0, g2, np.inf))
        g[is_active] = np.inf
        j = int(np.argmin(g))
        gamma = min(float(g[j]), C)  # γ = C: every correlation reaches 0, the path ends
        with np.errstate(divide="ignore", invalid="ignore"):
            z = -a[A] / w  # an active coefficient crosses zero
        z = np.where(z > 0, z, np.inf)
        i = int(np.argmin(z))
        drop = bool(z[i] < gamma)
        if drop:
            gamma = float(z[i])
        a[A] += gamma * w
        c -= gamma * rate
        c[A] = s * (C - gamma)
        dropped = -1
        if drop:
            dropped = active.pop(i)
            a[dropped] = 0.0
            is_active[dropped] = False
            XA = X[:, active]
            L = np.linalg.cholesky(XA.T @ XA + ridge * np.eye(len(active)))
            continue
        if np.count_nonzero(a) >= h or gamma >= C:
            return a
        add(j)
    return a


def sparse_spectral_regression(
    X: np.ndarray,
    Y: np.ndarray,
    h: int,
    *,
    method: str = "lasso",
    ridge: float = 1e-3,
    coef_normalization: str = "unit",
) -> tuple[np.ndarray, np.ndarray]:
    """Step 3 for every column of ``Y``: the ``p × c`` LARS coefficients ``a_k`` (Eq. 4).

    Each ``a_k`` is :func:`lars_cardinality` of ``y_k`` (``ridge`` on the Gram diagonal).
    ``coef_normalization="unit"`` then scales each ``a_k`` to unit ℓ2 norm, as Cai's
    ``SR.m`` returns them (``a_k / ||a_k||``), so the §3.3 max compares directions and
    not the scale of each regression. A zero ``a_k`` is kept at zero. ``"none"`` keeps
    the raw coefficients (paper §3.3 as printed). ``X`` must be column-centred. Returns
    ``(coef, norms)``, ``norms`` being the ℓ2 norms of the raw ``a_k``.
    """
    if coef_normalization not in COEF_NORMALIZATIONS:
        raise ValueError(
            f"coef_normalization must be one of {COEF_NORMALIZATIONS}; got {coef_normalization!r}"
        )
    p = X.shape[1]
    gram = None
    if p <= GRAM_LIMIT:  # shared by the c regressions
        gram = X.T @ X
        gram[np.diag_indices(p)] += ridge
    coef = np.column_stack(
        [
            lars_cardinality(X, Y[:, k], h, method=method, ridge=ridge, gram=gram)
            for k in range(Y.shape[1])
        ]
    )
    norms = np.linalg.norm(coef, axis=0)
    if coef_normalization == "unit":
        coef = coef / np.where(norms > 0, norms, 1.0)
    return coef, norms


def mcfs_scores(coef: np.ndarray) -> np.ndarray:
    """MCFS score of §3.3: ``max_k |a_{k,j}|`` per row ``j`` of ``coef`` (``p × c``)."""
    return np.max(np.abs(coef), axis=1)


class MCFS(UFSSelector):
    """Multi-Cluster Feature Selection: select ``h`` features by sparse spectral regression.

    Parameters
    ----------
    n_features_to_select : int
        ``h``, also the LARS cardinality ``d`` of every regression (paper §3.2), so the
        fit depends on ``h`` (``kind = "subset"``).
    n_clusters : int
        ``c``, the number of eigenvectors (the paper sets it to the number of clusters,
        §4.2).
    n_neighbors : int
        ``k`` of the kNN graph (paper §4.2: ``k = 5``).
    weight : {"heat", "binary", "cosine"}
        Edge weights (paper §3.1 lists 0-1, heat kernel and dot-product; Cai's code
        defaults to the heat kernel). Shared heat kernel ``exp(−||x_i−x_j||²/(2σ²))``.
    sigma : float, optional
        Heat-kernel bandwidth. ``None``: the shared rule of :mod:`ufs.graph` (mean
        distance to the k neighbours). Cai's ``MCFS_p.m`` uses ``t`` = mean of all
        pairwise distances, which needs a dense ``n × n`` distance matrix; not done here.
    lars_method : {"lasso", "lar"}
        ``"lasso"`` (default) solves Eq. (4), the ℓ1-constrained regression, along the
        LARS-lasso path; ``"lar"`` is plain LARS as ``sklearn.linear_model.Lars``.
    ridge : float, default 1e-3
        ``α`` added to the diagonal of the Gram matrix ``XᵀX`` on which LARS runs (not to
        the data), as Cai's ``SR.m`` (``RidgeAlpha = 0.001``, "RidgeLasso"): each
        regression is then the elastic-net path of ``||y_k − Xa||² + α||a||²`` under the
        ℓ1 bound. Absolute, not scaled by ``n`` (``XᵀX`` has diagonal ``n`` on
        standardised data). ``0`` is Eq. (4) as printed (the earlier behaviour).
        With ``α > 0`` every ``h ≤ p`` is reachable, also when ``h`` exceeds the rank of
        ``X`` (``p > n``).
    coef_normalization : {"unit", "none"}, default "unit"
        ``"unit"``: each ``a_k`` is scaled to unit ℓ2 norm before the max of §3.3, as
        ``SR.m`` returns the LARS vectors (``a_k / ||a_k||``) to ``MCFS_p.m``, so the score
        compares directions, not the scale of each eigenvector's regression. ``"none"``:
        raw coefficients, §3.3 as printed (the earlier behaviour). Both are
        invariant to the sign of each eigenvector.

    Choices the paper leaves open
    -----------------------------
    * Trivial eigenvector: dropped, exactly as Cai's ``Eigenmap.m`` (``c + 1``
      eigenvectors computed, the constant one removed), so ``Y`` has ``c`` columns. With
      a disconnected graph only the ``D^{1/2} 1`` direction is removed from the
      eigenvalue-1 block (see :func:`spectral_embedding`).
    * ``Y = D^{-1/2} U`` is used unnormalised (D-orthonormal columns), as in ``Eigenmap``.
    * Score (§3.3): ``max_k |a_{k,j}|``, as in the paper and ``MCFS_p.m``
      (``max(abs(eigvector),[],2)``). scikit-feature takes the *signed* maximum, which
      discards features with large negative coefficients; with ``|·|`` the selection
      does not depend on the (arbitrary) sign of each eigenvector.
    * Ridge on the Gram and unit-norm ``a_k``: Cai's code, not in the paper (see
      ``ridge`` and ``coef_normalization``). On the parity input (digits, stored graph)
      the defaults select the same top 10/20/50 as ``MCFS_p.m``, in the same order, with
      coefficients equal to about 1e-12. ``ridge=0, coef_normalization="none"`` matches
      9/10, 18/20 and 50/50.
    * Cardinality: the first kink of the path with ``h`` non-zeros, as ``MCFS_p`` called
      with one ``h`` (``lars`` stops there). Called with a list of ``h``, Cai's ``SR``
      runs one path to ``max(h)`` and keeps the *last* visit of each size. That differs
      only when the lasso path drops a variable.
    * Intercept: ``X`` is centred column-wise and ``y_k`` centred (a no-op for
      standardised data). Cai's ``SR.m`` regresses without an intercept on ``X`` as given.
    * If fewer than ``h`` features have a non-zero coefficient in any regression (only
      with ``ridge=0`` and ``h`` above the rank of ``X``), the remaining ones are taken by
      score (0) with ties to the lower index, and a ``UserWarning`` is issued.
    * The ``p × p`` Gram matrix ``XᵀX + αI`` is computed once and shared by the ``c``
      regressions when ``p ≤ GRAM_LIMIT``. Above, ``ridge=0`` runs LARS on ``X``, and
      ``ridge > 0`` runs a Gram-free LARS-lasso on ``XᵀX + αI`` (same path, ``O(np)``
      memory; ``"lar"``: see :func:`lars_cardinality`). Cai's ``SR.m`` appends ``√α I``
      rows to the data for ``p ≥ 10000``, which is the same path.

    Attributes
    ----------
    embedding_ : ndarray, n × c
        Spectral embedding ``Y``.
    eigenvalues_ : ndarray, c
        Its generalised eigenvalues ``λ`` (increasing).
    coef_ : ndarray, p_informative × c
        LARS coefficients ``a_k`` (columns) as scored: unit ℓ2 norm under
        ``coef_normalization="unit"``, raw otherwise. In the coordinates of the
        informative (non-constant) features.
    coef_norms_ : ndarray, c
        ℓ2 norms of the raw ``a_k``. The raw coefficients are ``coef_ * coef_norms_``
        under ``"unit"``.
    mcfs_scores_ : ndarray
        ``max_k |a_{k,j}|`` (also in ``scores_``, full width, constant features −inf).
    """

    kind = "subset"

    def __init__(
        self,
        n_features_to_select: int = 10,
        n_clusters: int | None = None,
        *,
        n_neighbors: int = 5,
        weight: str = "heat",
        sigma: float | None = None,
        lars_method: str = "lasso",
        ridge: float = 1e-3,
        coef_normalization: str = "unit",
    ):
        self.n_features_to_select = n_features_to_select
        self.n_clusters = n_clusters
        self.n_neighbors = n_neighbors
        self.weight = weight
        self.sigma = sigma
        self.lars_method = lars_method
        self.ridge = ridge
        self.coef_normalization = coef_normalization

    def graph_spec(self) -> dict:
        return {"n_neighbors": self.n_neighbors, "weight": self.weight, "sigma": self.sigma}

    def _fit(self, X: np.ndarray) -> Selection:
        if self.lars_method not in ("lasso", "lar"):
            raise ValueError(f"lars_method must be 'lasso' or 'lar'; got {self.lars_method!r}")
        if self.coef_normalization not in COEF_NORMALIZATIONS:
            raise ValueError(
                f"coef_normalization must be one of {COEF_NORMALIZATIONS}; "
                f"got {self.coef_normalization!r}"
            )
        ridge = float(self.ridge)
        if not (np.isfinite(ridge) and ridge >= 0):
            raise ValueError(f"ridge must be a finite number >= 0; got {self.ridge!r}")
        h, c = self._h, self._k
        S = self._graph(X)
        lam, Y = spectral_embedding(S, c)
        Xc = X - X.mean(axis=0)
        coef, norms = sparse_spectral_regression(
            Xc,
            Y,
            h,
            method=self.lars_method,
            ridge=ridge,
            coef_normalization=self.coef_normalization,
        )
        score = mcfs_scores(coef)  # §3.3: max over eigenvectors of |a_{k,j}|
        if np.count_nonzero(score) < h:
            warnings.warn(
                f"only {np.count_nonzero(score)} features have a non-zero LARS coefficient; "
                f"{h} requested (h exceeds the rank of X); the rest are filled by index",
                UserWarning,
                stacklevel=3,
            )
        self.embedding_ = Y
        self.eigenvalues_ = lam
        self.coef_ = coef
        self.coef_norms_ = norms
        self.mcfs_scores_ = score
        return Selection(order=top_rows(score, h), scores=score)
