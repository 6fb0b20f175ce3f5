"""What this workflow changes in how Snakemake runs it locally: no job rate limit,
and ``script:`` jobs handed to warm workers from Snakemake's own process. Pure Python,
duck-typed on Snakemake's ``workflow`` object.

Snakemake 9's scheduler (``JobScheduler.schedule``), whenever a job rate limiter is set,
arms a ``threading.Timer`` after every scheduling round that starts one more round after
the limiter's window; the round it starts arms the next. So every finished job adds one
more chain of rounds, once per window, for the rest of the run, and each round stats the
inputs of every ready job: the scheduler's cost grows with the square of the job count.
The command line always sets a limiter (``--max-jobs-per-timespan``, default ``100/1s``).
On the default run (253 jobs, 2 cores) that was 46 605 rounds, and Snakemake's own
process took 20.4 CPU-s with the limiter, 6.1 without it. The pending timers are not daemon threads either, so a longer window
(``1000/1m``) cuts the rounds but holds the process open up to one window after the last
job.

A local run has nothing to protect by a submission rate (its cores bound it), so
:func:`drop_local_rate_limit`, called from the Snakefile's ``onstart`` handler (after
Snakemake built its scheduler, before the first round), removes the limiter, as
Snakemake's own dry runs do: rounds then happen only when a job finishes. Left alone:
a cluster run (``profiles/slurm`` sets ``50/10s``: a submission rate a cluster wants) and
any limit given other than Snakemake's default.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

#: the Snakemake releases this workflow is tested with, ``[low, high)``: the warm
#: workers' dispatch replaces two of Snakemake's internals (``_warm.install_dispatch``),
#: and ``pyproject.toml`` holds the install to the same range
SNAKEMAKE_SUPPORTED = ("8.20", "10")

#: ``--max-jobs-per-timespan``'s default in Snakemake's command line: 100 jobs per 1 s
SNAKEMAKE_DEFAULT_LIMIT = (100, 1.0)


def drop_local_rate_limit(workflow: Any) -> bool:
    """Remove the job rate limiter of a local run whose limit is Snakemake's default
    (:data:`SNAKEMAKE_DEFAULT_LIMIT`); True when it did. Does nothing (False) on a cluster
    executor, with a limit the user chose, or when Snakemake's objects do not look as
    expected (another Snakemake version): the run then behaves as Snakemake's default."""
    scheduler = getattr(workflow, "scheduler", None)
    limiter = getattr(scheduler, "job_rate_limiter", None)
    if limiter is None or not getattr(workflow, "local_exec", False):
        return False
    try:
        limit = (int(limiter.max_jobs), float(limiter.timespan))
    except (AttributeError, TypeError, ValueError):
        return False
    if limit != SNAKEMAKE_DEFAULT_LIMIT:
        return False
    scheduler.job_rate_limiter = None
    return True


def dispatch_to_warm_workers(workflow: Any, config: dict | None, warm_module: str | Path) -> bool:
    """Load the workflow's warm-worker module (``workflow/scripts/_warm.py``, standard
    library only) and let it hand every ``script:`` job of this local run to a warm child
    from Snakemake's own process (``_warm.install_dispatch``: no Python process per job
    that imports Snakemake only to hand its job over); True when it did. Off a local run,
    with warm workers off (``jobs.warm_workers``, ``UFS_WARM_WORKERS=0``) or with another
    Snakemake whose objects it does not recognise, nothing changes: each job's own process
    hands it over, or runs it."""
    warm = sys.modules.get("_warm")
    if warm is None:
        spec = importlib.util.spec_from_file_location("_warm", str(warm_module))
        if spec is None or spec.loader is None:
            return False
        warm = importlib.util.module_from_spec(spec)
        sys.modules["_warm"] = warm
        spec.loader.exec_module(warm)
    return bool(warm.install_dispatch(workflow, config))


def _release(version: str) -> tuple[int, ...]:
    parts = []
    for piece in version.split(".")[:3]:
        digits = "".join(c for c in piece if c.isdigit()) if piece[:1].isdigit() else ""
        if not digits:
            break
        parts.append(int(digits))
    return tuple(parts)


def snakemake_version_warning(version: str) -> str | None:
    """A warning for a Snakemake ``version`` outside :data:`SNAKEMAKE_SUPPORTED`, or None."""
    low, high = SNAKEMAKE_SUPPORTED
    if _release(low) <= _release(version) < _release(high):
        return None
    return (
        f"ufs: Snakemake {version} is outside the tested range >={low},<{high}; the workflow "
        "may run, but its warm-worker dispatch and scheduler settings replace Snakemake "
        f"internals that other releases may change (pip install 'snakemake>={low},<{high}')"
    )


def start_warnings(workflow: Any, config: dict | None, warm_module: str | Path) -> list[str]:
    """What the Snakefile's ``onstart`` handler warns about: a Snakemake outside the tested
    range, and warm workers on for a local run whose dispatch could not be installed (the
    objects it replaces are missing: each job's own process then hands it over, ~0.08 CPU-s
    a job more), never silently."""
    import snakemake

    out = []
    version = snakemake_version_warning(getattr(snakemake, "__version__", "0"))
    if version:
        out.append(version)
    warm = sys.modules.get("_warm")
    if warm is not None and warm.enabled(config) and getattr(workflow, "local_exec", False):
        problem = warm.dispatch_problem(workflow)
        if problem:
            out.append(
                "ufs: warm workers cannot be handed jobs from Snakemake's own process in "
                f"this Snakemake ({problem}); each job's own process hands it over instead"
            )
    return out


def workflow_command(
    snakefile: str | Path,
    configfile: str | Path,
    cores: int = 2,
    *extra: str,
    directory: str | Path | None = None,
) -> list[str]:
    """The command line that runs this workflow with this Python's Snakemake: ``configfile``
    on ``cores`` cores, in ``directory`` when given, then ``extra``."""
    cmd = [sys.executable, "-m", "snakemake", "-s", str(snakefile)]
    if directory is not None:
        cmd += ["--directory", str(directory)]
    return [*cmd, "--configfile", str(configfile), "--cores", str(cores), *extra]


def one_blas_thread_env(base: dict[str, str] | None = None) -> dict[str, str]:
    """``base`` (default: this process's environment) with one BLAS/OpenMP thread per
    process, as the project's measurements and fault runs start the workflow."""
    import os

    env = dict(os.environ if base is None else base)
    env.update(OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    return env
