"""The MLflow store through the real workflow (items 4 and 5).

* A SIGKILL while ``mlflow_init`` creates the SQLite store leaves no ``mlflow.db``; a store
  damaged later (a migration cut half-way) is moved aside with a warning naming the file
  and rebuilt, and every run is logged again although the receipts existed.
* Two output directories with a dataset of the same name and different data share one
  store, one after the other and at the same time: each keeps its own runs, exactly once.

Fast unit versions of the same behaviour: tests/test_tracking.py.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import time
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("mlflow")

from tests.workflow_helpers import (  # noqa: E402
    env,
    expected_run_count,
    finished_runs,
    job_pids,
    run_snakemake,
    snakemake_cmd,
    write_config,
)
from ufs import tracking  # noqa: E402

pytestmark = pytest.mark.slow

TINY = {
    "output_dir": "results",
    "resources_dir": "resources",
    "seed": 0,
    "evaluation": {"restarts": 2},
    "mlflow": {"experiment": "store"},
    "datasets": {"wine": {"h": [2, 4]}},
    "methods": {"all_features": {}, "laplacian_score": {}},
}


def _leftovers(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.glob("mlflow.db.tmp-*"))


def _mlflow_init_pids(workdir: Path) -> list[int]:
    """The running mlflow_init job of ``workdir``: its own process or a warm worker's child
    (:func:`tests.workflow_helpers.job_pids`)."""
    return job_pids(workdir, "mlflow_init", "results/logs/mlflow_init")


def _assert_every_run_once(workdir: Path, config: dict) -> None:
    from mlflow.entities import ViewType
    from mlflow.tracking import MlflowClient

    runs = finished_runs(workdir, config["mlflow"]["experiment"])
    keys = [r.data.tags["run_key"] for r in runs]
    assert len(keys) == len(set(keys)) == expected_run_count(config)
    client = MlflowClient(tracking_uri=f"sqlite:///{workdir / 'results' / 'mlflow.db'}")
    exp = client.get_experiment_by_name(config["mlflow"]["experiment"])
    active = client.search_runs(
        [exp.experiment_id], run_view_type=ViewType.ACTIVE_ONLY, max_results=10000
    )
    active = [r for r in active if "ufs.parent" not in r.data.tags]  # parents group runs
    assert len(active) == len(runs), "an unfinished run is left"
    store_id = json.loads((workdir / "results/mlflow/experiment.json").read_text())["store_id"]
    for d in config["datasets"]:
        receipt = json.loads((workdir / f"results/mlflow/{d}.json").read_text())
        assert receipt["store_id"] == store_id
        assert set(receipt["runs"]) <= set(keys)


def test_killed_creation_and_a_damaged_store_end_with_every_run_logged(tmp_path):
    results = tmp_path / "results"
    db = results / "mlflow.db"
    cfg = write_config(tmp_path, TINY)

    # 1. SIGKILL of mlflow_init while it builds the store: no mlflow.db, a clear failure
    proc = subprocess.Popen(
        snakemake_cmd(tmp_path, cfg),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env(),
        start_new_session=True,
    )
    deadline = time.time() + 600
    while not (results.is_dir() and _leftovers(results)):
        assert proc.poll() is None and time.time() < deadline, "mlflow_init never started"
        time.sleep(0.02)
    victims = _mlflow_init_pids(tmp_path)
    assert victims, "the temporary store exists but no mlflow_init job runs"
    for pid in victims:
        os.kill(pid, signal.SIGKILL)
    out, _ = proc.communicate(timeout=600)
    assert proc.returncode != 0 and "Error in rule mlflow_init" in out, out[-3000:]
    assert not db.exists(), "a killed creation left a store"
    assert _leftovers(results), "the kill came after the creation"

    # 2. the re-run creates the store, logs every run and removes the killed one's file
    run_snakemake(tmp_path, cfg)
    _assert_every_run_once(tmp_path, TINY)
    assert _leftovers(results) == [] and not list(results.glob("mlflow.db.broken-*"))

    # 3. the complete store is damaged as a migration cut half-way leaves it; receipts exist
    old_id = json.loads((results / "mlflow/experiment.json").read_text())["store_id"]
    with sqlite3.connect(db) as con:
        con.execute("CREATE TABLE _alembic_tmp_runs (x INTEGER)")
        con.execute("DELETE FROM alembic_version")
    proc = run_snakemake(tmp_path, cfg)
    out = proc.stdout + proc.stderr
    (aside,) = results.glob("mlflow.db.broken-*")
    assert f"moved aside to {aside}" in out, out[-3000:]
    assert "_alembic_tmp_runs" in out
    assert tracking.store_problem(db) is None
    _assert_every_run_once(tmp_path, TINY)
    new_id = json.loads((results / "mlflow/experiment.json").read_text())["store_id"]
    assert new_id != old_id
    assert _leftovers(results) == []
    # and the rebuilt store is stable: nothing left to do
    dry = run_snakemake(tmp_path, cfg, "-n")
    assert "Nothing to be done" in dry.stdout + dry.stderr


def _file_dataset_config(workdir: Path, seed: int, store: Path) -> dict:
    """A file dataset named ``d`` whose content depends on ``seed``, logged to ``store``."""
    rng = np.random.default_rng(seed)
    y = np.repeat([0, 1, 2], 20)
    X = rng.normal(size=(60, 8)) + 2.0 * y[:, None] * (rng.random(8) > 0.5)
    header = ",".join([f"f{i}" for i in range(8)] + ["label"])
    data = workdir / "d.csv"
    np.savetxt(data, np.column_stack([X, y]), delimiter=",", fmt="%.6f", header=header, comments="")
    return {
        **TINY,
        "mlflow": {"experiment": "shared", "tracking_uri": f"sqlite:///{store}"},
        "datasets": {"d": {"file": str(data), "h": [2, 4]}},
    }


def _runs_by_output_dir(store: Path) -> tuple[dict[str, list], int]:
    from mlflow.entities import ViewType
    from mlflow.tracking import MlflowClient

    client = MlflowClient(tracking_uri=f"sqlite:///{store}")
    exp = client.get_experiment_by_name("shared")
    runs = client.search_runs([exp.experiment_id], run_view_type=ViewType.ALL, max_results=1000)
    assert {r.info.lifecycle_stage for r in runs} == {"active"}, "a run was deleted"
    assert {r.info.status for r in runs} == {"FINISHED"}
    runs = [r for r in runs if "ufs.parent" not in r.data.tags]  # the settings' runs
    by_dir: dict[str, list] = {}
    for r in runs:
        by_dir.setdefault(r.data.tags["output_dir"], []).append(r)
    return by_dir, len({r.data.tags["run_key"] for r in runs})


def test_output_dirs_with_the_same_dataset_name_share_one_store(tmp_path):
    dirs = [tmp_path / "a", tmp_path / "b"]
    stores = [tmp_path / "shared" / "mlflow.db", tmp_path / "shared2" / "mlflow.db"]
    configs = []
    for seed, w in enumerate(dirs, start=1):
        w.mkdir()
        configs.append(_file_dataset_config(w, seed, stores[0]))
    n = expected_run_count(configs[0])

    # one after the other: b's logging leaves a's runs alone
    for w, c in zip(dirs, configs, strict=True):
        run_snakemake(w, write_config(w, c))
    by_dir, n_keys = _runs_by_output_dir(stores[0])
    assert sorted(by_dir) == sorted(str((w / "results").resolve()) for w in dirs)
    assert [len(v) for v in by_dir.values()] == [n, n] and n_keys == 2 * n
    hashes = {d: {r.data.tags["data_sha256"] for r in v} for d, v in by_dir.items()}
    assert all(len(h) == 1 for h in hashes.values()) and len(set.union(*hashes.values())) == 2
    receipt_b = json.loads((dirs[1] / "results/mlflow/d.json").read_text())
    assert receipt_b["replaced"] == receipt_b["removed"] == 0 and receipt_b["logged"] == n

    # at the same time, on a new store (only mlflow_init and track run): both complete
    procs = []
    for w, c in zip(dirs, configs, strict=True):
        c2 = {**c, "mlflow": {**c["mlflow"], "tracking_uri": f"sqlite:///{stores[1]}"}}
        procs.append(
            subprocess.Popen(
                snakemake_cmd(w, write_config(w, c2, "config2.yaml")),
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
                env=env(),
            )
        )
    for p in procs:
        out, _ = p.communicate(timeout=900)
        assert p.returncode == 0, out[-3000:]
    by_dir2, n_keys2 = _runs_by_output_dir(stores[1])
    assert sorted(by_dir2) == sorted(by_dir) and [len(v) for v in by_dir2.values()] == [n, n]
    assert n_keys2 == 2 * n
    assert {r.data.tags["run_key"] for v in by_dir2.values() for r in v} == {
        r.data.tags["run_key"] for v in by_dir.values() for r in v
    }
    for s in stores:
        assert _leftovers(s.parent) == [] and not list(s.parent.glob("mlflow.db.broken-*"))
        assert (s.parent / "mlflow-artifacts").is_dir()  # beside the store, in no output dir
    for w in dirs:
        assert not (w / "results" / "mlflow-artifacts").exists()
