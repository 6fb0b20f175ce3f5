"""k-means evaluation of a chunk of fits (adapter over ufs.pipeline.steps.evaluate)."""

from _job import setup

# first: with warm workers on, this process hands the script to one and exits here
setup(snakemake)  # noqa: F821

from ufs.pipeline.steps import evaluate

sm = snakemake  # noqa: F821
if "result" not in sm.input.keys():
    raise SystemExit(
        f"{sm.output[0]} was restored from an archive (ufs benchmark-restore) and its fit "
        "files are not on this machine; it is current, so nothing re-runs it unless forced. "
        "To re-evaluate it, delete it: the workflow then re-fits its chunk."
    )
evaluate(
    sm.input.data,
    sm.input.result,
    sm.input.info,
    sm.output[0],
    meta=dict(sm.params.meta),
    hs=list(sm.params.hs),
    restarts=sm.params.restarts,
    nmi_average=sm.params.nmi_average,
    seed=sm.params.seed,
    lineage=sm.params.lineage,
)
