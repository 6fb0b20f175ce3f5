rule aggregate_dataset:
    input:
        lambda w: evaluations_of_base(w.base),
    output:
        csv=report(
            f"{OUT}/tables/{{base}}.csv",
            caption="../report/table_csv.rst",
            category="Tables",
            labels={"dataset": "{base}", "kind": "table (csv)"},
        ),
        md=f"{OUT}/tables/{{base}}.md",
        # the same tables as a page the report shows (ufs.report.html)
        html=report(
            f"{OUT}/tables/{{base}}.html",
            caption="../report/table.rst",
            category="Tables",
            labels={"dataset": "{base}", "kind": "tables"},
        ),
        # the same tables in LaTeX (booktabs; ufs.report.latex), written beside the markdown
        tex=f"{OUT}/tables/{{base}}.tex",
    log:
        f"{OUT}/logs/aggregate/{{base}}.log",
    benchmark:
        f"{OUT}/benchmarks/aggregate/{{base}}.tsv"
    # as soon as a data set's evaluations are done (the summary and the MLflow jobs wait
    # for the tables only)
    priority: 1
    conda:
        "../envs/ufs.yaml"
    resources:
        runtime=10,
        mem_mb=2000,
    params:
        oracle_metric=ORACLE_METRIC,
        code=AGGREGATE_CODE,
        # a sliced run: the config's other evaluations on disk, and what is left out
        earlier=lambda w: SLICE.earlier.get(w.base, []),
        note=lambda w: slice_note(SLICE, w.base),
    message:
        "tables (markdown, HTML, LaTeX, CSV) of {wildcards.base}"
    script:
        "../scripts/aggregate_dataset.py"


# The figures are a job of their own: the summary needs the tables only, so at the
# end of a run the last data set's figures are drawn beside the summary, not before it.
rule figures_dataset:
    input:
        lambda w: evaluations_of_base(w.base),
    output:
        acc=report(
            f"{OUT}/figures/{{base}}/acc_vs_h.png",
            caption="../report/scores_vs_h.rst",
            category="ACC and NMI against h",
            labels={"dataset": "{base}", "figure": "ACC"},
        ),
        nmi=report(
            f"{OUT}/figures/{{base}}/nmi_vs_h.png",
            caption="../report/scores_vs_h.rst",
            category="ACC and NMI against h",
            labels={"dataset": "{base}", "figure": "NMI"},
        ),
        convergence=report(
            f"{OUT}/figures/{{base}}/convergence.png",
            caption="../report/convergence.rst",
            category="Convergence",
            labels={"dataset": "{base}", "figure": "objective per iteration"},
        ),
        runtime=report(
            f"{OUT}/figures/{{base}}/runtime.png",
            caption="../report/runtime.rst",
            category="Run time",
            labels={"dataset": "{base}", "figure": "fit time"},
        ),
        # every figure's vector twin, for LaTeX (ufs.report.figures.save_figure)
        acc_pdf=f"{OUT}/figures/{{base}}/acc_vs_h.pdf",
        nmi_pdf=f"{OUT}/figures/{{base}}/nmi_vs_h.pdf",
        convergence_pdf=f"{OUT}/figures/{{base}}/convergence.pdf",
        runtime_pdf=f"{OUT}/figures/{{base}}/runtime.pdf",
    log:
        f"{OUT}/logs/figures/{{base}}.log",
    benchmark:
        f"{OUT}/benchmarks/figures/{{base}}.tsv"
    # as soon as a data set's evaluations are done, ahead of the fits (with the default 0,
    # Snakemake left them behind the fits: two data sets' figures at the end of the run)
    priority: 1
    conda:
        "../envs/ufs.yaml"
    resources:
        runtime=10,
        mem_mb=2000,
    params:
        oracle_metric=ORACLE_METRIC,
        code=AGGREGATE_CODE,
        earlier=lambda w: SLICE.earlier.get(w.base, []),
    message:
        "figures of {wildcards.base}"
    script:
        "../scripts/figures_dataset.py"


rule summary:
    input:
        tables=expand(f"{OUT}/tables/{{base}}.md", base=BASES),
        csv=expand(f"{OUT}/tables/{{base}}.csv", base=BASES),
        evaluations=[f for d in PLAN.instances for f in evaluations_of(d)],
        # the selection stability's table (workflow/rules/stability.smk), when it runs
        stability=[f"{OUT}/stability.csv"] if STABILITY_METHODS else [],
    output:
        md=f"{OUT}/summary.md",
        # every test against the references, scores and ranks per data set (linked)
        details=f"{OUT}/summary_details.md",
        # the summary as a page the report shows (ufs.report.html)
        html=report(f"{OUT}/summary.html", caption="../report/summary.rst", category="Summary"),
        timing=f"{OUT}/timing.json",
        # solver failures counted over every fit; read by the Snakefile's onsuccess handler
        status=f"{OUT}/fit_status.json",
        # critical-difference diagrams: average ranks across data sets (ufs.stats.ranking)
        cd_oracle_acc=report(
            f"{OUT}/figures/cd_oracle_acc.png",
            caption="../report/cd.rst",
            category="Across data sets",
            labels={"protocol": "label-tuned", "figure": "CD diagram, ACC"},
        ),
        cd_oracle_nmi=report(
            f"{OUT}/figures/cd_oracle_nmi.png",
            caption="../report/cd.rst",
            category="Across data sets",
            labels={"protocol": "label-tuned", "figure": "CD diagram, NMI"},
        ),
        cd_label_free_acc=report(
            f"{OUT}/figures/cd_label_free_acc.png",
            caption="../report/cd.rst",
            category="Across data sets",
            labels={"protocol": "label-free", "figure": "CD diagram, ACC"},
        ),
        cd_label_free_nmi=report(
            f"{OUT}/figures/cd_label_free_nmi.png",
            caption="../report/cd.rst",
            category="Across data sets",
            labels={"protocol": "label-free", "figure": "CD diagram, NMI"},
        ),
        cd_label_free_tuned_acc=report(
            f"{OUT}/figures/cd_label_free_tuned_acc.png",
            caption="../report/cd.rst",
            category="Across data sets",
            labels={"protocol": "label-free tuned", "figure": "CD diagram, ACC"},
        ),
        cd_label_free_tuned_nmi=report(
            f"{OUT}/figures/cd_label_free_tuned_nmi.png",
            caption="../report/cd.rst",
            category="Across data sets",
            labels={"protocol": "label-free tuned", "figure": "CD diagram, NMI"},
        ),
        # their vector twins, and the average-rank table in LaTeX (beside summary.md)
        cd_oracle_acc_pdf=f"{OUT}/figures/cd_oracle_acc.pdf",
        cd_oracle_nmi_pdf=f"{OUT}/figures/cd_oracle_nmi.pdf",
        cd_label_free_acc_pdf=f"{OUT}/figures/cd_label_free_acc.pdf",
        cd_label_free_nmi_pdf=f"{OUT}/figures/cd_label_free_nmi.pdf",
        cd_label_free_tuned_acc_pdf=f"{OUT}/figures/cd_label_free_tuned_acc.pdf",
        cd_label_free_tuned_nmi_pdf=f"{OUT}/figures/cd_label_free_tuned_nmi.pdf",
        ranks_tex=f"{OUT}/ranks.tex",
    log:
        f"{OUT}/logs/summary.log",
    # the longest job at the end of a run: before the last data set's figures
    priority: 2
    conda:
        "../envs/ufs.yaml"
    resources:
        runtime=10,
        mem_mb=2000,
    params:
        # the jobs' Snakemake benchmark files (the Time section): read, not inputs, so that
        # an evaluation restored from an archive needs no fit job (ufs benchmark-restore)
        benchmarks=all_benchmarks(),
        code=AGGREGATE_CODE,
        min_h_values=MIN_H_VALUES,
        oracle_metric=ORACLE_METRIC,
        earlier=[f for files in SLICE.earlier.values() for f in files],
        note=slice_note(SLICE),
        # the config's own families (``family:``): one per family in the rank comparisons
        families=ufs.datasets.families.config_families(config),
    message:
        "summary: ranks across data sets, paired tests, solver failures, every table"
    script:
        "../scripts/summarize.py"


# only with `published: <paper>` in the config
if PUBLISHED:

    rule compare_published:
        # Ours (label-tuned protocol, as in the papers) beside the paper's published cells.
        input:
            published=PUBLISHED_CSV,
            tables=expand(f"{OUT}/tables/{{base}}.csv", base=BASES),
        output:
            csv=f"{OUT}/comparison/{PUBLISHED}.csv",
            md=report(
                f"{OUT}/comparison/{PUBLISHED}.md",
                caption="../report/comparison.rst",
                category="Comparison with the paper",
            ),
            png=report(
                f"{OUT}/comparison/{PUBLISHED}.png",
                caption="../report/comparison.rst",
                category="Comparison with the paper",
            ),
            pdf=f"{OUT}/comparison/{PUBLISHED}.pdf",  # the figure's vector twin
        log:
            f"{OUT}/logs/compare_published.log",
        conda:
            "../envs/ufs.yaml"
        resources:
            runtime=10,
            mem_mb=2000,
        message:
            "compare with the published cells of {PUBLISHED}"
        script:
            "../scripts/compare_published.py"
