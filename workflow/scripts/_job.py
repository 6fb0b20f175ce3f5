"""Job set-up shared by the workflow scripts: warm worker, log file, stale temporary files,
thread limits, CPU time."""

import atexit
import os
import re
import resource
import sys
from pathlib import Path

import _warm

#: the temporary file of an atomic write of a file ``<name>`` (``ufs.fileio.atomic_path``:
#: ``tempfile.mkstemp(prefix=".<name>.", suffix=...)``, whose random part is 8 characters
#: of ``[a-z0-9_]``); tests/test_job_setup.py checks that the two agree
_TEMPORARY = r"\.{name}\.[a-z0-9_]{{8}}(\.[A-Za-z0-9]+)?"


def stale_temporaries(outputs) -> list[Path]:
    """The temporary files of atomic writes of ``outputs`` (paths) left in their folders:
    only a writer killed mid-write (SIGKILL, a node lost) leaves one, and a job's outputs
    are written by that job alone, so at its start every one found is stale. Each folder
    is read once, for all of the job's outputs in it."""
    names: dict[Path, list[str]] = {}
    for output in map(Path, outputs):
        names.setdefault(output.parent, []).append(re.escape(output.name))
    found = []
    for folder, escaped in names.items():
        pattern = re.compile(_TEMPORARY.format(name="(?:" + "|".join(escaped) + ")"))
        try:
            entries = list(os.scandir(folder))
        except OSError:  # no folder yet: nothing was written there
            continue
        found += [
            Path(e.path)
            for e in entries
            if pattern.fullmatch(e.name) and e.is_file(follow_symlinks=False)
        ]
    return sorted(found)


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
    the warm worker itself: send stderr (warnings, tracebacks) to the rule's log, remove
    the temporary files an attempt killed mid-write left beside the job's outputs
    (:func:`stale_temporaries`, each named in the log) and cap BLAS/OpenMP threads at the
    job's ``threads``: Snakemake runs jobs in parallel, so each job single-threaded avoids
    oversubscribing the cores (small LAPACK calls slow down by orders of magnitude)."""
    log = snakemake.log[0] if snakemake.log else None
    _warm.delegate(snakemake.config, log)
    _warm.drop_sidecar(log)
    if snakemake.log:
        sys.stderr = open(snakemake.log[0], "w", buffering=1)  # noqa: SIM115
    for stale in stale_temporaries(snakemake.output):  # of an attempt that was killed
        stale.unlink(missing_ok=True)
        print(f"removed {stale}: a temporary file a killed attempt left", file=sys.stderr)
    atexit.register(_report_cpu)
    from threadpoolctl import threadpool_limits

    threadpool_limits(limits=max(1, int(snakemake.threads)))
