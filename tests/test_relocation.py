"""A moved project finds its results and its MLflow runs as they are.

The project directory (its config, a data file given by a relative path, the results and
the default MLflow store inside them) is moved elsewhere: no data, fit, evaluation, table
or summary job runs again and no such file is rewritten; MLflow holds the same runs (count
and ids). Only the MLflow jobs run: MLflow records absolute artifact locations, so
``mlflow_init`` points the store at the artifacts' new place, and the logging passes find
every run and refresh its ``output_dir`` tag.
"""

from __future__ import annotations

import shutil

import numpy as np
import pytest

from tests.workflow_helpers import finished_runs, run_snakemake, write_config

pytestmark = pytest.mark.slow

CONFIG = {
    "output_dir": "results",
    "resources_dir": "resources",
    "seed": 0,
    "evaluation": {"restarts": 2, "reference_draws": 2},
    "mlflow": {"experiment": "moved"},
    "datasets": {"wine": {"h": [2, 4]}, "mine": {"file": "data/mine.csv", "h": [2, 3]}},
    "methods": {"max_variance": {}, "random": {}, "laplacian_score": {}},
}


#: what the MLflow jobs write (and the store itself): may change after a move
TRACKING = ("logs", "benchmarks", "mlflow", "mlflow-artifacts")


def _snapshot(workdir):
    """Every results file's content and mtime but the tracking's, by relative path."""
    root = workdir / "results"
    return {
        str(p.relative_to(workdir)): (p.stat().st_mtime_ns, p.read_bytes())
        for p in sorted(root.rglob("*"))
        if p.is_file()
        and p.parts[len(root.parts)] not in TRACKING
        and not p.name.startswith("mlflow.db")
    }


def test_a_moved_project_reruns_nothing_and_keeps_its_runs(tmp_path):
    old = tmp_path / "old" / "project"
    (old / "data").mkdir(parents=True)
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(40, 6)), np.repeat([0, 1], 20)
    X[y == 1, 0] += 3.0
    lines = [",".join(repr(float(v)) for v in row) + f",{c}" for row, c in zip(X, y, strict=True)]
    (old / "data" / "mine.csv").write_text("\n".join(lines) + "\n")
    run_snakemake(old, write_config(old, CONFIG))
    before = _snapshot(old)
    runs = {r.info.run_id for r in finished_runs(old, "moved")}
    assert runs

    new = tmp_path / "elsewhere" / "renamed"
    new.parent.mkdir()
    shutil.move(old, new)
    cfg = new / "config.yaml"
    dry = run_snakemake(new, cfg, "-n", "--quiet", "rules")
    jobs = dry.stdout + dry.stderr
    assert "mlflow_init" in jobs and "track" in jobs, jobs[-4000:]
    for rule in ("download", "standardize", "fit", "evaluate", "aggregate", "summary"):
        assert f"\n{rule} " not in jobs and f"\n{rule}_" not in jobs, jobs[-4000:]
    run_snakemake(new, cfg)
    assert _snapshot(new) == before  # no file rewritten
    after = finished_runs(new, "moved")
    assert {r.info.run_id for r in after} == runs  # same runs: none logged again
    art = (new / "results" / "mlflow-artifacts").resolve().as_uri()
    assert all(r.info.artifact_uri.startswith(art + "/") for r in after)
    assert {r.data.tags["output_dir"] for r in after} == {str((new / "results").resolve())}
    assert not (tmp_path / "old" / "project").exists()
