"""The pipeline steps, each a function from input files to atomically written outputs.

``download → standardize → [graph] → fit → evaluate``; the Snakemake scripts are thin
adapters over these functions. The data steps live in :mod:`ufs.pipeline.data_steps` (their
jobs do not import scikit-learn) and are re-exported here.
"""

from __future__ import annotations

import sys
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp

from ..base import ConstantFeaturesWarning
from ..evaluation import METRICS, evaluate_clustering
from ..fileio import atomic_path, load_checked, read_npz, write_json, write_npz
from ..graph import knn_graph
from ..preprocessing import input_matrix
from ..registry import get_method, make_estimator, source_hash
from .budget import BUDGET_ERRORS, FitBudgetExceeded, budget_reason, fit_budget
from .checkpoint import FitCheckpoint
from .data_steps import download, load_data, standardize  # noqa: F401  (re-exported)
from .io import read_record
from .provenance import git_commit
from .status import FIT_STATUSES, fit_label, fit_status
from .warm_up import warm_up

__all__ = [
    "download",
    "standardize",
    "build_graph",
    "graph_of",
    "fit",
    "evaluate",
    "load_data",
    "fit_status",
    "fixed_iteration_budget",
    "FIT_STATUSES",
]


def build_graph(data: str | Path, graph_spec: dict[str, Any], out: str | Path) -> None:
    """Cache a sample kNN graph (sparse npz) of the matrix the methods receive:
    ``graph_spec["input_space"]`` (default ``"standardized"``) names it, as mapped by
    :func:`ufs.preprocessing.input_matrix`; the rest are :func:`ufs.graph.knn_graph`
    arguments."""
    S = graph_of(load_data(data), graph_spec)
    with atomic_path(out, suffix=".npz") as tmp:
        sp.save_npz(tmp, S)


def _load_graph(path: str | Path) -> sp.csr_matrix:
    """A cached graph file; a damaged one is named with the remedy."""
    return load_checked(path, sp.load_npz).tocsr()


def graph_of(d: dict[str, Any], graph_spec: dict[str, Any]) -> sp.csr_matrix:
    """The kNN graph of a graph spec on loaded data ``d`` (:func:`load_data`): the one
    definition used by the graph step and by a fit job that builds its graph itself."""
    spec = dict(graph_spec)
    space = spec.pop("input_space", "standardized")
    return knn_graph(input_matrix(space, d["X_raw"], d["X"]), **spec)


def _scalar_attributes(est) -> dict[str, Any]:
    """Every fitted scalar attribute (``n_iter_``, ``converged_``, objectives, gaps …)."""
    out = {}
    for k, v in vars(est).items():
        if k.endswith("_") and not k.startswith("_"):
            if isinstance(v, bool | np.bool_):
                out[k.rstrip("_")] = bool(v)
            elif isinstance(v, int | float | np.integer | np.floating):
                out[k.rstrip("_")] = float(v) if isinstance(v, float | np.floating) else int(v)
    return out


class Progress:
    """Counts a job's fits for its log lines: ``<local time> fit <i> of <N>``."""

    def __init__(self, total: int) -> None:
        self.total, self.done = total, 0

    def next(self) -> str:
        self.done += 1
        return f"{stamp()} fit {self.done} of {self.total}"


def stamp() -> str:
    """Local wall-clock time for progress lines (with the UTC offset)."""
    return time.strftime("%Y-%m-%d %H:%M:%S%z")


def _log_fit(
    method: str,
    pid: str,
    params: dict[str, Any],
    h,
    seconds: float,
    est,
    fact,
    progress: Progress | None = None,
):
    """One progress line per fit on stderr (the job's log, see ``workflow/scripts/_job.py``):
    the time and "fit i of N" (``progress``), method, setting, h, seconds, iterations and the
    status of :func:`fit_status`, from the fit's recorded facts ``fact`` (``fit_info``,
    ``warnings``) and the fitted ``est`` (``None`` for a fit skipped for the budget); a
    budget exceeded adds its reason."""
    info = fact["fit_info"]
    status = fit_status(
        info,
        getattr(est, "objective_", None),
        fact["warnings"],
        fixed_budget=est is not None and _runs_fixed_budget(est),
    )
    iters = f" n_iter={info['n_iter']}" if "n_iter" in info else ""
    if "resolved_rank" in info:  # a ranking by row weights: h above it is degenerate (◊)
        iters += f" resolved_rank={info['resolved_rank']}"
    why = f" ({fact['budget_reason']})" if fact.get("budget_exceeded") else ""
    where = progress.next() if progress is not None else f"{stamp()} fit"
    print(
        f"{where}: {method} setting={pid} {params} h={'all' if h is None else h}: "
        f"{seconds:.3f} s{iters} status={status}{why}",
        file=sys.stderr,
        flush=True,
    )


def _budget_fact(h, seconds: float, reason: str, warnings_=(), cpu: float = 0.0) -> dict[str, Any]:
    """The recorded facts of a fit stopped (or skipped) for the compute budget."""
    return {
        "h": h,
        "fit_seconds": seconds,
        "fit_cpu_seconds": cpu,
        "fit_info": {"budget_exceeded": True},
        "warnings": sorted(warnings_),
        "budget_exceeded": True,
        "budget_reason": reason,
    }


SKIPPED_REASON = "skipped: an earlier h of this setting exceeded the budget"


def _fit_task(
    d: dict[str, Any],
    graph,
    method: str,
    params: dict[str, Any],
    hs,
    seed: int,
    pid: str = "",
    budget: float | None = None,
    progress: Progress | None = None,
    checkpoint: FitCheckpoint | None = None,
    task_id: dict[str, Any] | None = None,
):
    """Fit one method for each ``h`` in ``hs``; return (arrays by label, facts by label).

    Ranking and full methods are fitted once (``hs == [None]``, label ``rank``/``all``);
    subset methods once per ``h`` (label ``h<h>``). Each fit logs one line (:func:`_log_fit`).

    Each fit runs under the CPU-time ``budget`` (:func:`ufs.pipeline.budget.fit_budget`). A fit
    over it, or refused for memory (``MemoryError``), stores no arrays; its facts say
    ``budget_exceeded`` with a ``budget_reason``. Once an ``h`` exceeded the *time* budget
    the remaining ``h`` of the task are recorded as exceeded without fitting.

    ``checkpoint`` (:class:`~ufs.pipeline.checkpoint.FitCheckpoint`): each finished fit is
    kept there under ``task_id`` and its label, and a fit stored by an interrupted run of
    the job is taken from it instead of fitted again.
    """
    k = int(d["y"].max()) + 1
    kind = get_method(method).kind
    arrays: dict[str, np.ndarray] = {}
    fits: dict[str, Any] = {}
    skip = ""
    for h in hs:
        label = fit_label(kind, h)
        if skip:
            fits[label] = _budget_fact(h, 0.0, skip)
            _log_fit(method, pid, params, h, 0.0, None, fits[label], progress)
            continue
        stored = checkpoint.get(task_id, label) if checkpoint is not None else None
        if stored is not None:
            saved, rec = stored
            arrays.update(saved)
            fits[label], skip = rec["fact"], rec["skip"]
            where = progress.next() if progress is not None else f"{stamp()} fit"
            print(
                f"{where}: {method} setting={pid} {params} h={'all' if h is None else h}: "
                f"taken from the checkpoint of an interrupted run "
                f"({fits[label]['fit_seconds']:.3f} s when fitted)",
                file=sys.stderr,
                flush=True,
            )
            continue
        est = make_estimator(
            method, params, n_features_to_select=h or 1, n_clusters=k, random_state=seed
        )
        X = input_matrix(est.input_space, d["X_raw"], d["X"])
        t0, c0 = time.perf_counter(), time.process_time()
        exceeded: BaseException | None = None
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            warnings.simplefilter("ignore", ConstantFeaturesWarning)  # reported by `standardize`
            try:
                with fit_budget(budget):
                    est.fit(X, graph=graph) if graph is not None else est.fit(X)
            except BUDGET_ERRORS as exc:
                exceeded = exc
        seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
        messages = {f"{w.category.__name__}: {w.message}" for w in caught}
        if exceeded is not None:
            fits[label] = _budget_fact(h, seconds, budget_reason(exceeded), messages, cpu)
            _log_fit(method, pid, params, h, seconds, est, fits[label], progress)
            if isinstance(exceeded, FitBudgetExceeded):
                skip = f"{SKIPPED_REASON} (h={h}: {fits[label]['budget_reason']})"
            if checkpoint is not None:
                checkpoint.put(task_id, label, {}, {"fact": fits[label], "skip": skip}, cpu)
            continue
        before = set(arrays)
        arrays[f"{label}|selected"] = np.asarray(est.selected_features_, dtype=np.int64)
        if hasattr(est, "feature_order_"):
            arrays[f"{label}|feature_order"] = np.asarray(est.feature_order_, dtype=np.int64)
        for attr in ("scores_", "objective_"):
            if hasattr(est, attr):
                arrays[f"{label}|{attr[:-1]}"] = np.asarray(getattr(est, attr), dtype=float)
        fits[label] = {
            "h": h,
            "fit_seconds": seconds,
            "fit_cpu_seconds": cpu,  # process CPU time: what a loaded machine does not inflate
            "fit_info": _scalar_attributes(est),
            "warnings": sorted(messages),
        }
        _log_fit(method, pid, params, h, seconds, est, fits[label], progress)
        if checkpoint is not None:
            new = {name: arrays[name] for name in set(arrays) - before}
            checkpoint.put(task_id, label, new, {"fact": fits[label], "skip": skip}, cpu)
    return arrays, fits


def fit(
    data: str | Path,
    tasks: list[dict[str, Any]],
    out: str | Path,
    info: str | Path,
    *,
    graphs: dict[str, str] | None = None,
    graph_specs: dict[str, dict[str, Any]] | None = None,
    seed: int = 0,
    budget_seconds: float | None = None,
    budget_key: float | None = None,
    resume_dir: str | Path | None = None,
) -> None:
    """Fit a chunk of tasks on one dataset and store every result in one npz + json.

    Each task is ``{"method", "pid", "params", "hkey", "hs", "graph_id"}``; arrays are
    stored under ``<method>|<pid>|<label>|<name>`` (``selected``, ``feature_order``,
    ``scores``, ``objective``); per-fit facts in ``info["tasks"]``. Each single fit runs
    under ``budget_seconds`` of CPU time (``None``/0: none; config
    ``jobs.fit_budget_seconds``); a fit over it, or refused for memory, is recorded as
    ``budget_exceeded`` (no arrays) and the rest of the chunk goes on (:func:`_fit_task`).

    Graphs: ``graphs`` maps a graph id to a cached graph file (a graph several jobs use,
    built once by the graph step); ``graph_specs`` maps a graph id to its spec for a graph
    only this job uses, built here (:func:`graph_of`) on first use, which saves a job; its
    construction time is recorded in ``info["graph_seconds"]``. ``budget_key``: the
    workflow's re-run key for the budget (:func:`ufs.pipeline.budget.budget_key`), recorded
    per task (``budget_seconds`` when not given).

    ``resume_dir``: a checkpoint folder (:mod:`ufs.pipeline.checkpoint`) where the
    finished fits are stored (in batches of at least 2 CPU-s), so that a killed job re-run
    takes the fits it had stored; removed once the outputs are written.
    """
    d = load_data(data)
    graphs, graph_specs = graphs or {}, graph_specs or {}
    loaded: dict[str, Any] = {}
    graph_seconds: dict[str, float] = {}
    arrays: dict[str, np.ndarray] = {}
    records = []
    progress = Progress(sum(len(t["hs"]) for t in tasks))
    methods = sorted({t["method"] for t in tasks})
    checkpoint = (
        FitCheckpoint(
            resume_dir,
            files={"data": data, **{f"graph {g}": p for g, p in graphs.items()}},
            inputs={"seed": seed, "budget_seconds": budget_seconds},
        )
        if resume_dir is not None
        else None
    )
    print(
        f"{stamp()} {len(tasks)} task(s), {progress.total} fit(s) of {', '.join(methods)} on "
        f"{Path(data).stem}",
        file=sys.stderr,
        flush=True,
    )
    warm_up()  # the process's first-call costs, not the first fit's (ufs.pipeline.warm_up)
    for t in tasks:
        gid = t.get("graph_id")
        built = 0.0  # graph construction charged to this task (its first user)
        if gid and gid not in loaded:
            if gid in graphs:
                loaded[gid] = _load_graph(graphs[gid])
            else:  # a graph of this job only
                c0 = time.process_time()
                loaded[gid] = graph_of(d, graph_specs[gid])
                built = graph_seconds[gid] = time.process_time() - c0  # CPU seconds
        code = source_hash(t["method"])
        try:
            arr, fits = _fit_task(
                d,
                loaded.get(gid) if gid else None,
                t["method"],
                t["params"],
                t["hs"],
                seed,
                pid=t["pid"],
                budget=budget_seconds,
                progress=progress,
                checkpoint=checkpoint,
                task_id={**t, "code_version": code},
            )
        except Exception as exc:  # name the failing task; nothing of this chunk is written
            raise RuntimeError(
                f"fitting {t['method']} with {t['params']} (setting {t['pid']}, h {t['hs']}) "
                f"on dataset {Path(data).stem!r} ({data}) failed: {type(exc).__name__}: {exc}"
            ) from exc
        prefix = f"{t['method']}|{t['pid']}|"
        arrays.update({prefix + k: v for k, v in arr.items()})
        records.append(
            {
                **t,
                "kind": get_method(t["method"]).kind,
                "seed": seed,
                "fits": fits,
                "code_version": code,
                "git_commit": git_commit(),
                "budget_seconds": budget_seconds,
                "budget_key": budget_seconds if budget_key is None else budget_key,
                "graph_seconds": built,
            }
        )
    write_npz(out, **arrays)
    write_json(info, {"tasks": records, "graph_seconds": graph_seconds})
    if checkpoint is not None:
        if checkpoint.restored:
            print(
                f"{stamp()} {checkpoint.restored} of {progress.total} fit(s) taken from the "
                f"checkpoint of an interrupted run ({checkpoint.folder}), now removed",
                file=sys.stderr,
                flush=True,
            )
        checkpoint.clear()


def fixed_iteration_budget(method: str, params: dict[str, Any]) -> bool:
    """Whether ``method`` with ``params`` runs a fixed iteration budget by design.

    The estimator says so through its own parameters: every iterative method of this
    package documents ``tol = 0`` as "run exactly ``max_iter`` iterations, no convergence
    test" (NDFS, RNE and FSASL by default, the authors' rule; LRPFS and NSSLFS when asked).
    Such a fit ends with ``converged_ = False`` by construction, which is not a failure.
    """
    try:
        est = make_estimator(method, params)
    except Exception:  # an unknown method or parameter: no claim of a fixed budget
        return False
    return _runs_fixed_budget(est)


def _runs_fixed_budget(est) -> bool:
    """:func:`fixed_iteration_budget` of an estimator at hand (its own ``tol``)."""
    tol = est.get_params().get("tol")
    return (
        isinstance(tol, int | float | np.integer | np.floating)
        and not isinstance(tol, bool)
        and float(tol) == 0.0
    )


def _budget_row(X, truth, h, fit) -> dict[str, Any]:
    """The evaluation row of a fit over the compute budget: no selection, NaN metrics
    (``per_restart`` lists empty: no k-means run), status ``budget_exceeded``."""
    row = {
        "h": int(X.shape[1]) if h is None else h,
        "h_label": "all" if h is None else str(h),
        **{f"{m}_{s}": float("nan") for m in METRICS for s in ("mean", "std")},
        "per_restart": {m: [] for m in METRICS},
        "fit_seconds": fit["fit_seconds"],
        "fit_info": fit["fit_info"],
        "fit_warnings": fit["warnings"],
        "fit_status": "budget_exceeded",
        "budget_reason": fit.get("budget_reason", ""),
        "selected": [],
        "objective_curve": None,
    }
    if truth is not None:
        row["tp"] = row["cp"] = None
    return row


def _evaluate_task(X, y, truth, arrays, rec, *, restarts, nmi_average, seed):
    kind = rec["kind"]
    prefix = f"{rec['method']}|{rec['pid']}|"
    fixed_budget = fixed_iteration_budget(rec["method"], rec["params"])
    rows = []
    t_eval = c_eval = 0.0
    for h in rec["eval_hs"]:
        label = fit_label(kind, h)
        if rec["fits"][label].get("budget_exceeded"):
            rows.append(_budget_row(X, truth, h, rec["fits"][label]))
            continue
        if kind == "ranking":
            selected = arrays[f"{prefix}{label}|feature_order"][:h]
        else:
            selected = arrays[f"{prefix}{label}|selected"]
        objective = arrays.get(f"{prefix}{label}|objective")
        t0, c0 = time.perf_counter(), time.process_time()
        res = evaluate_clustering(
            X[:, selected], y, n_restarts=restarts, seed_offset=seed, nmi_average=nmi_average
        )
        t_eval += time.perf_counter() - t0
        c_eval += time.process_time() - c0
        fit = rec["fits"][label]
        row = {
            "h": int(len(selected)) if h is None else h,
            "h_label": "all" if h is None else str(h),
            **res.summary(),
            "per_restart": {m: v.tolist() for m, v in res.per_restart.items()},
            "fit_seconds": fit["fit_seconds"],
            "fit_info": fit["fit_info"],
            "fit_warnings": fit["warnings"],
            "fit_status": fit_status(
                fit["fit_info"],
                objective,
                fit["warnings"],
                fixed_budget=fixed_budget,
                h=int(len(selected)),
            ),
            "selected": selected.tolist(),
            "objective_curve": None if objective is None else objective.tolist(),
        }
        if truth is not None:
            row["tp"] = int(np.isin(selected, truth).sum())
            row["cp"] = float(np.isin(truth, selected).all())
        rows.append(row)
    return rows, t_eval, c_eval


def evaluate(
    data: str | Path,
    fit_npz: str | Path,
    fit_info: str | Path,
    out: str | Path,
    *,
    meta: dict[str, Any],
    hs: list[int],
    restarts: int = 20,
    nmi_average: str = "arithmetic",
    seed: int = 0,
    lineage: str | None = None,
) -> None:
    """k-means evaluation of every task of a chunk, for every ``h`` it covers.

    ``lineage``: the workflow's key of everything the evaluation depends on (data, fit
    tasks, code, budget, evaluation settings), recorded with the fit job's budget facts
    (``fit_job``) so that a restored evaluation counts as done without its fit files
    (``ufs benchmark-restore``).

    Ranking results are sliced to each dataset ``h``; subset results are read per ``h``;
    a ``full`` result is evaluated once. A fit over the compute budget gives rows with NaN
    metrics, ``selected: []``, ``fit_status: "budget_exceeded"`` and its ``budget_reason``.
    ``meta[(method, pid)]``-style facts (protocol membership, parameters) come in
    ``meta["settings"]`` keyed ``"<method>|<pid>"``.
    """
    d = load_data(data)
    X, y = d["X"], d["y"]
    truth = d["true_features"] if d["has_truth"] else None
    arrays = read_npz(fit_npz)
    records = []
    fit_job = []
    warm_up(kmeans=True)  # not timed as the first task's k-means (ufs.pipeline.warm_up)
    for rec in read_record(fit_info, "tasks"):
        fit_job.append(
            {
                "budget_seconds": rec.get("budget_seconds"),
                "budget_key": rec.get("budget_key", rec.get("budget_seconds")),
                "fits": {
                    label: {
                        k: v[k]
                        for k in ("fit_cpu_seconds", "budget_exceeded", "budget_reason")
                        if k in v
                    }
                    for label, v in rec["fits"].items()
                },
            }
        )
        kind = rec["kind"]
        rec["eval_hs"] = [None] if kind == "full" else (hs if kind == "ranking" else rec["hs"])
        rows, t_eval, c_eval = _evaluate_task(
            X, y, truth, arrays, rec, restarts=restarts, nmi_average=nmi_average, seed=seed
        )
        setting = meta["settings"][f"{rec['method']}|{rec['pid']}"]
        records.append(
            {
                "dataset": meta["dataset"],
                "dataset_base": meta["dataset_base"],
                "seed": meta["seed"],
                "method": rec["method"],
                "pid": rec["pid"],
                "hkey": rec["hkey"],
                "params": rec["params"],
                "label_free": setting["label_free"],
                "in_grid": setting["in_grid"],
                "kind": kind,
                "restarts": restarts,
                "nmi_average": nmi_average,
                "kmeans_seconds": t_eval,
                "kmeans_cpu_seconds": c_eval,
                "fit_seconds_total": sum(v["fit_seconds"] for v in rec["fits"].values()),
                "fit_cpu_seconds_total": sum(
                    v.get("fit_cpu_seconds", v["fit_seconds"]) for v in rec["fits"].values()
                ),
                "code_version": rec["code_version"],
                "git_commit": rec.get("git_commit", ""),
                "budget_seconds": rec.get("budget_seconds"),
                "graph_seconds": rec.get("graph_seconds", 0.0),
                "graph_id": rec.get("graph_id"),
                "results": rows,
            }
        )
    doc = {"dataset": meta["dataset"], "evaluations": records}
    if lineage is not None:
        doc.update(lineage=lineage, fit_job={"tasks": fit_job})
    write_json(out, doc)
