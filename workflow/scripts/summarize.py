"""Ranks across data sets, solver failures, timing and the per-dataset tables in one
summary; the failure warning goes to the job log (the Snakefile repeats it at the end)."""

import os
import sys

from _job import setup

# first: with warm workers on, this process hands the script to one and exits here
setup(snakemake)  # noqa: F821

from ufs.report.aggregate import write_summary
from ufs.stats.ranking import METRICS, PROTOCOLS

sm = snakemake  # noqa: F821
warning = write_summary(
    list(sm.input.tables),
    list(sm.input.csv),
    [b for b in sm.params.benchmarks if os.path.exists(b)],
    list(sm.input.evaluations) + list(sm.params.earlier),
    sm.output.md,
    sm.output.timing,
    sm.output.status,
    {
        (protocol, metric): getattr(sm.output, f"cd_{protocol}_{metric}")
        for protocol in PROTOCOLS
        for metric in METRICS
    },
    min_h_values=int(sm.params.min_h_values),
    oracle_metric=sm.params.oracle_metric,
    note=list(sm.params.note),
    out_details=sm.output.details,
    families=dict(sm.params.families),
    stability=sm.input.stability[0] if len(sm.input.stability) else None,
)
if warning:  # to the job's log; the Snakefile's onsuccess handler repeats it at the end
    print(warning, file=sys.stderr)
