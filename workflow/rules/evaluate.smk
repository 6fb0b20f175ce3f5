rule evaluate:
    # k-means × R restarts for every task of a chunk and every h it covers.
    input:
        # data, fit result and info; none for an evaluation restored from an archive whose
        # lineage is current (evaluate_inputs): it is done without its fit files
        unpack(evaluate_inputs),
    output:
        f"{OUT}/evaluations/{{dataset}}/{{chunk}}.json",
    log:
        f"{OUT}/logs/evaluate/{{dataset}}/{{chunk}}.log",
    benchmark:
        f"{OUT}/benchmarks/evaluate/{{dataset}}/{{chunk}}.tsv"
    conda:
        "../envs/ufs.yaml"
    threads: 1
    resources:
        runtime=60,
        mem_mb=4000,
    params:
        meta=lambda w: evaluation_meta(w.dataset, w.chunk),
        hs=lambda w: list(PLAN.instances[w.dataset].hs),
        restarts=RESTARTS,
        nmi_average=NMI_AVERAGE,
        seed=SEED,
        code=EVAL_CODE,
        lineage=lambda w: chunk_lineage(w.dataset, w.chunk),
        what=lambda w: chunk_message(w.dataset, w.chunk),
    message:
        "evaluate (k-means, {params.restarts} restarts) {params.what}"
    script:
        "../scripts/evaluate_selection.py"
