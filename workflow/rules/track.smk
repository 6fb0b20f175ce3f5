# The store id the mlflow_init job must leave (ufs.tracking.planned_store_id): a
# parameter of both rules below, so that they re-run when the store is missing, damaged
# or rebuilt, and no receipt names runs of a store that no longer holds them.
MLFLOW_STORE, _mlflow_store_warning = (
    ufs.tracking.planned_store_id(MLFLOW_URI, MLFLOW_EXPERIMENT, f"{OUT}/mlflow/experiment.json")
    if MLFLOW_ENABLED
    else ("", None)
)
if _mlflow_store_warning:
    logger.warning(f"WARNING: {_mlflow_store_warning}")


rule mlflow_init:
    # Creates the store (atomically) and the experiment once, before any logging job
    # (DESIGN §6); moves a damaged store aside and rebuilds it.
    output:
        f"{OUT}/mlflow/experiment.json",
    log:
        f"{OUT}/logs/mlflow_init.log",
    benchmark:
        f"{OUT}/benchmarks/mlflow_init.tsv"
    conda:
        "../envs/ufs.yaml"
    resources:
        runtime=10,
        mem_mb=2000,
        mlflow_writers=1,
    params:
        # as configured (relative paths stay relative); the job resolves it
        uri=MLFLOW_URI_PARAM,
        experiment=MLFLOW_EXPERIMENT,
        # where a SQLite store's artifacts are (beside it): absolute on purpose, as MLflow
        # records them. A moved project re-runs this job (and then the quick logging
        # passes, which find every run and refresh its output_dir tag), never a fit.
        artifacts=ufs.tracking.default_artifact_root(MLFLOW_URI),
        store=MLFLOW_STORE,
        code=TRACK_CODE,
    message:
        "MLflow: create or check experiment {params.experiment!r} in {params.uri}"
    script:
        "../scripts/mlflow_init.py"


rule track:
    # One MLflow run per (output directory, data, dataset, method, setting, h); idempotent
    # by run key; touches only runs of this output directory.
    input:
        init=rules.mlflow_init.output,
        evaluations=lambda w: evaluations_of(w.dataset),
        data=data_file("{dataset}"),
        # the label-tuned rows mark the chosen settings (tag selected_by_label_tuning)
        table=lambda w: f"{OUT}/tables/{PLAN.instances[w.dataset].base}.csv",
    output:
        f"{OUT}/mlflow/{{dataset}}.json",
    log:
        f"{OUT}/logs/track/{{dataset}}.log",
    benchmark:
        f"{OUT}/benchmarks/track/{{dataset}}.tsv"
    conda:
        "../envs/ufs.yaml"
    resources:
        runtime=30,
        mem_mb=2000,
        mlflow_writers=1,
    params:
        uri=MLFLOW_URI_PARAM,
        experiment=MLFLOW_EXPERIMENT,
        store=MLFLOW_STORE,
        hs=lambda w: list(PLAN.instances[w.dataset].hs),
        code=TRACK_CODE,
    message:
        "MLflow: log the runs of {wildcards.dataset} (one per setting and h)"
    script:
        "../scripts/track_mlflow.py"


rule track_stability:
    # The stability of each method on the data set, on its parent run (ufs.tracking.stability)
    input:
        receipt=f"{OUT}/mlflow/{{dataset}}.json",
        stability=lambda w: [
            f"{OUT}/stability/{w.dataset}/{m}.json" for d, m in STABILITY_JOBS if d == w.dataset
        ],
        data=data_file("{dataset}"),
    output:
        f"{OUT}/mlflow/stability/{{dataset}}.json",
    log:
        f"{OUT}/logs/track_stability/{{dataset}}.log",
    conda:
        "../envs/ufs.yaml"
    resources:
        runtime=10,
        mem_mb=2000,
        mlflow_writers=1,
    params:
        uri=MLFLOW_URI_PARAM,
        experiment=MLFLOW_EXPERIMENT,
        store=MLFLOW_STORE,
        code=STABILITY_TRACK_CODE,
    message:
        "MLflow: the stability of the methods on {wildcards.dataset}"
    script:
        "../scripts/track_stability.py"
