# UFS-bench: download → standardize → [graph] → fit → evaluate → track (MLflow) → aggregate
#   snakemake --cores 2                                   # the embedded offline default
#   snakemake --cores 2 --configfile config/experiments/<paper>.yaml
from pathlib import Path
from snakemake.utils import min_version, validate

min_version("8.20")


# The default config is used only when no config file was given, so that --configfile
# replaces it instead of being deep-merged into it; --config values are merged into
# whichever config is read (`--config 'datasets={...}'` used to drop the default).
if not workflow.config_settings.configfiles:

    configfile: f"{workflow.basedir}/config/config.yaml"


# before the schema: a YAML "billion laughs" config would hang its validation for hours
from snakemake.exceptions import WorkflowError
from ufs.pipeline.config import (
    ConfigError,
    check_config_size,
    check_duplicate_keys,
    coerce_config_strings,
    refuse_yte,
    schema_error_message,
)

try:
    check_duplicate_keys(*workflow.configfiles)  # YAML keeps the last of two silently
    check_config_size(config)
    refuse_yte(*workflow.configfiles)  # a config file is data here, not a template
    # --config evaluation='{restarts: 5}' gives "5": read by the schema's declared types
    # (only the --config values: a quoted '600' in a YAML file is a string, refused)
    coerce_config_strings(config, only=dict(workflow.config_settings.config))
    validate(config, f"{workflow.basedir}/workflow/schemas/config.schema.yaml")
except (ConfigError, WorkflowError) as exc:  # the key and the rule, not the value in full
    raise WorkflowError(schema_error_message(exc)) from None


include: "workflow/rules/common.smk"
include: "workflow/rules/data.smk"
include: "workflow/rules/select.smk"
include: "workflow/rules/evaluate.smk"
include: "workflow/rules/track.smk"
include: "workflow/rules/aggregate.smk"
include: "workflow/rules/stability.smk"


report: "workflow/report/workflow.rst"


rule all:
    default_target: True
    input:
        all_targets(),


# A local run needs no job rate limit: Snakemake's default one (100 jobs/s) re-runs the
# scheduler once a second per finished job until the end; and its script jobs go to warm
# workers from this process, not through a Python process each (ufs.pipeline.scheduling).
onstart:
    import ufs.pipeline.scheduling

    if ufs.pipeline.scheduling.drop_local_rate_limit(workflow):
        logger.debug("local run: Snakemake's default job rate limiter removed")
    if ufs.pipeline.scheduling.dispatch_to_warm_workers(
        workflow, config, f"{workflow.basedir}/workflow/scripts/_warm.py"
    ):
        logger.debug("local run: script jobs handed to warm workers from Snakemake's process")
    for warning in ufs.pipeline.scheduling.start_warnings(
        workflow, config, f"{workflow.basedir}/workflow/scripts/_warm.py"
    ):
        logger.warning(warning)


# Solver failures (fits that did not converge or diverged) are repeated at the end of a
# successful run: the summary job writes them to fit_status.json (ufs.report.aggregate).
onsuccess:
    from ufs.report.aggregate import fit_status_warning

    _fit_warning = fit_status_warning(f"{OUT}/fit_status.json")
    if _fit_warning:
        logger.warning(_fit_warning)
    if MLFLOW_ENABLED and (
        _hint := ufs.tracking.runs_table_hint(f"{OUT}/mlflow/experiment.json")
    ):
        logger.info(_hint)


# the runs-table link at the end of a failed run too, where it logged any run (a logging
# job writes {OUT}/mlflow/<dataset>.json): a link to an empty table helps no one
onerror:
    if (
        MLFLOW_ENABLED
        and any(
            p.name not in ("experiment.json", "output_identity.json")
            for p in Path(f"{OUT}/mlflow").glob("*.json")
        )
        and (_hint := ufs.tracking.runs_table_hint(f"{OUT}/mlflow/experiment.json"))
    ):
        logger.info(_hint)
