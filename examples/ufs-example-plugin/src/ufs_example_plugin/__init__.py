"""An example UFS-bench plugin: the kNN-residual score, registered by entry point.

A feature that varies smoothly over the data's neighbourhoods is predicted well by the
mean of its values at a sample's k nearest neighbours (found on all features). The score
of feature j is the share of its variance the neighbours explain,

    s_j = 1 - var(x_j - mean_{i' in kNN(i)} x_{i'j}) / var(x_j),

higher is better: a ranking method in UFS-bench's terms. ``registration()`` is the
``ufs.methods`` entry point (see ``pyproject.toml``); ``knn_residual_scores`` is the same
score as a plain function, for a config's import path
(``methods: {mine: {class: "ufs_example_plugin:knn_residual_scores"}}``).
"""

from __future__ import annotations

import numpy as np
from sklearn.neighbors import NearestNeighbors

from ufs.base import Selection, UFSSelector

__version__ = "0.1.0"


def knn_residual_scores(X, n_neighbors: int = 5) -> np.ndarray:
    """The kNN-residual score of every feature of ``X`` (n × p), higher is better."""
    X = np.asarray(X, dtype=float)
    k = min(n_neighbors, X.shape[0] - 1)
    idx = NearestNeighbors(n_neighbors=k + 1).fit(X).kneighbors(X, return_distance=False)
    predicted = X[idx[:, 1:]].mean(axis=1)  # each sample's neighbours, itself left out
    residual = X - predicted
    var = X.var(axis=0)
    return 1.0 - residual.var(axis=0) / np.where(var > 0, var, 1.0)


class KNNResidual(UFSSelector):
    """Features ranked by :func:`knn_residual_scores` (a ranking method)."""

    kind = "ranking"
    requires_n_clusters = False  # the score needs no number of clusters

    def __init__(self, n_features_to_select=10, n_neighbors: int = 5):
        self.n_features_to_select = n_features_to_select
        self.n_neighbors = n_neighbors

    def _fit(self, X: np.ndarray) -> Selection:
        scores = knn_residual_scores(X, self.n_neighbors)
        return Selection(order=np.argsort(-scores, kind="stable"), scores=scores)


def registration() -> dict:
    """The ``ufs.methods`` entry point: what UFS-bench registers as ``knn_residual``."""
    return {
        "cls": KNNResidual,
        "grid": {"n_neighbors": [5, 10, 20]},
        "defaults": {"n_neighbors": 5},
        "role": "method",
        "reference": "ufs-example-plugin (examples/ufs-example-plugin in UFS-bench)",
    }
