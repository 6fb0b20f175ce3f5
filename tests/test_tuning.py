"""The label-free tuned protocol: each method's setting chosen on the other families, never
with the data set's own labels (``ufs.stats.tuning``), on a small table whose answers are
worked out by hand."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from ufs.stats import tuning, views

# data set → h → setting → mean ACC on the even restarts (what the choice ranks). d1 and d2
# are one family (F): counted once, d3 and d4 are families of their own.
#   ranks by hand (1 = best):   a=1  a=2  a=3
#   d1                            1    3    2
#   d2                            3    2    1     → family F: 2, 2.5, 1.5
#   d3                            2    3    1
#   d4                            1    3    2
EVEN = {
    "d1": {"a=1": 0.9, "a=2": 0.5, "a=3": 0.6},
    "d2": {"a=1": 0.1, "a=2": 0.7, "a=3": 0.9},
    "d3": {"a=1": 0.8, "a=2": 0.1, "a=3": 0.9},
    "d4": {"a=1": 0.9, "a=2": 0.1, "a=3": 0.8},
}
FAMILIES = {"d1": "F", "d2": "F"}
DEFAULT = "a=2"  # the label-free default, one of the grid's settings
HS = ("5", "10")


def _grid(even=EVEN, method="m", default=DEFAULT) -> pd.DataFrame:
    """``grid`` rows as the per-data-set tables write them: the even restarts' mean in
    ``acc_half_a``, the odd restarts' (what is reported) in ``acc_mean``."""
    rows = []
    for d, settings in even.items():
        for i, h in enumerate(HS):
            for params, v in settings.items():
                rows.append(
                    {"dataset": d, "method": method, "pid": f"{method}:{params}"}
                    | {"params": params, "label_free": params == default, "in_grid": True}
                    | {"h": int(h), "h_label": h, "protocol": tuning.GRID, "status": "ok"}
                    | {"acc_half_a": v, "nmi_half_a": v, "n_settings": len(settings)}
                    # the reported (odd) restarts: another number, to see which is reported
                    | {"acc_mean": v / 2 + 0.01 * i, "nmi_mean": v / 3}
                )
    return pd.DataFrame(rows)


def _chosen(grid: pd.DataFrame) -> dict[str, tuple[str, str]]:
    with views.extra_families(FAMILIES):
        c = tuning.choose_settings(grid)
    return {r.dataset: (r.params, r.rule) for r in c.itertuples()}


def test_the_setting_with_the_best_average_rank_on_the_other_families_is_chosen():
    chosen = _chosen(_grid())
    # d3: F (2, 2.5, 1.5) and d4 (1, 3, 2) → a=1 1.5, a=2 2.75, a=3 1.75
    assert chosen["d3"] == ("a=1", "rank")
    # d4: F (2, 2.5, 1.5) and d3 (2, 3, 1) → a=3 1.25
    assert chosen["d4"] == ("a=3", "rank")
    with views.extra_families(FAMILIES):
        c = tuning.choose_settings(_grid()).set_index("dataset")
    assert c.loc["d3", "rank"] == pytest.approx(1.5) and c.loc["d3", "families"] == 2
    # a family counts once: d1 and d2 as two families would tie a=1 and a=3 for d3
    c2 = tuning.choose_settings(_grid()).set_index("dataset")  # no families merged
    assert c2.loc["d3", "tied"] == 2 and c2.loc["d3", "rank"] == pytest.approx(5 / 3)


def test_a_data_sets_own_labels_cannot_change_its_choice():
    base = _chosen(_grid())
    rng = np.random.default_rng(0)
    for target, family in (("d3", ["d3"]), ("d1", ["d1", "d2"])):  # d1's family is d1, d2
        for _ in range(5):
            even = {d: dict(s) for d, s in EVEN.items()}
            for d in family:
                even[d] = {p: float(rng.uniform()) for p in even[d]}
            assert _chosen(_grid(even))[target] == base[target], target


def test_ties_go_to_the_default_then_to_the_parameters_as_written():
    chosen = _chosen(_grid())
    # d1: d3 (2, 3, 1) and d4 (1, 3, 2) → a=1 and a=3 tie at 1.5; the default a=2 is not
    # tied, so the parameters as written decide: a=1
    assert chosen["d1"] == ("a=1", "params")
    # every setting equal elsewhere: the default wins over the parameters' order
    flat = {d: {"a=1": 0.5, "a=2": 0.5, "a=3": 0.5} for d in EVEN}
    assert set(_chosen(_grid(flat)).values()) == {("a=2", "default")}
    # and a setting without a score (over the budget) ranks last
    missing = {d: {"a=1": np.nan, "a=2": 0.5, "a=3": 0.5} for d in EVEN}
    assert set(_chosen(_grid(missing, default="a=1")).values()) == {("a=2", "params")}


def test_the_rows_report_the_chosen_setting_on_the_odd_restarts_and_simulations_inform_none():
    sim = {"golfs_sim1": {"a=1": 0.0, "a=2": 1.0, "a=3": 0.0}}  # would make a=2 win
    grid = _grid({**EVEN, **sim})
    others = pd.DataFrame(
        [{"dataset": "d3", "method": "m", "protocol": "label_free", "h_label": "5"}]
    )
    with views.extra_families(FAMILIES):
        out = tuning.with_label_free_tuned(pd.concat([others, grid], ignore_index=True))
    assert tuning.GRID not in set(out["protocol"])
    rows = out[out["protocol"] == tuning.PROTOCOL]
    assert len(rows) == len(EVEN | sim) * len(HS)  # every data set with a choice, every h
    d3 = rows[rows["dataset"] == "d3"].set_index("h_label")
    assert set(d3["params"]) == {"a=1"} and d3["choice_families"].eq(2).all()
    expected = grid[(grid["dataset"] == "d3") & (grid["params"] == "a=1")].set_index("h_label")
    assert d3.loc[list(HS), "acc_mean"].tolist() == expected.loc[list(HS), "acc_mean"].tolist()
    # the simulation's labels inform no real data set's choice; its own is the real ones'
    assert _chosen(grid)["d4"] == ("a=3", "rank")
    assert set(rows.loc[rows["dataset"] == "golfs_sim1", "choice_families"]) == {3}
    # nothing to choose from: the tables come back as they were
    assert tuning.with_label_free_tuned(others) is others
