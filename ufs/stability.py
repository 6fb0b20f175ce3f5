"""Selection stability: whether a method picks the same features on slightly different
samples (Nogueira, Sechidis & Brown, "On the stability of feature selection algorithms",
JMLR 18(174), 2018).

For ``M`` selections out of ``d`` features, written as a binary matrix ``Z`` (``M × d``,
row ``m`` the ``m``-th selection, ``k_m`` ones), ``p̂_f`` the fraction of selections
holding feature ``f`` and ``k̄`` the mean subset size (their Definition 3 / Eq. 4)::

    Φ̂(Z) = 1 − [ (1/d) Σ_f  (M/(M−1)) p̂_f (1 − p̂_f) ] / [ (k̄/d) (1 − k̄/d) ]

``Φ̂ = 1`` when every selection is the same; its expectation is 0 for selections drawn at
random with the same sizes (it is corrected for chance) and it is defined for subset sizes
that vary. Its asymptotic variance (their Theorem 7 and Corollary 9) comes from the
per-selection terms::

    φ_m = [ (1/d) Σ_f Z_mf p̂_f − k_m k̄ / d² + (Φ̂/2) (2 k_m k̄ / d² − k_m / d − k̄ / d + 1) ]
          / [ (k̄/d) (1 − k̄/d) ]
    v̂ar(Φ̂) = (4 / M²) Σ_m (φ_m − φ̄)²

and the interval is ``Φ̂ ± z_{1−α/2} √v̂ar``, its upper end cut at 1 (Φ̂ cannot exceed it;
the normal approximation can, near perfectly stable selections). :func:`subsample_selections` makes the ``M``
selections of one estimator on seeded subsamples (a fraction of the samples, drawn without
replacement), the protocol of the benchmark's stability column.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy.stats import norm

__all__ = [
    "Stability",
    "selection_matrix",
    "stability",
    "subsample_rows",
    "subsample_selections",
]


@dataclass(frozen=True)
class Stability:
    """``phi`` (Φ̂), its asymptotic ``variance``, the ``level`` interval ``[low, high]``,
    and the number of selections ``m`` and features ``d`` it was computed from."""

    phi: float
    variance: float
    low: float
    high: float
    level: float
    m: int
    d: int

    def as_dict(self) -> dict[str, float | int]:
        return {
            "stability": self.phi,
            "stability_variance": self.variance,
            "stability_low": self.low,
            "stability_high": self.high,
            "stability_level": self.level,
            "stability_m": self.m,
        }


def selection_matrix(selections, d: int) -> np.ndarray:
    """The ``M × d`` binary matrix of ``selections`` (each a sequence of feature indices,
    without repeats, in ``[0, d)``)."""
    Z = np.zeros((len(selections), d), dtype=bool)
    for m, sel in enumerate(selections):
        idx = np.asarray(sel, dtype=np.int64)
        if idx.size and (idx.min() < 0 or idx.max() >= d):
            raise ValueError(f"selection {m} has an index outside [0, {d})")
        if np.unique(idx).size != idx.size:
            raise ValueError(f"selection {m} repeats a feature")
        Z[m, idx] = True
    return Z


def stability(Z, *, level: float = 0.95) -> Stability:
    """Φ̂ of the binary selection matrix ``Z`` (``M × d``, ``M ≥ 2``) with its variance and
    ``level`` interval (module docstring). Undefined — ``ValueError`` — when every
    selection is empty or holds every feature (``k̄ ∈ {0, d}``)."""
    Z = np.asarray(Z, dtype=np.float64)
    if Z.ndim != 2 or Z.shape[0] < 2:
        raise ValueError(f"need a 2-D matrix of at least 2 selections; got shape {Z.shape}")
    if not np.all((Z == 0) | (Z == 1)):
        raise ValueError("Z must be binary (0/1)")
    M, d = Z.shape
    p = Z.mean(axis=0)
    k = Z.sum(axis=1)
    kbar = float(p.sum())
    denom = (kbar / d) * (1 - kbar / d)
    if not denom > 0:
        raise ValueError(
            "stability is undefined when every selection is empty or holds every feature"
        )
    phi = 1 - (M / (M - 1)) * float(np.mean(p * (1 - p))) / denom
    terms = (
        (Z @ p) / d - k * kbar / d**2 + (phi / 2) * (2 * k * kbar / d**2 - k / d - kbar / d + 1)
    ) / denom
    var = float(4 / M**2 * np.sum((terms - terms.mean()) ** 2))
    half = float(norm.ppf(0.5 + level / 2)) * np.sqrt(var)
    # Φ̂ ≤ 1 by construction: the normal interval is cut there
    return Stability(phi, var, phi - half, min(1.0, phi + half), level, M, d)


def subsample_rows(n: int, *, m: int = 10, fraction: float = 0.9, seed: int = 0) -> list:
    """``m`` sorted row subsets of ``round(fraction · n)`` of ``n`` rows, drawn without
    replacement; draw ``i`` from ``numpy.random.SeedSequence([seed, i])``, so that each
    is reproducible on its own."""
    if not 0 < fraction <= 1:
        raise ValueError(f"fraction must be in (0, 1]; got {fraction}")
    size = int(round(fraction * n))
    if size < 2:
        raise ValueError(f"a subsample of {size} samples is too small")
    out = []
    for i in range(m):
        rng = np.random.default_rng(np.random.SeedSequence([seed, i]))
        out.append(np.sort(rng.choice(n, size=size, replace=False)))
    return out


def subsample_selections(
    fit_select: Callable[[np.ndarray, int], np.ndarray],
    X: np.ndarray,
    *,
    m: int = 10,
    fraction: float = 0.9,
    seed: int = 0,
) -> list[np.ndarray]:
    """``m`` selections, each ``fit_select(X[rows], draw)`` on the rows of
    :func:`subsample_rows` draw ``draw``."""
    X = np.asarray(X)
    rows = subsample_rows(X.shape[0], m=m, fraction=fraction, seed=seed)
    return [np.asarray(fit_select(X[r], i)) for i, r in enumerate(rows)]
