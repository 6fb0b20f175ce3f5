"""The workflow through profiles/slurm on a real (single-node) SLURM cluster.

A session fixture starts munged, slurmctld and slurmd with .ci/slurm/start.sh and stops them
with .ci/slurm/stop.sh at the end, even on failure. The same tiny config then runs once through
the SLURM executor plugin and once locally; the results must be equal, and every job must
have gone through SLURM.

Needs root, Debian's `slurm-wlm` and `munge`, and `pip install -e ".[slurm]"`. Without them
the test is skipped, unless UFS_REQUIRE_SLURM=1 (CI), which turns a skip into a failure.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import time
from pathlib import Path

import pandas as pd
import pytest

from tests.workflow_helpers import (
    REPO,
    TINY,
    env,
    expected_run_count,
    finished_runs,
    result_tables,
    run_snakemake,
    snakemake_cmd,
    write_config,
)
from ufs.fileio import read_json

pytestmark = [pytest.mark.slurm, pytest.mark.slow]

CI_SLURM = REPO / ".ci" / "slurm"
PROFILE = REPO / "profiles" / "slurm"
STATE = Path(os.environ.get("UFS_SLURM_STATE", "/run/ufs-slurm-ci"))
PARTITION = os.environ.get("UFS_SLURM_PARTITION", "ci")
REQUIRED = os.environ.get("UFS_REQUIRE_SLURM", "") not in ("", "0")
BINARIES = ("munged", "munge", "slurmctld", "slurmd", "sbatch", "squeue", "sinfo", "scontrol")

# TINY, smaller: every SLURM job costs a submission, two Snakemake start-ups and status
# polls (the plugin waits 10 s longer after each poll that finds no job finished), so few
# jobs and a short dependency chain (no graph-based method): one solver and the chance
# reference, its draws in one job.
SMALL = {
    **TINY,
    "evaluation": {**TINY["evaluation"], "reference_draws": 2},
    "jobs": {"tasks_per_job": 2},
    "mlflow": {"experiment": "tiny-slurm"},
    "datasets": {"wine": {"h": [2, 4]}},
    "methods": {"random": {}, "kmeans_ufs": {}},
}
# overrides of the profile for the test: two jobs at a time (2 cores), poll after 2 s
# (the cluster's MinJobAge is 600 s) and keep SLURM's logs as evidence
SLURM_ARGS = (
    "--profile",
    str(PROFILE),
    "--jobs",
    "2",
    "--slurm-init-seconds-before-status-checks",
    "2",
    "--slurm-keep-successful-logs",
)
TIMEOUT = 600


def _unavailable() -> str | None:
    missing = [b for b in BINARIES if shutil.which(b) is None]
    if missing:
        return f"SLURM binaries not found: {', '.join(missing)} (apt-get install slurm-wlm munge)"
    if os.geteuid() != 0:
        return "the single-node SLURM test cluster must be started as root"
    if importlib.util.find_spec("snakemake_executor_plugin_slurm") is None:
        return 'snakemake-executor-plugin-slurm is not installed (pip install -e ".[slurm]")'
    return None


def _cluster_running() -> bool:
    """A cluster of start.sh is up already (then it is left running at the end)."""
    pidfile = STATE / "slurmctld.pid"
    pid = pidfile.read_text().strip() if pidfile.exists() else ""
    return pid.isdigit() and Path(f"/proc/{pid}").exists()


@pytest.fixture(scope="session")
def slurm_cluster():
    reason = _unavailable()
    if reason:
        if REQUIRED:
            pytest.fail(f"UFS_REQUIRE_SLURM is set, but {reason}")
        pytest.skip(reason)
    already = _cluster_running()
    try:
        started = subprocess.run(
            ["bash", str(CI_SLURM / "start.sh")], capture_output=True, text=True, timeout=180
        )
        if started.returncode == 3 and not REQUIRED:
            pytest.skip(started.stderr.strip())
        assert started.returncode == 0, f"start.sh failed:\n{started.stdout}\n{started.stderr}"
        yield
    finally:
        if not already:
            subprocess.run(["bash", str(CI_SLURM / "stop.sh")], timeout=120, check=False)


def _without_timings(obj):
    """A JSON document without wall-clock fields (`*seconds*`)."""
    if isinstance(obj, dict):
        return {k: _without_timings(v) for k, v in obj.items() if "seconds" not in k}
    if isinstance(obj, list):
        return [_without_timings(v) for v in obj]
    return obj


def _evaluations(workdir: Path) -> dict[str, object]:
    root = workdir / "results" / "evaluations"
    return {
        str(f.relative_to(root)): _without_timings(read_json(f))
        for f in sorted(root.rglob("*.json"))
    }


def _timed(cmd: list[str]) -> tuple[subprocess.CompletedProcess, float]:
    t0 = time.monotonic()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env(), timeout=TIMEOUT)
    return proc, time.monotonic() - t0


def test_slurm_profile_runs_the_workflow_like_a_local_run(
    slurm_cluster, tmp_path_factory, record_property
):
    on_slurm = tmp_path_factory.mktemp("slurm")
    cfg = write_config(on_slurm, SMALL)
    proc, slurm_seconds = _timed(snakemake_cmd(on_slurm, cfg, *SLURM_ARGS))
    log = proc.stdout + proc.stderr
    assert proc.returncode == 0, f"snakemake --profile profiles/slurm failed:\n{log[-8000:]}"

    local = tmp_path_factory.mktemp("local")
    t0 = time.monotonic()
    run_snakemake(local, write_config(local, SMALL))
    local_seconds = time.monotonic() - t0

    # every job but the target rule `all` (a local rule) went through sbatch ...
    submitted = dict(re.findall(r"Job (\d+) has been submitted with SLURM jobid (\d+)", log))
    n_jobs = int(re.search(r"^total\s+(\d+)$", log, re.M).group(1))
    assert len(submitted) == n_jobs - 1 > 0
    # ... SLURM wrote each job's log (kept by --slurm-keep-successful-logs) ...
    logs = {p.stem for p in (on_slurm / ".snakemake" / "slurm_logs").rglob("*.log")}
    assert logs == set(submitted.values())
    # ... and slurmctld ran them to completion in the test partition (no accounting: squeue)
    run_id = re.search(r"SLURM run ID: (\S+)", log).group(1)
    queue = subprocess.run(
        ["squeue", "--states=all", "--noheader", "--name", run_id, "--format=%i|%T|%P"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert sorted(queue) == sorted(f"{j}|COMPLETED|{PARTITION}" for j in submitted.values())

    # same results as the local run (numbers, not timings)
    ours, ref = result_tables(on_slurm), result_tables(local)
    assert ours.keys() == ref.keys() == {"wine"}
    for k in ref:
        pd.testing.assert_frame_equal(ours[k], ref[k])
    assert _evaluations(on_slurm) == _evaluations(local)
    runs = finished_runs(on_slurm, SMALL["mlflow"]["experiment"])
    assert len(runs) == expected_run_count(SMALL)

    record_property("slurm_jobs", len(submitted))
    record_property("slurm_seconds", round(slurm_seconds, 1))
    record_property("local_seconds", round(local_seconds, 1))
    print(
        f"\nSLURM: {len(submitted)} jobs in {slurm_seconds:.1f} s; "
        f"local: {local_seconds:.1f} s (same config)"
    )
