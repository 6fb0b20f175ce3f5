"""The papers' evaluation protocol: k-means on the selected columns, R restarts.

k-means uses ``k`` = number of classes, ``n_init=1`` and restarts seeded ``0..R−1``
(scikit-learn's k-means++ initialisation, which is also MATLAB's ``kmeans`` default).
Per restart we record ACC, NMI, ARI and NE; the summary is mean and sample standard
deviation (``ddof=1``, as MATLAB's ``std``) over the restarts.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from sklearn.cluster import KMeans

from .metrics import clustering_scores
from .validation import check_data, check_labels

__all__ = ["EvaluationResult", "evaluate_clustering", "METRICS"]

METRICS = ("acc", "nmi", "ari", "ne")


@dataclass
class EvaluationResult:
    """Per-restart metric values and their summary."""

    per_restart: dict[str, np.ndarray]
    seeds: np.ndarray
    inertia: np.ndarray
    extra: dict = field(default_factory=dict)

    def mean(self, metric: str) -> float:
        return float(np.mean(self.per_restart[metric]))

    def std(self, metric: str) -> float:
        v = self.per_restart[metric]
        return float(np.std(v, ddof=1)) if v.size > 1 else 0.0

    def summary(self) -> dict[str, float]:
        out = {}
        for m in self.per_restart:
            out[f"{m}_mean"] = self.mean(m)
            out[f"{m}_std"] = self.std(m)
        return out


def evaluate_clustering(
    X_selected,
    y,
    *,
    n_restarts: int = 20,
    seed_offset: int = 0,
    nmi_average: str = "arithmetic",
    max_iter: int = 300,
) -> EvaluationResult:
    """Cluster ``X_selected`` ``n_restarts`` times and score each run against ``y``.

    ``k`` is the number of distinct labels in ``y``. Restart ``r`` uses
    ``random_state = seed_offset + r``.
    """
    if int(n_restarts) < 1:
        raise ValueError(f"n_restarts must be >= 1; got {n_restarts}")
    X = check_data(X_selected, name="X_selected")
    y = check_labels(y, X.shape[0])
    k = int(y.max()) + 1
    if k < 2:
        raise ValueError("labels have a single class; clustering metrics need at least 2")
    if k > X.shape[0]:
        raise ValueError(f"{k} classes exceed the {X.shape[0]} samples")
    seeds = np.arange(seed_offset, seed_offset + int(n_restarts))
    vals = {m: np.empty(seeds.size) for m in METRICS}
    inertia = np.empty(seeds.size)
    for i, seed in enumerate(seeds):
        km = KMeans(n_clusters=k, n_init=1, random_state=int(seed), max_iter=max_iter)
        labels = km.fit_predict(X)
        inertia[i] = km.inertia_
        scores = clustering_scores(y, labels, nmi_average=nmi_average, n_clusters=k)
        for m in METRICS:
            vals[m][i] = scores[m]
    return EvaluationResult(per_restart=vals, seeds=seeds, inertia=inertia)
