"""Cache one sample kNN graph per dataset and graph spec (adapter over ufs.pipeline.steps)."""

from _job import setup

from ufs.pipeline.steps import build_graph

setup(snakemake)  # noqa: F821
sm = snakemake  # noqa: F821
build_graph(sm.input[0], sm.params.spec, sm.output[0])
