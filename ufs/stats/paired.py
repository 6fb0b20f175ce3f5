"""Paired comparisons against the references, and the random reference as a distribution.

The omnibus test (Friedman, Nemenyi: :mod:`ufs.stats.ranking`) asks whether the
competitors differ among themselves. The question a reader of a feature-selection
benchmark asks first is another one: *does a method beat chance, and does it beat using
every feature?* That is a paired question per method, answered here on the data sets'
scores (the mean over a data set's h grid of the mean over k-means restarts):

* against the **expected random score** (the mean over the ``evaluation.reference_draws``
  independent random subsets; never one lucky draw) and against ``all_features``;
* :func:`scipy.stats.wilcoxon` signed-rank test of the per-data-set differences,
  two-sided, **Holm-corrected** over the methods compared with the same reference
  (:func:`holm`);
* the **median difference** with a percentile **bootstrap 95 % CI** over data sets
  (:func:`bootstrap_median_ci`, seeded);
* the **Bayesian signed-rank test** (Benavoli et al., JMLR 18(77), 2017; :func:`bayes_signed_rank`,
  vectorized, equal to ``baycomp``'s) with a region of practical equivalence (ROPE) of 1
  ACC point: P(better), P(equivalent), P(worse).

The random reference is also a distribution per data set: each method's score gets its
**percentile** among the random draws' scores (:func:`random_percentiles`), and a
label-tuned method is compared with the **best of G random subsets** chosen the same way
(:func:`best_of_g`): a grid of G settings searched with the labels gains something even
when no setting is better than another.

:func:`detectable` says what N data sets can show at all: the smallest average-rank gap
(Nemenyi CD) and the smallest two-sided Wilcoxon p-value, ``2 / 2^N``.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

__all__ = [
    "holm",
    "bootstrap_median_ci",
    "signed_rank",
    "bayes_signed_rank",
    "compare_to_reference",
    "draw_scores",
    "random_percentiles",
    "best_of_g",
    "best_of_g_scores",
    "best_of_g_cells",
    "detectable",
    "Detectable",
    "ROPE",
    "BOOTSTRAP_SEED",
]

#: region of practical equivalence of the Bayesian test: 1 point of ACC/NMI
ROPE = 0.01
#: the bootstrap's and the Bayesian test's seed (reports are reproducible)
BOOTSTRAP_SEED = 0


def holm(pvalues) -> np.ndarray:
    """Holm's step-down adjusted p-values (Holm 1979), in the input's order.

    With ``m`` finite p-values sorted ascending ``p_(1) ≤ … ≤ p_(m)``:
    ``adj_(i) = max_{j ≤ i} min(1, (m − j + 1) p_(j))``. NaN stays NaN and is not counted
    in ``m``. Reject at level α where ``adj ≤ α``."""
    p = np.asarray(pvalues, dtype=float)
    out = np.full(p.shape, np.nan)
    ok = np.flatnonzero(~np.isnan(p))
    m = ok.size
    if m == 0:
        return out
    order = ok[np.argsort(p[ok], kind="stable")]
    adjusted = np.minimum(1.0, (m - np.arange(m)) * p[order])
    out[order] = np.maximum.accumulate(adjusted)
    return out


def bootstrap_median_ci(
    diff, *, level: float = 0.95, n_boot: int = 10_000, seed: int = BOOTSTRAP_SEED
) -> tuple[float, float]:
    """Percentile bootstrap interval of the median of ``diff`` (data sets resampled with
    replacement, ``n_boot`` times, seeded). ``(nan, nan)`` for fewer than 2 values."""
    d = np.asarray(diff, dtype=float)
    d = d[~np.isnan(d)]
    if d.size < 2:
        return (math.nan, math.nan)
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, d.size, size=(n_boot, d.size))
    medians = np.median(d[idx], axis=1)
    tail = 100 * (1 - level) / 2
    lo, hi = np.percentile(medians, [tail, 100 - tail])
    return (float(lo), float(hi))


def signed_rank(diff) -> tuple[float, float]:
    """Two-sided Wilcoxon signed-rank test of ``diff`` against 0: ``(W, p)``, as
    :func:`scipy.stats.wilcoxon` computes it by default.

    Zero differences are dropped (Wilcoxon's own rule, scipy's default); every
    difference zero (or none at all) gives ``(nan, 1.0)``: nothing speaks against
    equality. ``W = min(R+, R−)`` over mid-ranks of ``|diff|``. The p-value is exact for
    N ≤ 13 values with tied or zero differences (the value scipy gets from a permutation
    test over all 2^N sign flips) and for N ≤ 50 without ties (scipy's exact null
    distribution), both computed here by counting (:func:`_exact_p`), and from the normal
    approximation otherwise (scipy's choices). Every p is a count over 2^N, so the counted
    value is scipy's to the last bit (``tests/test_references.py``)."""
    d = np.asarray(diff, dtype=float)
    d = d[~np.isnan(d)]
    if not np.any(d != 0):
        return (math.nan, 1.0)
    nonzero = d[d != 0]
    ranks = stats.rankdata(np.abs(nonzero))
    tied = nonzero.size < d.size or ranks.size > np.unique(ranks).size
    if d.size <= (_TIED_EXACT_MAX if tied else _EXACT_MAX):
        r_plus = float(ranks[nonzero > 0].sum())
        w = min(r_plus, float(ranks.sum()) - r_plus)
        return (w, _exact_p(ranks, nonzero > 0))
    res = stats.wilcoxon(d)
    return (float(res.statistic), float(res.pvalue))


#: the largest N whose tied signed-rank test scipy makes exact (2^13 sign flips ≤ its
#: 9 999 permutations); above it, the normal approximation
_TIED_EXACT_MAX = 13
#: the largest N whose untied signed-rank test scipy makes exact; above it, the normal
#: approximation
_EXACT_MAX = 50


def _exact_p(ranks: np.ndarray, positive: np.ndarray) -> float:
    """Two-sided exact p-value of the signed-rank sum ``R+`` given mid-ranks ``ranks``
    (multiples of ½) of the nonzero differences and which of them are positive: under the
    null each sign is + or − with probability ½, independently, so the null distribution of
    ``2 R+`` is the count of subsets of the doubled ranks by their sum, built one rank at
    a time (``O(N · ΣR)`` integer additions, not ``2^N`` evaluations).
    ``p = min(1, 2 · min(P(R+ ≤ r), P(R+ ≥ r)))``: scipy's two-sided permutation p with
    ties, and its exact p without (ranks 1…N, the statistic an integer)."""
    doubled = np.rint(2 * ranks).astype(np.int64)
    counts = np.zeros(int(doubled.sum()) + 1, dtype=np.int64)
    counts[0] = 1
    for v in doubled:
        counts[v:] = counts[v:] + counts[:-v]
    observed = int(doubled[positive].sum())
    low, high = int(counts[: observed + 1].sum()), int(counts[observed:].sum())
    return min(1.0, 2 * min(low, high) / 2.0**doubled.size)


@functools.lru_cache(maxsize=32)
def _dirichlet_samples(size: int, prior: float, seed: int, nsamples: int) -> np.ndarray:
    """``nsamples`` draws of ``Dir(prior, 1, …, 1)`` (``size`` weights) from
    ``RandomState(seed)``: the same for every test with as many paired values, so drawn
    once per process (a summary runs ~130 such tests on as many data sets); read-only."""
    weights = np.ones(size)
    weights[0] = prior
    w = np.random.RandomState(seed).dirichlet(weights, nsamples)
    w.flags.writeable = False
    return w


def bayes_signed_rank(
    x,
    y,
    *,
    rope: float = ROPE,
    seed: int = BOOTSTRAP_SEED,
    prior: float = 0.5,
    nsamples: int = 50_000,
) -> tuple[float, float, float] | None:
    """Bayesian signed-rank test (Benavoli et al., ICML 2014; JMLR 18(77), 2017):
    P(x better), P(equivalent within ±``rope``), P(y better); ``None`` for fewer than two
    paired values.

    The posterior of the Dirichlet process over the differences ``z = y − x`` with a
    pseudo-observation ``z₀ = 0`` of weight ``prior``: a sample draws weights
    ``w ~ Dir(prior, 1, …, 1)`` and gives P(y better) = Σᵢⱼ wᵢ wⱼ [zᵢ + zⱼ > 2 rope]
    (½ on the threshold), P(x better) the same below ``−2 rope``, the rest equivalent; a
    probability is the share of ``nsamples`` samples in which its region is the largest.
    These are the samples of ``baycomp`` 1.0's ``SignedRankTest`` (the same Dirichlet draws
    from ``RandomState(seed)``, the same masks; ``tests/test_paired.py`` checks the
    probabilities equal), computed as one matrix product over all samples instead of a
    Python loop of ``nsamples`` outer products: ~100× faster (the Bayesian tests were half
    of ``ufs benchmark-report``'s time), and the report no longer depends on whether an
    optional package is installed."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    keep = ~(np.isnan(x) | np.isnan(y))
    if keep.sum() < 2:
        return None
    diff = np.concatenate(([0.0], y[keep] - x[keep]))
    sums = diff[:, None] + diff[None, :]
    w = _dirichlet_samples(len(diff), prior, seed, nsamples)

    def mass(a: np.ndarray, thresh: float) -> np.ndarray:
        mask = (a > thresh).astype(float) + 0.5 * (a == thresh)
        return ((w @ mask) * w).sum(axis=1)

    samples = np.zeros((nsamples, 3))
    if rope > 0:
        samples[:, 0] = mass(-sums, 2 * rope)
        samples[:, 2] = mass(sums, 2 * rope)
        samples[:, 1] = 1 - samples[:, 0] - samples[:, 2]
    else:
        samples[:, 2] = mass(sums, 0.0)
        samples[:, 0] = 1 - samples[:, 2]
    counts = np.bincount(np.argmax(samples, axis=1), minlength=3) / nsamples
    return tuple(float(p) for p in counts)


def compare_to_reference(
    scores: pd.DataFrame,
    reference: pd.Series | dict[str, pd.Series],
    *,
    alpha: float = 0.05,
    bayes: bool = True,
    seed: int = BOOTSTRAP_SEED,
    ci: bool = True,
) -> pd.DataFrame:
    """Every method (a column of ``scores``: data sets × methods) against ``reference``
    (a score per data set; or a dict method → its own reference, e.g. the best of as many
    random draws as the method's grid has settings), paired over the data sets where both
    have a score.

    Columns: ``n`` data sets, ``wins``/``ties``/``losses`` of the method, ``median_diff``
    (method − reference), ``ci_low``/``ci_high`` (bootstrap 95 % CI of the median),
    ``W``, ``p`` (Wilcoxon, two-sided), ``p_holm`` (Holm over the methods of this call),
    ``significant`` (``p_holm ≤ alpha``), ``direction`` (``better``/``worse``/``no
    difference shown``) and, with ``baycomp`` installed and ``bayes``, ``p_better``,
    ``p_equivalent``, ``p_worse`` (ROPE :data:`ROPE`). ``ci=False`` leaves the interval
    NaN (the verdicts alone, e.g. of the leave-one-family-out runs)."""
    rows = []
    for m in scores.columns:
        x = scores[m].astype(float)
        ref_m = reference.get(m) if isinstance(reference, dict) else reference
        if ref_m is None:
            continue
        ref = ref_m.reindex(x.index).astype(float)
        keep = ~(x.isna() | ref.isna())
        d = (x - ref)[keep].to_numpy()
        w, p = signed_rank(d)
        lo, hi = bootstrap_median_ci(d, seed=seed) if ci else (math.nan, math.nan)
        row = {
            "method": m,
            "n": int(keep.sum()),
            "wins": int((d > 0).sum()),
            "ties": int((d == 0).sum()),
            "losses": int((d < 0).sum()),
            "median_diff": float(np.median(d)) if d.size else math.nan,
            "ci_low": lo,
            "ci_high": hi,
            "W": w,
            "p": p if d.size else math.nan,
        }
        if bayes:
            probs = bayes_signed_rank(x[keep], ref[keep], seed=seed)
            if probs is not None:
                row["p_better"], row["p_equivalent"], row["p_worse"] = probs
        rows.append(row)
    out = pd.DataFrame(rows).set_index("method") if rows else pd.DataFrame()
    if out.empty:
        return out
    out["p_holm"] = holm(out["p"].to_numpy())
    out["significant"] = out["p_holm"] <= alpha
    out["direction"] = np.where(
        ~out["significant"],
        "no difference shown",
        np.where(out["median_diff"] > 0, "better", "worse"),
    )
    return out


def draw_scores(tables: pd.DataFrame, metric: str, method: str = "random") -> pd.DataFrame:
    """Data sets × draws: each draw's score (mean over h of its mean over restarts), from
    the tables' ``draw`` rows of ``method``. Empty when the tables have none."""
    part = tables[(tables["protocol"] == "draw") & (tables["method"] == method)]
    if part.empty:
        return pd.DataFrame(dtype=float)
    return part.groupby(["dataset", "pid"])[f"{metric}_mean"].mean().unstack("pid")


def random_percentiles(scores: pd.DataFrame, draws: pd.DataFrame) -> pd.DataFrame:
    """Data sets × methods: the percentile (0-100) of each method's score among the random
    draws' scores of that data set (ties count half). 50 is chance; 100 beats every draw."""
    out = pd.DataFrame(np.nan, index=scores.index, columns=scores.columns)
    for d in scores.index.intersection(draws.index):
        ref = draws.loc[d].dropna().to_numpy(dtype=float)
        if ref.size == 0:
            continue
        for m in scores.columns:
            s = scores.loc[d, m]
            if not pd.isna(s):
                below, equal = (ref < s).sum(), (ref == s).sum()
                out.loc[d, m] = 100.0 * (below + 0.5 * equal) / ref.size
    return out


def best_of_g(select, report, g: int) -> float:
    """Expected ``report`` score of the draw with the best ``select`` score among ``g``
    draws taken at random without replacement from the ``R`` given ones: the chance
    reference of a grid search over ``g`` settings chosen on ``select`` (one half of the
    restarts) and reported on ``report`` (the other half).

    Exact, not sampled: with the draws sorted by ``select`` (descending; ties broken by
    ``report`` ascending, the conservative choice), the i-th (0-based) is the chosen one
    in ``C(R−1−i, g−1) / C(R, g)`` of the subsets. ``g`` is capped at ``R``."""
    a = np.asarray(select, dtype=float)
    b = np.asarray(report, dtype=float)
    keep = ~(np.isnan(a) | np.isnan(b))
    a, b = a[keep], b[keep]
    r = a.size
    if r == 0:
        return math.nan
    g = max(1, min(int(g), r))
    order = np.lexsort((b, -a))
    i = np.arange(r)
    weights = np.array([math.comb(r - 1 - k, g - 1) for k in i], dtype=float) / math.comb(r, g)
    return float(np.dot(weights, b[order]))


def best_of_g_scores(
    tables: pd.DataFrame, metric: str, g: int, method: str = "random"
) -> pd.Series:
    """Per data set: the mean over h of :func:`best_of_g` of ``method``'s draws (chosen on
    the even restarts, reported on the odd ones, as the label-tuned protocol)."""
    part = tables[(tables["protocol"] == "draw") & (tables["method"] == method)]
    out = {}
    for d, g_d in part.groupby("dataset"):
        per_h = [
            best_of_g(gh[f"{metric}_half_a"], gh[f"{metric}_half_b"], g)
            for _, gh in g_d.groupby("h_label")
        ]
        out[d] = float(np.mean(per_h))
    return pd.Series(out, dtype=float)


def best_of_g_cells(tables: pd.DataFrame, metric: str, g: int, method: str = "random") -> pd.Series:
    """Per (data set, h) cell: :func:`best_of_g` of ``method``'s draws (chosen on the
    even restarts, reported on the odd ones, as the label-tuned protocol); the index as
    :func:`ufs.stats.views.cell_table`'s."""
    part = tables[(tables["protocol"] == "draw") & (tables["method"] == method)]
    out = {
        (d, str(h)): best_of_g(gh[f"{metric}_half_a"], gh[f"{metric}_half_b"], g)
        for (d, h), gh in part.groupby(["dataset", "h_label"])
    }
    s = pd.Series(out, dtype=float)
    if not s.empty:
        s.index.names = ["dataset", "h"]
    return s


@dataclass(frozen=True)
class Detectable:
    """What a comparison of ``k`` methods on ``n`` data sets can show at level ``alpha``."""

    k: int
    n: int
    alpha: float
    cd: float | None  # the smallest significant average-rank gap (Nemenyi)
    min_p: float  # the smallest two-sided Wilcoxon p-value n data sets allow
    min_p_holm: float  # ... after Holm over k comparisons (the first step: k · min_p)

    @property
    def wilcoxon_can_reject(self) -> bool:
        return self.min_p_holm <= self.alpha

    def sentence(self) -> str:
        cd = (
            f"two competitors' average ranks must differ by at least {self.cd:.2f} (Nemenyi "
            f"CD, k = {self.k}) to be called different"
            if self.cd is not None
            else "no rank test applies"
        )
        wil = (
            f"the smallest two-sided Wilcoxon p-value N = {self.n} data sets allow is "
            f"{self.min_p:.2g} ({self.min_p_holm:.2g} after Holm over {self.k} methods)"
        )
        can = (
            "so a paired test can detect a method that wins on (nearly) every data set"
            if self.wilcoxon_can_reject
            else "so no paired test here can reach significance, whatever the scores"
        )
        return f"With N = {self.n} data sets, {cd}; {wil}, {can}."


def detectable(k: int, n: int, alpha: float = 0.05) -> Detectable:
    """The resolution of a benchmark: the Nemenyi CD for ``k`` methods on ``n`` data sets
    and the smallest Wilcoxon p-value (all ``n`` differences of one sign: ``2 / 2^n``)."""
    from .ranking import nemenyi_cd

    cd = nemenyi_cd(k, n, alpha) if k >= 2 and n >= 1 else None
    min_p = min(1.0, 2.0 / 2.0**n) if n >= 1 else 1.0
    return Detectable(k, n, alpha, cd, min_p, min(1.0, max(k, 1) * min_p))
