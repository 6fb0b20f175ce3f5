rule fit:
    # One job fits a chunk of tasks (jobs.tasks_per_job): ranking methods once per
    # setting (sliced per h at evaluation), subset methods once per h.
    input:
        unpack(lambda w: {f"graph_{g}": f for g, f in chunk_graphs(w).items()}),
        data=data_file("{dataset}"),
    output:
        result=f"{OUT}/fits/{{dataset}}/{{chunk}}.npz",
        info=f"{OUT}/fits/{{dataset}}/{{chunk}}.json",
    log:
        f"{OUT}/logs/fit/{{dataset}}/{{chunk}}.log",
    benchmark:
        f"{OUT}/benchmarks/fit/{{dataset}}/{{chunk}}.tsv"
    conda:
        "../envs/ufs.yaml"
    threads: 1
    resources:
        # minutes: every fit of the chunk at the per-fit budget, +10 % and 10 min (SLURM)
        runtime=fit_runtime_minutes,
        mem_mb=4000,
    params:
        tasks=lambda w: chunk_tasks(w.dataset, w.chunk),
        graphs=chunk_graphs,
        graph_specs=chunk_graph_specs,
        seed=lambda w: PLAN.instances[w.dataset].seed,
        code=chunk_code,
        # the re-run key of jobs.fit_budget_seconds (CPU seconds per fit; over it the fit is
        # budget_exceeded): a budget change re-runs only the chunks whose fits it changes
        budget=fit_budget_key,
        what=lambda w: chunk_message(w.dataset, w.chunk),
    message:
        "fit {params.what}"
    script:
        "../scripts/fit_selector.py"
