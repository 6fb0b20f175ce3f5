"""Plan keys: the label-tuned protocol on a declared subset of data sets
(``oracle_datasets``), grids thinned by a documented rule (``grid_max_settings``) and the
budget's re-run key (a budget change re-runs only the fits whose outcome it changes)."""

from __future__ import annotations

import math

import pytest

from ufs.pipeline.budget import budget_key
from ufs.pipeline.config import ConfigError, build_plan, thin_grid

DECADES = [10.0**k for k in range(-6, 7)]  # 13 values


def _config(**extra):
    return {
        "datasets": {"wine": {"h": [2, 4]}, "breast_cancer": {"h": [3, 6]}},
        "methods": {
            "all_features": {},
            "random": {},
            "laplacian_score": {"grid": {"n_neighbors": [3, 5, 7, 9]}},
            "udfs": {"grid": {"gamma": DECADES, "lam": DECADES}},
        },
        "evaluation": {"reference_draws": 3},
        **extra,
    }


# -- thin_grid --------------------------------------------------------------------------


def test_thin_grid_keeps_both_ends_and_evenly_spaced_values():
    assert thin_grid({"a": DECADES, "b": DECADES}, 9) == {
        "a": [1e-6, 1.0, 1e6],
        "b": [1e-6, 1.0, 1e6],
    }
    assert thin_grid({"a": list(range(7))}, 4) == {"a": [0, 2, 4, 6]}
    # the widest parameter loses values first; ties by name
    assert thin_grid({"a": [1, 2, 3], "b": list(range(10))}, 9) == {"a": [1, 2, 3], "b": [0, 4, 9]}
    # one value: the middle one
    assert thin_grid({"a": [1, 2, 3, 4, 5]}, 1) == {"a": [3]}


@pytest.mark.parametrize("limit", [1, 2, 5, 9, 27, 100])
def test_thin_grid_never_exceeds_the_limit_and_keeps_a_grid_that_fits(limit):
    grid = {"a": list(range(7)), "b": list(range(5)), "c": list(range(3))}
    thinned = thin_grid(grid, limit)
    size = math.prod(len(v) for v in thinned.values())
    assert size <= limit
    for k, values in thinned.items():
        assert set(values) <= set(grid[k]) and values == sorted(values)
    # as large as the rule allows: one more value on the narrowest thinned parameter
    # would exceed the limit (the greedy rule removes values only while over it)
    if limit >= 105:
        assert thinned == grid
    assert thin_grid(grid, None) == grid


def test_plan_thins_every_grid():
    plan = build_plan(_config(grid_max_settings=4))
    udfs = [s for s in plan.settings["udfs"] if s.in_grid]
    assert len(udfs) == 4  # 13 x 13 -> 2 x 2 (the ends of each decade list)
    assert {s.params["gamma"] for s in udfs} == {1e-6, 1e6}
    assert len([s for s in plan.settings["laplacian_score"] if s.in_grid]) == 4


# -- oracle_datasets ----------------------------------------------------------------------


def test_tuned_subset_runs_the_grid_only_there():
    plan = build_plan(_config(oracle_datasets=["wine"]))
    assert plan.is_tuned("wine") and not plan.is_tuned("breast_cancer")
    wine = {t.pid for t in plan.tasks("wine") if t.method == "udfs"}
    bc = {t.pid for t in plan.tasks("breast_cancer") if t.method == "udfs"}
    default = next(s for s in plan.settings["udfs"] if s.label_free)
    assert len(wine | {default.pid}) == 1 + 13 * 13 - (default.in_grid)  # the default and grid
    assert bc == {default.pid}
    # off the subset nothing is a label-tuned candidate, even the grid-less methods' default
    for m in plan.settings:
        for s in plan.dataset_settings(m, "breast_cancer"):
            assert not plan.in_grid(s, "breast_cancer")
    af = plan.settings["all_features"][0]
    assert plan.in_grid(af, "wine") and not plan.in_grid(af, "breast_cancer")


def test_off_the_subset_the_jobs_are_those_of_a_label_free_run():
    """Declaring a tuned subset leaves the other data sets' chunks (ids and tasks) as a
    ``protocols: [label_free]`` plan has them: their files are not re-made."""
    tuned = build_plan(_config(oracle_datasets=["wine"], grid_max_settings=9))
    free = build_plan(_config(protocols=["label_free"]))
    assert tuned.chunks("breast_cancer") == free.chunks("breast_cancer")
    assert tuned.chunks("wine") != free.chunks("wine")


def test_oracle_datasets_must_be_configured_and_are_moot_without_the_oracle_protocol():
    with pytest.raises(ConfigError, match="not in the config's datasets"):
        build_plan(_config(oracle_datasets=["iris"]))
    # `--config protocols=[label_free]` on a config with a tuned subset: no grid anywhere
    free = build_plan(_config(oracle_datasets=["wine"], protocols=["label_free"]))
    assert free.tuned == frozenset()
    assert all(
        len(free.dataset_settings(m, "wine")) == len(free.settings[m]) for m in free.settings
    )
    assert len(free.settings["udfs"]) == 1
    # a slice (only_datasets) may leave a tuned data set out
    plan = build_plan(_config(oracle_datasets=["wine"], only_datasets=["breast_cancer"]))
    assert plan.tuned == frozenset()


def test_grid_max_settings_is_validated():
    with pytest.raises(ConfigError, match="grid_max_settings"):
        build_plan(_config(grid_max_settings=0))


# -- budget_key ---------------------------------------------------------------------------


def _info(budget, fits, key=None):
    task = {"budget_seconds": budget, "fits": fits}
    if key is not None:
        task["budget_key"] = key
    return {"tasks": [task]}


def _done(cpu):
    return {"fit_cpu_seconds": cpu}


def _stopped(reason="time: over 120 CPU-s"):
    return {"fit_cpu_seconds": 121.0, "budget_exceeded": True, "budget_reason": reason}


def test_budget_key_of_a_new_job_is_the_budget():
    assert budget_key(None, 600) == 600


def test_raising_the_budget_keeps_finished_fits_and_reruns_stopped_ones():
    finished = _info(120, {"h5": _done(30.0), "h10": _done(119.0)})
    assert budget_key(finished, 600) == 120  # the recorded key: no parameter change
    stopped = _info(120, {"h5": _done(30.0), "h10": _stopped()})
    assert budget_key(stopped, 600) == 600  # would now finish: re-run
    memory = _info(120, {"h5": _done(30.0), "h10": _stopped("memory: 9 GiB > 8 GiB")})
    assert budget_key(memory, 600) == 120  # a memory refusal does not depend on time


def test_lowering_the_budget_reruns_fits_that_took_longer():
    info = _info(600, {"h5": _done(30.0), "h10": _done(400.0)})
    assert budget_key(info, 120) == 120
    assert budget_key(info, 500) == 600
    stopped = _info(600, {"h5": _stopped("time: over 600 CPU-s")})
    assert budget_key(stopped, 120) == 600  # stopped at 600, stops at 120 too


def test_the_key_a_job_ran_under_is_kept_after_a_rerun_for_another_reason():
    """A job kept under the key 120 and re-run for a code change runs with the config's
    600 and records key 120 (the key it was scheduled under): no second re-run."""
    rerun = _info(600, {"h5": _done(30.0)}, key=120)
    assert budget_key(rerun, 600) == 120
    mixed = {
        "tasks": _info(120, {"a": _done(1.0)})["tasks"] + _info(600, {"b": _done(1.0)})["tasks"]
    }
    assert budget_key(mixed, 600) == 600  # two keys recorded: a re-run settles it
