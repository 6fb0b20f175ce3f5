"""The stability of one method on one data set (adapter over ufs.pipeline.stability_step)."""

from _job import setup

# first: with warm workers on, this process hands the script to one and exits here
setup(snakemake)  # noqa: F821

from ufs.availability import import_requirements
from ufs.pipeline.stability_step import run_stability
from ufs.registry import get_method

sm = snakemake  # noqa: F821
# an optional library (PyTorch) is imported before the fits' clocks start
import_requirements(get_method(sm.wildcards.method).cls)
run_stability(
    sm.input.data,
    sm.wildcards.method,
    dict(sm.params.params),
    int(sm.params.h),
    sm.output[0],
    seed=int(sm.params.seed),
    m=int(sm.params.m),
    fraction=float(sm.params.fraction),
    level=float(sm.params.level),
    # the config's budget, always; params.budget is only the re-run key
    budget_seconds=(sm.config.get("jobs") or {}).get("fit_budget_seconds", 600),
    budget_key=sm.params.budget,
    pid=sm.params.setting,
    lineage=sm.params.lineage,
)
