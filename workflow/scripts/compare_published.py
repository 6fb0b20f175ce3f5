"""Ours beside the paper's published numbers (adapter over ufs.report.compare)."""

from _job import setup

# first: with warm workers on, this process hands the script to one and exits here
setup(snakemake)  # noqa: F821

from ufs.report.compare import write_comparison

sm = snakemake  # noqa: F821
write_comparison(
    sm.input.published,
    list(sm.input.tables),
    sm.output.csv,
    sm.output.md,
    sm.output.png,
    paper=sm.config["published"],
    restarts=int((sm.config.get("evaluation") or {}).get("restarts", 20)),
)
