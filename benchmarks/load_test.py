"""Load test of the workflow (not a unit test): many tiny evaluate jobs on 2 cores, then
exact counts in Snakemake's log, the benchmark files and MLflow.

    python benchmarks/load_test.py [--evaluations 500] [--cores 2] [--workdir /tmp/ufs-load]
                                   [--dataset wine] [--h 5] [--restarts 3] [--json out.json]
                                   [-- <extra snakemake arguments, e.g. --scheduler greedy>]

The config it writes (``<workdir>/config.yaml``) makes every evaluate job yield exactly one
MLflow run: ``jobs.tasks_per_job: 1``, one dataset with one ``h``, and one *ranking* method
without a graph (``spcafs``: one fit per setting, milliseconds on wine) whose grid holds
``N`` log-spaced values of ``gamma`` in [1e-3, 1e3]; the label-free default is the first grid
point, so there are exactly ``N`` settings ⇒ ``N`` fit jobs, ``N`` evaluate jobs and ``N``
MLflow runs, plus 8 other jobs (download, standardize, mlflow_init, track, aggregate_dataset,
figures_dataset, summary, all): ``2 N + 8`` jobs in all.

It then runs ``python -m snakemake --cores <cores>`` in ``--workdir`` (default: a fresh
``/tmp/ufs-load-*``; an existing workdir must not contain ``results/``) with the repository's
Snakefile (the workflow profile ``profiles/default`` is loaded as usual), and checks:

* Snakemake exited with 0 and its log reports ``≥ N`` finished ``evaluate`` jobs, one per plan
  chunk, and as many benchmark files under ``results/benchmarks/evaluate``;
* the MLflow store ``results/mlflow.db`` (experiment from the config) holds exactly the expected
  number of FINISHED runs, each with a ``setting_key`` tag (its run key without the output
  directory and data hash), all unique and equal to the keys the plan predicts, and no active
  run in another state.

It prints and writes as JSON (``--json``, default ``<workdir>/load_test.json``): wall time, jobs
by rule, jobs/min, evaluations/min, MLflow runs, the time to the first job (DAG building), the
Snakemake main process's CPU time, the peak resident memory of the whole process tree
(sampled every 0.5 s) and of the largest job, mean job wall/CPU time per rule, and the
per-job start-up overhead (Python start + the imports of an evaluate job, measured apart).
Exit status: 0 when every check passes, 1 on a count mismatch, 2 when Snakemake fails.

``tests/test_load.py`` runs the same code (:func:`run_load_test`) at CI size.

Measured (N = 500, Snakemake 9.27, 2 cores shared with other work): 1007 jobs, all counts
exact. Each fit/evaluate job spends ~1.5 s CPU starting Python and importing scikit-learn
and < 0.1 s working. With Snakemake's default ``--max-jobs-per-timespan 100/1s`` every
scheduling round arms a 1 s re-evaluation timer that arms the next one, so rounds per second
grow with the number of jobs done and the main process used 703 s CPU (29 % of all CPU);
``-- --max-jobs-per-timespan 1000/10s`` cut that to 207 s (11 %).
"""

from __future__ import annotations

import argparse
import collections
import json
import math
import os
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import yaml

from ufs.pipeline.scheduling import one_blas_thread_env, workflow_command

REPO = Path(__file__).resolve().parents[1]
SNAKEFILE = REPO / "Snakefile"
METHOD = "spcafs"
# What an evaluate job imports before doing any work (see workflow/scripts/evaluate_selection.py).
JOB_IMPORTS = (
    "import pickle; from snakemake import script; "
    "from threadpoolctl import threadpool_limits; from ufs.pipeline.steps import evaluate"
)

_FINISHED = re.compile(r"Finished jobid: \d+ \(Rule: (\w+)\)")
_EXECUTE = re.compile(r"^Execute \d+ jobs")


# -- config and plan -------------------------------------------------------------------------
def gamma_grid(n: int) -> list[float]:
    """``n`` distinct log-spaced values in [1e-3, 1e3] (12 significant digits)."""
    if n < 1:
        raise ValueError("need at least one evaluation")
    vals = [float(f"{10.0 ** (-3 + 6 * i / max(n - 1, 1)):.12g}") for i in range(n)]
    if len(set(vals)) != n:
        raise ValueError(f"cannot make {n} distinct grid values")
    return vals


def build_config(
    n: int,
    *,
    dataset: str = "wine",
    h: int = 5,
    restarts: int = 3,
    experiment: str = "ufs-load-test",
    seed: int = 0,
) -> dict[str, Any]:
    """A config with exactly ``n`` evaluate jobs, each logging exactly one MLflow run."""
    gammas = gamma_grid(n)
    return {
        "output_dir": "results",
        "resources_dir": "resources",
        "seed": seed,
        "evaluation": {"restarts": restarts},
        "jobs": {"tasks_per_job": 1},
        "mlflow": {"enabled": True, "experiment": experiment},
        # the load is the evaluate and logging jobs; the stability step is another job kind
        "stability": {"enabled": False},
        "datasets": {dataset: {"h": [h]}},
        "methods": {
            METHOD: {"defaults": {"gamma": gammas[0], "p": 1.0}, "grid": {"gamma": gammas}}
        },
    }


def expected_counts(config: dict[str, Any]) -> dict[str, Any]:
    """Jobs and MLflow runs the plan of ``config`` predicts, and the runs' keys."""
    from ufs.pipeline.config import build_plan
    from ufs.tracking import logged_pid, setting_key

    plan = build_plan(config)
    ev = config.get("evaluation") or {}
    restarts = int(ev.get("restarts", 20))
    nmi_average = ev.get("nmi_average", "arithmetic")
    seed = int(config.get("seed", 0))
    keys = set()
    for d, s in plan.jobs():  # a run per setting and h (all_features too: one per h)
        labels = [str(h) for h in plan.instances[d].hs]
        pid = logged_pid(s.method, s.pid, s.params)  # a reference's draws: one run per h
        keys |= {setting_key(d, s.method, pid, lab, restarts, seed, nmi_average) for lab in labels}
    chunks = sum(len(plan.chunks(d)) for d in plan.instances)
    parents = len({(d, s.method) for d, s in plan.jobs()})  # one per data set and method
    return {
        "evaluate": chunks,
        "fit": chunks,
        "runs": len(keys),
        "run_keys": sorted(keys),
        "parents": parents,
    }


# -- measurements ----------------------------------------------------------------------------
def measure_job_startup(repeats: int = 3) -> dict[str, float]:
    """Wall and CPU seconds of a fresh Python that does an evaluate job's imports (median)."""
    walls, cpus = [], []
    for _ in range(repeats):
        before = os.times()
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-c", JOB_IMPORTS], check=True, env=one_blas_thread_env())
        walls.append(time.perf_counter() - t0)
        after = os.times()
        cpus.append(
            (after.children_user - before.children_user)
            + (after.children_system - before.children_system)
        )
    return {"wall_s": statistics.median(walls), "cpu_s": statistics.median(cpus)}


class _TreeSampler(threading.Thread):
    """Samples the resident memory of a process tree and its root's CPU time."""

    def __init__(self, pid: int, every: float = 0.5):
        super().__init__(daemon=True)
        self.pid, self.every = pid, every
        self.peak_rss_mb = 0.0
        self.peak_processes = 0
        self.root_cpu_s = 0.0
        self.loadavg: list[float] = []
        self._halt = threading.Event()

    def run(self) -> None:
        import psutil  # a Snakemake dependency

        try:
            root = psutil.Process(self.pid)
        except psutil.NoSuchProcess:
            return
        while not self._halt.is_set():
            try:
                ct = root.cpu_times()
                self.root_cpu_s = ct.user + ct.system
                procs = [root, *root.children(recursive=True)]
            except psutil.NoSuchProcess:
                return
            rss = 0
            for p in procs:
                try:
                    rss += p.memory_info().rss
                except psutil.NoSuchProcess:
                    pass
            self.peak_rss_mb = max(self.peak_rss_mb, rss / 2**20)
            self.peak_processes = max(self.peak_processes, len(procs))
            self.loadavg.append(os.getloadavg()[0])
            self._halt.wait(self.every)

    def stop(self) -> None:
        self._halt.set()
        self.join(timeout=5)


def run_snakemake(
    workdir: Path, configfile: Path, cores: int, extra: list[str], log: Path
) -> dict[str, Any]:
    """Run the workflow; return exit code, wall time, time to the first job and the log."""
    cmd = workflow_command(SNAKEFILE, configfile, cores, *extra, directory=workdir)
    t0 = time.perf_counter()
    before = os.times()
    proc = subprocess.Popen(
        cmd,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=one_blas_thread_env(),
        cwd=workdir,
    )
    sampler = _TreeSampler(proc.pid)
    sampler.start()
    first_job = None
    lines = []
    with open(log, "w") as f:
        assert proc.stdout is not None
        for line in proc.stdout:
            f.write(line)
            lines.append(line.rstrip("\n"))
            if first_job is None and _EXECUTE.match(line):
                first_job = time.perf_counter() - t0
    rc = proc.wait()
    wall = time.perf_counter() - t0
    after = os.times()
    sampler.stop()
    tree_cpu = (after.children_user - before.children_user) + (
        after.children_system - before.children_system
    )
    return {
        "cmd": cmd,
        "returncode": rc,
        "wall_s": wall,
        "first_job_s": first_job,
        "lines": lines,
        "snakemake_main_cpu_s": sampler.root_cpu_s,
        "peak_tree_rss_mb": sampler.peak_rss_mb,
        "peak_processes": sampler.peak_processes,
        "tree_cpu_s": tree_cpu,
        "loadavg_during": [
            statistics.fmean(sampler.loadavg) if sampler.loadavg else math.nan,
            max(sampler.loadavg, default=math.nan),
        ],
    }


def parse_log(lines: list[str]) -> dict[str, Any]:
    """Finished jobs by rule, and the planned job stats table."""
    finished = collections.Counter()
    planned: dict[str, int] = {}
    in_stats = False
    for line in lines:
        m = _FINISHED.search(line)
        if m:
            finished[m.group(1)] += 1
        if not planned and line.startswith("Job stats:"):
            in_stats = True
            continue
        if in_stats:
            parts = line.split()
            if len(parts) == 2 and parts[1].isdigit():
                if parts[0] == "total":
                    in_stats = False
                else:
                    planned[parts[0]] = int(parts[1])
            elif planned and not parts:
                in_stats = False
    return {"finished_by_rule": dict(sorted(finished.items())), "planned_by_rule": planned}


def benchmark_stats(results: Path) -> dict[str, dict[str, float]]:
    """Per rule, from Snakemake's benchmark files: count, mean wall/CPU seconds, max RSS."""
    out = {}
    root = results / "benchmarks"
    for rule_dir in sorted(p for p in root.iterdir() if p.is_dir()) if root.exists() else []:
        walls, cpus, rss = [], [], []
        for tsv in rule_dir.rglob("*.tsv"):
            rows = tsv.read_text().splitlines()
            if len(rows) < 2:
                continue
            rec = dict(zip(rows[0].split("\t"), rows[-1].split("\t"), strict=False))
            walls.append(float(rec["s"]))
            cpus.append(_num(rec.get("cpu_time")))
            rss.append(_num(rec.get("max_rss")))
        out[rule_dir.name] = {
            "files": len(walls),
            "mean_wall_s": statistics.fmean(walls) if walls else math.nan,
            "sum_wall_s": sum(walls),
            "mean_cpu_s": statistics.fmean(c for c in cpus if not math.isnan(c))
            if any(not math.isnan(c) for c in cpus)
            else math.nan,
            "max_rss_mb": max((r for r in rss if not math.isnan(r)), default=math.nan),
        }
    return out


def _versions() -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    out = {"python": sys.version.split()[0]}
    for pkg in ("snakemake", "mlflow", "ufs-bench"):
        try:
            out[pkg] = version(pkg)
        except PackageNotFoundError:
            out[pkg] = "?"
    return out


def _num(x: Any) -> float:
    try:
        return float(x)
    except (TypeError, ValueError):
        return math.nan


def mlflow_runs(db: Path, experiment: str) -> dict[str, Any]:
    """Active runs of ``experiment`` in the SQLite store: FINISHED count, run keys, others."""
    from mlflow.entities import ViewType
    from mlflow.tracking import MlflowClient

    client = MlflowClient(tracking_uri=f"sqlite:///{db.resolve()}")
    exp = client.get_experiment_by_name(experiment)
    if exp is None:
        return {"experiment_found": False, "finished": 0, "run_keys": [], "other_status": {}}
    runs, token = [], None
    while True:
        page = client.search_runs(
            [exp.experiment_id],
            run_view_type=ViewType.ACTIVE_ONLY,
            max_results=1000,
            page_token=token,
        )
        runs.extend(page)
        token = page.token
        if not token:
            break
    parents = [r for r in runs if "ufs.parent" in r.data.tags]  # group a method's runs
    runs = [r for r in runs if "ufs.parent" not in r.data.tags]
    finished = [r for r in runs if r.info.status == "FINISHED"]
    other = collections.Counter(r.info.status for r in runs if r.info.status != "FINISHED")
    return {
        "experiment_found": True,
        "finished": len(finished),
        "run_keys": [r.data.tags.get("setting_key") for r in finished],
        "other_status": dict(other),
        "parents": len(parents),
    }


# -- checks ----------------------------------------------------------------------------------
def check(
    n: int, expected: dict[str, Any], log: dict[str, Any], bench: dict, mlf: dict
) -> list[str]:
    """Every mismatch, as a message (empty: all counts are exact)."""
    errors = []
    fin = log["finished_by_rule"]
    n_eval = fin.get("evaluate", 0)
    if n_eval < n:
        errors.append(f"Snakemake log: {n_eval} evaluate jobs finished, fewer than N={n}")
    if n_eval != expected["evaluate"]:
        errors.append(f"Snakemake log: {n_eval} evaluate jobs, plan has {expected['evaluate']}")
    if fin.get("fit", 0) != expected["fit"]:
        errors.append(f"Snakemake log: {fin.get('fit', 0)} fit jobs, plan has {expected['fit']}")
    if fin != log["planned_by_rule"]:
        errors.append(
            f"Snakemake log: finished jobs {fin} differ from the plan {log['planned_by_rule']}"
        )
    files = bench.get("evaluate", {}).get("files", 0)
    if files != expected["evaluate"]:
        errors.append(
            f"results/benchmarks/evaluate: {files} files, expected {expected['evaluate']}"
        )
    if not mlf["experiment_found"]:
        errors.append("MLflow: experiment not found")
    if mlf["finished"] != expected["runs"]:
        errors.append(f"MLflow: {mlf['finished']} FINISHED runs, expected {expected['runs']}")
    keys = mlf["run_keys"]
    if any(not k for k in keys):
        errors.append(f"MLflow: {sum(not k for k in keys)} FINISHED runs without a run_key tag")
    dup = {k: c for k, c in collections.Counter(keys).items() if c > 1}
    if dup:
        errors.append(f"MLflow: {len(dup)} run keys logged more than once, e.g. {next(iter(dup))}")
    if set(keys) != set(expected["run_keys"]):
        missing = set(expected["run_keys"]) - set(keys)
        extra = set(keys) - set(expected["run_keys"])
        errors.append(
            f"MLflow: run keys differ from the plan "
            f"({len(missing)} missing, {len(extra)} unexpected)"
        )
    if mlf["other_status"]:
        errors.append(f"MLflow: active runs that did not finish: {mlf['other_status']}")
    if mlf.get("parents", expected["parents"]) != expected["parents"]:
        errors.append(
            f"MLflow: {mlf['parents']} parent runs, expected one per data set and method "
            f"({expected['parents']})"
        )
    return errors


# -- driver ----------------------------------------------------------------------------------
def run_load_test(
    workdir: Path,
    n: int,
    *,
    cores: int = 2,
    dataset: str = "wine",
    h: int = 5,
    restarts: int = 3,
    extra: list[str] | None = None,
    startup_repeats: int = 3,
) -> dict[str, Any]:
    """Write the config, run the workflow, measure and check; return the report
    (``report["errors"]`` lists every mismatch, ``report["returncode"]`` Snakemake's)."""
    workdir = Path(workdir).resolve()
    workdir.mkdir(parents=True, exist_ok=True)
    if (workdir / "results").exists():
        raise FileExistsError(f"{workdir / 'results'} exists; the load test needs a fresh workdir")
    config = build_config(n, dataset=dataset, h=h, restarts=restarts)
    expected = expected_counts(config)
    if not (expected["evaluate"] == expected["runs"] == n):
        raise AssertionError(
            f"config builder: {expected['evaluate']} evaluate jobs and "
            f"{expected['runs']} runs for N={n}"
        )
    configfile = workdir / "config.yaml"
    configfile.write_text(yaml.safe_dump(config))
    load_before = os.getloadavg()
    run = run_snakemake(workdir, configfile, cores, list(extra or []), workdir / "snakemake.log")
    log = parse_log(run["lines"])
    results = workdir / "results"
    bench = benchmark_stats(results)
    mlf = mlflow_runs(results / "mlflow.db", config["mlflow"]["experiment"])
    startup = measure_job_startup(startup_repeats) if startup_repeats else {}
    errors = [] if run["returncode"] == 0 else [f"snakemake exited with {run['returncode']}"]
    errors += check(n, expected, log, bench, mlf)
    total = sum(log["finished_by_rule"].values())
    minutes = run["wall_s"] / 60
    n_eval = log["finished_by_rule"].get("evaluate", 0)
    timing = {}
    if (results / "timing.json").exists():
        timing = json.loads((results / "timing.json").read_text())
    job_wall = sum(b["sum_wall_s"] for b in bench.values())
    report = {
        "evaluations_requested": n,
        "cores": cores,
        "cpu_count": os.cpu_count(),
        "loadavg_before": [round(x, 2) for x in load_before],
        "workdir": str(workdir),
        "command": run["cmd"],
        "versions": _versions(),
        "config": {
            "dataset": dataset,
            "h": h,
            "method": METHOD,
            "settings": n,
            "restarts": restarts,
            "tasks_per_job": 1,
        },
        "returncode": run["returncode"],
        "wall_s": round(run["wall_s"], 2),
        "first_job_s": None if run["first_job_s"] is None else round(run["first_job_s"], 2),
        "jobs_total": total,
        "jobs_by_rule": log["finished_by_rule"],
        "jobs_planned_by_rule": log["planned_by_rule"],
        "jobs_per_min": round(total / minutes, 1) if minutes else None,
        "evaluations_per_min": round(n_eval / minutes, 1) if minutes else None,
        "mlflow_finished_runs": mlf["finished"],
        "mlflow_unique_run_keys": len(set(mlf["run_keys"])),
        "mlflow_expected_runs": expected["runs"],
        "loadavg_1min_during_mean_max": [round(x, 2) for x in run["loadavg_during"]],
        "tree_cpu_s": round(run["tree_cpu_s"], 1),
        "cores_used_mean": round(run["tree_cpu_s"] / run["wall_s"], 2) if run["wall_s"] else None,
        "snakemake_main_cpu_s": round(run["snakemake_main_cpu_s"], 1),
        "peak_tree_rss_mb": round(run["peak_tree_rss_mb"], 1),
        "peak_processes": run["peak_processes"],
        "per_rule": {
            k: {kk: round(vv, 3) if isinstance(vv, float) else vv for kk, vv in v.items()}
            for k, v in bench.items()
        },
        "job_startup": {k: round(v, 3) for k, v in startup.items()},
        "job_wall_sum_s": round(job_wall, 1),
        "outside_solver_share": timing.get("outside_share"),
        "errors": errors,
    }
    if run["tree_cpu_s"] > 0:
        report["snakemake_main_cpu_share"] = round(
            run["snakemake_main_cpu_s"] / run["tree_cpu_s"], 3
        )
    if startup and total and run["tree_cpu_s"] > 0:
        # CPU seconds every job spends starting Python and importing (measured apart), as a
        # share of all the CPU Snakemake and its jobs used.
        report["startup_cpu_share"] = round(total * startup["cpu_s"] / run["tree_cpu_s"], 3)
    if run["returncode"] != 0:
        report["log_tail"] = run["lines"][-40:]
    return report


def summary_lines(r: dict[str, Any]) -> list[str]:
    per = r["per_rule"]
    lines = [
        f"N = {r['evaluations_requested']} evaluations, --cores {r['cores']} "
        f"(cpu_count {r['cpu_count']}, load average before {r['loadavg_before']})",
        f"wall time          {r['wall_s']:.1f} s ({r['wall_s'] / 60:.1f} min); "
        f"first job after {r['first_job_s']} s",
        f"jobs               {r['jobs_total']}: "
        + ", ".join(f"{k} {v}" for k, v in r["jobs_by_rule"].items()),
        f"jobs per minute    {r['jobs_per_min']}",
        f"evaluations / min  {r['evaluations_per_min']}",
        f"MLflow             {r['mlflow_finished_runs']} FINISHED runs, "
        f"{r['mlflow_unique_run_keys']} unique run keys (expected {r['mlflow_expected_runs']})",
        f"memory             peak process-tree RSS {r['peak_tree_rss_mb']} MB "
        f"({r['peak_processes']} processes); largest job "
        f"{max((v['max_rss_mb'] for v in per.values()), default=float('nan')):.0f} MB",
        f"CPU                {r['tree_cpu_s']} s by Snakemake and its jobs "
        f"(mean {r['cores_used_mean']} cores busy; 1-min load average during the run "
        f"mean/max {r['loadavg_1min_during_mean_max']}); Snakemake main process "
        f"{r['snakemake_main_cpu_s']} s ({r.get('snakemake_main_cpu_share', 0):.0%})",
    ]
    for rule in ("fit", "evaluate", "track", "aggregate_dataset"):
        if rule in per:
            v = per[rule]
            lines.append(
                f"  {rule:<9} {v['files']:>5} jobs, mean {v['mean_wall_s']:.2f} s wall, "
                f"{v['mean_cpu_s']:.2f} s CPU"
            )
    if r["job_startup"]:
        lines.append(
            f"job start-up       {r['job_startup']['wall_s']:.2f} s wall, "
            f"{r['job_startup']['cpu_s']:.2f} s CPU (python + an evaluate job's imports); "
            f"x {r['jobs_total']} jobs = {r.get('startup_cpu_share', 0):.0%} of the CPU used"
        )
    if r["outside_solver_share"] is not None:
        lines.append(f"outside solvers    {r['outside_solver_share']:.1%} of job wall time")
    lines.append("OK" if not r["errors"] else "FAILED:\n  " + "\n  ".join(r["errors"]))
    return lines


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--evaluations", "-n", type=int, default=500, help="evaluate jobs (N)")
    ap.add_argument("--cores", type=int, default=2)
    ap.add_argument("--workdir", type=Path, default=None, help="default: a new /tmp/ufs-load-*")
    ap.add_argument("--dataset", default="wine")
    ap.add_argument("--h", type=int, default=5)
    ap.add_argument("--restarts", type=int, default=3)
    ap.add_argument("--json", type=Path, default=None, help="default: <workdir>/load_test.json")
    ap.add_argument("snakemake_args", nargs="*", help="after --: extra snakemake arguments")
    args = ap.parse_args(argv)
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="ufs-load-"))
    report = run_load_test(
        workdir,
        args.evaluations,
        cores=args.cores,
        dataset=args.dataset,
        h=args.h,
        restarts=args.restarts,
        extra=args.snakemake_args,
    )
    out = args.json or Path(report["workdir"]) / "load_test.json"
    out.write_text(json.dumps(report, indent=1))
    print("\n".join(summary_lines(report)))
    if report.get("log_tail"):
        print("\n".join(report["log_tail"]), file=sys.stderr)
    print(f"report: {out}; snakemake log: {Path(report['workdir']) / 'snakemake.log'}")
    if report["returncode"] != 0:
        return 2
    return 1 if report["errors"] else 0


if __name__ == "__main__":
    sys.exit(main())
