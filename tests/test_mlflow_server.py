"""The workflow against a shared ``mlflow server`` on 127.0.0.1 (docs/guide/mlflow-server.md).

Several logging jobs at once must neither lose nor duplicate a run; a server that is down
makes the tracking step fail with a clear message and leaves the results intact; a re-run
after the server is back logs exactly the missing runs. The tiny config is computed once
(with the server down, a plain run); every other test works on a copy of it, so only
the MLflow jobs run again.
"""

from __future__ import annotations

import collections
import hashlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from tests.workflow_helpers import (
    TINY,
    env,
    expected_parent_count,
    expected_run_count,
    run_snakemake,
    snakemake_cmd,
    write_config,
)

pytest.importorskip("mlflow")

import ufs.tracking  # noqa: E402,F401  (fail-fast HTTP retry defaults, also in this process)

pytestmark = pytest.mark.slow

EXPERIMENT = "shared"
# TINY with one fit and one evaluation job per method and dataset and no graph-based method:
# these tests are about the MLflow jobs (3 datasets -> 3 logging jobs), not the solvers.
CONFIG = {
    **TINY,
    "jobs": {"tasks_per_job": 10},
    "datasets": {"wine": {"h": [2, 4, 6]}, "golfs_sim1": {"h": [10, 20, 30], "replicates": 2}},
    "methods": {"all_features": {}, "random": {}, "max_variance": {}, "kmeans_ufs": {}},
}
PARALLEL = ("--resources", "mlflow_writers=4")  # the default profile serialises (SQLite)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class MlflowServer:
    """``mlflow server`` on loopback with a SQLite store and proxied artifacts under ``root``."""

    def __init__(self, root: Path, port: int):
        self.root, self.port = root, port
        self.uri = f"http://127.0.0.1:{port}"
        self.proc: subprocess.Popen | None = None

    def start(self, timeout: float = 180) -> MlflowServer:
        self.root.mkdir(parents=True, exist_ok=True)
        e = {k: v for k, v in env().items() if not k.startswith("MLFLOW_")}
        # The server's job runner (GenAI features) starts ~7 extra processes; not needed here.
        e["MLFLOW_SERVER_ENABLE_JOB_EXECUTION"] = "false"
        cmd = [
            sys.executable,
            "-m",
            "mlflow",
            "server",
            "--host",
            "127.0.0.1",
            "--port",
            str(self.port),
            "--backend-store-uri",
            f"sqlite:///{self.root / 'mlflow.db'}",
            "--artifacts-destination",
            str(self.root / "artifacts"),
            "--workers",
            "2",
        ]
        with open(self.root / "server.log", "ab") as log:
            self.proc = subprocess.Popen(
                cmd, stdout=log, stderr=subprocess.STDOUT, env=e, start_new_session=True
            )
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError(f"mlflow server exited:\n{self.log()[-3000:]}")
            try:
                with urllib.request.urlopen(f"{self.uri}/health", timeout=2) as r:
                    if r.status == 200:
                        return self
            except OSError:
                time.sleep(0.3)
        self.stop()
        raise AssertionError(f"mlflow server not healthy after {timeout} s:\n{self.log()[-3000:]}")

    def stop(self, sig: int = signal.SIGTERM) -> None:
        """Stop the server and its workers (the whole process group)."""
        if self.proc is None:
            return
        proc, self.proc = self.proc, None
        try:
            os.killpg(proc.pid, sig)
            proc.wait(timeout=30)
        except ProcessLookupError:
            pass
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=30)
        try:  # workers that outlived their parent
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass

    def log(self) -> str:
        return (self.root / "server.log").read_text(errors="replace")


@pytest.fixture
def mlflow_server(tmp_path):
    """Factory: ``mlflow_server(port)`` starts a server; every server is stopped at the end."""
    servers: list[MlflowServer] = []

    def start(port: int, root: Path | None = None) -> MlflowServer:
        server = MlflowServer(root or tmp_path / "server", port)
        servers.append(server)
        return server.start()

    yield start
    for server in servers:
        server.stop()


def _runs(uri: str) -> list:
    """Every active run of the experiment (any status)."""
    from mlflow.entities import ViewType
    from mlflow.tracking import MlflowClient

    client = MlflowClient(tracking_uri=uri)
    exp = client.get_experiment_by_name(EXPERIMENT)
    assert exp is not None, "experiment was not created"
    return client.search_runs(
        [exp.experiment_id], run_view_type=ViewType.ACTIVE_ONLY, max_results=10000
    )


def _check_runs(uri: str, config: dict) -> list:
    """Exactly one FINISHED run per expected run key, one parent run per data set and
    method, and nothing else active; returns the settings' runs."""
    every = _runs(uri)
    assert collections.Counter(r.info.status for r in every) == {"FINISHED": len(every)}
    keys = collections.Counter(r.data.tags["run_key"] for r in every)
    assert max(keys.values()) == 1, "an MLflow run was logged twice"
    runs = [r for r in every if "ufs.parent" not in r.data.tags]
    assert len(runs) == expected_run_count(config), "an MLflow run is missing or extra"
    assert len(every) - len(runs) == expected_parent_count(config), "a parent run is wrong"
    return runs


def _finished(uri: str) -> int:
    """FINISHED runs of the settings (parent runs left out)."""
    return sum(r.info.status == "FINISHED" and "ufs.parent" not in r.data.tags for r in _runs(uri))


def _digests(results: Path) -> dict[str, str]:
    """Content of every result file that is not MLflow's or a log."""
    skip = ("mlflow", "logs", "benchmarks")
    return {
        str(p.relative_to(results)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(results.rglob("*"))
        if p.is_file() and p.relative_to(results).parts[0] not in skip
    }


def _receipts(results: Path) -> dict[str, dict]:
    return {
        p.stem: json.loads(p.read_text())
        for p in (results / "mlflow").glob("*.json")
        if p.stem not in ("experiment", "output_identity")
    }


@pytest.fixture(scope="module")
def down_run(tmp_path_factory):
    """The tiny workflow with its tracking server down (nothing listens on the port)."""
    workdir = tmp_path_factory.mktemp("down")
    port = free_port()
    config = {
        **CONFIG,
        "mlflow": {"tracking_uri": f"http://127.0.0.1:{port}", "experiment": EXPERIMENT},
    }
    cfg = write_config(workdir, config)
    # a plain run: the workflow profile keeps going past the failed tracking
    proc = run_snakemake(workdir, cfg, check=False)
    return {
        "workdir": workdir,
        "port": port,
        "config": config,
        "proc": proc,
        "digests": _digests(workdir / "results"),
    }


def _copy(down_run, dest: Path) -> tuple[Path, Path]:
    """A copy of the computed (untracked) workdir: only the MLflow jobs are left to run."""
    workdir = dest / "wf"
    shutil.copytree(down_run["workdir"], workdir, symlinks=True)
    return workdir, workdir / "config.yaml"


def test_server_down_fails_clearly_and_results_are_complete(down_run):
    proc, results = down_run["proc"], down_run["workdir"] / "results"
    out = proc.stdout + proc.stderr
    uri = f"http://127.0.0.1:{down_run['port']}"
    assert proc.returncode != 0
    assert f"Cannot reach the MLflow tracking server at {uri}" in out
    assert "re-run the workflow to log exactly the missing runs" in out
    log = (results / "logs" / "mlflow_init.log").read_text()
    # one clear line, not a traceback
    assert log.startswith("ERROR: Cannot reach the MLflow tracking server") and uri in log
    assert "Traceback" not in log
    # everything but the tracking was computed (the profile's keep-going), nothing tracked
    from ufs.pipeline.config import build_plan
    from ufs.pipeline.io import read_evaluations

    plan = build_plan(down_run["config"])
    for dataset in plan.instances:
        files = [results / "evaluations" / dataset / f"{c}.json" for c in plan.chunks(dataset)]
        assert read_evaluations(files)
    for base in ("wine", "golfs_sim1"):
        assert (results / "tables" / f"{base}.csv").stat().st_size > 0
        assert (results / "tables" / f"{base}.md").stat().st_size > 0
    assert (results / "summary.md").exists()
    assert not (results / "mlflow").exists() or not list((results / "mlflow").glob("*.json"))


def test_parallel_writers_log_every_run_once(down_run, tmp_path, mlflow_server):
    """Server back on the same URI, 4 writers allowed: every run exactly once, in parallel."""
    workdir, cfg = _copy(down_run, tmp_path)
    server = mlflow_server(down_run["port"])
    proc = run_snakemake(workdir, cfg, *PARALLEL)
    runs = _check_runs(server.uri, down_run["config"])
    results = workdir / "results"
    assert _digests(results) == down_run["digests"], "a result file was recomputed or changed"
    receipts = _receipts(results)
    assert sum(r["logged"] for r in receipts.values()) == len(runs)
    # two logging jobs ran at once (the profile's mlflow_writers=1 would serialise them)
    out = proc.stdout + proc.stderr
    # a job starts with its rule's message, ends with "(Rule: track)"
    starts = [i for i, line in enumerate(out.splitlines()) if "MLflow: log the runs of" in line]
    ends = [i for i, line in enumerate(out.splitlines()) if "(Rule: track)" in line]
    assert len(starts) == len(ends) == 3 and starts[1] < ends[0], out
    # artifacts went through the server to its --artifacts-destination
    arts = list((server.root / "artifacts").rglob("selected_features.json"))
    assert len(arts) == len(runs)
    assert not (results / "mlflow-artifacts").exists()

    # a forced second logging pass changes nothing, and removes an orphan (a RUNNING run
    # with a logged key, as a retried create_run request leaves behind)
    from mlflow.tracking import MlflowClient

    client = MlflowClient(tracking_uri=server.uri)
    victim = runs[0]
    orphan = client.create_run(
        victim.info.experiment_id,
        tags={k: victim.data.tags[k] for k in ("run_key", "dataset", "result_hash", "output_id")},
    )
    run_snakemake(workdir, cfg, *PARALLEL, "--forcerun", "track")
    again = _check_runs(server.uri, down_run["config"])
    assert {r.info.run_id for r in again} == {r.info.run_id for r in runs}
    assert client.get_run(orphan.info.run_id).info.lifecycle_stage == "deleted"
    receipts = _receipts(results)
    assert all(r["logged"] == 0 for r in receipts.values())
    assert sum(r["skipped"] for r in receipts.values()) == len(runs)


def test_server_killed_midway_rerun_logs_exactly_the_missing_runs(
    down_run, tmp_path, mlflow_server
):
    workdir, cfg = _copy(down_run, tmp_path)
    results = workdir / "results"
    server = mlflow_server(down_run["port"])
    expected = expected_run_count(down_run["config"])
    # serialised writers (the default profile): logging takes long enough to interrupt
    output = tmp_path / "snakemake.out"
    with open(output, "w") as fh:
        sm = subprocess.Popen(
            snakemake_cmd(workdir, cfg),
            stdout=fh,
            stderr=subprocess.STDOUT,
            env=env(),
            start_new_session=True,
        )
    try:
        deadline = time.time() + 300
        while time.time() < deadline and sm.poll() is None:
            try:
                if _finished(server.uri) >= 3:
                    break
            except Exception:  # the experiment is not there yet
                pass
            time.sleep(0.2)
        server.stop(signal.SIGKILL)  # a crash, not a clean shutdown
        sm.wait(timeout=300)
    finally:
        if sm.poll() is None:
            os.killpg(sm.pid, signal.SIGKILL)
            sm.wait()
    out = output.read_text()
    assert sm.returncode != 0, "logging finished before the server was killed"
    assert "Error in rule track" in out
    before = _receipts(results)
    log = "\n".join(p.read_text() for p in (results / "logs" / "track").glob("*.log"))
    assert f"Cannot reach the MLflow tracking server at {server.uri}" in log

    db = f"sqlite:///{server.root / 'mlflow.db'}"
    logged_before = _finished(db)
    assert 0 < logged_before < expected

    server.start()  # same store, same port
    run_snakemake(workdir, cfg, *PARALLEL)
    _check_runs(server.uri, down_run["config"])
    rerun = {k: v for k, v in _receipts(results).items() if k not in before}
    assert rerun, "no logging job was re-run"
    assert sum(r["logged"] for r in rerun.values()) == expected - logged_before
    assert _digests(results) == down_run["digests"]
