"""The stability table and its figure (adapter over ufs.report.stability_report)."""

from _job import setup

# first: with warm workers on, this process hands the script to one and exits here
setup(snakemake)  # noqa: F821

from ufs.report.stability_report import write_stability_report

sm = snakemake  # noqa: F821
write_stability_report(
    list(sm.input.stability),
    list(sm.input.tables),
    sm.output.csv,
    sm.output.md,
    sm.output.png,  # and sm.output.pdf, its twin
)
