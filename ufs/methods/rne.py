"""RNE: Robust Neighborhood Embedding (Liu, Ye, Li, Wang & Gao, "Robust neighborhood
embedding for unsupervised feature selection", Knowledge-Based Systems 193, 2020).

The paper's text was not available to us; the model and the solver below are those of
the authors' code (``RNE_obj.m`` + ``LLE.m``, as shipped in Auto-UFSTool) and of the
description in SPCAFS §2 ("RNE selects features by calculating feature weight matrix
through locally linear embedding algorithm, and utilizing ℓ1-norm to minimize its
reconstruction error"). Samples are rows (``X`` is ``n × p``), as in the authors' code.

Model. ``W`` (``n × n``, ``k`` non-zeros per row) holds the locally linear embedding
(LLE) reconstruction weights of each sample from its ``k`` nearest neighbours
(Roweis & Saul 2000): ``min Σ_i ||x_i − Σ_j W_ij x_j||²`` s.t. ``Σ_j W_ij = 1``. With
``A = (I − Wᵀ) X`` (the authors' orientation, see ``reconstruction``) RNE learns a
non-negative projection ``H`` (``p × m``) whose embedding ``AH`` has a small ℓ1-norm,
with the orthogonality ``HᵀH = I`` as a penalty::

    min_{H ≥ 0}  ||A H||_1 + (α/4) ||HᵀH − I||_F²

and ranks feature ``j`` by ``||h_j||²``. The ℓ1 loss is split by ADMM with ``M = AH``
and multiplier ``Y``; the augmented Lagrangian is
``||M||_1 + ⟨Y, M − AH⟩ + (γ/2)||M − AH||_F² + (α/4)||HᵀH − I||_F²``.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable

import numpy as np
import scipy.sparse as sp
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state

from ..base import Selection, UFSSelector
from ..graph import knn_indices
from ..linalg import MATLAB_EPS, sign_split
from ..validation import resolve_init

__all__ = ["RNE", "lle_weights", "RECONSTRUCTIONS", "INITS", "GRAM_MEMORY_CAP"]

#: values of ``reconstruction``
RECONSTRUCTIONS = ("transposed", "rows")
#: named values of ``init``
INITS = ("random",)
#: the sign split of ``AᵀA`` is a dense ``p × p`` matrix; refuse above this many bytes
GRAM_MEMORY_CAP = 2 * 1024**3
#: the authors' LLE regulariser (``tol = 1e-3`` when ``k > p``)
LLE_REG = 1e-3
#: rows of the ``n × k × p`` neighbour differences formed at once (memory, in floats)
_CHUNK_FLOATS = 4_000_000


def lle_weights(
    X: np.ndarray, n_neighbors: int = 5, *, reg: float | None = None
) -> tuple[sp.csr_matrix, int]:
    """LLE reconstruction weights as in the authors' ``LLE.m`` (Roweis & Saul's recipe).

    For each sample ``x_i`` with ``k`` nearest other samples ``N(i)``
    (:func:`ufs.graph.knn_indices`: the sample itself excluded): ``Z = X[N(i)] − x_i``
    (``k × p``), the local Gram ``C = ZZᵀ``, ``C ← C + r·tr(C)·I``, solve ``Cw = 1`` and
    normalise ``w ← w / Σw`` (the minimiser of ``||x_i − Σ_j w_j x_j||²`` under
    ``Σ_j w_j = 1``). Row ``i`` of the returned CSR ``W`` holds ``w`` at ``N(i)``.

    ``reg``: ``r``. ``None`` is the authors' rule, ``r = 1e-3`` when ``k > p`` (``C`` is
    then singular) and ``0`` otherwise. Where ``C`` is still singular to working
    precision (reciprocal condition number below machine eps: duplicate or affinely
    dependent neighbours; the authors' code would return Inf/NaN weights there),
    ``r = 1e-3`` is used for that sample, and uniform weights ``1/k`` where ``tr(C) = 0``
    (every neighbour coincides with ``x_i``). Returns ``(W, n_fallback)``, the number of
    samples that needed this fallback.

    The authors take the neighbours as positions ``2..k+1`` of each column of the sorted
    ``n × n`` distance matrix (``‖x_i‖² + ‖x_j‖² − 2x_iᵀx_j``), i.e. they assume the
    sample itself sorts first; this is the same set unless there are exact duplicates or
    ties at the ``k``-th distance (identical on the parity input).
    """
    X = np.asarray(X, dtype=np.float64)
    n, p = X.shape
    k = int(n_neighbors)
    idx, _ = knn_indices(X, k)
    r0 = (LLE_REG if k > p else 0.0) if reg is None else float(reg)
    if not r0 >= 0:
        raise ValueError(f"reg must be >= 0 or None; got {reg}")
    w = np.empty((n, k))
    ones = np.ones((k, 1))
    n_fallback = 0
    step = max(1, _CHUNK_FLOATS // max(1, k * p))
    for s in range(0, n, step):
        rows = np.arange(s, min(n, s + step))
        Z = X[idx[rows]] - X[rows, None, :]  # b × k × p, neighbours shifted to x_i
        C = np.einsum("bkp,bjp->bkj", Z, Z)
        tr = np.trace(C, axis1=1, axis2=2)
        eye = np.eye(k)
        Cr = C + (r0 * tr)[:, None, None] * eye
        with np.errstate(all="ignore"):
            bad = ~(np.linalg.cond(Cr) < 1.0 / MATLAB_EPS)
        if bad.any():
            n_fallback += int(bad.sum())
            Cr[bad] = C[bad] + (max(r0, LLE_REG) * tr[bad])[:, None, None] * eye
        zero = tr <= 0
        Cr[zero] = eye  # every neighbour equals x_i: uniform weights
        sol = np.linalg.solve(Cr, np.broadcast_to(ones, (rows.size, k, 1)))[..., 0]
        w[rows] = sol / sol.sum(axis=1, keepdims=True)
    W = sp.csr_matrix((w.ravel(), idx.ravel(), np.arange(0, n * k + 1, k)), shape=(n, n))
    return W, n_fallback


def _soft(T: np.ndarray, t: float) -> np.ndarray:
    """Soft threshold ``sign(T) max(|T| − t, 0)``, the prox of ``t||·||_1``."""
    return np.sign(T) * np.maximum(np.abs(T) - t, 0.0)


def _gram_split(A: np.ndarray, n: int, p: int) -> Callable:
    """``f(K, γ, num, den, work)`` writes ``γ(G⁻H)ᵀ`` to ``num`` and ``γ(G⁺H)ᵀ`` to ``den``
    for ``K = Hᵀ`` (``m × p``), ``G^± = [AᵀA]^±``; ``work`` is scratch of ``K``'s shape.

    ``p ≤ 2n`` (and both parts under ``GRAM_MEMORY_CAP``): ``G⁺`` and ``G⁻`` are stored,
    two ``p × p`` products per call (``4p²m`` flops). Otherwise only ``|AᵀA|`` is stored
    and ``G^± H = ½(|AᵀA|H ± Aᵀ(AH))``, one ``p × p`` product and two through the
    ``n × p`` factor (``2p²m + 4npm`` flops): cheaper exactly when ``p > 2n``.
    """
    G = A.T @ A
    if p <= 2 * n and 16 * p * p <= GRAM_MEMORY_CAP:
        Gm = np.maximum(-G, 0.0)
        Gp = np.maximum(G, 0.0, out=G)

        def split(K, g, num, den, work):
            np.matmul(K, Gm, out=num)
            np.matmul(K, Gp, out=den)
            num *= g
            den *= g

        return split
    Gabs = np.abs(G, out=G)
    At = A.T

    def split(K, g, num, den, work):  # ½(|G|H ± GH), clipped at 0 against round-off
        np.matmul(K, Gabs, out=den)
        np.matmul(K @ At, A, out=work)
        np.subtract(den, work, out=num)
        den += work
        np.maximum(num, 0.0, out=num)
        np.maximum(den, 0.0, out=den)
        c = 0.5 * g  # (γ/2)x = γ(x/2) exactly
        num *= c
        den *= c

    return split


class RNE(UFSSelector):
    """Robust Neighborhood Embedding (Liu et al., KBS 2020); ranks features by ``||h_j||²``.

    Defaults follow the authors' ``RNE_obj.m`` (the paper text was not available here);
    ``tests/test_parity.py`` (case ``rne``) checks them against that code's output.

    Parameters
    ----------
    n_features_to_select : int
        ``h``. In the authors' code the number of columns of ``H`` is the number of
        selected features (``RNE_obj(X, m, k)``), so the fit depends on ``h``
        (``kind = "subset"``); ``scores_`` still scores every feature.
    n_components : int or None, default None
        ``m``, the columns of ``H``. ``None``: ``m = h`` (the authors' code). ``m ≤ p``.
    alpha : float, default 1e3
        ``α``, weight of the orthogonality penalty ``(α/4)||HᵀH − I||²`` (the code's
        fixed ``alpha = 1e+3``). SPCAFS §6.1.2 tunes every baseline parameter over
        ``{10^-6, 10^-4, …, 10^6}`` with 5 neighbours.
    n_neighbors : int, default 5
        ``k`` of the LLE neighbourhoods (SPCAFS §6.1.2 and the authors' demo: 5).
    reg : float or None, default None
        LLE regulariser ``r`` of :func:`lle_weights`: ``None`` is the authors' rule
        (``1e-3`` only when ``k > p``). ``n_lle_fallback_`` counts the samples whose
        local Gram matrix was singular and got the ``1e-3`` fallback.
    reconstruction : {"transposed", "rows"}, default "transposed"
        ``"transposed"``: ``A = (I − Wᵀ)X`` as the authors' code (row ``i`` is
        ``x_i − Σ_j W_ji x_j``: ``x_i`` minus the samples that have ``i`` as a
        neighbour, each by the weight it gives ``i``). ``"rows"``: ``A = (I − W)X``,
        row ``i`` is the LLE residual ``x_i − Σ_j W_ij x_j`` of ``x_i`` from its own
        neighbours (the LLE cost of Roweis & Saul). The code's ``LLE.m`` stores
        sample ``i``'s weights in row ``i``, so its ``W'`` looks like a transposition
        slip; kept as the default for parity. On the parity input the two share 5 of
        the top 10 features.
    max_iter : int, default 50
        Outer (ADMM) iterations; the code runs exactly 50.
    inner_iter : int, default 30
        Multiplicative ``H`` updates per outer iteration (the code's ``iter_numH = 30``).
    tol : float, default 0
        ``0``: run exactly ``max_iter`` outer iterations (the authors' rule; no warning,
        ``converged_ = False``). ``> 0``: also stop when the relative change of
        ``objective_`` is ``≤ tol``; a ``ConvergenceWarning`` if ``max_iter`` comes first.
    gamma, rho, gamma_max : float, defaults 10, 1.1, 1e10
        ADMM penalty ``γ``: starts at ``gamma``, ``γ ← min(ργ, gamma_max)`` after every
        outer iteration (the code's ``gamma``, ``mu``, ``max_gamma``).
    normalize_columns : bool, default True
        The code rescales the columns of ``H`` to unit norm,
        ``H ← H diag(1/√(diag(HᵀH) + ε))``, before every multiplicative update (so the
        final ``H`` is the update of a normalised one). ``False`` drops the rescaling (the
        plain multiplicative update of the H-subproblem).
    eps : float, default MATLAB ``eps`` (2.2e-16)
        The code's ``+eps`` in the rescaling and in the update's denominator.
    init : {"random"}, callable or array ``p × m``, default "random"
        ``H⁰`` (non-negative, no all-zero column: the update keeps a zero column at zero).
        ``"random"``: uniform ``[0, 1)``, as the authors' ``rand(d, m)``, seeded by
        ``random_state`` (their Octave stream cannot be reproduced; pass their array). A
        callable is called as ``init(X, n_components, random_state)``
        (:func:`ufs.validation.resolve_init`). ``p`` counts the non-constant features.
    random_state : seeds ``init="random"``.
    callback : optional ``callback(t, H=H, M=M, Y=Y, gamma=γ)`` after every outer iteration.

    Algorithm (the authors' ``RNE_obj.m``, step by step)
    ----------------------------------------------------
    0. ``W`` = LLE weights (:func:`lle_weights`), ``A = (I − Wᵀ)X``, the sign split
       ``AᵀA = G⁺ − G⁻`` (``G^± ≥ 0``); ``H = H⁰``, ``M = AH⁰``, ``Y = 0``, ``γ = gamma``.

    Outer iteration ``t = 1 … max_iter``:

    1. ``H``-step, the ADMM subproblem ``min_{H ≥ 0} −⟨Y, AH⟩ + (γ/2)||M − AH||² +
       (α/4)||HᵀH − I||²`` by ``inner_iter`` multiplicative updates. Its gradient
       ``∇ = −AᵀY − γAᵀM + γAᵀAH + α(HHᵀH − H)`` is split into non-negative parts
       ``∇ = ∇⁺ − ∇⁻`` with ``∇⁻ = αH + γ[AᵀM]⁺ + γG⁻H + [AᵀY]⁺`` and
       ``∇⁺ = αHHᵀH + γ[AᵀM]⁻ + γG⁺H + [AᵀY]⁻``; each update is (after the column
       rescaling, see ``normalize_columns``) ``H ← H ⊙ √(∇⁻ / (∇⁺ + ε))``, which keeps
       ``H ≥ 0`` and has the KKT points of the subproblem as fixed points.
       ``[AᵀM]^±`` and ``[AᵀY]^±`` are those of the start of the outer iteration.
    2. ``M``-step: ``M = soft(AH − Y/γ, 1/γ)``, the exact minimiser over ``M``.
    3. Multiplier: ``Y ← Y + γ(M − AH)``; then ``γ ← min(ργ, gamma_max)``.
    4. ``objective_[t] = ||AH||_1 + (α/4)||HᵀH − I||_F²`` (the code's ``obj``).

    Features are ranked by ``||h_j||²`` (the code's ``sum(H.^2, 2)``, stable descending
    sort); the first ``h`` are selected.

    Choices and measured behaviour
    ------------------------------
    * No proof of monotonicity is available (ADMM with a growing penalty and a
      non-convex, inexactly solved H-subproblem); the recorded objective fell at every
      iteration on the parity input. ``primal_residual_`` (``||M − AH||_F`` after each
      step 3) shrinks as ``γ`` grows.
    * The code has no ℓ2,1 term: sparsity of the rows of ``H`` comes from ``H ≥ 0``
      with ``HᵀH ≈ I`` (non-negative orthogonal columns have disjoint supports).
    * Parity (digits, the authors' ``H⁰``): the same ranking in all 56 positions,
      objective to 1.5e-15 relative, ``H`` to 6e-14.

    Cost. The kNN search and the LLE weights are ``O(n k p)`` after the search
    (``W`` is sparse, ``nk`` non-zeros; ``A`` is ``n × p``). The sign split of ``AᵀA``
    is inherently a dense ``p × p`` matrix (the positive part of a low-rank matrix is
    not low-rank): ``O(p²)`` memory, refused above ``GRAM_MEMORY_CAP`` (2 GiB, about
    ``p = 16 000``), and ``O(p²m)`` per inner update: the ``max_iter × inner_iter``
    products of a dense ``p × p`` matrix with ``H`` are the fit's cost whenever ``p``
    is in the thousands. Per outer iteration ``O(npm)`` more. How the steps are
    computed (each the same arithmetic up to rounding; objectives agree with a literal
    transcription to ~1e-15 relative, ``tests/test_rne.py``):

    * ``G^± H``: for ``p ≤ 2n`` both parts ``G^±`` are stored (two products,
      ``4p²m`` flops); for ``p > 2n`` only ``|AᵀA|`` is, and ``G^± H = (|AᵀA|H ±
      Aᵀ(AH))/2`` (``2p²m + 4npm`` flops), whichever is fewer (both parts only while
      they fit under the cap; the cap's refusal rule is the one above).
    * The iteration runs on ``Hᵀ`` (and ``Mᵀ``, ``Yᵀ``): ``HᵀG^± = (G^±H)ᵀ`` as
      ``G^±`` is symmetric, and one OpenBLAS thread multiplies a wide ``m × p`` by the
      ``p × p`` matrix 1.1–1.5× faster than the tall ``p × m`` form (``m`` = 300 … 20).
    * ``HᵀH`` is formed once per inner update (one symmetric ``m × m`` product): its
      diagonal is the column rescaling's ``diag(HᵀH)``, and the rescaled ``HD`` has Gram
      matrix ``D(HᵀH)D``, so ``HHᵀH`` of step 1 is ``(HD)(D HᵀH D)`` without a second
      ``p × m`` pass.
    * The parts of ``∇^±`` fixed within an outer iteration, ``γ[AᵀM]⁺ + [AᵀY]⁺`` and
      ``γ[AᵀM]⁻ + [AᵀY]⁻ + ε``, are summed once per outer iteration (the same sums,
      reassociated), and the update works in place in preallocated ``m × p`` buffers.

    Measured (CPU s of a default fit, one BLAS thread, ``h = m``, a loaded 2-core
    machine): ``h = 20``: ``n = 10 000, p = 100`` 1.1 s, 72 MB peak traced;
    ``n = 100``: ``p = 2000`` 9.9 s, ``p = 5000`` 53 s. ``benchmarks/rne_speed.py``,
    digits (``h = 20``) 0.11 s; ``h = 50``: ``n = 1400, p = 1024`` 9.4 s,
    ``n = 1680, p = 2000`` 32 s, ``n = 100, p = 5000`` 98 s, about 90 % of it the 1500
    products with ``|AᵀA|`` (42 GFLOP/s; 53, about one core's peak, at ``h = 300``).

    Attributes
    ----------
    H_ : ndarray, p_informative × m
        The final projection (the ranking is by its squared row norms).
    H_init_ : ndarray
        ``H⁰``.
    lle_weights_ : scipy.sparse.csr_matrix, n × n
        ``W`` (row ``i``: sample ``i``'s reconstruction weights).
    objective_ : ndarray
        The code's objective after every outer iteration.
    primal_residual_ : ndarray
        ``||M − AH||_F`` after every outer iteration.
    n_iter_, converged_ : int, bool
    n_lle_fallback_ : int
        Samples whose local Gram matrix needed the singular fallback.
    """

    kind = "subset"
    requires_n_clusters = False

    def __init__(
        self,
        n_features_to_select: int = 10,
        *,
        n_components: int | None = None,
        alpha: float = 1e3,
        n_neighbors: int = 5,
        reg: float | None = None,
        reconstruction: str = "transposed",
        max_iter: int = 50,
        inner_iter: int = 30,
        tol: float = 0.0,
        gamma: float = 10.0,
        rho: float = 1.1,
        gamma_max: float = 1e10,
        normalize_columns: bool = True,
        eps: float = MATLAB_EPS,
        init: str | Callable | np.ndarray = "random",
        random_state=None,
        callback=None,
    ):
        self.n_features_to_select = n_features_to_select
        self.n_components = n_components
        self.alpha = alpha
        self.n_neighbors = n_neighbors
        self.reg = reg
        self.reconstruction = reconstruction
        self.max_iter = max_iter
        self.inner_iter = inner_iter
        self.tol = tol
        self.gamma = gamma
        self.rho = rho
        self.gamma_max = gamma_max
        self.normalize_columns = normalize_columns
        self.eps = eps
        self.init = init
        self.random_state = random_state
        self.callback = callback

    def objective(self, A: np.ndarray, H: np.ndarray) -> float:
        """``||AH||_1 + (α/4)||HᵀH − I||_F²`` (the authors' ``obj``)."""
        R = H.T @ H - np.eye(H.shape[1])
        return float(np.abs(A @ H).sum() + float(self.alpha) / 4.0 * np.sum(R * R))

    def _check_params(self, n: int, p: int) -> int:
        for name in ("alpha", "gamma", "eps"):
            v = getattr(self, name)
            if not (np.isfinite(v) and v > 0):
                raise ValueError(f"{name} must be a finite number > 0; got {v}")
        if not (np.isfinite(self.rho) and self.rho >= 1):
            raise ValueError(f"rho must be >= 1; got {self.rho}")
        if not self.gamma_max >= self.gamma:
            raise ValueError(f"gamma_max must be >= gamma; got {self.gamma_max}")
        if int(self.max_iter) < 1 or int(self.inner_iter) < 1:
            raise ValueError("max_iter and inner_iter must be >= 1")
        if not float(self.tol) >= 0:
            raise ValueError(f"tol must be >= 0; got {self.tol}")
        if self.reconstruction not in RECONSTRUCTIONS:
            raise ValueError(
                f"reconstruction must be one of {RECONSTRUCTIONS}; got {self.reconstruction!r}"
            )
        m = self._h if self.n_components is None else int(self.n_components)
        if not 1 <= m <= p:
            raise ValueError(f"n_components must be in [1, {p}] (HᵀH = I); got {m}")
        need = 8 * p * p * (2 if p <= n else 1)
        if need > GRAM_MEMORY_CAP:
            raise ValueError(
                f"RNE needs the dense sign split of AᵀA ({p} × {p}): {need / 1024**3:.1f} GiB "
                f"> the {GRAM_MEMORY_CAP / 1024**3:.0f} GiB cap (ufs.methods.rne.GRAM_MEMORY_CAP)"
            )
        return m

    def _fit(self, X: np.ndarray) -> Selection:
        n, p = X.shape
        m = self._check_params(n, p)
        alpha, gamma, eps = float(self.alpha), float(self.gamma), float(self.eps)
        rho, gamma_max, tol = float(self.rho), float(self.gamma_max), float(self.tol)
        H = resolve_init(
            self.init,
            {"random": lambda: check_random_state(self.random_state).random_sample((p, m))},
            (p, m),
            X=X,
            n_clusters=m,
            random_state=self.random_state,
            nonnegative=True,
        )
        if not (H > 0).any(axis=0).all():
            raise ValueError("init has an all-zero column; a multiplicative update keeps it zero")
        self.H_init_ = H.copy()

        W, self.n_lle_fallback_ = lle_weights(X, self.n_neighbors, reg=self.reg)
        self.lle_weights_ = W
        A = X - (W.T @ X if self.reconstruction == "transposed" else W @ X)  # step 0
        gram_split = _gram_split(A, n, p)

        # The iteration runs on K = Hᵀ (m × p, C-contiguous), M and Y as Mᵀ, Yᵀ (m × n):
        # the same numbers transposed; K G^± = (G^± H)ᵀ since G^± is symmetric, and with
        # the long dimension p last the products with the dense p × p matrices run faster
        # on one BLAS thread (1.1–1.5× for m = 300 … 20). The inner updates work in place
        # in preallocated m × p buffers (no large temporaries).
        K = np.array(H.T, order="C")
        num, den, work = np.empty((m, p)), np.empty((m, p)), np.empty((m, p))
        Mt = K @ A.T
        Yt = np.zeros((m, n))
        objective: list[float] = []
        residual: list[float] = []
        converged = False
        t = 0
        for t in range(1, int(self.max_iter) + 1):
            AMp, AMm = sign_split(Mt @ A)  # [AᵀM]^± transposed
            AYp, AYm = sign_split(Yt @ A)
            # the terms of ∇^± that are fixed within the outer iteration, summed once
            # (a reassociation of the same sums): γ[AᵀM]⁺ + [AᵀY]⁺ and γ[AᵀM]⁻ + [AᵀY]⁻ + ε
            c_num = gamma * AMp + AYp
            c_den = gamma * AMm + AYm + eps
            for _ in range(int(self.inner_iter)):  # step 1
                S = K @ K.T  # HᵀH (m × m; NumPy computes K Kᵀ as one syrk)
                if self.normalize_columns:
                    # its diagonal is the squared column norms of H; after the rescaling
                    # H ← HD the Gram matrix is DHᵀHD, so it need not be formed again
                    s = np.sqrt(np.diag(S) + eps)
                    K /= s[:, None]
                    S /= np.outer(s, s)
                gram_split(K, gamma, num, den, work)  # γG⁻H, γG⁺H (transposed)
                np.multiply(K, alpha, out=work)
                num += work
                num += c_num
                np.matmul(alpha * S, K, out=work)  # αH(HᵀH) transposed: HᵀH Hᵀ = S K
                den += work
                den += c_den
                num /= den
                K *= np.sqrt(num, out=num)
            AHt = K @ A.T  # (AH)ᵀ
            Mt = _soft(AHt - Yt / gamma, 1.0 / gamma)  # step 2
            Yt = Yt + gamma * (Mt - AHt)  # step 3
            residual.append(float(np.linalg.norm(Mt - AHt)))
            gamma = min(rho * gamma, gamma_max)
            R = K @ K.T - np.eye(m)
            objective.append(float(np.abs(AHt).sum() + alpha / 4.0 * np.sum(R * R)))  # step 4
            if self.callback is not None:
                self.callback(t, H=K.T.copy(), M=Mt.T, Y=Yt.T, gamma=gamma)  # K is reused
            if tol > 0 and t > 1 and abs(objective[-2] - objective[-1]) <= tol * abs(objective[-2]):
                converged = True
                break
        H = np.ascontiguousarray(K.T)
        self.objective_ = np.asarray(objective)
        self.primal_residual_ = np.asarray(residual)
        self.n_iter_ = t
        self.converged_ = converged
        self.H_ = H
        if tol > 0 and not converged:
            warnings.warn(
                f"RNE did not converge in {self.max_iter} iterations (tol={tol:g})",
                ConvergenceWarning,
                stacklevel=3,
            )
        scores = np.sum(H * H, axis=1)
        order = np.argsort(-scores, kind="stable")
        return Selection(order=order[: self._h], scores=scores)
