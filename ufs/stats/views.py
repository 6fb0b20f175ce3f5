"""What a comparison across data sets is computed on: the (data set, h) cells,
one missing-data rule for every test, data set families and the sensitivity views.

* **Cells.** Per protocol and metric, a method's result at one ``h`` of one data set is a
  *cell* (the metric's mean over k-means restarts and simulation replicates; a ``full``
  method, all features, has one row that serves every ``h``). A fit over the compute
  budget (:mod:`ufs.pipeline.budget`) has no result of its own; the rule below fills it.
* **One missing-data rule** (:data:`MISSING_DATA_RULE`), the same in the Friedman test,
  the Wilcoxon tests and the Bayesian test, per (data set, h) cell:

  - a fit over the compute budget scores what a user without the method gets there, the
    **expected random subset** of that (data set, h) (marked ``§``): failures are imputed
    by a trivial baseline, as the AutoML benchmark imputes a failed run by a constant
    predictor (Gijsbers et al., JMLR 25(101), 2024); a method over the budget at one h
    thus loses that h alone, in every test alike, and no data set is dropped because one
    method was slow;
  - any other missing cell is a complete-case deletion: a comparison uses the cells where
    every compared method has a result (one set of cells, so one N, per comparison), a
    data set's score is the mean over those h, and a data set without one is left out
    (and listed).

  The sensitivity view ``complete_cases`` deletes the budget cells instead of imputing.
* **Families** (:data:`ufs.datasets.families.REGISTERED_FAMILIES`, and a config's
  ``family:`` entries, :func:`extra_families`): data sets drawn from one source (the same 72
  Golub samples as ``allaml``, ``leukemia`` and ``leuml``; subsets of one face database)
  are not independent evidence. A view that counts *one per family* replaces a family's
  members by one score per method, the **median over its members** (the mean of two);
  each member's score follows the missing-data rule first.
* **Simulations** (data sets whose registry source is ``simulation``) are generated
  from a model one method was designed for (GOLFS's Examples 1 and 2): the primary view
  reports them apart, never in its ranks.
* **Views** (:class:`View`): the primary rule and the variations of the sensitivity
  table (:data:`SENSITIVITY_VIEWS`).

The families live beside the data set catalog (:mod:`ufs.datasets.families`), in a module the
data steps do not import: naming a family never re-plans a benchmark.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..datasets.families import REGISTERED_FAMILIES

__all__ = [
    "dataset_families",
    "extra_families",
    "FLAG_STATUSES",
    "MISSING_DATA_RULE",
    "BUDGET_RULE",
    "View",
    "PRIMARY",
    "ALL_DATASETS",
    "FAMILIES",
    "SENSITIVITY_VIEWS",
    "family_of",
    "is_simulation",
    "cell_table",
    "support_scores",
    "collapse_families",
    "view_scores",
    "flag_shares",
]

#: the statuses a sensitivity view can leave out (``†``, ``‡``, ``◊``)
FLAG_STATUSES = ("not_converged", "diverged", "degenerate")

#: the missing-data rule in one sentence, in the same words wherever it is stated (the
#: reports' legends and answers, ``config/README.md``, the README)
BUDGET_RULE = (
    "A fit over the compute budget (§) has no result of its own: every test scores its "
    "(data set, h) cell as the expected random subset of that cell."
)

MISSING_DATA_RULE = (
    "one rule per (data set, h) cell, the same in the Friedman, Wilcoxon and Bayesian "
    "tests. " + BUDGET_RULE + " That is what a user without the method gets (failures "
    "imputed by a trivial baseline, as in the AutoML benchmark, Gijsbers et al., JMLR "
    "2024), so a method over the budget at one h loses that h alone and no data set is "
    "dropped for it; otherwise the tests of a view use the cells where every competitor "
    "has a result (one N per view), a data set's score being the mean over those h."
)

#: the method whose expected score imputes a fit over the budget
IMPUTE_WITH = "random"


#: the families a report adds for this computation (a config's ``family:`` entries)
_EXTRA: contextvars.ContextVar[tuple[tuple[str, str], ...]] = contextvars.ContextVar(
    "ufs_extra_families", default=()
)


def dataset_families() -> dict[str, str]:
    """Data set → family: the registered families, and those of :func:`extra_families`."""
    return {**REGISTERED_FAMILIES, **dict(_EXTRA.get())}


def family_of(dataset: str) -> str:
    """The family of ``dataset`` (:func:`dataset_families`; itself if not listed)."""
    return dataset_families().get(dataset, dataset)


@contextlib.contextmanager
def extra_families(families: Mapping[str, str] | None):
    """Within the block, every view that counts one per family also merges the data sets
    of ``families`` (data set → family: a config's ``family:`` entries,
    :func:`ufs.datasets.families.config_families`), over the registered families."""
    token = _EXTRA.set(tuple({**dict(_EXTRA.get()), **dict(families or {})}.items()))
    try:
        yield
    finally:
        _EXTRA.reset(token)


def is_simulation(dataset: str) -> bool:
    """Whether the registry generates ``dataset`` (source ``simulation``); a data set the
    registry does not know (a user's file) is real data."""
    from ..datasets import get_dataset

    try:
        return get_dataset(dataset).source == "simulation"
    except (KeyError, ValueError):
        return False


def cell_table(
    tables: pd.DataFrame,
    protocol: str,
    metric: str,
    *,
    impute_budget: bool = True,
    reference_rows: pd.DataFrame | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(values, statuses): (data set, h) × method of one protocol's ``<metric>_mean``.

    ``tables`` has the per-data-set tables' columns (``dataset``, ``protocol``,
    ``method``, ``h_label``, ``<metric>_mean``; ``status`` optional). A ``full`` method's
    one row (``h_label`` ``all``) fills every ``h`` of its data set; a method without a row
    at an ``h`` is NaN there; a fit over the budget (status ``budget_exceeded``, kept in
    the statuses) scores the label-free expected random subset of its cell
    (:data:`IMPUTE_WITH`, read from ``reference_rows``, default ``tables``), or NaN with
    ``impute_budget=False`` or where none ran."""
    col = f"{metric}_mean"
    part = tables[tables["protocol"] == protocol]
    if part.empty:
        empty = pd.DataFrame(dtype=float)
        return empty, empty.astype(object)
    part = part.assign(h_key=part["h_label"].astype(str))
    if "status" not in part:
        part = part.assign(status="ok")
    numeric = part[part["h_key"] != "all"]
    full = part[part["h_key"] == "all"]
    hs = numeric[["dataset", "h_key"]].drop_duplicates()
    if not full.empty:
        full = full.drop(columns="h_key").merge(hs, on="dataset", how="inner")
        part = pd.concat([numeric, full], ignore_index=True)
    g = part.groupby(["dataset", "h_key", "method"])
    values = g[col].mean().unstack("method")
    status = g["status"].first().unstack("method").reindex_like(values)
    budget = status == "budget_exceeded"
    values = values.mask(budget)
    values.index.names = ["dataset", "h"]
    status.index.names = ["dataset", "h"]
    if impute_budget and budget.to_numpy().any():
        ref = tables if reference_rows is None else reference_rows
        rand = ref[(ref["protocol"] == "label_free") & (ref["method"] == IMPUTE_WITH)]
        fill = rand.assign(h=rand["h_label"].astype(str)).groupby(["dataset", "h"])[col].mean()
        fill = fill.reindex(values.index)
        for m in values.columns[budget.any(axis=0).to_numpy()]:
            values[m] = values[m].where(~budget[m].to_numpy(), fill)
    return values.sort_index(axis=1), status.sort_index(axis=1)


def support_scores(
    values: pd.DataFrame, methods: Iterable[str]
) -> tuple[pd.DataFrame, dict[str, list[str]]]:
    """(scores, dropped): data sets × ``methods``, each the mean over the ``h`` where every
    one of ``methods`` has a cell (:data:`MISSING_DATA_RULE`); ``dropped``: data set →
    the methods without a cell at any of its shared ``h`` (the data set is left out)."""
    methods = list(methods)
    sub = values.reindex(columns=methods)
    complete = sub.notna().all(axis=1).to_numpy()
    scores = sub[complete].groupby(level="dataset", sort=True).mean()
    dropped: dict[str, list[str]] = {}
    lost = sub.index.get_level_values("dataset").unique().difference(scores.index)
    if len(lost):
        have = sub.notna().groupby(level="dataset").any()
        for d in lost:
            never = sorted(str(m) for m in have.columns[~have.loc[d]])
            dropped[str(d)] = never or sorted(str(m) for m in methods)
    return scores, dropped


def collapse_families(scores: pd.DataFrame, families: Mapping[str, str] | None) -> pd.DataFrame:
    """Families × methods: the median over each family's member data sets (rows of
    ``scores``); ``families`` None leaves every data set its own row."""
    if families is None or scores.empty:
        return scores
    fam = [families.get(str(d), str(d)) for d in scores.index]
    out = scores.groupby(fam, sort=True).median()
    out.index.name = "dataset"
    return out


def flag_shares(tables: pd.DataFrame, protocol: str) -> pd.Series:
    """method → the share of its rows of ``protocol`` whose fit is flagged (†, ‡, ◊)."""
    part = tables[tables["protocol"] == protocol]
    if part.empty or "status" not in part:
        return pd.Series(dtype=float)
    return part["status"].isin(FLAG_STATUSES).groupby(part["method"]).mean()


@dataclass(frozen=True)
class View:
    """Which data a comparison counts, and how.

    ``one_per_family``: a family counts once (:func:`collapse_families`);
    ``simulations``: simulated data sets enter the comparison; ``drop_flagged``: a
    flagged fit's cell (†, ‡, ◊) counts as missing, and a method flagged on more than
    half of its cells is left out; ``drop_mostly_flagged``: the methods flagged on more
    than half of their fits are left out (their other fits too); ``swap``: (variant,
    method) pairs, the variant's results standing in for the method's (e.g. SPCAFS on
    raw input)."""

    key: str
    title: str
    one_per_family: bool = True
    simulations: bool = False
    drop_flagged: bool = False
    drop_mostly_flagged: bool = False
    swap: tuple[tuple[str, str], ...] = ()
    impute_budget: bool = True

    def apply(self, tables: pd.DataFrame) -> tuple[pd.DataFrame, dict[str, str]]:
        """(the rows this view compares, methods left out → why)."""
        t = tables
        left_out: dict[str, str] = {}
        if not self.simulations:
            sims = [d for d in t["dataset"].unique() if is_simulation(str(d))]
            t = t[~t["dataset"].isin(sims)]
        for variant, method in self.swap:
            if variant in set(t["method"]):
                t = t[t["method"] != method]
                role = t["role"].where(t["method"] != variant, "method") if "role" in t else None
                t = t.assign(method=t["method"].replace({variant: method}))
                if role is not None:
                    t = t.assign(role=role)
        if (self.drop_flagged or self.drop_mostly_flagged) and "status" in t:
            for protocol in t["protocol"].unique():
                shares = flag_shares(t, protocol)
                for m, s in shares.items():
                    if s > 0.5:
                        left_out[str(m)] = f"flagged on {100 * s:.0f} % of its fits"
            t = t[~t["method"].isin(list(left_out))]
            if self.drop_flagged:
                flagged = t["status"].isin(FLAG_STATUSES).to_numpy()
                means = [c for c in t.columns if c.endswith("_mean")]
                t = t.copy()
                t.loc[flagged, means] = np.nan
        return t, left_out

    def families(self) -> dict[str, str] | None:
        return dataset_families() if self.one_per_family else None


PRIMARY = View("primary", "one data set per family, simulations apart")
ALL_DATASETS = View(
    "all", "every data set, simulations included", one_per_family=False, simulations=True
)
#: the workflow's ``summary.md``: one per family, every data set of the run (a default
#: run's data sets are mostly simulations and small sets; none is left out of its ranks)
FAMILIES = View(
    "families_with_simulations", "one per family, simulations included", simulations=True
)
#: the sensitivity table's views, the primary first
SENSITIVITY_VIEWS: tuple[View, ...] = (
    PRIMARY,
    ALL_DATASETS,
    FAMILIES,
    View("no_flagged_fits", "primary, flagged fits (†, ◊) left out", drop_flagged=True),
    View(
        "no_mostly_flagged_methods",
        "primary, methods flagged on most fits left out",
        drop_mostly_flagged=True,
    ),
    View(
        "complete_cases",
        "primary, fits over the budget deleted (complete cases) instead of imputed",
        impute_budget=False,
    ),
    View(
        "spcafs_raw",
        "primary, SPCAFS on raw input (`spcafs_raw`) in place of z-scores",
        swap=(("spcafs_raw", "spcafs"),),
    ),
)


def view_scores(
    values: pd.DataFrame, methods: Iterable[str], families: Mapping[str, str] | None
) -> tuple[pd.DataFrame, dict[str, list[str]]]:
    """Data sets (or families) × ``methods`` under the missing-data rule: the scores on
    the shared cells (:func:`support_scores`), then one row per family."""
    scores, dropped = support_scores(values, methods)
    return collapse_families(scores, families), dropped
