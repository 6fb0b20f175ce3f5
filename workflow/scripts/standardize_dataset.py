"""Validate and z-score a dataset (adapter over ufs.pipeline.data_steps.standardize)."""

from _job import setup

# first: with warm workers on, this process hands the script to one and exits here
setup(snakemake)  # noqa: F821

from ufs.pipeline.data_steps import file_entry, standardize

sm = snakemake  # noqa: F821
h = (sm.params.h[0], list(sm.params.h[1]))  # the plan's h values (a relative grid resolved)
spec = file_entry(sm.config, h[0])
# messages name the dataset and the user's file, never the internal copy sm.input[0]
source = f"dataset {h[0]!r} ({spec['file']})" if spec else f"dataset {sm.wildcards.dataset!r}"
standardize(sm.input[0], sm.output.data, sm.output.summary, h=h, source=source)
