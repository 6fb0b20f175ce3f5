"""All-pairs paired tests of the competitors: which pairs the data can order.

The Nemenyi critical difference compares *mean ranks*, and a mean rank depends on which
other methods are in the comparison (Benavoli, Corani & Mangili, JMLR 17(5), 2016): two
methods can move apart or together when a third is added. Whether method ``a`` is better
than method ``b`` is a paired question about ``a`` and ``b`` alone, answered here:

* per pair, the scores of the two methods on the data sets (or families) of the view,
  each the mean over the (data set, h) cells where *both* have a result (the missing-data
  rule of every test, :data:`ufs.stats.views.MISSING_DATA_RULE`), a family by the median
  over its members;
* the **Wilcoxon signed-rank test** of the differences (two-sided,
  :func:`ufs.stats.paired.signed_rank`), **Holm-corrected over all** ``k(k−1)/2`` pairs;
* the effect: wins/ties/losses, the **median difference** with its bootstrap 95 % CI;
  optionally the **Bayesian signed-rank test** (:func:`ufs.stats.paired.bayes_signed_rank`,
  ROPE ±1 point).

A pair is *ordered* when its Holm-adjusted p is at most α; its direction is the sign of
the signed-rank sum (the side whose wins weigh more), which the median difference follows
in every case reported here. Nothing else is ordered.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping

import numpy as np
import pandas as pd
from scipy import stats

from . import paired, views

__all__ = ["pairwise_tests", "ordered_pairs", "min_holm_p"]


def _direction(d: np.ndarray) -> int:
    """+1 when the positive differences' signed ranks outweigh the negative ones, −1 the
    other way, 0 for a balance (or no non-zero difference)."""
    d = d[d != 0]
    if d.size == 0:
        return 0
    r = stats.rankdata(np.abs(d))
    s = float(np.sum(np.sign(d) * r))
    return 0 if s == 0 else (1 if s > 0 else -1)


def pairwise_tests(
    values: pd.DataFrame,
    methods,
    *,
    families: Mapping[str, str] | None = None,
    alpha: float = 0.05,
    bayes: bool = False,
    effects: bool = True,
    seed: int = paired.BOOTSTRAP_SEED,
) -> pd.DataFrame:
    """One row per unordered pair of ``methods`` (``values``: the (data set, h) × method
    cells, :func:`ufs.stats.views.cell_table`), oriented so that ``a`` is the side the
    signed ranks favour (``a`` before ``b`` in ``methods`` on a balance).

    Columns: ``a``, ``b``, ``n`` (data sets or families), ``wins``/``ties``/``losses`` of
    ``a``, ``median_diff`` (a − b), ``ci_low``/``ci_high`` (with ``effects``), ``p``
    (Wilcoxon), ``p_holm`` (Holm over all pairs), ``ordered`` (``p_holm ≤ alpha``) and,
    with ``bayes``, ``p_a``/``p_rope``/``p_b``."""
    methods = [m for m in methods if m in values.columns]
    complete = not values[methods].isna().to_numpy().any()
    if complete:  # every pair shares every cell: the scores once, not per pair
        every, _ = views.view_scores(values, methods, families)
        columns = {m: every[m].to_numpy(dtype=float) for m in methods}
    rows = []
    for a, b in itertools.combinations(methods, 2):
        if complete:
            xa, xb = columns[a], columns[b]
        else:
            s = views.view_scores(values, [a, b], families)[0]
            empty = np.array([])
            xa, xb = (empty, empty) if s.empty else (s[a].to_numpy(float), s[b].to_numpy(float))
        d = xa - xb
        if _direction(d) < 0:
            a, b, xa, xb, d = b, a, xb, xa, -d
        _, p = paired.signed_rank(d)
        row = {
            "a": a,
            "b": b,
            "n": int(d.size),
            "wins": int((d > 0).sum()),
            "ties": int((d == 0).sum()),
            "losses": int((d < 0).sum()),
            "median_diff": float(np.median(d)) if d.size else math.nan,
            "p": p if d.size else math.nan,
        }
        if effects:
            row["ci_low"], row["ci_high"] = paired.bootstrap_median_ci(d, seed=seed)
        if bayes and d.size >= 2:
            probs = paired.bayes_signed_rank(xa, xb, seed=seed)
            if probs is not None:
                row["p_a"], row["p_rope"], row["p_b"] = probs
        rows.append(row)
    out = pd.DataFrame(rows)
    if out.empty:
        return pd.DataFrame(columns=["a", "b", "n", "p", "p_holm", "ordered"])
    out["p_holm"] = paired.holm(out["p"].to_numpy())
    out["ordered"] = out["p_holm"] <= alpha
    return out.sort_values(["ordered", "p_holm", "a", "b"], ascending=[False, True, True, True])


def ordered_pairs(tests: pd.DataFrame) -> list[tuple[str, str]]:
    """(better, worse) of every pair the tests order, most significant first."""
    if tests.empty:
        return []
    part = tests[tests["ordered"]]
    return [(str(a), str(b)) for a, b in zip(part["a"], part["b"], strict=True)]


def min_holm_p(k: int, n: int) -> float:
    """The smallest Holm-adjusted p over all ``k(k−1)/2`` pairs that ``n`` paired data
    sets allow: the first Holm step, ``k(k−1)/2 · 2/2^n`` (capped at 1)."""
    m = max(1, k * (k - 1) // 2)
    return min(1.0, m * 2.0 / 2.0**n) if n >= 1 else 1.0
