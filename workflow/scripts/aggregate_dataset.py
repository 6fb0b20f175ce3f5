"""Tables and figures of one dataset (adapter over ufs.report.aggregate)."""

from pathlib import Path

from _job import setup

from ufs.report.aggregate import write_dataset_outputs

setup(snakemake)  # noqa: F821
sm = snakemake  # noqa: F821
write_dataset_outputs(
    list(sm.input) + list(sm.params.earlier),  # a sliced run: the config's others on disk
    sm.wildcards.base,
    sm.output.csv,
    sm.output.md,
    Path(sm.output.acc).parent,
    sm.params.oracle_metric,
    note=list(sm.params.note),
)
