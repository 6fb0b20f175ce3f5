"""Tables of one dataset (adapter over ufs.report.aggregate)."""

from _job import setup

# first: with warm workers on, this process hands the script to one and exits here
setup(snakemake)  # noqa: F821

from ufs.report.aggregate import write_dataset_tables

sm = snakemake  # noqa: F821
write_dataset_tables(
    list(sm.input) + list(sm.params.earlier),  # a sliced run: the config's others on disk
    sm.wildcards.base,
    sm.output.csv,
    sm.output.md,
    sm.params.oracle_metric,
    out_tex=sm.output.tex,
    note=list(sm.params.note),
)
