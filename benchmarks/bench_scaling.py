"""Scaling benchmark of every registered method (not a test): fit seconds and peak memory
as the number of samples grows.

    python benchmarks/bench_scaling.py [--n 1000 5000 20000] [--methods mcfs lapscore ...]
                                       [--p 200] [--timeout 600] [--tracemalloc]

Data: ``k`` Gaussian clusters (planted: they differ only on ``p // 10`` informative
features, unit-variance noise elsewhere), mapped to the estimator's ``input_space``
(:func:`ufs.preprocessing.input_matrix`: z-scored, raw or [0, 1]-scaled). Every
(method, n) runs in its own subprocess so one method's memory cannot pollute another's,
with a per-run timeout. Reported:

* ``seconds``: wall time of ``fit`` (graph construction included for graph methods);
* ``peak RSS MB``: ``ru_maxrss`` of the child after ``fit`` minus its resident size just
  before (data already generated), i.e. the extra peak memory of the fit;
* ``tracemalloc MB`` (with ``--tracemalloc``): peak traced allocations (numpy included)
  of a *second* fit run under ``tracemalloc``, so the timing above is not slowed by it.

Estimators come from :func:`ufs.registry.make_estimator` with the method's label-free
``defaults``; ``h``, ``k`` and ``random_state = 0`` are the context parameters.
"""

from __future__ import annotations

import argparse
import json
import re
import resource
import signal
import subprocess
import sys
import time
import warnings

import numpy as np


def planted(n: int, p: int, k: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    y = rng.integers(k, size=n)
    X = rng.normal(size=(n, p))
    informative = rng.choice(p, max(1, p // 10), replace=False)
    X[:, informative] += rng.normal(scale=3.0, size=(k, informative.size))[y]
    return X


def _rss_mb() -> float:
    """Current resident set size (Linux /proc), MB."""
    try:
        with open("/proc/self/statm") as f:
            pages = int(f.read().split()[1])
        return pages * resource.getpagesize() / 2**20
    except OSError:
        return float("nan")


def worker(args) -> None:
    """Run one fit and print one JSON line (the child process)."""
    if args.threads > 0:
        from threadpoolctl import threadpool_limits

        threadpool_limits(args.threads)
    from ufs.preprocessing import input_matrix
    from ufs.registry import get_method, make_estimator

    spec = get_method(args.worker)

    def make():
        return make_estimator(
            spec.name,
            spec.defaults,
            n_features_to_select=args.h,
            n_clusters=args.clusters,
            random_state=0,
        )

    # the input space may be a constructor parameter (DGUFS): read it from an estimator
    X = input_matrix(make().input_space, planted(args.worker_n, args.p, args.clusters))
    out = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rss0 = _rss_mb()
        t0, c0 = time.perf_counter(), time.process_time()
        try:
            make().fit(X)
        except MemoryError as exc:  # a dense n x n method refusing up front, or the cap
            need = re.search(r"needs ([0-9.]+ GiB)", str(exc))
            what = (
                f"refused up front: needs {need.group(1)}"
                if need
                else f"memory cap {args.mem_cap_gb:g} GB: {str(exc)[:80]}"
            )
            print(json.dumps({"error": what}))
            return
        out["seconds"] = time.perf_counter() - t0
        out["cpu_seconds"] = time.process_time() - c0
        out["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024 - rss0
        if args.tracemalloc:
            import tracemalloc

            tracemalloc.start()
            make().fit(X)
            out["tracemalloc_mb"] = tracemalloc.get_traced_memory()[1] / 2**20
            tracemalloc.stop()
    print(json.dumps(out))


def run_one(method: str, n: int, args) -> dict:
    cmd = [
        sys.executable,
        __file__,
        "--worker",
        method,
        "--worker-n",
        str(n),
        "--p",
        str(args.p),
        "--h",
        str(args.h),
        "--clusters",
        str(args.clusters),
        "--threads",
        str(args.threads),
    ]
    if args.tracemalloc:
        cmd.append("--tracemalloc")

    def cap() -> None:  # in the child: SIGXCPU (kill) after --cpu-cap CPU seconds
        if args.cpu_cap:
            limit = int(args.cpu_cap) + 1  # + data generation and imports (~1 s)
            resource.setrlimit(resource.RLIMIT_CPU, (limit, limit))
        if args.mem_cap_gb:  # address space: an allocation over it raises MemoryError
            limit = int(args.mem_cap_gb * 2**30)
            resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    try:
        res = subprocess.run(
            cmd, capture_output=True, text=True, timeout=args.timeout, preexec_fn=cap
        )
    except subprocess.TimeoutExpired:
        return {"error": f"timeout > {args.timeout:g} s wall"}
    if res.returncode in (-signal.SIGXCPU, -signal.SIGKILL) and args.cpu_cap:
        return {"error": f"CPU cap > {args.cpu_cap:g} s", "capped": True}
    if res.returncode != 0:
        last = (res.stderr.strip().splitlines() or ["?"])[-1]
        return {"error": f"failed: {last[:80]}"}
    return json.loads(res.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, nargs="+", default=[1000, 5000, 20000])
    ap.add_argument("--p", type=int, default=200)
    ap.add_argument("--h", type=int, default=20, help="features to select")
    ap.add_argument("--clusters", type=int, default=5)
    ap.add_argument("--methods", nargs="+", default=None, help="default: every registered")
    ap.add_argument("--timeout", type=float, default=3600.0, help="wall seconds per run")
    ap.add_argument(
        "--cpu-cap",
        type=float,
        default=600.0,
        help="CPU seconds per run (RLIMIT_CPU; 0 = none); a method over it at one n is not "
        "run at larger n",
    )
    ap.add_argument(
        "--mem-cap-gb",
        type=float,
        default=8.0,
        help="address-space limit per run (RLIMIT_AS; 0 = none): over it, MemoryError",
    )
    ap.add_argument("--threads", type=int, default=1, help="BLAS/OpenMP threads (0 = as is)")
    ap.add_argument("--tracemalloc", action="store_true")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--worker-n", type=int, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        worker(args)
        return
    from ufs.registry import available_methods

    methods = args.methods or available_methods()
    unknown = sorted(set(methods) - set(available_methods()))
    if unknown:
        raise SystemExit(f"not registered: {unknown}; available: {available_methods()}")
    print(
        f"p={args.p}, h={args.h}, k={args.clusters}, threads={args.threads or 'default'}, "
        f"CPU cap={args.cpu_cap:g}s, memory cap={args.mem_cap_gb:g} GB, "
        f"wall timeout={args.timeout:g}s\n"
    )
    cols = "| method | n | CPU seconds | wall seconds | peak RSS MB |" + (
        " tracemalloc MB |" if args.tracemalloc else ""
    )
    print(cols)
    print("|" + "---|" * (cols.count("|") - 1))
    for method in methods:
        capped = None
        for n in sorted(args.n):
            r = {"error": f"not run (over the cap at n = {capped})"} if capped else None
            r = r or run_one(method, n, args)
            if r.get("capped"):
                capped = n
            if "error" in r:
                cells = [r["error"], "", ""] + ([""] if args.tracemalloc else [])
            else:
                cells = [
                    f"{r['cpu_seconds']:.2f}",
                    f"{r['seconds']:.2f}",
                    f"{r['peak_rss_mb']:.1f}",
                ]
                if args.tracemalloc:
                    cells.append(f"{r['tracemalloc_mb']:.1f}")
            print(f"| {method} | {n} | " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
