"""Pipeline overhead of a workflow run: the share of all job CPU spent outside
the methods and k-means, counting every job.

    python benchmarks/pipeline_overhead.py [--cores 2] [--configfile CONFIG] [--workdir DIR]
                                           [--json out.json] [-- <snakemake arguments>]

It runs ``snakemake --cores N`` on the config (default: the repository's default config) in
a fresh output directory, inside a small wrapper process that reports, when Snakemake exits,

* ``jobs_cpu``: the CPU time (user + system) of every job — every process Snakemake
  started and waited for (``getrusage(RUSAGE_CHILDREN)`` of the wrapper), whatever the rule:
  download, standardize, graph, fit, evaluate, track, mlflow_init, aggregate, summary;
* ``scheduler_cpu``: the Snakemake main process itself (DAG, planning, scheduling).

With warm workers (``jobs.warm_workers``, on by default: ``workflow/scripts/_warm.py``) a
job's work runs in a process forked from a server, not a child of Snakemake: the run gets
a server of its own (``UFS_WARM_DIR`` in the work folder), which is asked at the end for
its own CPU (the imports, once) and its children's, both added to ``jobs_cpu``. On a local
run Snakemake's own process hands the jobs over (``_warm.install_dispatch``), so what the
per-job client processes cost before is now (much less) CPU of Snakemake's process: compare
runs by the share *with* Snakemake's process, which counts both.

From the run's evaluation files: ``method`` = the fits' own CPU time (``est.fit``) plus
the kNN graphs a fit job builds itself (a graph is a step of the methods that use it;
separate graph jobs, for graphs several fit jobs share, count as overhead), and ``kmeans`` =
the k-means evaluation's CPU time. Then

    outside share (jobs) = 1 - (method + kmeans) / jobs_cpu
    outside share (all)  = 1 - (method + kmeans) / (jobs_cpu + scheduler_cpu)

The run's ``summary.md`` counts the CPU of the data, graph, fit, evaluate and table jobs
(``SUMMARY_RULES``) in its *Time* section; the share over those jobs is printed too, from
the jobs' own logs, beside the one ``summary.md`` states (its ``timing.json``).

Everything is CPU time, so a loaded machine changes the wall time but hardly the shares
(the load average is printed before and after). A shared machine's speed also drifts: a
fixed workload (``speed_probe``: k-means restarts and a pure-Python loop) is timed before and
after the run, and a small Python loop every 5 s during it (``SpeedSampler``): runs whose
probes or samples disagree are not comparable (agreement does not prove that they are). The
library versions and the CPU are printed and recorded (``environment``). Also printed: the
wall time and the jobs per rule (from Snakemake's log).

``--floor`` then runs, with the same wrapper and cores, a *null pipeline* of as many jobs
as the real run had: every job a ``script:`` that only writes its output (``bare``) or
also imports NumPy (``numpy``), as every real job must to read its input. Its job CPU
is what the job structure alone costs (interpreter, Snakemake's script preamble, its job
wrapper), and

    floor share = floor CPU / (floor CPU + method + kmeans)

the smallest outside share any implementation with that many jobs can reach.
"""

from __future__ import annotations

import argparse
import collections
import glob
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

# Runs Snakemake in this process and prints its own and its children's CPU as JSON.
WRAPPER = r"""
import json, resource, sys
from snakemake.cli import main
code = 0
try:
    main(sys.argv[2:])
except SystemExit as exc:
    code = exc.code or 0
s, c = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
with open(sys.argv[1], "w") as f:
    json.dump({"scheduler_cpu": s.ru_utime + s.ru_stime, "jobs_cpu": c.ru_utime + c.ru_stime,
               "exit": code}, f)
sys.exit(code)
"""


#: the run and the probe compute on one BLAS/OpenMP thread each
ONE_THREAD = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}


def python_loop_seconds(steps: int) -> float:
    """This thread's CPU seconds for a pure-Python loop of ``steps`` steps: the interpreter's
    speed, as in the jobs' set-up, the MLflow logging and the figures (the probe's second
    part, and each of :class:`SpeedSampler`'s samples)."""
    t = time.thread_time()
    acc = 0
    for i in range(steps):
        acc += i % 7
    return time.thread_time() - t


def probe_parts() -> dict[str, float]:
    """A fixed workload, timed before and after the run (:func:`speed_probe`) in a process of
    its own with one BLAS thread: 50 k-means restarts on a 2000 x 20 matrix (NumPy,
    scikit-learn's compiled code) and a 6-million-step Python loop."""
    import numpy as np
    from sklearn.cluster import KMeans

    X = np.random.default_rng(0).standard_normal((2000, 20))
    t = time.process_time()
    for seed in range(50):
        KMeans(n_clusters=10, n_init=1, random_state=seed).fit(X)
    numeric = time.process_time() - t
    return {"numeric": numeric, "python": python_loop_seconds(6_000_000)}


def speed_probe() -> dict[str, float]:
    """CPU seconds of :func:`probe_parts`' two parts, in a fresh process (this script with
    ``--probe``). The machine here is shared and its speed has varied by ~30 % between runs
    of one hour (2026-11-29): a run's wall time is only comparable with another's when
    their probes agree."""
    env = {**os.environ, **ONE_THREAD}
    out = subprocess.run(
        [sys.executable, __file__, "--probe"], capture_output=True, text=True, env=env, check=True
    )
    return json.loads(out.stdout)


class SpeedSampler(threading.Thread):
    """Times a small pure-Python loop (its CPU time, in ms) every ``every`` seconds while the
    run goes on: the probes before and after a run do not see the machine's speed drift during
    it (2026-11-29: the figures' CPU differed by 16-26 % between two runs back to back whose
    probes agreed). Each sample costs ~6 ms of one core (median 6.4 ms, 2026-11-30), ~0.1 % of
    it at the default period; samples taken while both cores are busy also include the run's
    own contention, alike in comparable runs."""

    def __init__(self, every: float = 5.0, steps: int = 200_000):
        super().__init__(daemon=True)
        self.every, self.steps = every, steps
        self.samples: list[float] = []
        self._stop_event = threading.Event()

    def sample(self) -> float:
        return 1000.0 * python_loop_seconds(self.steps)

    def run(self) -> None:
        while not self._stop_event.wait(self.every):
            self.samples.append(self.sample())

    def stop(self) -> list[float]:
        self._stop_event.set()
        self.join()
        return self.samples


def _spread(samples: list[float]) -> dict[str, float]:
    """Median, minimum and maximum of the sampler's values (NaN when it took none)."""
    if not samples:
        return {"median": float("nan"), "min": float("nan"), "max": float("nan"), "n": 0}
    return {
        "median": statistics.median(samples),
        "min": min(samples),
        "max": max(samples),
        "n": len(samples),
    }


def environment() -> dict[str, str]:
    """The interpreter, the libraries whose speed the run measures, and the CPU."""
    from importlib import metadata

    env = {"python": sys.version.split()[0]}
    for dist in ("numpy", "scipy", "scikit-learn", "matplotlib", "mlflow", "snakemake"):
        try:
            env[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            env[dist] = "not installed"
    cpu = "?"
    if os.path.exists("/proc/cpuinfo"):
        m = re.search(r"^model name\s*:\s*(.+)$", Path("/proc/cpuinfo").read_text(), re.M)
        cpu = m.group(1).strip() if m else cpu
    env["cpu"] = f"{cpu}, {os.cpu_count()} logical cores"
    return env


def _load() -> str:
    return open("/proc/loadavg").read().split()[0] if os.path.exists("/proc/loadavg") else "?"


def _method_and_kmeans(out: Path) -> dict[str, float]:
    fit = graph = kmeans = 0.0
    n_fits = 0
    for path in glob.glob(str(out / "evaluations" / "*" / "*.json")):
        for ev in json.loads(Path(path).read_text())["evaluations"]:
            # CPU seconds where recorded (wall clocks of older results otherwise)
            kmeans += ev.get("kmeans_cpu_seconds", ev["kmeans_seconds"])
            fit += ev.get("fit_cpu_seconds_total", ev["fit_seconds_total"])
            graph += ev.get("graph_seconds", 0.0)
            n_fits += 1
    # the stability step's fits on subsamples are the methods' work too
    stability = sum(
        float(json.loads(Path(p).read_text()).get("cpu_seconds") or 0.0)
        for p in glob.glob(str(out / "stability" / "*" / "*.json"))
    )
    fit += stability
    # graph jobs (shared graphs, or every graph before they moved into fit jobs) are
    # counted as overhead: their files do not tell construction from start-up
    graph_jobs = len(glob.glob(str(out / "benchmarks" / "graph" / "*" / "*.tsv")))
    return {
        "fit_seconds": fit,
        "stability_fit_seconds": stability,
        "graph_seconds": graph,
        "kmeans_seconds": kmeans,
        "tasks": n_fits,
        "graph_jobs": graph_jobs,
    }


def _cpu_per_rule(out: Path) -> dict[str, float]:
    """Each job's CPU seconds, summed per rule, from the last line of its log
    (``workflow/scripts/_job.py``); rules are the log directories."""
    per: dict[str, float] = collections.defaultdict(float)
    for path in glob.glob(str(out / "logs" / "**" / "*.log"), recursive=True):
        rule = Path(path).relative_to(out / "logs").parts[0].removesuffix(".log")
        m = re.search(r"^job cpu_seconds=([0-9.]+)$", Path(path).read_text(), flags=re.M)
        if m:
            per[rule] += float(m.group(1))
    return dict(sorted(per.items()))


def _warm_server_cpu(sockets: Path) -> dict[str, float]:
    """The warm server's own CPU (its imports, once) and its children's (the jobs it ran),
    asked of it by a shutdown request: neither is a child of Snakemake, so
    ``RUSAGE_CHILDREN`` counts only the jobs' client processes (and jobs run cold)."""
    sys.path.insert(0, str(REPO / "workflow" / "scripts"))
    import _warm

    out = {"cpu_seconds": 0.0, "children_cpu_seconds": 0.0, "jobs": 0}
    for sock in sorted(sockets.glob("*.sock")) if sockets.is_dir() else []:
        try:
            stats = _warm.request("shutdown", sock)
        except OSError:
            continue
        for key in out:
            out[key] += stats[key]
    return out


def _hand_overs(out: Path) -> dict[str, float]:
    """Jobs run in warm workers per client (``workflow/scripts/_warm.py``: ``process``, a
    Python process Snakemake started; ``snakemake``, Snakemake's own process) and the CPU
    seconds the clients spent handing them over, from the jobs' ``.warm.json`` records
    (Snakemake's own hand-overs are part of ``scheduler_cpu``)."""
    out_counts: dict[str, float] = collections.defaultdict(float)
    for path in glob.glob(str(out / "logs" / "**" / "*.warm.json"), recursive=True):
        rec = json.loads(Path(path).read_text())
        client = rec.get("client", "process")
        out_counts[f"{client}_jobs"] += 1
        out_counts[f"{client}_cpu"] += rec.get("client_cpu_seconds", 0.0)
    return dict(sorted(out_counts.items()))


def _jobs_per_rule(log: str) -> dict[str, int]:
    """Jobs per rule from Snakemake's log: its "Finished jobid: N (Rule: name)" lines (a
    job's start is printed as its rule's ``message:`` when the rule has one)."""
    counts = collections.Counter(re.findall(r"\(Rule: (\w+)\)", log))
    return dict(sorted(counts.items()))


#: the log folders of the jobs whose CPU ``summary.md``'s *Time* section counts (the data,
#: graph, fit, evaluate and table steps; not the figures', MLflow's or its own)
SUMMARY_RULES = ("download", "standardize", "graph", "fit", "evaluate", "aggregate")


def run(cores: int, configfile: str | None, workdir: Path, extra: list[str]) -> dict:
    out = workdir / "results"
    stats = workdir / "rusage.json"
    cmd = [sys.executable, "-c", WRAPPER, str(stats), "--snakefile", str(REPO / "Snakefile")]
    cmd += ["--directory", str(REPO), "--cores", str(cores)]
    if configfile:
        cmd += ["--configfile", configfile]
    cmd += ["--config", f"output_dir={out}", f"resources_dir={workdir / 'resources'}", *extra]
    # a warm server of its own (workflow/scripts/_warm.py), asked for its CPU at the end
    sockets = workdir / "warm"
    env = {**os.environ, **ONE_THREAD}
    env["UFS_WARM_DIR"] = str(sockets)
    load_before = _load()
    sampler = SpeedSampler()
    sampler.start()
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    wall = time.perf_counter() - t0
    during = _spread(sampler.stop())
    log = proc.stdout + proc.stderr
    (workdir / "snakemake.log").write_text(log)
    if proc.returncode != 0:
        raise SystemExit(f"snakemake failed ({proc.returncode}); log: {workdir / 'snakemake.log'}")
    usage = json.loads(stats.read_text())
    usage["warm"] = _warm_server_cpu(sockets)
    usage["jobs_cpu"] += usage["warm"]["cpu_seconds"] + usage["warm"]["children_cpu_seconds"]
    work = _method_and_kmeans(out)
    useful = work["fit_seconds"] + work["graph_seconds"] + work["kmeans_seconds"]
    jobs = _jobs_per_rule(log)
    per_rule = _cpu_per_rule(out)
    summary_jobs = sum(v for k, v in per_rule.items() if k in SUMMARY_RULES)
    timing = out / "timing.json"
    return {
        "wall_seconds": wall,
        "jobs": sum(jobs.values()),
        "jobs_per_rule": jobs,
        **usage,
        **work,
        "cpu_per_rule": per_rule,
        # the jobs summary.md's *Time* counts, measured here from the jobs' own logs
        # (the stability step's jobs are not among them, so neither are its fits)
        "outside_share_summary_jobs": (
            1.0 - (useful - work["stability_fit_seconds"]) / summary_jobs if summary_jobs else None
        ),
        "summary_md_share": (
            json.loads(timing.read_text()).get("cpu_outside_share") if timing.is_file() else None
        ),
        "hand_overs": _hand_overs(out),
        "outside_share_jobs": 1.0 - useful / usage["jobs_cpu"],
        "outside_share_all": 1.0 - useful / (usage["jobs_cpu"] + usage["scheduler_cpu"]),
        "load_before": load_before,
        "load_after": _load(),
        "speed_during_ms": during,
    }


NULL_SNAKEFILE = """
JOBS = config["jobs"]
rule all:
    input: [f"out/{r}/{i}.txt" for r, n in JOBS.items() for i in range(n)]
rule null:
    output: "out/{rule}/{i}.txt"
    script: "null_job.py"
"""

NULL_JOB = {
    "bare": "open(snakemake.output[0], 'w').write('done')\n",
    "numpy": "import numpy\nopen(snakemake.output[0], 'w').write('done')\n",
}


def null_floor(cores: int, jobs_per_rule: dict[str, int], level: str, workdir: Path) -> dict:
    """Job CPU of a null pipeline with ``jobs_per_rule`` jobs (see the module docstring)."""
    wd = workdir / f"null-{level}"
    wd.mkdir(parents=True)
    (wd / "Snakefile").write_text(NULL_SNAKEFILE)
    (wd / "null_job.py").write_text(NULL_JOB[level])
    stats = wd / "rusage.json"
    jobs = {r: n for r, n in jobs_per_rule.items() if r != "all"}
    cmd = [sys.executable, "-c", WRAPPER, str(stats), "--snakefile", str(wd / "Snakefile")]
    cmd += ["--directory", str(wd), "--cores", str(cores)]
    (wd / "config.json").write_text(json.dumps({"jobs": jobs}))  # JSON is YAML
    cmd += ["--configfile", str(wd / "config.json")]
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=wd)
    if proc.returncode != 0:
        raise SystemExit(f"null pipeline failed: {proc.stderr[-2000:]}")
    usage = json.loads(stats.read_text())
    n = sum(jobs.values())
    return {"level": level, "jobs": n, **usage, "per_job": usage["jobs_cpu"] / n}


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    extra = argv[argv.index("--") + 1 :] if "--" in argv else []
    argv = argv[: argv.index("--")] if "--" in argv else argv
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cores", type=int, default=2)
    ap.add_argument("--configfile", default=None)
    ap.add_argument("--workdir", type=Path, default=None)
    ap.add_argument("--json", type=Path, default=None)
    ap.add_argument("--floor", action="store_true", help="also run null pipelines of as many jobs")
    ap.add_argument("--probe", action="store_true", help=argparse.SUPPRESS)  # speed_probe's
    args = ap.parse_args(argv)
    if args.probe:  # the process speed_probe times
        print(json.dumps(probe_parts()))
        return 0
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="ufs-overhead-"))
    workdir.mkdir(parents=True, exist_ok=True)
    if (workdir / "results").exists():
        raise SystemExit(f"{workdir / 'results'} exists: give a fresh --workdir")
    probe_before = speed_probe()
    r = run(args.cores, args.configfile, workdir, extra)
    r["probe"] = {"before": probe_before, "after": speed_probe()}
    r["environment"] = environment()
    print(", ".join(f"{k} {v}" for k, v in r["environment"].items()))
    print(
        "speed probe before / after (CPU s): "
        + "; ".join(
            f"{part} {r['probe']['before'][part]:.2f} / {r['probe']['after'][part]:.2f}"
            for part in ("numeric", "python")
        )
    )
    d = r["speed_during_ms"]
    print(
        f"speed samples during the run (CPU ms of a Python loop, {d['n']} samples): median "
        f"{d['median']:.1f}, {d['min']:.1f}-{d['max']:.1f}"
    )
    print(f"load average before / after: {r['load_before']} / {r['load_after']}")
    print(f"wall {r['wall_seconds']:.1f} s, {r['jobs']} jobs: {r['jobs_per_rule']}")
    print(f"jobs CPU {r['jobs_cpu']:.1f} s, Snakemake main process {r['scheduler_cpu']:.1f} s")
    w = r["warm"]
    if w["jobs"]:
        print(
            f"  of which in warm workers: {w['jobs']} jobs, {w['children_cpu_seconds']:.1f} s; "
            f"the server's imports {w['cpu_seconds']:.1f} s"
        )
    h = r["hand_overs"]
    if h:
        print(
            "  handed over by a process per job: "
            f"{h.get('process_jobs', 0):.0f} jobs ({h.get('process_cpu', 0.0):.1f} CPU-s in those "
            f"processes); by Snakemake's own process: {h.get('snakemake_jobs', 0):.0f} jobs "
            f"({h.get('snakemake_cpu', 0.0):.1f} CPU-s of its threads, in its CPU above)"
        )
    print(
        "job CPU per rule (s): " + ", ".join(f"{k} {v:.1f}" for k, v in r["cpu_per_rule"].items())
    )
    print(
        f"methods: fits {r['fit_seconds']:.1f} s (of which the stability step's "
        f"{r.get('stability_fit_seconds', 0.0):.1f} s) + kNN graphs {r['graph_seconds']:.1f} s; "
        f"k-means {r['kmeans_seconds']:.1f} s"
    )
    print(
        f"outside methods and k-means: {100 * r['outside_share_jobs']:.1f} % of job CPU, "
        f"{100 * r['outside_share_all']:.1f} % with Snakemake's own process"
    )
    if r["outside_share_summary_jobs"] is not None:
        told = r["summary_md_share"]
        print(
            "over the jobs summary.md's Time counts (" + ", ".join(SUMMARY_RULES) + "): "
            f"{100 * r['outside_share_summary_jobs']:.1f} % of their CPU (from the job logs); "
            + (f"summary.md says {100 * told:.1f} %" if told is not None else "no timing.json")
        )
    if args.floor:
        useful = r["fit_seconds"] + r["graph_seconds"] + r["kmeans_seconds"]
        r["floor"] = []
        for level in NULL_JOB:
            f = null_floor(args.cores, r["jobs_per_rule"], level, workdir)
            f["share"] = f["jobs_cpu"] / (f["jobs_cpu"] + useful)
            r["floor"].append(f)
            print(
                f"null pipeline ({level}), {f['jobs']} jobs: job CPU {f['jobs_cpu']:.1f} s "
                f"({f['per_job']:.2f} s per job), Snakemake {f['scheduler_cpu']:.1f} s; "
                f"floor share {100 * f['share']:.1f} %"
            )
    path = args.json or workdir / "pipeline_overhead.json"
    path.write_text(json.dumps(r, indent=1))
    print(f"written: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
