"""Job set-up shared by the workflow scripts: warm worker, log file, thread limits, CPU time."""

import atexit
import resource
import sys

import _warm


def _report_cpu() -> None:
    """The job's whole CPU time (start-up and imports included; in a warm worker, from the
    fork on: the libraries it found imported were paid for once, by the server) as the
    log's last line, read by ``benchmarks/pipeline_overhead.py``."""
    r = resource.getrusage(resource.RUSAGE_SELF)
    print(f"job cpu_seconds={r.ru_utime + r.ru_stime:.3f}", file=sys.stderr, flush=True)


def setup(snakemake) -> None:
    """Called first by every workflow script. Hand the script to a warm worker when they
    are on (``_warm.delegate``: this process then exits with the job's code, and the
    script runs in a process that has the libraries imported already). Otherwise, or in
    the warm worker itself: send stderr (warnings, tracebacks) to the rule's log and cap
    BLAS/OpenMP threads at the job's ``threads``: Snakemake runs jobs in parallel, so each
    job single-threaded avoids oversubscribing the cores (small LAPACK calls slow down by
    orders of magnitude)."""
    log = snakemake.log[0] if snakemake.log else None
    _warm.delegate(snakemake.config, log)
    _warm.drop_sidecar(log)
    if snakemake.log:
        sys.stderr = open(snakemake.log[0], "w", buffering=1)  # noqa: SIM115
    atexit.register(_report_cpu)
    from threadpoolctl import threadpool_limits

    threadpool_limits(limits=max(1, int(snakemake.threads)))
