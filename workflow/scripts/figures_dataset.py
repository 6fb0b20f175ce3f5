"""Figures of one dataset (adapter over ufs.report.aggregate)."""

from pathlib import Path

from _job import setup

# first: with warm workers on, this process hands the script to one and exits here
setup(snakemake)  # noqa: F821

from ufs.report.aggregate import write_dataset_figures

sm = snakemake  # noqa: F821
write_dataset_figures(
    list(sm.input) + list(sm.params.earlier),  # a sliced run: the config's others on disk
    sm.wildcards.base,
    Path(sm.output.acc).parent,
    sm.params.oracle_metric,
)
