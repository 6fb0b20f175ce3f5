"""Job set-up shared by the workflow scripts: log file, thread limits, CPU time."""

import atexit
import resource
import sys


def _report_cpu() -> None:
    """The job's whole CPU time (start-up and imports included) as the log's last line,
    read by ``benchmarks/pipeline_overhead.py``."""
    r = resource.getrusage(resource.RUSAGE_SELF)
    print(f"job cpu_seconds={r.ru_utime + r.ru_stime:.3f}", file=sys.stderr, flush=True)


def setup(snakemake) -> None:
    """Send stderr (warnings, tracebacks) to the rule's log and cap BLAS/OpenMP threads at
    the job's ``threads``: Snakemake runs jobs in parallel, so each job single-threaded
    avoids oversubscribing the cores (small LAPACK calls slow down by orders of magnitude)."""
    if snakemake.log:
        sys.stderr = open(snakemake.log[0], "w", buffering=1)  # noqa: SIM115
    atexit.register(_report_cpu)
    from threadpoolctl import threadpool_limits

    threadpool_limits(limits=max(1, int(snakemake.threads)))
