"""Create the MLflow store and experiment once (adapter over ufs.tracking)."""

import sys

from _job import setup

# first: with warm workers on, this process hands the script to one and exits here
setup(snakemake)  # noqa: F821

from ufs.tracking import (
    TrackingError,
    init_experiment,
    resolve_uri,
    runs_table_hint,
)

sm = snakemake  # noqa: F821
uri = resolve_uri(sm.params.uri)


def warn(message: str) -> None:
    """To the job's log and to Snakemake's console (a moved-aside store must be seen)."""
    for stream in (sys.stderr, sys.__stderr__):
        print(f"WARNING: {message}", file=stream, flush=True)


try:
    init_experiment(
        uri,
        sm.params.experiment,
        sm.params.artifacts,
        sm.output[0],
        store_id=sm.params.store,
        warn=warn,
    )
except TrackingError as exc:
    print(f"ERROR: {exc}", file=sys.stderr)
    sys.exit(1)
print(runs_table_hint(sm.output[0]), file=sys.stderr)
