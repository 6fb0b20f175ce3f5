"""kNN graphs built inside the fit job that uses them: a graph only one fit
job uses costs no job of its own; a graph several fit jobs share is built once by the
graph step. Both give the same fit, and the construction time is recorded."""

from __future__ import annotations

import re
import subprocess
import sys

import numpy as np
import pytest

from ufs.fileio import read_json
from ufs.pipeline import steps
from ufs.pipeline.config import build_plan

from .test_input_space import _config, _data
from .workflow_helpers import REPO, write_config


def _fit(tmp_path, data, s, name, **graphs):
    task = {"method": s.method, "pid": s.pid, "params": s.params, "hkey": "all", "hs": [None]}
    out, info = tmp_path / f"{name}.npz", tmp_path / f"{name}.json"
    steps.fit(data, [{**task, "graph_id": s.graph_id}], out, info, **graphs)
    with np.load(out) as f:
        arrays = {k: f[k] for k in f.files}
    return arrays, read_json(info)


def test_graph_built_in_the_job_equals_the_cached_graph(tmp_path, rng):
    path, data, _ = _data(tmp_path, rng)
    plan = build_plan(_config(path, {"laplacian_score": {}}))
    (s,) = plan.settings["laplacian_score"]
    cached = tmp_path / "graph.npz"
    steps.build_graph(data, s.graph, cached)
    a_file, info_file = _fit(tmp_path, data, s, "file", graphs={s.graph_id: str(cached)})
    a_job, info_job = _fit(tmp_path, data, s, "job", graph_specs={s.graph_id: s.graph})
    assert a_file.keys() == a_job.keys() and a_job
    for k in a_file:
        np.testing.assert_array_equal(a_file[k], a_job[k])
    # construction time recorded once, for the job that built it, and only then
    assert info_file["graph_seconds"] == {} and info_file["tasks"][0]["graph_seconds"] == 0.0
    assert set(info_job["graph_seconds"]) == {s.graph_id}
    assert info_job["tasks"][0]["graph_seconds"] == info_job["graph_seconds"][s.graph_id] >= 0


def _dry_run_rules(tmp_path, config, *extra) -> dict[str, int]:
    cfg = write_config(tmp_path, config)
    res = subprocess.run(
        [
            sys.executable,
            "-m",
            "snakemake",
            "-n",
            "--quiet",
            "rules",
            "--cores",
            "1",
            "--snakefile",
            str(REPO / "Snakefile"),
            "--directory",
            str(tmp_path),
            "--configfile",
            str(cfg),
            *extra,
        ],  # fmt: skip
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert res.returncode == 0, res.stderr[-2000:]
    return {m[1]: int(m[2]) for m in re.finditer(r"^(\w+)\s+(\d+)$", res.stdout, flags=re.M)}


@pytest.mark.parametrize("tasks_per_job", [25, 1])
def test_graph_jobs_only_for_graphs_several_fit_jobs_share(tmp_path, tasks_per_job):
    """wine with laplacian_score and ndfs (kNN-graph methods) and all_features, one job per
    method's chunk: a graph that one fit job uses is built in it (no graph job); with one
    task per job, the fit jobs of a method's settings share its graph and one graph job
    builds it."""
    config = {
        "output_dir": "results",
        "resources_dir": "resources",
        "mlflow": {"enabled": False},
        "jobs": {"tasks_per_job": tasks_per_job},
        "datasets": {"wine": {"h": [2, 4]}},
        "methods": {
            "all_features": {},
            "laplacian_score": {},
            "ndfs": {"grid": {"beta": [1.0, 10.0, 100.0]}},
        },
    }
    plan = build_plan(config, warn=False)
    gids = {s.graph_id for m in ("laplacian_score", "ndfs") for s in plan.settings[m]}
    rules = _dry_run_rules(tmp_path, config)
    n_chunks = len(plan.chunks("wine"))
    assert rules["fit"] == n_chunks
    if n_chunks == 1:
        assert "graph" not in rules
    else:
        users = {g: 0 for g in gids}
        for tasks in plan.chunks("wine").values():
            for g in {plan.setting(t.method, t.pid).graph_id for t in tasks} - {None}:
                users[g] += 1
        shared = sum(n > 1 for n in users.values())
        assert rules.get("graph", 0) == shared
        if tasks_per_job == 1:  # the graph's settings in several jobs: one graph job
            assert shared >= 1


def test_summary_counts_the_aggregation_jobs_not_mlflow(tmp_path):
    """The summary's time shares read the aggregation jobs' benchmark files too, but it
    does not wait for the MLflow jobs (a tracking server that is down must not cost the
    tables and the summary: tests/test_mlflow_server.py)."""
    config = {
        "output_dir": "results",
        "resources_dir": "resources",
        "datasets": {"wine": {"h": [2]}},
        "methods": {"laplacian_score": {}},
    }
    rules = _dry_run_rules(tmp_path, config, "--forceall", "results/summary.md")
    for rule in ("download", "standardize", "fit", "evaluate", "aggregate_dataset"):
        assert rules.get(rule) == 1, rule
    assert "track" not in rules and "mlflow_init" not in rules
