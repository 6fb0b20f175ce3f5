"""Cache one sample kNN graph per dataset and graph spec (adapter over ufs.pipeline.steps)."""

from _job import setup

# first: with warm workers on, this process hands the script to one and exits here
setup(snakemake)  # noqa: F821

from ufs.pipeline.steps import build_graph

sm = snakemake  # noqa: F821
build_graph(sm.input[0], sm.params.spec, sm.output[0])
