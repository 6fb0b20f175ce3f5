"""A local run has no job rate limiter (ufs.pipeline.scheduling): Snakemake's
default one re-runs the scheduler once a second per finished job, and its pending timers
hold the process open after the last job."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from ufs.pipeline.scheduling import SNAKEMAKE_DEFAULT_LIMIT, drop_local_rate_limit

REPO = Path(__file__).resolve().parents[1]


def _workflow(max_jobs=100, timespan=1, local=True):
    limiter = SimpleNamespace(max_jobs=max_jobs, timespan=timespan)
    return SimpleNamespace(local_exec=local, scheduler=SimpleNamespace(job_rate_limiter=limiter))


def test_the_default_limit_of_a_local_run_is_dropped():
    wf = _workflow()
    assert drop_local_rate_limit(wf) is True
    assert wf.scheduler.job_rate_limiter is None


@pytest.mark.parametrize(
    ("max_jobs", "timespan", "local"),
    [(50, 10, True), (1000, 60, True), (100, 2, True), (100, 1, False)],
)
def test_a_chosen_limit_or_a_cluster_run_keeps_its_limiter(max_jobs, timespan, local):
    wf = _workflow(max_jobs, timespan, local)
    before = wf.scheduler.job_rate_limiter
    assert drop_local_rate_limit(wf) is False
    assert wf.scheduler.job_rate_limiter is before


def test_unexpected_snakemake_objects_are_left_alone():
    assert drop_local_rate_limit(SimpleNamespace()) is False
    assert drop_local_rate_limit(SimpleNamespace(local_exec=True, scheduler=None)) is False
    odd = SimpleNamespace(local_exec=True, scheduler=SimpleNamespace(job_rate_limiter=object()))
    assert drop_local_rate_limit(odd) is False


def test_snakemakes_command_line_default_is_the_one_recognised():
    """If Snakemake changes its default, this fails and SNAKEMAKE_DEFAULT_LIMIT must follow."""
    from snakemake import cli
    from snakemake.settings.types import MaxJobsPerTimespan

    parser = cli.get_argument_parser()
    default = parser.get_default("max_jobs_per_timespan")
    if isinstance(default, str):
        default = MaxJobsPerTimespan.parse_choice(default)
    assert (default.max_jobs, float(default.timespan)) == SNAKEMAKE_DEFAULT_LIMIT


def test_the_projects_snakefile_drops_it_at_start():
    text = (REPO / "Snakefile").read_text()
    block = text.split("\nonstart:\n", 1)[1].split("\n\n\n", 1)[0]
    assert "drop_local_rate_limit(workflow)" in block


TOY = """
import threading, json, time
import ufs.pipeline.scheduling
rule all:
    input: expand("out/{i}.txt", i=range(12))
rule job:
    output: "out/{i}.txt"
    shell: "sleep 0.3; echo {wildcards.i} > {output}"
onstart:
    if config.get("drop"):
        ufs.pipeline.scheduling.drop_local_rate_limit(workflow)
onsuccess:
    timers = [t for t in threading.enumerate() if isinstance(t, threading.Timer)]
    json.dump({"limiter": workflow.scheduler.job_rate_limiter is not None,
               "timers": len(timers), "end": time.time()}, open("state.json", "w"))
"""


@pytest.mark.parametrize("drop", [False, True])
def test_a_real_local_run_ends_without_pending_scheduler_rounds(tmp_path, drop):
    """Through Snakemake itself: with the default limiter, timers of pending scheduler
    rounds are alive when the run succeeds (each keeps the process up to one window);
    with it dropped at start, none."""
    (tmp_path / "Snakefile").write_text(TOY)
    cmd = [sys.executable, "-m", "snakemake", "--cores", "2", "-d", str(tmp_path)]
    cmd += ["-s", str(tmp_path / "Snakefile"), "--config", f"drop={int(drop)}"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    state = json.loads((tmp_path / "state.json").read_text())
    if drop:
        assert not state["limiter"] and state["timers"] == 0
    else:
        assert state["limiter"] and state["timers"] > 0


# -- the Snakemake releases the workflow supports ---------------------------------------
def test_a_snakemake_outside_the_tested_range_is_warned_about():
    from ufs.pipeline.scheduling import SNAKEMAKE_SUPPORTED, snakemake_version_warning

    low, high = SNAKEMAKE_SUPPORTED
    for ok in (low, "9.27.1", "9.0.0rc1"):
        assert snakemake_version_warning(ok) is None, ok
    for bad in ("8.19.3", "7.32.4", high, "10.1.0", "11"):
        text = snakemake_version_warning(bad)
        assert text and bad in text and f">={low},<{high}" in text, bad


def test_the_installed_snakemake_is_in_the_range_pyproject_declares():
    """The range the code tests against is the one the install asks for."""
    import re
    import tomllib

    import snakemake

    from ufs.pipeline.scheduling import SNAKEMAKE_SUPPORTED, snakemake_version_warning

    deps = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["dependencies"]
    spec = next(d for d in deps if re.match(r"snakemake\b", d))
    low, high = SNAKEMAKE_SUPPORTED
    assert spec == f"snakemake>={low},<{high}"
    assert snakemake_version_warning(snakemake.__version__) is None


def test_a_dispatch_that_cannot_be_installed_is_said(monkeypatch):
    """Warm workers on, a local run, and a Snakemake whose executor lacks what the dispatch
    replaces: the onstart warnings say so, instead of falling back silently."""
    import sys

    import ufs.pipeline.scheduling as scheduling

    warm_path = REPO / "workflow" / "scripts" / "_warm.py"
    monkeypatch.delenv("UFS_WARM_WORKERS", raising=False)
    monkeypatch.delenv("SLURM_JOB_ID", raising=False)

    class Executor:  # no cancel: another Snakemake's executor
        pass

    class Scheduler:
        _executor = Executor()

    class Workflow:
        local_exec = True
        scheduler = Scheduler()

    assert not scheduling.dispatch_to_warm_workers(Workflow(), {}, warm_path)
    warm = sys.modules["_warm"]
    if not warm.enabled({}):
        pytest.skip("warm workers are off on this platform")
    warnings = scheduling.start_warnings(Workflow(), {}, warm_path)
    assert any("cannot be handed jobs" in w and "cancel" in w for w in warnings), warnings
    # warm workers off: nothing to warn about
    assert not [
        w
        for w in scheduling.start_warnings(Workflow(), {"jobs": {"warm_workers": False}}, warm_path)
        if "warm workers" in w
    ]
