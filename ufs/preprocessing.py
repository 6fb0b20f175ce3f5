"""Feature-wise scaling (the one place it is implemented) and the input spaces.

An estimator declares which matrix it receives in its ``input_space`` attribute
(:class:`ufs.base.UFSSelector`); :func:`input_matrix` is the one mapping from an input
space to a matrix, used by the workflow (fit and graph steps), the demo and the scaling
benchmark.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .validation import column_scale, constant_feature_mask

__all__ = [
    "INPUT_SPACES",
    "Standardization",
    "check_input_space",
    "input_matrix",
    "standardize",
    "unit_range",
]

#: what an estimator's ``input_space`` may be:
#: ``"standardized"`` z-scores (:func:`standardize`), ``"raw"`` the validated data as given,
#: ``"unit_range"`` per-feature min-max scaling to ``[0, 1]`` (:func:`unit_range`)
INPUT_SPACES = ("standardized", "raw", "unit_range")


@dataclass(frozen=True)
class Standardization:
    """Result of :func:`standardize`: the scaled data and what was done to it."""

    X: np.ndarray
    mean: np.ndarray
    scale: np.ndarray
    constant: np.ndarray  # boolean mask of constant features (left as zeros)


def _finite_columns(X: np.ndarray, what: str) -> None:
    """``ValueError`` naming the first column of ``X`` with a NaN or infinite value."""
    bad = ~np.isfinite(X)
    if bad.any():
        i, j = np.argwhere(bad)[0]
        raise ValueError(
            f"{what}: non-finite value {X[i, j]} in feature {j} (row {i}; "
            f"{int(bad.any(axis=0).sum())} feature(s) affected)"
        )


def standardize(X: np.ndarray) -> Standardization:
    """Z-score each feature: zero mean and unit (population, ``ddof=0``) variance.

    Constant features cannot be scaled; they are centred to all zeros, their scale is
    recorded as 1 and they are flagged in ``constant``. Selectors never select them
    (see :class:`ufs.base.UFSSelector`). Each column is first divided by a power of two
    near its largest absolute value (:func:`ufs.validation.column_scale`, exact), so
    values up to ±1e308 or a column ×1e300 standardise correctly instead of overflowing.
    ``X`` must be finite; a non-finite input or result is a ``ValueError`` naming the
    feature.
    """
    X = np.asarray(X, dtype=np.float64)
    _finite_columns(X, "standardize: the data")
    s = column_scale(X)
    Xs = X / s
    constant = constant_feature_mask(Xs)
    mean = Xs.mean(axis=0)
    scale = Xs.std(axis=0)
    scale[constant] = 1.0
    Z = (Xs - mean) / scale
    Z[:, constant] = 0.0
    _finite_columns(Z, "standardize: the result")
    scale = np.where(constant, 1.0, scale * s)
    return Standardization(X=Z, mean=mean * s, scale=scale, constant=constant)


def unit_range(X: np.ndarray) -> np.ndarray:
    """Min-max scale each feature to ``[0, 1]``: ``(x − min) / (max − min)``.

    Constant features are set to 0 (as in :func:`standardize`, they are never selected).
    The map is affine per feature, so the min-max scaling of z-scored data equals that of
    the raw data up to rounding; it is computed from the matrix given, scaled first as in
    :func:`standardize` (no overflow of ``max − min``).
    """
    X = np.asarray(X, dtype=np.float64)
    _finite_columns(X, "unit_range: the data")
    Xs = X / column_scale(X)
    constant = constant_feature_mask(Xs)
    lo = Xs.min(axis=0)
    span = Xs.max(axis=0) - lo
    span[constant] = 1.0
    U = (Xs - lo) / span
    U[:, constant] = 0.0
    return U


def check_input_space(space: str) -> str:
    """``space`` if it is one of :data:`INPUT_SPACES`, else ``ValueError``."""
    if space not in INPUT_SPACES:
        raise ValueError(f"input_space must be one of {INPUT_SPACES}; got {space!r}")
    return space


def input_matrix(
    space: str, X_raw: np.ndarray, X_standardized: np.ndarray | None = None
) -> np.ndarray:
    """The matrix an estimator with ``input_space = space`` receives.

    ``X_raw`` is the validated data before any scaling; ``X_standardized`` its z-scores,
    when already computed (else they are computed here).
    """
    space = check_input_space(space)
    if space == "raw":
        return X_raw
    if space == "unit_range":
        return unit_range(X_raw)
    return standardize(X_raw).X if X_standardized is None else X_standardized
