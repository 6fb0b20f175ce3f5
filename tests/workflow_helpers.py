"""Helpers for the tests that run the Snakemake workflow in a temporary directory, and for
the tests of the scripts in ``benchmarks/``."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import yaml

from ufs.pipeline.scheduling import one_blas_thread_env, workflow_command

REPO = Path(__file__).resolve().parents[1]
SNAKEFILE = REPO / "Snakefile"


def benchmark_script(stem: str) -> ModuleType:
    """``benchmarks/<stem>.py`` imported as a module (once: later calls return the same one),
    to test its functions without running the benchmark."""
    name = f"ufs_benchmarks_{stem}"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, REPO / "benchmarks" / f"{stem}.py")
        mod = importlib.util.module_from_spec(spec)
        sys.modules[name] = mod
        spec.loader.exec_module(mod)
    return sys.modules[name]


TINY = {
    "output_dir": "results",
    "resources_dir": "resources",
    "seed": 0,
    # 4 draws of random (the default 30 would multiply these tests' jobs)
    "evaluation": {"restarts": 3, "reference_draws": 4},
    "jobs": {"tasks_per_job": 3},
    "mlflow": {"experiment": "tiny"},
    # the stability jobs have their own test (tests/test_stability_step.py)
    "stability": {"enabled": False},
    "datasets": {"wine": {"h": [2, 4]}, "golfs_sim1": {"h": [10, 30], "replicates": 2}},
    "methods": {
        "all_features": {},
        "random": {},
        "kmeans_ufs": {},
        "kmeans_ufs_exact": {},
        "laplacian_score": {"grid": {"n_neighbors": [3, 5]}},
    },
}


def write_config(workdir: Path, config: dict, name: str = "config.yaml") -> Path:
    path = workdir / name
    path.write_text(yaml.safe_dump(config))
    return path


def snakemake_cmd(workdir: Path, configfile: Path, *extra: str) -> list[str]:
    return workflow_command(SNAKEFILE, configfile, 2, *extra, directory=workdir)


def env() -> dict[str, str]:
    return one_blas_thread_env()


def run_snakemake(workdir: Path, configfile: Path, *extra: str, check: bool = True):
    proc = subprocess.run(
        snakemake_cmd(workdir, configfile, *extra),
        capture_output=True,
        text=True,
        env=env(),
        timeout=900,
    )
    if check and proc.returncode != 0:
        raise AssertionError(
            f"snakemake failed ({proc.returncode}):\n{proc.stdout[-3000:]}\n{proc.stderr[-6000:]}"
        )
    return proc


def expected_run_count(config: dict) -> int:
    from ufs.pipeline.config import build_plan
    from ufs.tracking import logged_pid

    plan = build_plan(config)
    # one run per setting and h; the all-features reference too is logged at every h; a
    # chance reference's draws are pooled into one run per h (ufs.tracking.runs)
    settings = {(d, s.method, logged_pid(s.method, s.pid, s.params)) for d, s in plan.jobs()}
    return sum(len(plan.instances[d].hs) for d, _, _ in settings)


def expected_parent_count(config: dict) -> int:
    """MLflow parent runs: one per data set (instance) and method."""
    from ufs.pipeline.config import build_plan

    return len({(d, s.method) for d, s in build_plan(config).jobs()})


def finished_runs(workdir: Path, experiment: str) -> list:
    from mlflow.entities import ViewType
    from mlflow.tracking import MlflowClient

    client = MlflowClient(tracking_uri=f"sqlite:///{workdir / 'results' / 'mlflow.db'}")
    exp = client.get_experiment_by_name(experiment)
    assert exp is not None, "experiment was not created"
    runs = client.search_runs(
        [exp.experiment_id], run_view_type=ViewType.ACTIVE_ONLY, max_results=10000
    )
    # the settings' runs; the parent runs (one per data set × method) only group them
    return [r for r in runs if r.info.status == "FINISHED" and "ufs.parent" not in r.data.tags]


def result_tables(workdir: Path) -> dict:
    """The per-dataset result tables of a run, without the measured-time columns (wall clock
    and CPU seconds of the fits), in a stable row order: two runs of the same config must
    give equal tables (name → DataFrame)."""
    import pandas as pd

    out = {}
    for f in sorted((workdir / "results" / "tables").glob("*.csv")):
        df = pd.read_csv(f).drop(columns=["fit_seconds", "fit_cpu_seconds"], errors="ignore")
        out[f.stem] = df.sort_values(["protocol", "method", "h", "pid"]).reset_index(drop=True)
    return out


def job_pids(workdir: Path, script: str, log_prefix: str) -> list[int]:
    """Processes running the workflow script ``script`` for ``workdir`` (from /proc): a
    process Snakemake started (its command line names the script), or a warm worker's child
    running the job (``workflow/scripts/_warm.py``: its command line is the server's, and it
    has the job's log open, under ``workdir / log_prefix``)."""
    logs = str(Path(workdir) / log_prefix)
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmd = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            if os.readlink(entry / "cwd") != str(workdir) or not cmd:
                continue
            if script in cmd and "snakemake" not in cmd.split()[0]:
                pids.append(int(entry.name))
            elif "_warm.py serve" in cmd and any(
                os.readlink(fd).startswith(logs) for fd in (entry / "fd").iterdir()
            ):
                pids.append(int(entry.name))
        except OSError:
            continue
    return pids
