# Selection stability (ufs.pipeline.stability_step): each method's label-free setting fitted
# on `stability.m` seeded subsamples of each data set at one declared h, and the
# stability of its selections (Nogueira et al. 2018) with its interval; then one table and
# a figure of stability against ACC. Config `stability: {enabled: false}` turns it off.
# Its globals and file list: workflow/rules/common.smk.


rule stability:
    input:
        # the data, or nothing for a restored record whose lineage is current
        # (stability_inputs): it is done
        unpack(stability_inputs),
    output:
        f"{OUT}/stability/{{dataset}}/{{method}}.json",
    log:
        f"{OUT}/logs/stability/{{dataset}}/{{method}}.log",
    benchmark:
        f"{OUT}/benchmarks/stability/{{dataset}}/{{method}}.tsv"
    conda:
        "../envs/ufs.yaml"
    threads: 1
    resources:
        runtime=lambda w: max(
            60,
            10
            + int(
                1.1
                * STABILITY["m"]
                * (config.get("jobs") or {}).get("fit_budget_seconds", 600)
                / 60
            ),
        ),
        mem_mb=4000,
    params:
        setting=lambda w: STABILITY_METHODS[w.method].pid,
        params=lambda w: STABILITY_METHODS[w.method].params,
        h=lambda w: STABILITY_JOBS[(w.dataset, w.method)],
        m=STABILITY["m"],
        fraction=STABILITY["fraction"],
        level=STABILITY["level"],
        seed=lambda w: PLAN.instances[w.dataset].seed,
        # the re-run key of the budget (the job runs with the config's budget)
        budget=lambda w: LINEAGE.stability_budget_key(w.dataset, w.method),
        code=lambda w: f"{CODE.method(w.method)}:{LINEAGE.data_code(w.dataset)}:{STABILITY_CODE}",
        lineage=lambda w: stability_lineage(w.dataset, w.method),
    message:
        "stability of {wildcards.method} on {wildcards.dataset} ({params.m} subsamples)"
    script:
        "../scripts/stability_selector.py"


rule stability_table:
    input:
        stability=lambda w: stability_files(),
        tables=expand(f"{OUT}/tables/{{base}}.csv", base=BASES),
    output:
        csv=f"{OUT}/stability.csv",
        md=f"{OUT}/stability.md",
        png=f"{OUT}/figures/stability_vs_acc.png",
        pdf=f"{OUT}/figures/stability_vs_acc.pdf",
    log:
        f"{OUT}/logs/stability_table.log",
    conda:
        "../envs/ufs.yaml"
    resources:
        runtime=10,
        mem_mb=2000,
    params:
        code=AGGREGATE_CODE,
    message:
        "stability: the table and its figure against ACC"
    script:
        "../scripts/stability_table.py"
