"""The one Snakemake scheduler setting this workflow changes: no job rate limit on a local
run (issue 39). Pure Python, duck-typed on Snakemake's ``workflow`` object.

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

from typing import Any

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
