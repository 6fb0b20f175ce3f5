"""A chance reference's draws pooled into one score (a reference that involves
chance is a distribution, not one draw). One formula for the results tables
(:func:`ufs.report.results_table`) and the MLflow runs (:mod:`ufs.tracking.runs`), so it
sits below both: tracking and stats are side by side and import neither each other
(``tests/test_architecture.py``)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def pool_draws(means: Sequence[float], restarts: Sequence[Sequence[float]]) -> dict[str, float]:
    """The pooled statistics of one metric over a reference's draws at one h.

    ``means``: each draw's mean over its k-means restarts; ``restarts``: each draw's
    per-restart values. Returns ``mean`` (the mean of the draws' means: the *expected*
    score of a random subset), ``std`` (over every restart of every draw, ddof 1; 0 for
    one value), ``p05`` / ``p95`` (the 5th and 95th percentiles of the draws' means: the
    band of one draw) and ``n_draws``. A NaN mean (a draw without a value) makes ``mean``
    and the band NaN; a restart without a value makes ``std`` NaN."""
    m = np.asarray(means, dtype=float)
    values = [np.asarray(v, dtype=float) for v in restarts]
    everything = np.concatenate(values) if values else np.empty(0)
    if everything.size == 0 or np.isnan(everything).all():
        std = np.nan
    else:
        std = float(everything.std(ddof=1)) if everything.size > 1 else 0.0
    if m.size == 0 or np.isnan(m).any():
        mean = p05 = p95 = np.nan
    else:
        mean = float(np.mean(m))
        p05, p95 = (float(x) for x in np.percentile(m, [5, 95]))
    return {"mean": mean, "std": std, "p05": p05, "p95": p95, "n_draws": int(m.size)}
