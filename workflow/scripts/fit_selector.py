"""Fit a chunk of tasks on one dataset (adapter over ufs.pipeline.steps.fit)."""

from _job import setup

# first: with warm workers on, this process hands the script to one and exits here
setup(snakemake)  # noqa: F821

from ufs.availability import import_requirements
from ufs.pipeline.checkpoint import checkpoint_dir
from ufs.pipeline.steps import fit
from ufs.registry import get_method

sm = snakemake  # noqa: F821
# an optional library (PyTorch) is imported before the fits' clocks start: its import is
# the process's cost, not the method's
for method in sorted({t["method"] for t in sm.params.tasks}):
    import_requirements(get_method(method).cls)
fit(
    sm.input.data,
    list(sm.params.tasks),
    sm.output.result,
    sm.output.info,
    graphs=dict(sm.params.graphs),
    graph_specs=dict(sm.params.graph_specs),
    seed=sm.params.seed,
    # the config's budget, always; params.budget is only the re-run key (ufs.pipeline.budget)
    budget_seconds=(sm.config.get("jobs") or {}).get("fit_budget_seconds", 600),
    budget_key=sm.params.budget,
    # each finished fit is kept there until the outputs are written: a killed job resumes
    resume_dir=checkpoint_dir(sm.output.result),
)
