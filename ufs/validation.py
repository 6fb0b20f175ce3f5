"""Input validation shared by every selector and by the workflow.

Every check raises :class:`ValueError` with a message that names the problem, so a
researcher who feeds a broken matrix learns *what* is wrong before any solver runs.
"""

from __future__ import annotations

import math
import numbers
import os
from collections.abc import Callable

import numpy as np
import scipy.sparse as sp

__all__ = [
    "DENSE_MEMORY_CAP",
    "check_dense_memory",
    "dense_memory_cap",
    "max_dense_n",
    "check_data",
    "check_labels",
    "check_n_clusters",
    "check_n_features_to_select",
    "fraction_to_count",
    "column_scale",
    "constant_feature_mask",
    "check_penalty_schedule",
    "resolve_init",
]


def check_data(X, *, name: str = "X", min_samples: int = 2) -> np.ndarray:
    """Return ``X`` as a C-contiguous float64 ``n_samples × n_features`` array.

    Raises ``ValueError`` for sparse or non-numeric input, a shape other than 2-D,
    fewer than ``min_samples`` rows, no columns, and NaN or infinite entries (the
    message gives the count and the first offending position).
    """
    if sp.issparse(X):
        raise ValueError(
            f"{name} is a sparse matrix; UFS solvers need a dense array (use .toarray())"
        )
    try:
        arr = np.asarray(X)
    except Exception as exc:  # ragged lists and the like
        raise ValueError(f"{name} cannot be converted to a numeric array: {exc}") from exc
    if arr.dtype.kind in "OUSV":
        try:
            arr = arr.astype(np.float64)
        except (TypeError, ValueError) as exc:
            raise ValueError(
                f"{name} must be numeric; got non-numeric entries of dtype {arr.dtype} ({exc})"
            ) from exc
    elif arr.dtype.kind not in "biuf":
        raise ValueError(f"{name} must be numeric; got dtype {arr.dtype}")
    if arr.ndim != 2:
        raise ValueError(f"{name} must be 2-D (n_samples × n_features); got {arr.ndim}-D")
    n, p = arr.shape
    if n < min_samples:
        raise ValueError(f"{name} has {n} sample(s); at least {min_samples} are needed")
    if p < 1:
        raise ValueError(f"{name} has no features")
    arr = np.ascontiguousarray(arr, dtype=np.float64)
    finite = np.isfinite(arr)
    if not finite.all():
        bad = np.argwhere(~finite)
        i, j = bad[0]
        n_nan = int(np.isnan(arr).sum())
        n_inf = int(bad.shape[0] - n_nan)
        kinds = " and ".join(s for s, c in (("NaN", n_nan), ("inf", n_inf)) if c)
        raise ValueError(
            f"{name} contains {kinds} ({n_nan} NaN, {n_inf} inf; first at sample {i}, "
            f"feature {j}, both counted from 0)"
        )
    return arr


def check_labels(y, n_samples: int | None = None, *, min_classes: int = 1) -> np.ndarray:
    """Re-encode labels of any type to integers ``0..k-1`` (sorted order of the originals)."""
    y = np.asarray(y)
    if y.ndim == 2 and 1 in y.shape:
        y = y.ravel()
    if y.ndim != 1:
        raise ValueError(f"labels must be 1-D; got shape {y.shape}")
    if n_samples is not None and y.shape[0] != n_samples:
        raise ValueError(f"labels have {y.shape[0]} entries but X has {n_samples} samples")
    if y.dtype.kind == "f" and not np.isfinite(y).all():
        raise ValueError("labels contain NaN or inf")
    _, codes = np.unique(y, return_inverse=True)
    k = int(codes.max()) + 1 if codes.size else 0
    if k < min_classes:
        raise ValueError(f"labels have {k} distinct class(es); at least {min_classes} are needed")
    return codes.astype(np.int64)


def _check_int(value, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ValueError(f"{name} must be an integer; got {value!r}")
    return int(value)


def check_n_clusters(n_clusters, n_samples: int) -> int:
    """``2 <= n_clusters <= n_samples``."""
    if n_clusters is None:
        raise ValueError("n_clusters is required by this method (set it to the number of clusters)")
    k = _check_int(n_clusters, "n_clusters")
    if k < 2:
        raise ValueError(f"n_clusters must be >= 2; got {k}")
    if k > n_samples:
        raise ValueError(f"n_clusters={k} exceeds n_samples={n_samples}")
    return k


def fraction_to_count(fraction: float, n_features: int) -> int:
    """The number of features a fraction in ``(0, 1]`` of ``n_features`` stands for:
    ``max(1, floor(fraction · n_features))``.

    scikit-learn's ``RFE`` and ``SequentialFeatureSelector`` take ``int(fraction ·
    n_features)``; here the product is first rounded to 9 decimals, so that a product
    that is an integer up to floating-point round-off counts as that integer (``0.29 ·
    100`` is ``28.999999999999996`` in floating point: 29 features here, 28 with
    ``int``). At least one feature is selected, however small the fraction.
    """
    if isinstance(fraction, bool) or not isinstance(fraction, numbers.Real):
        raise ValueError(f"a fraction of the features must be a real number; got {fraction!r}")
    f = float(fraction)
    if not (math.isfinite(f) and 0.0 < f <= 1.0):
        hint = (
            f" (for {int(f)} features pass the integer {int(f)})"
            if f > 1 and f.is_integer()
            else ""
        )
        raise ValueError(
            "n_features_to_select must be an integer (a number of features) or a float in "
            f"(0, 1] (a fraction of them); got {fraction!r}{hint}"
        )
    return max(1, math.floor(round(f * n_features, 9)))


def check_n_features_to_select(h, n_features: int, *, n_informative: int | None = None) -> int:
    """The number of features to select: ``1 <= h <= n_features`` (and ``<= n_informative``
    non-constant features if given).

    ``h`` is an integer (a count) or, as in scikit-learn's ``RFE`` and
    ``SequentialFeatureSelector``, a float in ``(0, 1]``: a fraction of the features the
    method sees, which are the non-constant ones (``n_informative``; ``n_features`` when
    it is not given), turned into a count by :func:`fraction_to_count`. Constant features
    do not count: ``1.0`` selects every non-constant feature, and a fraction never asks
    for a constant one. Integer floats above 1 (``3.0``) are refused, not read as counts.
    """
    if isinstance(h, numbers.Real) and not isinstance(h, numbers.Integral):
        return fraction_to_count(h, n_features if n_informative is None else n_informative)
    if isinstance(h, bool) or not isinstance(h, numbers.Integral):
        raise ValueError(
            f"n_features_to_select must be an integer or a fraction in (0, 1]; got {h!r}"
        )
    h = int(h)
    if h < 1:
        raise ValueError(f"n_features_to_select must be >= 1; got {h}")
    if h > n_features:
        raise ValueError(f"n_features_to_select={h} exceeds n_features={n_features}")
    if n_informative is not None and h > n_informative:
        raise ValueError(
            f"n_features_to_select={h} exceeds the {n_informative} non-constant features "
            f"({n_features - n_informative} of {n_features} features are constant and never selected)"
        )
    return h


def column_scale(X: np.ndarray) -> np.ndarray:
    """Per-column power of two near the largest absolute value (1 for all-zero columns).

    ``X / column_scale(X)`` lies in ``[-2, 2]`` and is exact (only exponents change), so
    sums and squares of the scaled columns cannot overflow or underflow whatever the
    magnitude of the data (±1e308, a column ×1e300 or ×1e-300).
    """
    peak = np.abs(X).max(axis=0)
    _, exponent = np.frexp(peak)  # peak = m · 2**e with 0.5 <= m < 1
    return np.where(peak > 0, np.ldexp(1.0, exponent - 1), 1.0)


def constant_feature_mask(X: np.ndarray) -> np.ndarray:
    """Boolean mask of constant (zero-variance) columns.

    A column is constant when its range is at most ``1e-12`` times its largest absolute
    value: exactly constant columns and columns that differ only by round-off. Computed
    on the columns scaled by :func:`column_scale`, so no magnitude overflows.
    """
    Xs = np.asarray(X, dtype=np.float64) / column_scale(X)
    return np.ptp(Xs, axis=0) <= 1e-12 * np.abs(Xs).max(axis=0)


def check_penalty_schedule(mu0: float, rho: float, mu_max: float) -> None:
    """ADMM penalty schedule ``μ ← ρμ`` up to ``μ_max``: ``μ0 > 0``, ``ρ ≥ 1``, ``μ_max ≥ μ0``."""
    if not mu0 > 0:
        raise ValueError(f"mu0 must be > 0; got {mu0}")
    if not rho >= 1:
        raise ValueError(f"rho must be >= 1; got {rho}")
    if not mu_max >= mu0:
        raise ValueError(f"mu_max must be >= mu0; got {mu_max}")


def resolve_init(
    init,
    named: dict[str, Callable[[], np.ndarray]],
    shape: tuple[int, ...],
    *,
    X: np.ndarray,
    n_clusters: int | None,
    random_state=None,
    nonnegative: bool = False,
    name: str = "init",
) -> np.ndarray:
    """The initial iterate of an iterative solver, scikit-learn style (``KMeans(init=)``).

    ``init`` is one of the method's ``named`` initialisations (a string key; the value
    builds it), a callable ``init(X, n_clusters, random_state) -> array`` or an
    array-like. The result is a float64 copy checked for ``shape``, finiteness and,
    with ``nonnegative``, ``≥ 0`` (multiplicative updates keep zeros at zero). ``X`` is
    the matrix the method sees (constant features already removed).
    """
    if isinstance(init, str):
        if init not in named:
            raise ValueError(
                f"{name} must be one of {sorted(named)}, a callable or an array; got {init!r}"
            )
        arr = named[init]()
    elif callable(init):
        arr = init(X, n_clusters, random_state)
    else:
        arr = init
    try:
        arr = np.array(arr, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be numeric; {exc}") from exc
    if arr.shape != tuple(shape):
        raise ValueError(f"{name} must have shape {tuple(shape)}; got {arr.shape}")
    if not np.isfinite(arr).all():
        raise ValueError(f"{name} contains NaN or inf")
    if nonnegative and (arr < 0).any():
        raise ValueError(f"{name} must be non-negative (multiplicative updates keep its sign)")
    return arr


# -- memory of methods defined on dense n × n matrices ---------------------------------

#: default cap (bytes) on the dense ``n × n`` float64 arrays a method holds at once;
#: the environment variable ``UFS_MAX_DENSE_BYTES`` overrides it (read at every fit)
DENSE_MEMORY_CAP = 8 * 1024**3


def dense_memory_cap() -> int:
    """The cap in bytes: ``UFS_MAX_DENSE_BYTES`` if set, else :data:`DENSE_MEMORY_CAP`."""
    env = os.environ.get("UFS_MAX_DENSE_BYTES", "").strip()
    if not env:
        return int(DENSE_MEMORY_CAP)
    try:
        cap = int(float(env))
    except ValueError:
        raise ValueError(f"UFS_MAX_DENSE_BYTES must be a number of bytes; got {env!r}") from None
    if cap <= 0:
        raise ValueError(f"UFS_MAX_DENSE_BYTES must be > 0; got {env!r}")
    return cap


def max_dense_n(n_arrays: int, cap_bytes: int) -> int:
    """Largest ``n`` with ``n_arrays · 8 · n² ≤ cap_bytes``."""
    per = 8 * int(n_arrays)
    n = math.isqrt(int(cap_bytes) // per)  # n² · per ≤ cap  ⇔  n² ≤ ⌊cap / per⌋
    return n


def check_dense_memory(
    n_arrays: int, n: int, what: str, cap_bytes: int | None = None, *, hint: str = ""
) -> int:
    """Refuse up front (``MemoryError``) when ``n_arrays`` dense ``n × n`` float64 arrays
    exceed the cap (default :func:`dense_memory_cap`). The message gives the method
    (``what``), ``n``, the array count, the bytes needed and the largest ``n`` that fits;
    ``hint`` is appended. Returns the bytes needed."""
    cap = dense_memory_cap() if cap_bytes is None else int(cap_bytes)
    need = 8 * int(n_arrays) * int(n) ** 2
    if need > cap:
        gib = 1024**3
        msg = (
            f"{what} holds {n_arrays} dense n × n float64 arrays at its peak: n = {n} needs "
            f"{need / gib:.2f} GiB, above the {cap / gib:.2f} GiB cap "
            f"(ufs.validation.DENSE_MEMORY_CAP, env UFS_MAX_DENSE_BYTES); "
            f"the largest n that fits is {max_dense_n(n_arrays, cap)}"
        )
        raise MemoryError(msg + (f"; {hint}" if hint else ""))
    return need
