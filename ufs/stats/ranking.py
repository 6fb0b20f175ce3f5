"""Methods compared across data sets: average ranks, Friedman test and Nemenyi critical
difference (Demšar, JMLR 7:1-30, 2006); the rank tables and the critical-difference (CD)
diagram that show them are :mod:`ufs.report.rank_report`'s.

Per protocol (``label_free`` = documented defaults, ``label_free_tuned`` = the setting the
other families' labels choose, :mod:`ufs.stats.tuning`, ``oracle`` = label-tuned) and metric
(ACC, NMI):

* **score** of a method on a data set: the mean over the data set's ``h`` grid of the
  metric's mean over k-means restarts (and simulation replicates), read from the
  protocol's rows of the per-data-set table (oracle: the best grid setting at each ``h``;
  label-free: the default setting). A ``full`` method (all features) has one row, used
  for every ``h``. ``h_aggregate="max"`` uses the best ``h`` instead.
* **ranks** per data set: 1 = highest score, ties get the average rank
  (:func:`scipy.stats.rankdata`); the **average rank** is their mean over data sets.
* **Friedman test** (:func:`scipy.stats.friedmanchisquare`, with its tie correction) of
  "all methods are equivalent"; needs ``k ≥ 3`` methods and ``N ≥ 2`` data sets. The
  Iman-Davenport ``F`` (Demšar Eq. 2) is reported beside it.
* **Nemenyi critical difference** ``CD = q_α √(k(k+1)/(6N))`` with
  ``q_α = studentized_range.ppf(1 − α, k, ∞)/√2`` (Demšar Table 5): two methods whose
  average ranks differ by less than ``CD`` are not significantly different. The CD
  diagram (:func:`cd_figure`) joins such groups with a bar, only when the Friedman test
  is significant (no post-hoc test otherwise).

Who is ranked: only the **competitors** (registry role ``method``). The
references (``all_features``, ``random``, ``max_variance``) are bounds, not candidates:
they are compared with each method by paired tests (:mod:`ufs.stats.paired`) and never
enter the omnibus test; declared **variants** (``kmeans_ufs_exact``, ``spcafs_raw``,
``fsbc_nobal``: role ``variant``) enter only with ``include_variants``. A data set whose h
grid has fewer than ``min_h_values`` values (default 3) is flagged and left out (its
rank would be decided by one or two h); both are reported.

Missing results (one rule for every test, :data:`ufs.stats.views.MISSING_DATA_RULE`):
a fit over the compute budget scores the expected random subset of its (data set, h) cell
(``imputed``: data set → those methods; marked ``§``); otherwise the comparison uses the
(data set, h) cells where every compared method has a result (``cells``: every test of the
comparison uses them), a data set's score is the mean over those h, and a data set where
the methods share no h is dropped (``dropped_datasets``); if fewer than two data sets
would remain, the methods missing somewhere are dropped instead (``dropped_methods``).
Data sets whose h were cut that way are reported (``partial_support``).

Families: with a :class:`ufs.stats.views.View` that counts one data set per
family, the rows are families (the median over the members' scores) and simulations may be
left out; the result records the view and the families' members.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy import stats

from ..pipeline.status import FIT_STATUSES, worst
from . import views

__all__ = [
    "RankResult",
    "dataset_scores",
    "rank_table",
    "friedman",
    "nemenyi_cd",
    "nemenyi_q",
    "cliques",
    "rank_methods",
    "rank_all",
    "post_hoc",
    "positions",
    "tied",
    "top_methods",
    "PROTOCOLS",
    "METRICS",
]

#: the unsupervised numbers first, in every table: no labels, other families' labels, the
#: data set's own labels
PROTOCOLS = ("label_free", "label_free_tuned", "oracle")
METRICS = ("acc", "nmi")
PROTOCOL_TITLES = {
    "oracle": "label-tuned (oracle)",
    "label_free": "label-free defaults",
    "label_free_tuned": "label-free tuned (other families' labels)",
}


@dataclass
class RankResult:
    """The cross-data-set comparison of one protocol and metric."""

    protocol: str
    metric: str
    scores: pd.DataFrame  # data sets × methods (compared ones); NaN: budget exceeded
    ranks: pd.DataFrame  # data sets × methods, 1 = best
    avg_rank: pd.Series  # methods, ascending (best first)
    status: pd.DataFrame  # data sets × methods: worst fit status behind each score
    alpha: float = 0.05
    statistic: float | None = None  # Friedman chi-square
    pvalue: float | None = None
    iman_davenport: float | None = None
    iman_davenport_p: float | None = None
    cd: float | None = None
    groups: list[list[str]] = field(default_factory=list)
    dropped_datasets: dict[str, list[str]] = field(default_factory=dict)  # → missing methods
    dropped_methods: dict[str, list[str]] = field(default_factory=dict)  # → missing on
    # data set → the methods without a result at some of its h: those h were left out
    partial_support: dict[str, list[str]] = field(default_factory=dict)
    # data set → the methods over the budget at some of its h: scored as random there
    imputed: dict[str, list[str]] = field(default_factory=dict)
    note: str = ""  # why the test is not applicable, if it is not
    #: methods left out of the omnibus test → their role (references, variants)
    excluded: dict[str, str] = field(default_factory=dict)
    #: data sets left out because their h grid is thin → its number of h values
    thin_datasets: dict[str, int] = field(default_factory=dict)
    #: the view's key (``ufs.stats.views.View``; "" = every data set counts once)
    view: str = ""
    #: row of ``scores`` (a family) → its member data sets, where a family has several
    families: dict[str, list[str]] = field(default_factory=dict)
    #: simulated data sets the view leaves out of this comparison
    simulations: list[str] = field(default_factory=list)
    #: methods the view leaves out → why
    left_out: dict[str, str] = field(default_factory=dict)
    #: the (data set, h) cells every compared method has a result on: the cells every
    #: test of this comparison uses (one missing-data rule, one N per view)
    cells: pd.DataFrame = field(default_factory=pd.DataFrame)

    @property
    def k(self) -> int:
        return self.scores.shape[1]

    @property
    def n(self) -> int:
        return self.scores.shape[0]

    @property
    def applicable(self) -> bool:
        return self.statistic is not None

    def method_status(self, method: str) -> str:
        """The worst fit status behind the method's scores on the compared data sets."""
        return worst(self.status[method]) if method in self.status else "ok"


def positions(avg_rank: pd.Series) -> pd.Series:
    """Each method's place in the ascending ``avg_rank`` (1 = best), equal average ranks
    (equal rank sums, to round-off) sharing the better place: ``1, 1, 3`` for a tie at
    the top, never an order decided by the methods' names."""
    values = avg_rank.to_numpy(dtype=float)
    tol = 1e-9 * max(1.0, float(np.nanmax(np.abs(values)))) if len(values) else 0.0
    place = [1 + int(np.sum(values < v - tol)) for v in values]
    return pd.Series(place, index=avg_rank.index, dtype=int)


def top_methods(avg_rank: pd.Series) -> list[str]:
    """The methods at the best place of ``avg_rank`` (several where they tie)."""
    if avg_rank.empty:
        return []
    place = positions(avg_rank)
    return sorted(str(m) for m in place.index[place == 1])


def tied(avg_rank: pd.Series) -> pd.Series:
    """Whether each method's place in ``avg_rank`` is shared with another method (equal
    rank sums, :func:`positions`): the ranks a table marks as a tie."""
    place = positions(avg_rank)
    return place.map(place.value_counts()) > 1


def dataset_scores(
    tables: pd.DataFrame, protocol: str, metric: str, h_aggregate: str = "mean"
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(scores, statuses): data sets × methods from the per-data-set tables' rows.

    ``tables`` has the columns of ``<out>/tables/<dataset>.csv`` (``dataset``,
    ``protocol``, ``method``, ``h_label``, ``<metric>_mean``; ``status`` optional). A
    method without rows on a data set is NaN there, and so is one with a fit over the
    compute budget at any ``h`` (status ``budget_exceeded``: no score on that data set).
    """
    if h_aggregate not in ("mean", "max"):
        raise ValueError(f"h_aggregate must be 'mean' or 'max'; got {h_aggregate!r}")
    col = f"{metric}_mean"
    part = tables[tables["protocol"] == protocol]
    if part.empty:
        empty = pd.DataFrame(dtype=float)
        return empty, empty.astype(object)
    g = part.groupby(["dataset", "method"])
    scores = g[col].agg(h_aggregate).unstack("method")
    if "status" in part:
        status = g["status"].agg(worst).unstack("method")
    else:
        status = pd.DataFrame("ok", index=scores.index, columns=scores.columns)
    scores = scores.sort_index(axis=0).sort_index(axis=1)
    status = status.reindex_like(scores)
    return scores.mask(status == "budget_exceeded"), status


def rank_table(scores: pd.DataFrame) -> pd.DataFrame:
    """Ranks within each data set (row): 1 = highest score, ties averaged; a NaN score
    (budget exceeded) counts as ``-inf``: last, sharing the last ranks with other NaN."""
    filled = np.nan_to_num(scores.to_numpy(dtype=float), nan=-np.inf)
    ranks = np.vstack([stats.rankdata(-row) for row in filled])
    return pd.DataFrame(ranks, index=scores.index, columns=scores.columns)


def nemenyi_q(k: int, alpha: float = 0.05) -> float:
    """Demšar's ``q_α`` for ``k`` methods: the studentized range quantile over √2."""
    return float(stats.studentized_range.ppf(1.0 - alpha, k, np.inf) / np.sqrt(2.0))


def nemenyi_cd(k: int, n: int, alpha: float = 0.05) -> float:
    """Nemenyi critical difference of average ranks (Demšar 2006, Sec. 3.2.2)."""
    if k < 2 or n < 1:
        raise ValueError(f"the critical difference needs k >= 2 methods and N >= 1; got {k}, {n}")
    return nemenyi_q(k, alpha) * float(np.sqrt(k * (k + 1) / (6.0 * n)))


def friedman(scores: pd.DataFrame) -> tuple[float, float, float, float]:
    """Friedman χ² and p (scipy), Iman-Davenport ``F`` and p on a data sets × methods table
    (a NaN score counts as ``-inf``: ranked last, as in :func:`rank_table`)."""
    n, k = scores.shape
    if k < 3 or n < 2:
        raise ValueError(
            f"the Friedman test needs k >= 3 methods and N >= 2 data sets; got {k}, {n}"
        )
    filled = scores.astype(float).fillna(-np.inf)
    res = stats.friedmanchisquare(*(filled[c].to_numpy() for c in filled.columns))
    chi2, p = float(res.statistic), float(res.pvalue)
    denom = n * (k - 1) - chi2
    if denom > 0:
        f = (n - 1) * chi2 / denom
        fp = float(stats.f.sf(f, k - 1, (k - 1) * (n - 1)))
    else:  # identical rankings on every data set: F is infinite
        f, fp = float("inf"), 0.0
    return chi2, p, float(f), fp


def cliques(avg_rank: pd.Series, cd: float) -> list[list[str]]:
    """Maximal groups of methods (by ascending average rank) whose ranks all lie within
    less than ``cd`` of each other: the bars of the CD diagram."""
    r = avg_rank.sort_values()
    names, vals = list(r.index), r.to_numpy()
    out, last_end = [], -1
    for i in range(len(vals)):
        j = i
        while j + 1 < len(vals) and vals[j + 1] - vals[i] < cd:
            j += 1
        if j > i and j > last_end:
            out.append(names[i : j + 1])
            last_end = j
    return out


def method_roles(tables: pd.DataFrame) -> pd.Series:
    """method → role (``method``, ``variant``, ``reference``): the tables' ``role`` column,
    else the registry's; a method the registry does not know is a competitor."""
    from ..registry import get_method

    roles = {}
    if "role" in tables:
        roles = tables.dropna(subset=["role"]).groupby("method")["role"].first().to_dict()
    for m in tables["method"].unique():
        if m not in roles:
            try:
                roles[m] = get_method(m).role
            except ValueError:
                roles[m] = "method"
    return pd.Series(roles, dtype=object)


def h_counts(tables: pd.DataFrame) -> pd.Series:
    """data set → number of distinct values of h in its tables (``all`` not counted)."""
    numeric = tables[tables["h_label"].astype(str) != "all"]
    counts = numeric.groupby("dataset")["h_label"].nunique()
    return counts.reindex(tables["dataset"].unique(), fill_value=0)


def competitors(
    tables: pd.DataFrame, *, include_variants: bool = False, min_h_values: int = 3
) -> tuple[pd.DataFrame, dict[str, str], dict[str, int]]:
    """(the rows of the compared methods on the compared data sets, excluded methods →
    role, thin data sets → number of h values)."""
    roles = method_roles(tables)
    keep = {"method", "variant"} if include_variants else {"method"}
    excluded = {m: r for m, r in roles.items() if r not in keep}
    counts = h_counts(tables)
    thin = {d: int(c) for d, c in counts.items() if c < min_h_values}
    rows = tables[~tables["method"].isin(list(excluded)) & ~tables["dataset"].isin(list(thin))]
    return rows, dict(sorted(excluded.items())), thin


def rank_methods(
    tables: pd.DataFrame,
    protocol: str,
    metric: str,
    *,
    alpha: float = 0.05,
    h_aggregate: str = "mean",
    include_variants: bool = False,
    min_h_values: int = 3,
    view=None,
) -> RankResult:
    """Average ranks, Friedman test and Nemenyi CD of one protocol and metric, over the
    competitors (:func:`competitors`) on the data sets with at least ``min_h_values``
    values of h, under the missing-data rule (module docstring) and ``view``
    (:class:`ufs.stats.views.View`; None: every data set counts once). ``h_aggregate``
    ``"max"`` scores a data set by its best shared h instead of the mean."""
    if h_aggregate not in ("mean", "max"):
        raise ValueError(f"h_aggregate must be 'mean' or 'max'; got {h_aggregate!r}")
    left_out: dict[str, str] = {}
    sims: list[str] = []
    if view is not None:
        before = set(tables["dataset"].unique())
        tables, left_out = view.apply(tables)
        sims = sorted(str(d) for d in before - set(tables["dataset"].unique()))
    every = tables
    tables, excluded, thin = competitors(
        tables, include_variants=include_variants, min_h_values=min_h_values
    )
    impute = view.impute_budget if view is not None else True
    values, cell_status = views.cell_table(
        tables, protocol, metric, impute_budget=impute, reference_rows=every
    )
    present = [m for m in values.columns if values[m].notna().any()]
    # a method without a single result (over the budget everywhere) is dropped, and said
    never = {
        str(m): sorted({str(d) for d in values.index.get_level_values("dataset")})
        for m in values.columns
        if m not in present and (cell_status[m] == "budget_exceeded").any()
    }
    values = values[present]
    raw, dropped_d, dropped_m, partial, cells = _support(values, h_aggregate)
    dropped_m = {**never, **dropped_m}
    imputed: dict[str, list[str]] = {}
    if not values.empty:
        budget = (cell_status.reindex_like(values) == "budget_exceeded") & values.notna()
        imputed = {
            str(d): sorted(str(m) for m in b.columns[b.any(axis=0)])
            for d, b in budget.groupby(level="dataset")
            if b.to_numpy().any() and str(d) not in dropped_d
        }
    families = view.families() if view is not None else None
    members: dict[str, list[str]] = {}
    if families is not None and not raw.empty:
        for d in raw.index:
            members.setdefault(families.get(str(d), str(d)), []).append(str(d))
        members = {f: ds for f, ds in members.items() if len(ds) > 1}
    scores = views.collapse_families(raw, families)
    status = _row_status(cell_status, scores.columns, families)
    status = status.reindex(index=scores.index, columns=scores.columns).fillna("ok")
    extra = {
        "dropped_datasets": dropped_d,
        "dropped_methods": dropped_m,
        "partial_support": partial,
        "imputed": imputed,
        "excluded": excluded,
        "thin_datasets": thin,
        "view": view.key if view is not None else "",
        "families": members,
        "simulations": sims,
        "left_out": left_out,
        "cells": cells,
    }
    n, k = scores.shape
    if n == 0 or k == 0:
        return RankResult(
            protocol,
            metric,
            scores,
            scores.copy(),
            pd.Series(dtype=float),
            status,
            alpha,
            note="no method has a score under this protocol",
            **extra,
        )
    ranks = rank_table(scores)
    avg = ranks.mean(axis=0).sort_values(kind="stable")
    res = RankResult(
        protocol,
        metric,
        scores[avg.index],
        ranks[avg.index],
        avg,
        status[avg.index],
        alpha,
        **extra,
    )
    if k < 3 or n < 2:
        res.note = (
            f"Friedman test and critical difference not applicable: they need at least 3 "
            f"methods and 2 data sets (here {k} and {n})"
        )
        return res
    res.statistic, res.pvalue, res.iman_davenport, res.iman_davenport_p = friedman(scores)
    res.cd = nemenyi_cd(k, n, alpha)
    res.groups = cliques(avg, res.cd)
    return res


def _support(values: pd.DataFrame, h_aggregate: str):
    """(data sets × methods scores, dropped data sets, dropped methods, partial support,
    the complete cells) under the missing-data rule; methods are dropped instead of data
    sets when fewer than two data sets would remain."""
    if values.empty:
        return pd.DataFrame(dtype=float), {}, {}, {}, values
    methods = list(values.columns)
    complete = values.notna().all(axis=1)
    datasets = values.index.get_level_values("dataset").unique()
    kept = values[complete].index.get_level_values("dataset").unique()
    dropped_m: dict[str, list[str]] = {}
    if len(kept) < 2 and len(datasets) >= 2:
        has_all = values.notna().groupby(level="dataset").all()
        keep_cols = has_all.all(axis=0)
        dropped_m = {
            m: sorted(str(d) for d in has_all.index[~has_all[m]])
            for m in has_all.columns[~keep_cols]
        }
        methods = [m for m in methods if keep_cols[m]]
        values = values[methods]
        complete = values.notna().all(axis=1)
    sub = values[complete]
    g = sub.groupby(level="dataset", sort=True)
    scores = g.mean() if h_aggregate == "mean" else g.max()
    dropped_d, partial = {}, {}
    for d, block in values.groupby(level="dataset", sort=True):
        missing = sorted(str(m) for m in block.columns[block.isna().any(axis=0)])
        if d not in scores.index:
            dropped_d[str(d)] = missing
        elif missing:
            partial[str(d)] = missing
    return scores, dropped_d, dropped_m, partial, sub


#: fit status → its place in FIT_STATUSES (worst first)
_STATUS_CODE = {s: i for i, s in enumerate(FIT_STATUSES)}


def _row_status(cell_status: pd.DataFrame, methods, families) -> pd.DataFrame:
    """Data sets (or families) × methods: the worst fit status behind each score."""
    if cell_status.empty:
        return pd.DataFrame(dtype=object)
    # the worst status is the smallest index in FIT_STATUSES ("ok" for a missing value or
    # anything else): a minimum per group, as ufs.pipeline.status.worst
    codes = cell_status.reindex(columns=list(methods)).apply(
        lambda c: c.map(_STATUS_CODE).fillna(_STATUS_CODE["ok"])
    )
    by_d = codes.groupby(level="dataset").min()
    if families is not None:
        fam = [families.get(str(d), str(d)) for d in by_d.index]
        by_d = by_d.groupby(fam).min()
        by_d.index.name = "dataset"
    return by_d.apply(lambda c: c.map(lambda i: FIT_STATUSES[int(i)])).astype(object)


def rank_all(
    tables: pd.DataFrame,
    *,
    alpha: float = 0.05,
    h_aggregate: str = "mean",
    include_variants: bool = False,
    min_h_values: int = 3,
    view=None,
) -> list[RankResult]:
    """:func:`rank_methods` for every protocol × metric (ACC, NMI)."""
    return [
        rank_methods(
            tables,
            p,
            m,
            alpha=alpha,
            h_aggregate=h_aggregate,
            include_variants=include_variants,
            min_h_values=min_h_values,
            view=view,
        )
        for p in PROTOCOLS
        for m in METRICS
    ]


def post_hoc(result: RankResult) -> bool:
    """Whether the Nemenyi post-hoc comparison applies: the Friedman test rejected "all
    methods are equivalent" at ``alpha`` (Demšar 2006, Sec. 3.2.2)."""
    r = result
    return r.applicable and r.cd is not None and r.pvalue is not None and r.pvalue < r.alpha
