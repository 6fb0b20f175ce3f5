"""Log a dataset's evaluations to MLflow (adapter over ufs.tracking)."""

import sys
from pathlib import Path

from _job import setup

# first: with warm workers on, this process hands the script to one and exits here
setup(snakemake)  # noqa: F821

import ufs
from ufs.tracking import (
    TrackingError,
    data_profile,
    data_sha256,
    log_evaluations,
    resolve_uri,
)

sm = snakemake  # noqa: F821
try:
    counts = log_evaluations(
        resolve_uri(sm.params.uri),
        sm.params.experiment,
        list(sm.input.evaluations),
        sm.output[0],
        dataset=sm.wildcards.dataset,
        output_dir=Path(sm.output[0]).parent.parent,  # <output_dir>/mlflow/<dataset>.json
        data_sha256=data_sha256(sm.input.data),
        code_version=ufs.__version__,
        hs=list(sm.params.hs),
        table=sm.input.table,
        data_source=str(sm.input.data),
        data_profile=data_profile(sm.input.data),
    )
except TrackingError as exc:
    print(f"ERROR: {exc}", file=sys.stderr)
    sys.exit(1)
print(f"MLflow: {counts}", file=sys.stderr)
