"""Faults: killed jobs, a killed Snakemake, a job that raises, two Snakemake invocations
on one directory, a dataset file corrupted after download. Each must end with a clear
error or a correct resume (results equal to an uninterrupted run), never silently wrong
results. (SIGKILL of Snakemake together with its jobs: tests/test_workflow.py.)"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tests.workflow_helpers import (
    env,
    expected_run_count,
    finished_runs,
    job_pids,
    result_tables,
    run_snakemake,
    snakemake_cmd,
    write_config,
)
from ufs.fileio import cut_short, read_json

pytestmark = pytest.mark.slow

# small, but with several jobs (3 fit + 3 evaluate chunks) to kill mid-way
FAULT = {
    "output_dir": "results",
    "resources_dir": "resources",
    "seed": 0,
    "evaluation": {"restarts": 3, "reference_draws": 2},
    "jobs": {"tasks_per_job": 2},
    "mlflow": {"experiment": "faults"},
    "datasets": {"wine": {"h": [2, 4]}},
    "methods": {
        "all_features": {},
        "random": {},
        "kmeans_ufs": {},
        "laplacian_score": {"grid": {"n_neighbors": [3, 5, 7]}},
    },
}


def _assert_same_results(workdir: Path, reference: Path) -> None:
    ours, ref = result_tables(workdir), result_tables(reference)
    assert ours.keys() == ref.keys() and ours
    for k in ref:
        pd.testing.assert_frame_equal(ours[k], ref[k])
    runs = finished_runs(workdir, FAULT["mlflow"]["experiment"])
    keys = [r.data.tags["run_key"] for r in runs]
    assert len(keys) == len(set(keys)) == expected_run_count(FAULT)


@pytest.fixture(scope="module")
def reference(tmp_path_factory) -> Path:
    workdir = tmp_path_factory.mktemp("reference")
    run_snakemake(workdir, write_config(workdir, FAULT))
    return workdir


def _start(workdir: Path, cfg: Path) -> subprocess.Popen:
    return subprocess.Popen(
        snakemake_cmd(workdir, cfg),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env(),
        start_new_session=True,
    )


def _job_pids(workdir: Path, script: str) -> list[int]:
    """Processes running workflow script ``script`` for ``workdir``: its own process or a
    warm worker's child (:func:`tests.workflow_helpers.job_pids`)."""
    step = {"fit_selector": "fit/", "evaluate_selection": "evaluate/"}.get(script, "")
    return job_pids(workdir, script, f"results/logs/{step}")


def _wait_for(predicate, proc: subprocess.Popen, timeout: float = 600):
    deadline = time.time() + timeout
    while time.time() < deadline:
        value = predicate()
        if value:
            return value
        assert proc.poll() is None, "the workflow ended before the fault could be injected"
        time.sleep(0.05)
    raise AssertionError("timed out waiting for the workflow")


def _wait_no_jobs(workdir: Path, timeout: float = 300) -> None:
    deadline = time.time() + timeout
    while _job_pids(workdir, ".snakemake/scripts/") and time.time() < deadline:
        time.sleep(0.2)


def test_sigkill_of_a_running_job_fails_clearly_then_resumes(reference, tmp_path):
    for attempt in range(5):
        workdir = tmp_path / f"attempt{attempt}"
        workdir.mkdir()
        cfg = write_config(workdir, FAULT)
        proc = _start(workdir, cfg)
        victims = _wait_for(lambda: _job_pids(workdir, "fit_selector"), proc)  # noqa: B023
        os.kill(victims[0], signal.SIGKILL)
        out, _ = proc.communicate(timeout=600)
        if proc.returncode != 0:
            break
        # the kill came too late to matter: the job had done its work and reported its exit
        # code (a warm worker's child is found by its open log until it exits; a millisecond
        # fit's job is mostly writing and exiting: 2 runs in 22 here). The run must then be
        # whole and right; try again, afresh.
        _assert_same_results(workdir, reference)
    else:
        pytest.fail("no kill of five landed in a running fit job")
    assert "Error in rule fit" in out, out[-3000:]
    # the killed job left nothing cut short under an output name (only, if the kill came
    # in the middle of an atomic write, that write's temporary file)
    fits = workdir / "results" / "fits"
    for f in fits.rglob("*.*"):
        assert f.name.startswith(".") or cut_short(f) is None, f
    run_snakemake(workdir, cfg)
    _assert_same_results(workdir, reference)
    # which the resumed job removed before it wrote
    left = [f for f in fits.rglob("*") if f.name.startswith(".")]
    assert not left, f"temporary files left behind: {left}"


def test_sigkill_of_a_slow_fit_job_resumes_from_its_checkpoint(tmp_path):
    """A fit job killed once it has stored a fit (DGUFS on digits: ~7 CPU-s a fit here, and
    fits are stored each time they add up to 2 CPU-s) re-runs only the fits it had not
    stored: its log names the fits it took, their arrays are the stored ones, the folder
    is removed."""
    config = {
        "output_dir": "results",
        "resources_dir": "resources",
        "evaluation": {"restarts": 2, "reference_draws": 2},
        "mlflow": {"enabled": False},
        "datasets": {"digits": {"h": [5, 10, 20, 40]}},
        "methods": {"dgufs": {"grid": {}}},  # its default setting only
    }
    cfg = write_config(tmp_path, config)
    fits = tmp_path / "results" / "fits" / "digits"
    partial = fits / "dgufs.c000.partial"

    def entries() -> list[Path]:  # committed entries (not an atomic write's temporary file)
        return sorted(p for p in partial.glob("*.json") if not p.name.startswith("."))

    proc = _start(tmp_path, cfg)
    _wait_for(entries, proc)
    (victim,) = _job_pids(tmp_path, "fit_selector")
    os.kill(victim, signal.SIGKILL)
    out, _ = proc.communicate(timeout=600)
    assert proc.returncode != 0 and "Error in rule fit" in out, out[-3000:]
    assert not (fits / "dgufs.c000.npz").exists()
    stored = {read_json(e)["record"]["fact"]["h"]: e.with_suffix(".npz") for e in entries()}
    assert 1 <= len(stored) < 4
    kept = {}
    for path in stored.values():
        with np.load(path) as f:
            kept |= {k: f[k] for k in f.files}

    run_snakemake(tmp_path, cfg)  # the profile sets rerun-incomplete
    log = (tmp_path / "results" / "logs" / "fit" / "digits" / "dgufs.c000.log").read_text()
    taken = {h for h in (5, 10, 20, 40) if f"h={h}: taken from the checkpoint" in log}
    assert taken == set(stored), log
    assert f"{len(stored)} of 4 fit(s) taken from the checkpoint" in log
    assert not partial.exists()
    with np.load(fits / "dgufs.c000.npz") as f:
        for name, array in kept.items():
            np.testing.assert_array_equal(f[next(k for k in f.files if k.endswith(name))], array)
    assert (tmp_path / "results" / "summary.md").is_file()


def test_sigkill_of_snakemake_alone_then_unlock_and_resume(reference, tmp_path):
    """Snakemake killed alone: its jobs outlive it when it started a process per job, and
    stop with it when it handed them to warm workers (their connection closes); either
    way the lock stays, and the run resumes."""
    cfg = write_config(tmp_path, FAULT)
    proc = _start(tmp_path, cfg)
    _wait_for(lambda: _job_pids(tmp_path, "evaluate_selection"), proc)
    os.kill(proc.pid, signal.SIGKILL)  # Snakemake only, not its process group
    proc.wait()
    _wait_no_jobs(tmp_path)  # orphaned jobs finish (atomically) or die on their own
    refused = run_snakemake(tmp_path, cfg, check=False)
    assert refused.returncode != 0
    assert "cannot be locked" in refused.stdout + refused.stderr
    run_snakemake(tmp_path, cfg, "--unlock")
    run_snakemake(tmp_path, cfg)  # the profile sets rerun-incomplete
    _assert_same_results(tmp_path, reference)


def test_a_job_that_raises_names_the_task_and_a_rerun_completes(reference, tmp_path):
    """A fault injected into the job processes only (sitecustomize on PYTHONPATH)."""
    inject = tmp_path / "inject"
    inject.mkdir()
    (inject / "sitecustomize.py").write_text(
        "import ufs.methods.laplacian_score as m\n"
        "def _boom(self, X):\n"
        "    raise RuntimeError('injected fault')\n"
        "m.LaplacianScore._fit = _boom\n"
    )
    cfg = write_config(tmp_path, FAULT)
    faulty = {**env(), "PYTHONPATH": f"{inject}{os.pathsep}{env().get('PYTHONPATH', '')}"}
    proc = subprocess.run(
        snakemake_cmd(tmp_path, cfg), capture_output=True, text=True, env=faulty, timeout=900
    )
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0
    assert "fitting laplacian_score with {'n_neighbors'" in out and "injected fault" in out, out[
        -3000:
    ]
    assert not (tmp_path / "results" / "summary.md").exists()
    run_snakemake(tmp_path, cfg)
    _assert_same_results(tmp_path, reference)


def test_second_invocation_on_the_same_directory_is_refused(reference, tmp_path):
    cfg = write_config(tmp_path, FAULT)
    first = _start(tmp_path, cfg)
    _wait_for(
        lambda: (
            (tmp_path / ".snakemake" / "locks").is_dir()
            and any((tmp_path / ".snakemake" / "locks").iterdir())
        ),
        first,
    )
    # the first run holds its lock, stopped, while the second one starts: on a fast machine
    # the whole first run could end during the second's start-up (~3 s), and the second
    # then met a lock file removed under it (seen on 2026-11-29: FileNotFoundError)
    os.killpg(first.pid, signal.SIGSTOP)
    try:
        second = run_snakemake(tmp_path, cfg, check=False)
    finally:
        os.killpg(first.pid, signal.SIGCONT)
    assert second.returncode != 0
    assert "cannot be locked" in second.stdout + second.stderr
    out, _ = first.communicate(timeout=900)
    assert first.returncode == 0, out[-3000:]
    _assert_same_results(tmp_path, reference)


def test_dataset_file_corrupted_after_download(reference, tmp_path):
    cfg = write_config(tmp_path, FAULT)
    run_snakemake(tmp_path, cfg)
    raw = tmp_path / "resources" / "raw" / "wine.npz"
    data = bytearray(raw.read_bytes())
    data[len(data) // 2] ^= 0xFF  # a flipped byte inside the stored matrix
    raw.write_bytes(bytes(data))
    proc = run_snakemake(tmp_path, cfg, check=False)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0
    assert "is damaged" in out and "Delete it and re-run" in out, out[-3000:]
    raw.unlink()  # what the message says
    run_snakemake(tmp_path, cfg)
    _assert_same_results(tmp_path, reference)


def test_evaluation_truncated_after_the_run_is_named_before_anything_runs(reference, tmp_path):
    """A file cut short keeps its mtime, so Snakemake would never rebuild it;
    the plan names it and the remedy, and following the remedy gives the same results."""
    cfg = write_config(tmp_path, FAULT)
    run_snakemake(tmp_path, cfg)
    victim = sorted((tmp_path / "results" / "evaluations" / "wine").glob("*.json"))[0]
    st = victim.stat()
    victim.write_text(victim.read_text()[: st.st_size // 2])
    os.utime(victim, ns=(st.st_atime_ns, st.st_mtime_ns))
    proc = run_snakemake(tmp_path, cfg, check=False)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0
    assert f"{victim.relative_to(tmp_path)}: truncated" in out and "Delete them" in out, out[-3000:]
    victim.unlink()  # what the message says
    run_snakemake(tmp_path, cfg)
    _assert_same_results(tmp_path, reference)
