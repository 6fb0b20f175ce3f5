"""The stability step (ufs.pipeline.stability_step) and its report: the protocol's h and
settings, a planted data set's stable selection, reproducibility, a fit over its budget,
and the table and figure; the workflow's stability jobs (off when disabled)."""

from __future__ import annotations

import re

import pandas as pd
import pytest

from tests.test_fit_budget import three_class_data
from tests.workflow_helpers import TINY, run_snakemake, write_config
from ufs.fileio import read_json
from ufs.pipeline.config import build_plan
from ufs.pipeline.stability_step import (
    run_stability,
    stability_config,
    stability_h,
    stability_jobs,
    stability_settings,
)
from ufs.report.stability_report import stability_markdown, write_stability_report


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    return three_class_data(tmp_path_factory.mktemp("stability"))


def test_the_declared_h_and_the_settings():
    assert stability_h([5, 10, 20, 40]) == 10 and stability_h([2, 4, 6]) == 4
    assert stability_h([10, 30], 30) == 30
    with pytest.raises(ValueError, match="not one of"):
        stability_h([10, 30], 20)
    plan = build_plan(
        {**TINY, "methods": {**TINY["methods"], "spec": {}}, "datasets": {"wine": {"h": [2]}}},
        warn=False,
    )
    chosen = stability_settings(plan)
    assert set(chosen) == {"kmeans_ufs", "kmeans_ufs_exact", "laplacian_score", "spec"}
    assert all(s.label_free for s in chosen.values())  # references and full methods: none
    assert stability_config({"stability": {"enabled": "false"}})["enabled"] is False
    assert stability_config({})["m"] == 10


def test_a_declared_subset_of_data_sets():
    from ufs.pipeline.config_checks import ConfigError

    config = {
        **TINY,
        "stability": {"enabled": True},
        "datasets": {"wine": {"h": [2, 4]}, "breast_cancer": {"h": [5]}},
    }
    plan = build_plan(config, warn=False)
    every = stability_jobs(plan, config)
    assert {d for d, _, _ in every} == {"wine", "breast_cancer"}
    some = {**config, "stability": {"enabled": True, "datasets": ["wine"]}}
    chosen = stability_jobs(build_plan(some, warn=False), some)
    assert chosen == [j for j in every if j[0] == "wine"] and chosen
    with pytest.raises(ConfigError, match="stability.datasets"):
        build_plan({**config, "stability": {"datasets": ["iris"]}}, warn=False)


def test_a_planted_selection_is_stable_and_reproducible(data, tmp_path):
    a = run_stability(data, "laplacian_score", {}, 3, tmp_path / "a.json", m=5, seed=1)
    b = run_stability(data, "laplacian_score", {}, 3, tmp_path / "b.json", m=5, seed=1)
    assert a["selections"] == b["selections"] and a["stability"] == b["stability"]
    assert all(sorted(s) == [0, 1, 2] for s in a["selections"])  # the planted features
    assert a["stability"] == pytest.approx(1.0)
    assert a["status"] == "ok" and a["flagged"] == 0 and len(a["fits"]) == 5
    assert read_json(tmp_path / "a.json")["stability_m"] == 5
    c = run_stability(data, "laplacian_score", {}, 3, tmp_path / "c.json", m=5, seed=2)
    assert len(c["selections"]) == 5  # another seed: other subsamples, still a valid run


def test_a_fit_over_its_budget_leaves_no_stability(data, tmp_path):
    r = run_stability(data, "kmeans_ufs", {}, 3, tmp_path / "s.json", m=3, budget_seconds=1e-9)
    assert r["stability"] is None and r["reason"].startswith("not computed: draw 0")
    assert r["status"] == "budget_exceeded" and "selections" not in r


def test_the_budget_key_changes_only_where_the_budget_changes_the_record(data, tmp_path):
    """As a fit job's (ufs.pipeline.budget.budget_key): a record whose draws all finished
    within the new budget keeps the key it ran under; one with a draw above it, or stopped
    under a lower budget than the new one, takes the new budget."""
    from ufs.pipeline.lineage import stability_budget_key

    done = run_stability(
        data, "laplacian_score", {}, 3, tmp_path / "d.json", m=3, budget_seconds=600
    )
    assert (done["budget_seconds"], done["budget_key"]) == (600, 600)
    # the key keeps its type: a rule parameter 600 that came back 600.0 would re-run the job
    assert type(stability_budget_key(done, 600)) is int
    assert stability_budget_key(None, 600) == 600  # not run yet
    assert stability_budget_key(done, 300) == 600  # each draw far below 300 CPU-s
    slowest = max(f["cpu_seconds"] for f in done["fits"])
    assert stability_budget_key(done, slowest / 2) == slowest / 2  # a draw would stop
    stopped = run_stability(
        data, "kmeans_ufs", {}, 3, tmp_path / "s.json", m=3, budget_seconds=1e-9, budget_key=5
    )
    assert stability_budget_key(stopped, 1e-9) == 5  # it would stop again
    assert stability_budget_key(stopped, 600) == 600  # a larger budget may let it finish
    older = {k: v for k, v in done.items() if k not in ("budget_seconds", "budget_key")}
    assert stability_budget_key(older, 300) == 300


def test_the_report_marks_what_it_could_not_compute(data, tmp_path):
    ok = run_stability(data, "laplacian_score", {}, 3, tmp_path / "d" / "laplacian_score.json", m=3)
    run_stability(
        data, "kmeans_ufs", {}, 3, tmp_path / "d" / "kmeans_ufs.json", m=3, budget_seconds=1e-9
    )
    table = tmp_path / "d.csv"
    pd.DataFrame(
        [{"dataset": "d", "method": "laplacian_score", "h": 3, "label_free": True,
          "protocol": "label_free", "acc_mean": 0.9}]
    ).to_csv(table, index=False)  # fmt: skip
    files = sorted((tmp_path / "d").glob("*.json"))
    out = tmp_path / "out"
    frame = write_stability_report(
        files, [table], out / "s.csv", out / "s.md", out / "fig" / "s.png"
    )
    assert set(frame["method"]) == {"laplacian_score", "kmeans_ufs"}
    row = frame.set_index("method").loc["laplacian_score"]
    assert row["acc_mean"] == 0.9 and row["stability"] == pytest.approx(ok["stability"])
    md = (out / "s.md").read_text()
    assert "| kmeans_ufs | – | – (not computed: draw 0" in md
    assert (out / "fig" / "s.png").is_file() and (out / "fig" / "s.pdf").is_file()
    assert "No method selects" in stability_markdown(frame.iloc[:0])


def _client(workdir):
    from mlflow.tracking import MlflowClient

    return MlflowClient(tracking_uri=f"sqlite:///{workdir / 'results' / 'mlflow.db'}")


def _parents(workdir):
    client = _client(workdir)
    exp = client.get_experiment_by_name("stability")
    runs = client.search_runs([exp.experiment_id], max_results=1000)
    return [r for r in runs if "ufs.parent" in r.data.tags]


def _history(workdir, run_id):
    return _client(workdir).get_metric_history(run_id, "stability")


def test_the_workflow_runs_one_stability_job_per_method_and_data_set(tmp_path):
    config = {
        **TINY,
        "datasets": {"wine": {"h": [2, 4, 6]}},
        "methods": {"all_features": {}, "random": {}, "laplacian_score": {}, "spec": {}},
        "mlflow": {"experiment": "stability"},
        "stability": {"m": 3},
    }
    cfg = write_config(tmp_path, config)
    run_snakemake(tmp_path, cfg)
    runs_before = _parents(tmp_path)
    out = tmp_path / "results"
    files = sorted(p.name for p in (out / "stability" / "wine").glob("*.json"))
    assert files == ["laplacian_score.json", "spec.json"]
    rec = read_json(out / "stability" / "wine" / "spec.json")
    assert rec["h"] == 4 and rec["m"] == 3 and -1 <= rec["stability"] <= 1
    frame = pd.read_csv(out / "stability.csv")
    assert set(frame["method"]) == {"laplacian_score", "spec"} and frame["acc_mean"].notna().all()
    assert (out / "figures" / "stability_vs_acc.png").is_file()
    summary = (out / "summary.md").read_text()
    assert "## Selection stability" in summary and "[stability.md](stability.md)" in summary
    assert f"spec {rec['stability']:.3f}" in summary
    # MLflow: each method's parent run on the data set carries its stability, once
    parents = {r.data.tags["method"]: r for r in runs_before}
    assert parents["spec"].data.metrics["stability"] == pytest.approx(rec["stability"])
    assert parents["spec"].data.tags["stability_h"] == "4"
    assert "stability" not in parents["all_features"].data.metrics
    run_snakemake(tmp_path, cfg, "--forcerun", "track_stability")  # idempotent
    again = {r.data.tags["method"]: r for r in _parents(tmp_path)}
    assert again["spec"].info.run_id == parents["spec"].info.run_id
    history = _history(tmp_path, again["spec"].info.run_id)
    assert len(history) == 1  # not logged twice
    # turned off: no stability job is planned
    dry = run_snakemake(tmp_path, cfg, "-n", "--config", "stability={enabled: false}")
    text = dry.stdout + dry.stderr
    assert not re.search(r"^stability(_table)?\s+\d+$", text, re.M), text[-2000:]
