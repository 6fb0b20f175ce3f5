"""Clustering and feature-recovery metrics (the one place each is implemented).

* :func:`clustering_accuracy` – ACC with the best one-to-one label mapping (Hungarian
  algorithm; GOLFS Eq. 21).
* :func:`nmi` – normalised mutual information; ``average="arithmetic"`` (default,
  ``2·MI/(H(C)+H(C'))``) or ``"max"`` (SPCAFS Eq. 38, ``MI/max(H(C),H(C'))``), also
  ``"geometric"`` and ``"min"``.
* :func:`ari` – adjusted Rand index.
* :func:`normalized_entropy` – balance of cluster sizes, FSBC Eq. (31).
* :func:`true_positives_at`, :func:`coverage_probability_at` – TP@s and CP@s over
  repeats, GOLFS Eqs. (19)-(20).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from math import log

import numpy as np
from scipy.optimize import linear_sum_assignment

__all__ = [
    "clustering_accuracy",
    "nmi",
    "ari",
    "normalized_entropy",
    "clustering_scores",
    "contingency",
    "true_positives_at",
    "coverage_probability_at",
    "NMI_AVERAGES",
]

NMI_AVERAGES = ("arithmetic", "max", "geometric", "min")


def _pair(y_true, y_pred) -> tuple[np.ndarray, np.ndarray]:
    y_true, y_pred = np.asarray(y_true).ravel(), np.asarray(y_pred).ravel()
    if y_true.shape != y_pred.shape:
        raise ValueError(f"label vectors differ in length: {y_true.shape[0]} vs {y_pred.shape[0]}")
    if y_true.size == 0:
        raise ValueError("label vectors are empty")
    return y_true, y_pred


def contingency(y_true, y_pred) -> np.ndarray:
    """The classes × clusters table of counts (``int64``; rows and columns in the sorted
    order of the labels present, so no row or column is empty).

    Every pair metric here is a function of this table. It is built once per clustering
    (:func:`clustering_scores`): the evaluation of one selection scores 20 restarts, and
    scikit-learn's scorers, which each validate their input and build the table again,
    took two thirds of the evaluation's time on small data."""
    y_true, y_pred = _pair(y_true, y_pred)
    _, t = np.unique(y_true, return_inverse=True)
    _, p = np.unique(y_pred, return_inverse=True)
    shape = (int(t.max()) + 1, int(p.max()) + 1)
    flat = np.bincount(t * shape[1] + p, minlength=shape[0] * shape[1])
    return flat.reshape(shape).astype(np.int64, copy=False)


def _accuracy(C: np.ndarray) -> float:
    rows, cols = linear_sum_assignment(C, maximize=True)
    return float(C[rows, cols].sum() / C.sum())


def _entropy(counts: np.ndarray) -> float:
    """``H = −Σ (c/n) (log c − log n)`` of nonzero ``counts`` (0 for one group)."""
    if counts.size == 1:
        return 0.0
    counts = counts.astype(np.float64)
    total = counts.sum()
    return float(-np.sum((counts / total) * (np.log(counts) - log(total))))


def _mutual_information(C: np.ndarray) -> float:
    """``MI = Σ_ij (n_ij/n) log(n·n_ij / (a_i b_j))`` over the nonzero cells, summed in
    the order (row-major) and the arrangement of terms scikit-learn uses, so the two agree
    to the last bit (``tests/test_metrics.py``); terms below machine epsilon count as 0."""
    a, b = C.sum(axis=1), C.sum(axis=0)
    if a.size == 1 or b.size == 1:  # one group: zero entropy, so no information
        return 0.0
    i, j = np.nonzero(C)
    n_ij = C[i, j]
    n = C.sum()
    p_ij = n_ij / n
    log_outer = -np.log(a[i] * b[j]) + log(a.sum()) + log(b.sum())
    mi = p_ij * (np.log(n_ij) - log(n)) + p_ij * log_outer
    mi = np.where(np.abs(mi) < np.finfo(mi.dtype).eps, 0.0, mi)
    return float(np.clip(mi.sum(), 0.0, None))


def _nmi(C: np.ndarray, average: str) -> float:
    if average not in NMI_AVERAGES:
        raise ValueError(f"average must be one of {NMI_AVERAGES}; got {average!r}")
    if C.shape[0] == C.shape[1] == 1:  # neither labelling splits the data: a perfect match
        return 1.0
    mi = _mutual_information(C)
    if mi == 0:
        return 0.0
    u, v = _entropy(C.sum(axis=1)), _entropy(C.sum(axis=0))
    if average == "min":
        norm = min(u, v)
    elif average == "geometric":
        norm = float(np.sqrt(u * v))
    elif average == "arithmetic":
        norm = float(np.mean([u, v]))
    else:
        norm = max(u, v)
    return float(mi / norm)


def _ari(C: np.ndarray) -> float:
    """Hubert and Arabie's ARI from the pair confusion counts, in exact integers."""
    n = int(C.sum())
    a, b = C.sum(axis=1), C.sum(axis=0)
    squares = int((C**2).sum())  # C is int64 (contingency)
    both = squares - n  # pairs together in both labellings (×2)
    only_pred = int(C.dot(b).sum()) - squares
    only_true = int(C.T.dot(a).sum()) - squares
    neither = n * n - only_pred - only_true - squares
    if only_true == 0 and only_pred == 0:
        return 1.0
    num = both * neither - only_true * only_pred
    den = (both + only_true) * (only_true + neither) + (both + only_pred) * (only_pred + neither)
    return 2.0 * num / den


def clustering_accuracy(y_true, y_pred) -> float:
    """Fraction of samples correctly labelled under the best cluster→class matching.

    The matching is one-to-one (``linear_sum_assignment`` on the contingency table, which
    may be rectangular when the numbers of clusters and classes differ).
    """
    return _accuracy(contingency(y_true, y_pred))


def nmi(y_true, y_pred, average: str = "arithmetic") -> float:
    """Normalised mutual information with the chosen normaliser (see module docstring);
    1 when neither labelling splits the data, 0 when their mutual information is 0."""
    return _nmi(contingency(y_true, y_pred), average)


def ari(y_true, y_pred) -> float:
    """Adjusted Rand index (1 when the labellings agree up to names)."""
    return _ari(contingency(y_true, y_pred))


def clustering_scores(
    y_true, y_pred, *, nmi_average: str = "arithmetic", n_clusters: int | None = None
) -> dict[str, float]:
    """ACC, NMI, ARI and NE of one clustering from one contingency table: the same
    values as :func:`clustering_accuracy`, :func:`nmi`, :func:`ari` and
    :func:`normalized_entropy` (``n_clusters`` as there)."""
    C = contingency(y_true, y_pred)
    return {
        "acc": _accuracy(C),
        "nmi": _nmi(C, nmi_average),
        "ari": _ari(C),
        "ne": _normalized_entropy(C.sum(axis=0), C.sum(), n_clusters),
    }


def normalized_entropy(y_pred, n_clusters: int | None = None) -> float:
    """FSBC Eq. (31): ``NE = −(1/log c) Σ_m (n_m/n) log(n_m/n)``.

    ``c`` is ``n_clusters`` (default: the number of distinct labels); empty clusters
    contribute ``0·log 0 = 0``. 1 for perfectly balanced clusters, 0 for one cluster.
    """
    y_pred = np.asarray(y_pred).ravel()
    if y_pred.size == 0:
        raise ValueError("label vector is empty")
    _, counts = np.unique(y_pred, return_counts=True)
    return _normalized_entropy(counts, y_pred.size, n_clusters)


def _normalized_entropy(counts: np.ndarray, n: int, n_clusters: int | None) -> float:
    # Eq. (31) as written, not _entropy's arrangement (scikit-learn's, kept for NMI's
    # last bits): sharing one would change NE's last bits in every archived evaluation
    c = counts.size if n_clusters is None else int(n_clusters)
    if c < counts.size:
        raise ValueError(f"n_clusters={c} is smaller than the {counts.size} labels present")
    if c < 2:
        return 0.0
    frac = counts / n
    return float(-(frac * np.log(frac)).sum() / np.log(c))


def _rankings(rankings) -> list[np.ndarray]:
    rankings = [np.asarray(r).ravel() for r in rankings]
    if not rankings:
        raise ValueError("need at least one ranking")
    return rankings


def true_positives_at(rankings: Sequence[Iterable[int]], true_features, s: int) -> float:
    """GOLFS Eq. (19): mean number of true features among the top ``s`` over repeats."""
    truth = np.asarray(list(true_features))
    return float(np.mean([np.isin(r[:s], truth).sum() for r in _rankings(rankings)]))


def coverage_probability_at(rankings: Sequence[Iterable[int]], true_features, s: int) -> float:
    """GOLFS Eq. (20): fraction of repeats whose top ``s`` contain every true feature."""
    truth = np.asarray(list(true_features))
    return float(np.mean([np.isin(truth, r[:s]).all() for r in _rankings(rankings)]))
