rule download:
    # a registered dataset: bundled, simulated, from mirror_dir or downloaded
    output:
        f"{RES}/raw/{{dataset}}.npz",
    log:
        f"{OUT}/logs/download/{{dataset}}.log",
    benchmark:
        f"{OUT}/benchmarks/download/{{dataset}}.tsv"
    wildcard_constraints:
        dataset=one_of(REGISTERED_DATASETS),
    conda:
        "../envs/ufs.yaml"
    resources:
        runtime=30,
        mem_mb=2000,
    params:
        base=lambda w: PLAN.instances[w.dataset].base,
        seed=lambda w: PLAN.instances[w.dataset].seed,
        mirror=config.get("mirror_dir", ""),
        cache=DATA_CACHE,
        code=lambda w: LINEAGE.data_code(w.dataset),
    message:
        "download {wildcards.dataset} (registered data set {params.base})"
    script:
        "../scripts/download_dataset.py"


rule download_file:
    # a dataset given as a file in the config (datasets.<name>.file): re-read when its
    # spec (label_column, variables, sha256, header, sep, ...) or its content changes
    # (param `file`: the content is hashed, so a replaced file with an older mtime is seen
    # too); its mtime alone is no trigger (ancient), so a touched file re-runs nothing
    input:
        lambda w: ancient(PLAN.instances[w.dataset].file["file"]),
    output:
        f"{RES}/raw/{{dataset}}.npz",
    log:
        f"{OUT}/logs/download/{{dataset}}.log",
    benchmark:
        f"{OUT}/benchmarks/download/{{dataset}}.tsv"
    wildcard_constraints:
        dataset=one_of(FILE_DATASETS),
    conda:
        "../envs/ufs.yaml"
    resources:
        runtime=30,
        mem_mb=2000,
    params:
        base=lambda w: PLAN.instances[w.dataset].base,
        seed=lambda w: PLAN.instances[w.dataset].seed,
        mirror=config.get("mirror_dir", ""),
        cache=DATA_CACHE,
        file=lambda w: file_version(w.dataset),
        code=lambda w: LINEAGE.data_code(w.dataset),
    message:
        "read {wildcards.dataset} from {params.file[file]}"
    script:
        "../scripts/download_dataset.py"


rule standardize:
    input:
        f"{RES}/raw/{{dataset}}.npz",  # rule download or download_file
    output:
        data=f"{OUT}/data/{{dataset}}.npz",
        summary=f"{OUT}/data/{{dataset}}.json",
    log:
        f"{OUT}/logs/standardize/{{dataset}}.log",
    benchmark:
        f"{OUT}/benchmarks/standardize/{{dataset}}.tsv"
    conda:
        "../envs/ufs.yaml"
    resources:
        runtime=10,
        mem_mb=2000,
    params:
        # (config key, h values): a relative h grid resolved by the plan
        h=lambda w: [PLAN.instances[w.dataset].base, list(PLAN.instances[w.dataset].hs)],
        code=lambda w: LINEAGE.data_code(w.dataset),
    message:
        "validate and z-score {wildcards.dataset} (h = {params.h[1]})"
    script:
        "../scripts/standardize_dataset.py"


rule graph:
    input:
        data_file("{dataset}"),
    output:
        f"{OUT}/graphs/{{dataset}}/{{gid}}.npz",
    log:
        f"{OUT}/logs/graph/{{dataset}}/{{gid}}.log",
    benchmark:
        f"{OUT}/benchmarks/graph/{{dataset}}/{{gid}}.tsv"
    conda:
        "../envs/ufs.yaml"
    resources:
        runtime=30,
        mem_mb=4000,
    params:
        spec=lambda w: GRAPHS[w.gid],
        code=GRAPH_CODE,
    message:
        "kNN graph {wildcards.gid} of {wildcards.dataset}, shared by several fit jobs"
    script:
        "../scripts/build_graph.py"
