"""Planning cost against the number of settings (not a test): wall time and peak memory
of ``snakemake -n`` (the whole plan: config validation, ``build_plan``, the DAG of every
fit/evaluate chunk) and of ``build_plan`` alone, as a method's grid grows.

    python benchmarks/plan_scaling.py [--sizes 1000 10000 100000] [--timeout 1800]
                                      [--tasks-per-job 25] [--no-snakemake]

Config: one small dataset (``wine``, one ``h``) and one method (``spcafs``) whose
``grid`` has ``N`` values of ``gamma``, so the plan has ``N + 1`` settings (the grid and
the label-free default) in ``ceil((N + 1) / tasks_per_job)`` fit jobs. Each dry run is a
fresh ``python -m snakemake`` under ``/usr/bin/time -v`` (its ``Maximum resident set
size`` is the peak RSS); ``build_plan`` runs in a fresh ``python`` the same way. A run
that exceeds ``--timeout`` is reported as such.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]


def config(n_settings: int, tasks_per_job: int) -> dict:
    gammas = [round(1e-3 * (i + 1), 6) for i in range(n_settings - 1)]
    return {
        "output_dir": "results",
        "resources_dir": "resources",
        "jobs": {"tasks_per_job": tasks_per_job},
        "datasets": {"wine": {"h": [4]}},
        "methods": {"spcafs": {"grid": {"gamma": gammas}}},
    }


def timed(cmd: list[str], timeout: float, cwd: Path) -> tuple[float | None, float | None, str]:
    """(wall seconds, peak RSS MB, tail of stderr) of ``cmd`` under ``/usr/bin/time -v``."""
    t0 = time.perf_counter()
    try:
        proc = subprocess.run(
            ["/usr/bin/time", "-v", *cmd],
            cwd=cwd,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        return None, None, f"timed out after {timeout:.0f} s"
    wall = time.perf_counter() - t0
    m = re.search(r"Maximum resident set size \(kbytes\): (\d+)", proc.stderr)
    rss = int(m.group(1)) / 1024 if m else None
    err = proc.stderr.split("\tCommand being timed")[0].strip()
    status = "ok" if proc.returncode == 0 else f"exit {proc.returncode}: {err[-400:]}"
    return wall, rss, status


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[1000, 10_000, 100_000])
    ap.add_argument("--timeout", type=float, default=1800)
    ap.add_argument("--tasks-per-job", type=int, default=25)
    ap.add_argument("--no-snakemake", action="store_true", help="time build_plan only")
    args = ap.parse_args(argv)
    print(
        f"{'settings':>9} {'jobs':>6}  {'build_plan s':>12} {'MB':>7}  "
        f"{'snakemake -n s':>14} {'MB':>7}  status"
    )
    for n in args.sizes:
        with tempfile.TemporaryDirectory(prefix="plan_scaling_") as tmp:
            work = Path(tmp)
            cfg_path = work / "config.yaml"
            cfg_path.write_text(yaml.safe_dump(config(n, args.tasks_per_job)))
            jobs = -(-n // args.tasks_per_job)
            code = (
                "import yaml; from ufs.pipeline.config import build_plan; "
                f"p = build_plan(yaml.safe_load(open({str(cfg_path)!r}))); "
                "print(sum(len(p.chunks(d)) for d in p.instances))"
            )
            bp = timed([sys.executable, "-c", code], args.timeout, REPO)
            if args.no_snakemake:
                sm = (None, None, "skipped")
            else:
                cmd = [sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile")]
                cmd += ["--directory", str(work), "--configfile", str(cfg_path)]
                sm = timed([*cmd, "-n", "--cores", "1"], args.timeout, REPO)

            def f(x, fmt):
                return "-" if x is None else format(x, fmt)

            status = sm[2] if bp[2] == "ok" else f"build_plan {bp[2]}"
            print(
                f"{n:>9} {jobs:>6}  {f(bp[0], '12.1f')} {f(bp[1], '7.0f')}  "
                f"{f(sm[0], '14.1f')} {f(sm[1], '7.0f')}  {status}",
                flush=True,
            )


if __name__ == "__main__":
    main()
