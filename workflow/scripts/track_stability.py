"""Put a data set's stability on its MLflow parent runs (adapter over ufs.tracking.stability)."""

import sys
from pathlib import Path

from _job import setup

# first: with warm workers on, this process hands the script to one and exits here
setup(snakemake)  # noqa: F821

from ufs.tracking import TrackingError, data_sha256, resolve_uri
from ufs.tracking.stability import log_stability

sm = snakemake  # noqa: F821
try:
    done = log_stability(
        resolve_uri(sm.params.uri),
        sm.params.experiment,
        list(sm.input.stability),
        sm.output[0],
        dataset=sm.wildcards.dataset,
        # <output_dir>/mlflow/stability/<dataset>.json
        output_dir=Path(sm.output[0]).parent.parent.parent,
        data_sha256=data_sha256(sm.input.data),
    )
except TrackingError as exc:
    print(f"ERROR: {exc}", file=sys.stderr)
    sys.exit(1)
print(f"MLflow: stability on {len(done['runs'])} parent run(s)", file=sys.stderr)
