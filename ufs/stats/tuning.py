"""The label-free tuned protocol: each method's setting on a data set chosen with the labels
of the *other* families only (leave one family out), never with the data set's own.

The label-tuned (``oracle``) protocol chooses a method's grid setting with the labels of the
data set it reports on: an upper bound, not something a practitioner can do on unlabelled
data. What a practitioner can do is take the setting that did best *elsewhere*. This module
makes that choice from the same grid runs (the ``grid`` rows of the per-data-set tables,
:func:`ufs.report.results_table.select_protocols`: every setting of a method's grid at every
h, on the data sets of ``oracle_datasets``), so it needs no fit of its own:

1. **Rank the settings on each other data set.** Per data set D and h, a method's settings
   are ranked by the oracle metric's (``evaluation.oracle_metric``, ACC by default) mean
   over the **even-numbered** k-means restarts (what the label-tuned protocol chooses on):
   1 = best, equal scores share the mean of their ranks, a setting without a score there
   (over the compute budget, or not run) ranks last.
2. **Average** those ranks over D's h, then over the data sets of a family (a family counts
   once: :func:`ufs.stats.views.family_of`, the registered families and a config's
   ``family:`` entries), then over the families: the setting's *average rank elsewhere*.
3. **For data set d**, the families that inform the choice are every family with grid runs
   except d's own; the simulations (generated from a model one method was designed for,
   :func:`ufs.stats.views.is_simulation`) inform no choice. The labels of d's family never
   enter: perturbing d's scores cannot change d's choice (``tests/test_tuning.py``).
4. **The chosen setting** is the candidate (the method's grid settings on d) with the lowest
   average rank elsewhere. **Ties** (average ranks equal to 1e-9) go to the method's
   label-free default where it is one of the tied settings, else to the tied setting whose
   parameters come first as written (``params``, e.g. ``alpha=1e-06, beta=1.0``): a rule
   that needs nothing but the tables.
5. **Reported** as the label-tuned rows are: the chosen setting's rows of d at every h,
   scored on the **odd-numbered** restarts, so the three protocols are comparable.

A method without a grid has its default as its only setting, so its label-free tuned rows
are its default's, on the odd restarts. A data set no other family informs (the grid ran on
one family only) has no label-free tuned rows. The rows carry ``choice_rank`` (the chosen
setting's average rank elsewhere), ``choice_families`` (the families that informed it) and
``choice_tied`` (how many settings shared that rank).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from . import views

__all__ = [
    "GRID",
    "PROTOCOL",
    "TIE_TOLERANCE",
    "setting_ranks",
    "choose_settings",
    "label_free_tuned_rows",
    "with_label_free_tuned",
]

#: the rows of every grid setting in the per-data-set tables (the input of the choice)
GRID = "grid"
#: the protocol these rows make
PROTOCOL = "label_free_tuned"
#: average ranks closer than this are a tie
TIE_TOLERANCE = 1e-9


def setting_ranks(grid: pd.DataFrame, metric: str = "acc") -> dict[str, pd.DataFrame]:
    """method → data sets × settings (``pid``): the setting's rank among the method's
    settings at each h of the data set by ``<metric>_half_a`` (1 = best, ties averaged,
    no score last), averaged over the data set's h (steps 1 and 2 of the module
    docstring, before the families)."""
    from scipy import stats  # the per-data-set table jobs import this module's names only

    col = f"{metric}_half_a"
    out = {}
    for method, g in grid.groupby("method", sort=True):
        keys = g.assign(_h=g["h_label"].astype(str), pid=g["pid"].astype(str))
        values = keys.groupby(["dataset", "_h", "pid"])[col].mean().unstack("pid")
        # every setting of the method that ran anywhere; one not run here ranks last here
        values = values.reindex(columns=sorted(keys["pid"].unique())).astype(float)
        filled = np.nan_to_num(values.to_numpy(dtype=float), nan=-np.inf)
        ranks = stats.rankdata(-filled, axis=1) if len(filled) else filled
        ranked = pd.DataFrame(ranks, index=values.index, columns=values.columns)
        out[str(method)] = ranked.groupby(level="dataset", sort=True).mean()
    return out


def _informing(datasets, target: str) -> list[str]:
    """The data sets whose labels inform ``target``'s choice: not simulated, not of its
    family."""
    fam = views.family_of(target)
    return [
        str(d)
        for d in datasets
        if views.family_of(str(d)) != fam and not views.is_simulation(str(d))
    ]


def _rank_elsewhere(ranks: pd.DataFrame, informing: list[str]) -> tuple[pd.Series, int]:
    """(setting → its average rank over the families of ``informing``, the number of
    families): each data set's rank, averaged over a family's members, then over the
    families."""
    part = ranks.loc[[d for d in informing if d in ranks.index]]
    if part.empty:
        return pd.Series(dtype=float), 0
    fam = [views.family_of(str(d)) for d in part.index]
    by_family = part.groupby(fam, sort=True).mean()
    return by_family.mean(axis=0), len(by_family)


def choose_settings(grid: pd.DataFrame, metric: str = "acc") -> pd.DataFrame:
    """One row per (data set, method) of the grid rows with a choice: ``pid`` and
    ``params`` of the chosen setting, ``rank`` (its average rank on the other families),
    ``families`` (how many informed it), ``tied`` (settings at that rank), ``default``
    (whether it is the method's label-free default) and ``rule`` (``rank``,
    ``default`` or ``params``: what decided it). The module docstring defines it."""
    ranks = setting_ranks(grid, metric)
    datasets = sorted(grid["dataset"].astype(str).unique())
    informing = {d: _informing(datasets, d) for d in datasets}
    rows = []
    for (d, method), g in grid.groupby(["dataset", "method"], sort=True):
        d, method = str(d), str(method)
        settings = g.drop_duplicates("pid").assign(pid=lambda x: x["pid"].astype(str))
        settings = settings.set_index("pid")
        score, n_fam = _rank_elsewhere(ranks[method], informing[d])
        if n_fam == 0:
            continue
        score = score.reindex(settings.index)
        best = float(score.min())
        tied = list(score.index[np.abs(score.to_numpy() - best) <= TIE_TOLERANCE])
        defaults = [p for p in tied if bool(settings.at[p, "label_free"])]
        if len(tied) == 1:
            pid, rule = tied[0], "rank"
        elif defaults:
            pid, rule = defaults[0], "default"
        else:
            pid = min(tied, key=lambda p: (str(settings.at[p, "params"]), p))
            rule = "params"
        rows.append(
            {
                "dataset": d,
                "method": method,
                "pid": pid,
                "params": settings.at[pid, "params"],
                "rank": best,
                "families": n_fam,
                "tied": len(tied),
                "default": bool(settings.at[pid, "label_free"]),
                "rule": rule,
            }
        )
    cols = ["dataset", "method", "pid", "params", "rank", "families", "tied", "default", "rule"]
    return pd.DataFrame(rows, columns=cols)


def label_free_tuned_rows(grid: pd.DataFrame, metric: str = "acc") -> pd.DataFrame:
    """The label-free tuned protocol's rows: each (data set, method)'s chosen setting
    (:func:`choose_settings`) at every h, as its ``grid`` rows report it (the odd
    restarts), with ``protocol`` :data:`PROTOCOL` and the choice's ``choice_rank``,
    ``choice_families`` and ``choice_tied``."""
    chosen = choose_settings(grid, metric)
    if chosen.empty:
        return grid.iloc[:0].assign(protocol=PROTOCOL)
    key = chosen[["dataset", "method", "pid", "rank", "families", "tied"]].rename(
        columns={"rank": "choice_rank", "families": "choice_families", "tied": "choice_tied"}
    )
    g = grid.assign(
        dataset=grid["dataset"].astype(str),
        method=grid["method"].astype(str),
        pid=grid["pid"].astype(str),
    )
    out = g.merge(key, on=["dataset", "method", "pid"], how="inner")
    return out.assign(protocol=PROTOCOL)


def with_label_free_tuned(tables: pd.DataFrame, metric: str = "acc") -> pd.DataFrame:
    """``tables`` (the per-data-set tables concatenated) with their ``grid`` rows replaced
    by the label-free tuned protocol's rows (:func:`label_free_tuned_rows`); unchanged
    where they have no grid rows. Call it where the tables' families
    are known (inside :func:`ufs.stats.views.extra_families` for a config's own)."""
    if "protocol" not in tables:
        return tables
    grid = tables[tables["protocol"] == GRID]
    if grid.empty:
        return tables
    rest = tables[~tables["protocol"].isin([GRID, PROTOCOL])]
    rows = label_free_tuned_rows(grid, metric)
    return pd.concat([rest, rows], ignore_index=True)
