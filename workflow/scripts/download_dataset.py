"""Materialise a dataset, registered or given as a file (adapter over ufs.pipeline.data_steps.download)."""

import logging
import sys

from _job import setup

# first: with warm workers on, this process hands the script to one and exits here
setup(snakemake)  # noqa: F821

from ufs.pipeline.data_steps import download, file_entry

sm = snakemake  # noqa: F821
# the reader's decisions (e.g. "header: auto -> false" and why) go to the job's log
_log = logging.getLogger("ufs")
_log.setLevel(logging.INFO)
_handler = logging.StreamHandler(sys.stderr)
_handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
_log.addHandler(_handler)
download(
    sm.wildcards.dataset,
    sm.params.base,
    sm.params.seed,
    sm.output[0],
    mirror=sm.params.mirror,
    cache=sm.params.cache,
    # a dataset given as a file in the config; rule download_file keys its output on this
    # spec and on the file's content (param `file`), rule download has no file
    file=file_entry(sm.config, sm.params.base),
)
