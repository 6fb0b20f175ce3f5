"""A process's one-time library costs, paid before the first timed fit or k-means run.

The workflow records each fit's CPU time (``fit_cpu_seconds``: the method's cost, in the
run-time tables and figures) and each evaluation's k-means time. The first of them in a
process used to carry costs that are the process's, not the method's:

* scikit-learn's feature-name check (``BaseSelector.fit`` and ``KMeans.fit`` both make it)
  asks narwhals, the first time, for its installed plugins, which reads the entry points of
  every installed distribution: ~10-15 ms here (135 distributions), once per process;
* in a process forked from the warm server (``workflow/scripts/_warm.py``), the first
  k-means run also copies the memory pages it writes (reference counts of the code and
  objects it touches): ~13 ms more, once per process.

So a millisecond method's only fit in its job (a ranking method: one fit per setting) was
recorded ~10 ms slower than it is — Laplacian Score on wine as ~15 ms where it takes ~4 —
and every evaluate job's first k-means run ~35 ms slower (measured 2026-11-29 in forked
children, wine-sized data: 68-76 ms first, 35-39 ms after). :func:`warm_up` runs the same
library calls once on a tiny problem, untimed; the fit and evaluate steps call it before
their first timed call, and the warm server calls it once (without k-means), so that
its children find narwhals' plugin list already read. What it costs stays with the job
(its overhead), where it belongs.
"""

from __future__ import annotations

import numpy as np

__all__ = ["warm_up"]

#: a tiny two-cluster problem: 6 samples, 2 features, labels 0 0 0 1 1 1
_X = np.array([[0.0, 0.0], [0.1, 0.0], [0.0, 0.1], [1.0, 1.0], [1.1, 1.0], [1.0, 1.1]])
_Y = np.array([0, 0, 0, 1, 1, 1])


def warm_up(*, kmeans: bool = False) -> None:
    """Pay the process's first-call costs of the feature-name check (every fit), and with
    ``kmeans`` those of the k-means evaluation (:func:`ufs.evaluation.evaluate_clustering`
    with two restarts and its metrics), on a tiny problem. Cheap when already paid (~1 ms
    with ``kmeans``); deterministic, and it changes no state a result depends on."""
    from sklearn.preprocessing import StandardScaler

    StandardScaler().fit(_X)  # scikit-learn's validate_data: the feature-name check
    if kmeans:
        from ..evaluation import evaluate_clustering

        evaluate_clustering(_X, _Y, n_restarts=2)
