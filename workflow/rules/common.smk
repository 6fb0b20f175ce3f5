# Plan, paths and input functions shared by every rule. All logic lives in `ufs.pipeline` (plan, steps, lineage).
import os
import re
import sys

import ufs.availability
import ufs.datasets.availability
import ufs.datasets.families
import ufs.datasets.locations
import ufs.pipeline.io
import ufs.pipeline.run_cost
import ufs.plugins
import ufs.registry
import ufs.tracking
from snakemake.exceptions import WorkflowError
from ufs.pipeline.config import CHUNK_PATTERN, ConfigError, build_plan
from ufs.pipeline.lineage import PlanLineage, closure_code
from ufs.pipeline.slices import full_config, slice_note, slice_view
from ufs.pipeline.stability_step import stability_config, stability_jobs, stability_settings
from ufs.pipeline.user_data import check_user_files

# the mirror and the download cache are the machine's (ufs.datasets.locations): a mirror
# given by UFS_MIRROR is the config's mirror_dir for every rule, as if given with --config
DATA_MIRROR = ufs.datasets.locations.data_mirror(config)
config["mirror_dir"] = DATA_MIRROR or ""
DATA_CACHE = ufs.datasets.locations.data_cache(config)
try:
    # a method whose fit needs a module not installed here (an optional extra: torch for
    # the neural selectors) is left out of the run, said in one line below
    PLAN = build_plan(config, warn=False, skip_unavailable=True)
    # a user's own data file is read in full here, so that a bad value stops the run before
    # any job, as a config error does (ufs.pipeline.user_data; cached until the file changes)
    check_user_files(PLAN, os.path.join(config.get("resources_dir", "resources"), "checked"))
except ConfigError as exc:
    raise WorkflowError(str(exc)) from None

for _warning in PLAN.warnings:  # e.g. a plan larger than ufs.pipeline.config.LARGE_PLAN
    logger.warning(_warning)

# the config's methods that cannot be fitted here, the slice's and the others' (a sliced
# run's tables leave them out too): one line on stderr, shown with --quiet too
# (ufs.availability.unavailable_note)
_UNAVAILABLE_NOTE = ufs.availability.unavailable_note(config.get("methods") or {})
if _UNAVAILABLE_NOTE:
    print(_UNAVAILABLE_NOTE, file=sys.stderr)

if PLAN.skipped:
    logger.warning(
        f"offline_only: {len(PLAN.skipped)} data set(s) not available here are left out: "
        f"{', '.join(PLAN.skipped)} (ufs data list says where each would come from)"
    )
OUT = config.get("output_dir", "results")
RES = config.get("resources_dir", "resources")
# the registered data sets not on disk that cannot be read here: one that no source
# provides (manual, not placed) stops the run before any job; the others are downloaded
_MISSING = ufs.datasets.availability.missing_states(
    {d: i.base for d, i in PLAN.instances.items() if i.file is None},
    mirror=DATA_MIRROR,
    cache=DATA_CACHE,
    done=[d for d in PLAN.instances if os.path.exists(f"{RES}/raw/{d}.npz")],
)
_UNREACHABLE = ufs.datasets.availability.unreachable_message(_MISSING)
if _UNREACHABLE:
    raise WorkflowError(_UNREACHABLE)
# methods given by import path (`class:`): every job registers them from the environment
# (ufs.plugins.load_environment; local jobs and SLURM jobs inherit it)
os.environ[ufs.plugins.CONFIG_METHODS_ENV] = ufs.plugins.config_methods_env(
    config.get("methods") or {}
)
# A sliced run (only_methods, only_datasets) builds its tables from every evaluation of the
# whole config on disk and says what they leave out (ufs.pipeline.slices).
_FULL = full_config(config)
_FULL_PLAN = build_plan(_FULL, warn=False, skip_unavailable=True) if _FULL else None
SLICE = slice_view(config, PLAN, _FULL_PLAN, OUT)
# a run that would write its summary over another config's report says so first
_REPLACED = ufs.pipeline.run_cost.replaced_report(
    OUT, {i.base for i in (_FULL_PLAN or PLAN).instances.values()}
)
if _REPLACED:
    logger.warning(_REPLACED)

# Intermediate files cut short after they were written keep their mtime: Snakemake would
# never rebuild them, and a later step would read them.
_damaged = ufs.pipeline.io.damaged_files(OUT, RES)
if _damaged:
    _shown = "\n  ".join(_damaged[:20]) + ("\n  ..." if len(_damaged) > 20 else "")
    raise WorkflowError(
        f"{len(_damaged)} intermediate file(s) are damaged:\n  {_shown}\n"
        "Delete them and re-run the workflow, which rebuilds exactly these files."
    )
EVAL = config.get("evaluation", {}) or {}
RESTARTS = int(EVAL.get("restarts", 20))
NMI_AVERAGE = EVAL.get("nmi_average", "arithmetic")
ORACLE_METRIC = EVAL.get("oracle_metric", "acc")
SEED = int(config.get("seed", 0))
MLFLOW = config.get("mlflow", {}) or {}
MLFLOW_ENABLED = bool(MLFLOW.get("enabled", True))
BASES = sorted({inst.base for inst in PLAN.instances.values()})
PUBLISHED = config.get("published", "")
PUBLISHED_CSV = f"{workflow.basedir}/config/published/{PUBLISHED}.csv" if PUBLISHED else ""
# an input path: relative to the working directory when inside it, so that a moved project
# re-runs nothing
if PUBLISHED_CSV and not os.path.relpath(PUBLISHED_CSV).startswith(".."):
    PUBLISHED_CSV = os.path.relpath(PUBLISHED_CSV)
if PUBLISHED and not os.path.exists(PUBLISHED_CSV):
    raise WorkflowError(f"config published: no published table {PUBLISHED_CSV}")
GRAPHS = {s.graph_id: s.graph for _, s in PLAN.jobs() if s.graph_id}

# Re-run triggers: Snakemake does not track imported modules, so the code version of
# the method (its module plus the shared core) and of the evaluation is a rule param.
# Each is the transitive closure of the step's modules (a change in an imported module,
# e.g. the fit-status rule, re-runs the step), the methods' own modules left out; a code
# version hashes the modules' normalized syntax trees (docstrings, comments and formatting
# left out: ufs.pipeline.lineage, scheme 2).
LINEAGE = PlanLineage(PLAN, config, OUT)
# one line before the run starts: fit jobs left (a restored evaluation whose lineage is no
# longer the plan's among them) and kept, CPU-h by the cost model, and the data sets to
# download with their size (ufs.pipeline.run_cost)
logger.info(
    ufs.pipeline.run_cost.cost_line(
        ufs.pipeline.run_cost.run_cost(
            PLAN, config, OUT, fetch={s.name for s in _MISSING.values()}, lineage=LINEAGE
        )
    )
)
CODE = LINEAGE.code
EVAL_CODE = CODE.evaluate
# reading and standardizing the data: one key per data set,
# LINEAGE.data_code(dataset) (ufs.pipeline.lineage.dataset_code): a new data set re-runs no other
# the tables, figures and the summary (ranks, paired tests: aggregate.py imports them)
AGGREGATE_CODE = CODE.aggregate
# the summary's choices: data sets with fewer values of h are flagged and not ranked
MIN_H_VALUES = int(EVAL.get("min_h_values", 3))
# the MLflow jobs (a change of what is logged, or how, re-runs them: they are idempotent)
TRACK_CODE = CODE.track
# the kNN graph: ufs.graph.knn_graph on the method's input matrix (ufs.preprocessing)
GRAPH_CODE = CODE.graph

# Datasets given as a file in the config (`datasets.<name>.file`) and registered ones: one
# download rule each, so that the file datasets' re-run trigger (their spec and content
# hash, a rule param) leaves the params of existing registered downloads unchanged.
FILE_DATASETS = [d for d, inst in PLAN.instances.items() if inst.file]
REGISTERED_DATASETS = [d for d, inst in PLAN.instances.items() if not inst.file]


def one_of(names):
    """A wildcard regex matching exactly ``names`` (nothing when empty)."""
    return "|".join(re.escape(n) for n in names) or "(?!)"


def file_version(dataset):
    """The whole file spec of a file dataset and the sha256 of the file's content: a
    change of either re-runs its download, whatever the file's mtime."""
    return LINEAGE.file_version(dataset)


wildcard_constraints:
    dataset="|".join(re.escape(d) for d in PLAN.instances),
    base=r"[A-Za-z0-9_.]+",
    chunk=CHUNK_PATTERN,  # <method>.c000 ...: ufs.pipeline.config.Plan.chunks
    gid=r"[0-9a-f]{10}",


def data_file(dataset):
    return f"{OUT}/data/{dataset}.npz"


def chunk_tasks(dataset, chunk):
    """The fit tasks of one job, with everything the job needs to run them."""
    return LINEAGE.chunk_tasks(dataset, chunk)


def shared_graphs(dataset):
    """The graphs several fit jobs of ``dataset`` use: built once by the graph step and
    cached. A graph one fit job uses is built inside that job (no job of its own)."""
    return LINEAGE.shared_graphs(dataset)


def _chunk_gids(w):
    return LINEAGE.chunk_gids(w.dataset, w.chunk)


def chunk_graphs(w):
    """The cached graph files of the chunk's shared graphs (inputs of its fit job)."""
    shared = set(shared_graphs(w.dataset))
    return {gid: f"{OUT}/graphs/{w.dataset}/{gid}.npz" for gid in _chunk_gids(w) if gid in shared}


def chunk_graph_specs(w):
    """The specs of the graphs only this chunk uses: its fit job builds them."""
    return LINEAGE.chunk_graph_specs(w.dataset, w.chunk)


def chunk_code(w):
    """Code versions of the chunk's methods: a solver change re-runs its chunks."""
    return LINEAGE.chunk_code(w.dataset, w.chunk)


def fit_budget_key(w):
    """The fit job's budget parameter: the re-run key of ``jobs.fit_budget_seconds``
    (:func:`ufs.pipeline.budget.budget_key`, from the job's recorded facts if there are any)."""
    return LINEAGE.budget_key(w.dataset, w.chunk)


def fit_runtime_minutes(wildcards):
    """A fit job's time limit (resource ``runtime``, minutes; what the SLURM profile asks
    for): every fit of the chunk at the per-fit CPU budget, plus 10 % and 10 minutes for
    start-up and graphs, and at least the 120 minutes a job had before the budget."""
    return LINEAGE.fit_runtime_minutes(wildcards.dataset, wildcards.chunk)


def chunk_lineage(dataset, chunk):
    """Everything an evaluation's content depends on, hashed
    (:meth:`ufs.pipeline.lineage.PlanLineage.chunk_lineage`). The evaluate job records it; an
    evaluation whose fit files are absent (restored from an archive) is done when its
    recorded lineage is this one (:func:`evaluate_inputs`)."""
    return LINEAGE.chunk_lineage(dataset, chunk)


def evaluate_inputs(w):
    """The evaluate job's inputs: the data and the fit job's outputs, or none for an
    evaluation restored without its fit files whose recorded lineage is the plan's (same
    data, tasks, code, budget and settings; ``PlanLineage.restored_lineages``), so that
    Snakemake neither re-fits nor re-evaluates it; a stale one gets a marker
    (:func:`restored_inputs`)."""
    return restored_inputs(
        f"{w.dataset}/{w.chunk}",
        LINEAGE.restored_lineages(w.dataset, w.chunk),
        lambda: chunk_lineage(w.dataset, w.chunk),
        {
            "data": data_file(w.dataset),
            "result": f"{OUT}/fits/{w.dataset}/{w.chunk}.npz",
            "info": f"{OUT}/fits/{w.dataset}/{w.chunk}.json",
        },
    )


def restored_inputs(key, lineages, current, inputs):
    """A job's inputs given the (recorded, plan) ``lineages`` of its restored output
    (``None``: not restored): none when they agree, so that the restored output is done;
    else ``inputs`` plus, for a restored output whose lineage is no longer the plan's (a
    method, data set, budget or setting changed since the archive), a marker
    ``{OUT}/stale/<key>/<lineage>.txt`` written here when the plan is made: newer than the
    output, it re-runs the job. Without it a restored output stays "up to date" after a
    code change: missing but producible inputs do not make Snakemake re-run an existing
    output, and a restored file has no metadata for the ``params`` trigger. ``current``:
    the plan's lineage (called only where a marker folder exists)."""
    if lineages is not None and lineages[0] == lineages[1]:
        return {}
    if lineages is not None:  # restored, and stale
        stale = lineages[1]
        marker = f"{OUT}/stale/{key}/{stale}.txt"
        if not os.path.exists(marker):
            os.makedirs(os.path.dirname(marker), exist_ok=True)
            with open(marker, "w") as out:
                out.write(
                    f"{key}: the restored output's lineage is not the plan's ({stale}); "
                    "made again\n"
                )
        inputs["stale"] = marker
    elif os.path.isdir(f"{OUT}/stale/{key}"):
        # the marker of the current lineage stays an input once used, so that the set of
        # inputs recorded by the re-run is the plan's next time too
        marker = f"{OUT}/stale/{key}/{current()}.txt"
        if os.path.exists(marker):
            inputs["stale"] = marker
    return inputs


def chunk_message(dataset, chunk):
    """What a fit or evaluation job does, for its ``message:``: the methods,
    the data set, the settings and h."""
    tasks = PLAN.chunks(dataset)[chunk]
    methods = ", ".join(sorted({t.method for t in tasks}))
    settings = len({(t.method, t.pid) for t in tasks})
    hs = sorted({h for t in tasks for h in t.hs if h is not None})
    if hs:
        at = "h = " + ", ".join(map(str, hs))
    else:  # ranking and full methods fit once; the evaluation slices the ranking per h
        at = "one fit each, scored at h = " + ", ".join(map(str, PLAN.instances[dataset].hs))
    return f"{methods} on {dataset} ({chunk}): {settings} setting(s), {at}"


def evaluation_meta(dataset, chunk):
    """The protocol membership of the chunk's settings (only theirs: all of the plan's
    would make every job's params grow with the plan, and re-run every evaluation when a
    method is added to the config)."""
    return LINEAGE.evaluation_meta(dataset, chunk)


def evaluations_of(dataset):
    return [f"{OUT}/evaluations/{dataset}/{c}.json" for c in PLAN.chunks(dataset)]


def evaluations_of_base(base):
    return [f for d, i in PLAN.instances.items() if i.base == base for f in evaluations_of(d)]


# Selection stability (workflow/rules/stability.smk, ufs.pipeline.stability_step): one job
# per (data set, method), at the h of STABILITY_JOBS
STABILITY = stability_config(config)
STABILITY_METHODS = stability_settings(PLAN) if STABILITY["enabled"] else {}
STABILITY_JOBS = {(d, m): h for d, m, h in stability_jobs(PLAN, config)}
STABILITY_CODE = CODE.stability
STABILITY_TRACK_CODE = closure_code("tracking/stability.py")


def stability_files():
    return [f"{OUT}/stability/{d}/{m}.json" for d, m in STABILITY_JOBS]


def stability_lineage(dataset, method):
    """Everything a stability record depends on, hashed
    (:meth:`ufs.pipeline.lineage.PlanLineage.stability_lineage`); the job records it."""
    return LINEAGE.stability_lineage(
        dataset, STABILITY_METHODS[method], STABILITY_JOBS[(dataset, method)], STABILITY
    )


def stability_inputs(w):
    """The stability job's input: the data, or none for a record restored without its log
    (``ufs benchmark-restore`` on a fresh machine) whose recorded lineage is the plan's: it
    is done. A restored record whose lineage changed is made again
    (:func:`restored_inputs`)."""
    return restored_inputs(
        f"stability/{w.dataset}/{w.method}",
        LINEAGE.restored_stability_lineages(
            w.dataset,
            STABILITY_METHODS[w.method],
            STABILITY_JOBS[(w.dataset, w.method)],
            STABILITY,
        ),
        lambda: stability_lineage(w.dataset, w.method),
        {"data": data_file(w.dataset)},
    )


def all_targets():
    """Every user-facing output (called from the all target once every rule exists) - the
    per-chunk evaluations, every output of the aggregate rules (tables .md and .csv,
    figures, summary, timing, comparison) and the MLflow markers. A deleted one is rebuilt
    by a plain re-run, and `snakemake --report` finds every file it shows. None when
    every method of the run is left out (not installed here: ``PLAN.unavailable``)."""
    if not PLAN.settings:
        return []
    targets = [f for d in PLAN.instances for f in evaluations_of(d)]
    # the data records (constant features dropped, ...): documented outputs
    targets += [f"{OUT}/data/{d}.json" for d in PLAN.instances]
    targets += expand(list(rules.aggregate_dataset.output), base=BASES)
    targets += expand(list(rules.figures_dataset.output), base=BASES)
    targets += list(rules.summary.output)
    if MLFLOW_ENABLED:
        targets += list(rules.mlflow_init.output)
        targets += expand(list(rules.track.output), dataset=list(PLAN.instances))
    if PUBLISHED:
        targets += list(rules.compare_published.output)
    if STABILITY_METHODS:  # workflow/rules/stability.smk
        targets += stability_files() + list(rules.stability_table.output)
        if MLFLOW_ENABLED:
            datasets = sorted({d for d, _ in STABILITY_JOBS})
            targets += expand(list(rules.track_stability.output), dataset=datasets)
    return [str(f) for f in targets]


def all_benchmarks():
    files = []
    for d in PLAN.instances:
        files += [f"{OUT}/benchmarks/{step}/{d}.tsv" for step in ("download", "standardize")]
        for c in PLAN.chunks(d):
            files += [f"{OUT}/benchmarks/{step}/{d}/{c}.tsv" for step in ("fit", "evaluate")]
        files += [f"{OUT}/benchmarks/graph/{d}/{g}.tsv" for g in shared_graphs(d)]
    # the aggregation jobs too; not the MLflow jobs: the tables and the summary must not
    # wait for (or fail with) a tracking server (benchmarks/pipeline_overhead.py counts them)
    # (the tables' jobs: the figures' may still be running when the summary reads these)
    files += [f"{OUT}/benchmarks/aggregate/{b}.tsv" for b in BASES]
    return files


# The rules' parameter holds the URI as configured (the default store relative to the
# working directory): moving the project changes no parameter; jobs resolve it.
MLFLOW_URI_PARAM = MLFLOW.get("tracking_uri") or f"sqlite:///{OUT}/mlflow.db"
MLFLOW_URI = ufs.tracking.resolve_uri(MLFLOW_URI_PARAM)
MLFLOW_EXPERIMENT = MLFLOW.get("experiment", "ufs-bench")
